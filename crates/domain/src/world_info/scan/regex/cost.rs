//! A key's work bound: an estimate, made before a test runs, of the work
//! fancy-regex's backtrack limit does not see.
//!
//! fancy-regex counts backtracks only. What it runs between two of them
//! is bounded for its own instructions (a literal, a class), but not for
//! three kinds: a part of the pattern it hands to the regex crate (a
//! lookaround's body, a run of plain pattern), which scans as far as that
//! part can reach; a lookbehind of variable width, which scans back; and
//! a backreference, which compares as much text as its group took. On a
//! haystack of n bytes each of those costs up to n, at each of the n
//! start positions: `(?=(a+)+$)a` is n² while the backtrack counter stays
//! near n.
//!
//! So when a key is compiled, its translated pattern is read with
//! fancy-regex's own parser ([`fancy_regex::Expr::parse_tree`]) and turned
//! into [`Cost`]: a list of terms, one per place that does work, each with
//! how many times one match attempt may reach it (`paths`, the product of
//! the choices of what comes before it: an alternation's branches, a
//! repetition's counts) and what one visit costs (`unit`: its width in
//! characters when that is bounded, n when not). Which parts are handed to the
//! regex crate follows fancy-regex's compiler: a part with no lookaround
//! or backreference, outside the backtracker's reach, is one scan with a
//! single answer. Before a test on a haystack of n bytes the estimate is
//!
//! `Σ min(starts × paths, starts + backtrack limit + n) × unit`
//!
//! over the terms that grow faster than n (a visit at most [`SMALL_COUNT`]
//! characters wide reached a fixed number of times per start is linear
//! work, as any key's, and not counted; a wider one is),
//! where starts is n + 1 (1 for a pattern anchored at the start): a place
//! reached more than once per start is reached again only after a
//! backtrack, which the backtrack limit counts. Past the work limit the
//! test does not run and is an overrun. A key with no lookaround or
//! backreference (after translation) runs whole on the regex crate, in
//! linear time, and is never estimated. recapd's own `\b`, `\B` and `^`/`$`
//! with `m` are lookarounds one character wide: cheap terms.
//!
//! The estimate is an upper bound up to a constant, not a count: it is
//! calibrated in units that cost about a nanosecond each on the machine it
//! was measured on (docs/world-info.md gives the figures).

use fancy_regex::{Assertion, Expr, LookAround};

/// The work model of one key (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct Cost {
    /// The places that do work.
    terms: Vec<Term>,
    /// Whether every match attempt but the first fails at once (`\A`).
    anchored: bool,
}

/// `c × n^k`: a count that may grow with the haystack's length n.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mono {
    /// The constant (may be infinite: exponentially many paths).
    c: f64,
    /// The power of n.
    k: i32,
}

impl Mono {
    const ONE: Mono = Mono { c: 1.0, k: 0 };
    const N: Mono = Mono { c: 1.0, k: 1 };

    fn constant(c: f64) -> Mono {
        Mono { c, k: 0 }
    }

    fn times(self, other: Mono) -> Mono {
        Mono {
            c: self.c * other.c,
            k: self.k.saturating_add(other.k),
        }
    }

    /// An upper bound of the sum (the larger power wins).
    fn plus(self, other: Mono) -> Mono {
        Mono {
            c: self.c + other.c,
            k: self.k.max(other.k),
        }
    }

    fn at(self, n: f64) -> f64 {
        self.c * n.max(1.0).powi(self.k)
    }
}

/// One place that does work.
#[derive(Debug, Clone, Copy)]
struct Term {
    /// How often one attempt may reach it.
    paths: Mono,
    /// What one visit costs: a bounded width, or `None` for up to n.
    unit: Option<f64>,
}

/// A part of a pattern: its terms and how many ways it can end (choices
/// for what follows).
struct Part {
    terms: Vec<Term>,
    choices: Mono,
}

/// Repetitions up to this count are counted as constants; past it as n.
const SMALL_COUNT: usize = 64;

impl Cost {
    /// The model of `translated` (a pattern as recapd runs it), or `None`
    /// when it needs no backtracker (the regex crate runs it whole) or
    /// cannot be parsed (it will not compile either).
    pub(crate) fn of(translated: &str) -> Option<Cost> {
        let tree = Expr::parse_tree(translated).ok()?;
        if !hard(&tree.expr) {
            return None;
        }
        let mut groups = Vec::new();
        group_widths(&tree.expr, &mut groups);
        let part = Walk { groups: &groups }.part(&tree.expr, false);
        Some(Cost {
            terms: part.terms,
            anchored: anchored(&tree.expr),
        })
    }

    /// The estimated work of one test on a haystack of `n` bytes, with
    /// fancy-regex stopping past `backtrack_limit` backtracks.
    pub(crate) fn estimate(&self, n: usize, backtrack_limit: usize) -> f64 {
        let n = n as f64;
        let starts = if self.anchored { 1.0 } else { n + 1.0 };
        let cap = starts + backtrack_limit as f64 + n;
        self.terms
            .iter()
            // A narrow visit reached a fixed number of times per start is
            // linear work, as every key does: only what grows faster counts.
            // A wide one (`(?=a{1,20000}!)`) is linear only in name: its
            // width times the starts is counted.
            .filter(|t| t.paths.k > 0 || t.unit.is_none_or(|w| w > SMALL_COUNT as f64))
            .map(|t| {
                let reached = (starts * t.paths.at(n)).min(cap);
                let unit = t.unit.map_or(n, |w| w.min(n).max(1.0));
                reached * unit
            })
            .sum()
    }
}

/// Whether fancy-regex needs its backtracker for `e` (what its analysis
/// calls hard).
fn hard(e: &Expr) -> bool {
    match e {
        Expr::Empty
        | Expr::Any { .. }
        | Expr::Assertion(_)
        | Expr::GeneralNewline { .. }
        | Expr::Literal { .. }
        | Expr::Delegate { .. } => false,
        Expr::Concat(v) | Expr::Alt(v) => v.iter().any(hard),
        Expr::Group(c) => hard(c),
        Expr::Repeat { child, .. } => hard(child),
        _ => true,
    }
}

/// Whether every match must start at the haystack's start.
fn anchored(e: &Expr) -> bool {
    match e {
        Expr::Assertion(Assertion::StartText) => true,
        Expr::Concat(v) => v.first().is_some_and(anchored),
        Expr::Group(c) => anchored(c),
        Expr::Alt(v) => !v.is_empty() && v.iter().all(anchored),
        _ => false,
    }
}

/// The width in characters of each capture group, in number order (pre-order).
fn group_widths(e: &Expr, out: &mut Vec<Option<usize>>) {
    if let Expr::Group(c) = e {
        out.push(width(c, &[]).1);
    }
    for child in e.children_iter() {
        group_widths(child, out);
    }
}

/// (min, max) width in characters (fancy-regex's measure: a lookbehind
/// of fixed width steps back, one of variable width scans); `groups` gives backreferences' widths.
fn width(e: &Expr, groups: &[Option<usize>]) -> (usize, Option<usize>) {
    match e {
        Expr::Literal { val, .. } => {
            let chars = val.chars().count();
            (chars, Some(chars))
        }
        Expr::Any { .. } | Expr::Delegate { .. } => (1, Some(1)),
        Expr::GeneralNewline { .. } => (1, Some(2)),
        Expr::Concat(v) => v.iter().fold((0, Some(0)), |(lo, hi), c| {
            let (cl, ch) = width(c, groups);
            (
                lo.saturating_add(cl),
                hi.zip(ch).map(|(a, b)| a.saturating_add(b)),
            )
        }),
        Expr::Alt(v) => {
            let ws: Vec<_> = v.iter().map(|c| width(c, groups)).collect();
            let lo = ws.iter().map(|w| w.0).min().unwrap_or(0);
            let hi = ws.iter().try_fold(0usize, |m, w| w.1.map(|h| m.max(h)));
            (lo, hi)
        }
        Expr::Group(c) => width(c, groups),
        Expr::AtomicGroup(c) => width(c, groups),
        Expr::Repeat { child, lo, hi, .. } => {
            let (cl, ch) = width(child, groups);
            let max = if *hi == usize::MAX {
                (ch == Some(0)).then_some(0)
            } else {
                ch.and_then(|w| w.checked_mul(*hi))
            };
            (cl.saturating_mul(*lo), max)
        }
        Expr::Backref { group, .. } => (0, groups.get(group.wrapping_sub(1)).copied().flatten()),
        Expr::Conditional {
            true_branch,
            false_branch,
            ..
        } => {
            let (tl, th) = width(true_branch, groups);
            let (fl, fh) = width(false_branch, groups);
            (tl.min(fl), th.zip(fh).map(|(a, b)| a.max(b)))
        }
        Expr::Empty | Expr::Assertion(_) | Expr::LookAround(..) => (0, Some(0)),
        Expr::BackrefExistsCondition { .. } => (0, Some(0)),
        _ => (0, None),
    }
}

/// The walk over a pattern, with its groups' widths.
struct Walk<'g> {
    groups: &'g [Option<usize>],
}

impl Walk<'_> {
    /// A part handed whole to the regex crate: one scan, one answer.
    fn delegated(&self, parts: &[&Expr]) -> Part {
        let max = parts.iter().try_fold(0usize, |sum, e| {
            width(e, self.groups).1.map(|w| sum.saturating_add(w))
        });
        Part {
            terms: vec![Term {
                paths: Mono::ONE,
                unit: max.map(|m| m.max(1) as f64),
            }],
            choices: Mono::ONE,
        }
    }

    /// `e` as fancy-regex compiles it; `in_vm`: inside a part the
    /// backtracker runs (fancy-regex's `hard` argument).
    fn part(&self, e: &Expr, in_vm: bool) -> Part {
        if !in_vm && !hard(e) {
            return self.delegated(&[e]);
        }
        let leaf = |unit: Option<f64>| Part {
            terms: vec![Term {
                paths: Mono::ONE,
                unit,
            }],
            choices: Mono::ONE,
        };
        match e {
            Expr::Concat(children) => self.concat(children, in_vm),
            Expr::Alt(children) => {
                let parts: Vec<Part> = children.iter().map(|c| self.part(c, in_vm)).collect();
                let choices = parts
                    .iter()
                    .fold(Mono::constant(0.0), |m, p| m.plus(p.choices));
                Part {
                    terms: parts.into_iter().flat_map(|p| p.terms).collect(),
                    choices,
                }
            }
            Expr::Group(c) => self.part(c, in_vm),
            Expr::AtomicGroup(c) => Part {
                terms: self.part(c, in_vm).terms,
                choices: Mono::ONE,
            },
            Expr::Repeat { child, hi, .. } => {
                let child = self.part(child, true);
                let count = if *hi <= SMALL_COUNT {
                    Mono::constant(*hi as f64)
                } else {
                    Mono::N
                };
                // One choice per iteration: each iteration's count of
                // reaches grows by one; more: exponentially many paths.
                let (reach, choices) = if child.choices == Mono::ONE {
                    (count, count.plus(Mono::ONE))
                } else {
                    let inf = Mono::constant(f64::INFINITY);
                    (inf, inf)
                };
                Part {
                    terms: child
                        .terms
                        .into_iter()
                        .map(|t| Term {
                            paths: t.paths.times(reach),
                            unit: t.unit,
                        })
                        .collect(),
                    choices,
                }
            }
            Expr::LookAround(body, kind) => {
                let behind = matches!(kind, LookAround::LookBehind | LookAround::LookBehindNeg);
                let mut p = self.part(body, false);
                let (bmin, bmax) = width(body, self.groups);
                if behind && Some(bmin) != bmax {
                    // A variable-width lookbehind scans back: up to n.
                    p.terms.push(Term {
                        paths: Mono::ONE,
                        unit: None,
                    });
                }
                Part {
                    terms: p.terms,
                    choices: Mono::ONE,
                }
            }
            Expr::Backref { group, .. } => {
                let w = self.groups.get(group.wrapping_sub(1)).copied().flatten();
                leaf(w.map(|w| w.max(1) as f64))
            }
            Expr::Conditional {
                condition,
                true_branch,
                false_branch,
            } => {
                let parts = [
                    self.part(condition, true),
                    self.part(true_branch, true),
                    self.part(false_branch, true),
                ];
                let choices = parts[1].choices.plus(parts[2].choices);
                Part {
                    terms: parts.into_iter().flat_map(|p| p.terms).collect(),
                    choices,
                }
            }
            Expr::Literal { val, .. } => leaf(Some(val.chars().count().max(1) as f64)),
            Expr::Empty
            | Expr::Any { .. }
            | Expr::Assertion(_)
            | Expr::GeneralNewline { .. }
            | Expr::Delegate { .. }
            | Expr::BackrefExistsCondition { .. } => leaf(Some(1.0)),
            // Constructs recapd's translation never writes: up to n each.
            _ => leaf(None),
        }
    }

    /// A concatenation: a leading run of fixed-width plain parts and a
    /// trailing run of plain parts (fixed-width ones only inside the
    /// backtracker) are handed to the regex crate; each part's terms are
    /// reached once per way the parts before it can end.
    fn concat(&self, children: &[Expr], in_vm: bool) -> Part {
        let fixed_plain = |c: &Expr| {
            let (lo, hi) = width(c, self.groups);
            Some(lo) == hi && !hard(c)
        };
        let prefix = children.iter().take_while(|c| fixed_plain(c)).count();
        let rest = &children[prefix..];
        let suffix = rest
            .iter()
            .rev()
            .take_while(|c| if in_vm { fixed_plain(c) } else { !hard(c) })
            .count();
        let middle = &rest[..rest.len() - suffix];
        let mut parts = Vec::new();
        if prefix > 0 {
            parts.push(self.delegated(&children[..prefix].iter().collect::<Vec<_>>()));
        }
        parts.extend(middle.iter().map(|c| self.part(c, true)));
        if suffix > 0 {
            parts.push(self.delegated(&rest[rest.len() - suffix..].iter().collect::<Vec<_>>()));
        }
        let mut reach = Mono::ONE;
        let mut terms = Vec::new();
        for p in parts {
            terms.extend(p.terms.into_iter().map(|t| Term {
                paths: t.paths.times(reach),
                unit: t.unit,
            }));
            reach = reach.times(p.choices);
        }
        Part {
            terms,
            choices: reach,
        }
    }
}
