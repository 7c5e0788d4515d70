//! Case-insensitive matching without the `u` flag: JavaScript compares
//! characters by `Canonicalize` (ECMA-262 22.2.2.7.3), not by Unicode case
//! folding as Rust's `(?i)` does.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::Flags;
use super::translate::{class, escape, literal};

/// A literal under `i` without `u`. JavaScript then compares characters
/// by `Canonicalize` (its `toUpperCase` when that is one character and
/// does not turn a non-ASCII character into ASCII: ſ is not s, the Kelvin
/// sign is not k, ß is not ẞ), while Rust's `(?i)` uses Unicode simple case
/// folding, which joins those. So a letter is written with case
/// sensitivity off as the class of every character JavaScript takes for it.
pub(super) fn legacy_icase(c: char) -> String {
    if c.is_ascii() && !c.is_ascii_alphabetic() {
        return c.to_string();
    }
    let canon = canonicalize(c);
    let mut class: Vec<char> = vec![c, canon];
    if let Some(others) = upper_inverse().get(&canon) {
        class.extend(others.iter().copied());
    }
    class.retain(|&d| canonicalize(d) == canon);
    class.sort_unstable();
    class.dedup();
    let members: String = class.iter().map(|&d| literal(d)).collect();
    format!("(?-i:[{members}])")
}

/// JavaScript's `Canonicalize` without `u` (ECMA-262 22.2.2.7.3).
fn canonicalize(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) if c.is_ascii() || !u.is_ascii() => u,
        _ => c,
    }
}

/// For each character, the other characters whose `toUpperCase` is it
/// (built once, from the whole of Unicode).
fn upper_inverse() -> &'static HashMap<char, Vec<char>> {
    static TABLE: OnceLock<HashMap<char, Vec<char>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<char, Vec<char>> = HashMap::new();
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let mut upper = c.to_uppercase();
            if let (Some(u), None) = (upper.next(), upper.next())
                && u != c
            {
                table.entry(u).or_default().push(c);
            }
        }
        table
    })
}

/// One member of a class: a character, or a class escape's text.
enum Atom {
    /// One character.
    Char(char),
    /// A class escape (`\d`...) as class members.
    Set(String),
}

/// Reads the class member at `j`; returns it and how many characters it
/// used.
fn class_atom(chars: &[char], j: usize, flags: &Flags) -> Option<(Atom, usize)> {
    let c = *chars.get(j)?;
    if c != '\\' {
        return Some((Atom::Char(c), 1));
    }
    let is_set = chars.get(j + 1).is_some_and(|e| "dDwWsS".contains(*e));
    let (text, used) = escape(chars, j + 1, flags, true)?;
    let atom = match unliteral(&text) {
        Some(ch) if !is_set => Atom::Char(ch),
        _ => Atom::Set(text),
    };
    Some((atom, used + 1))
}

/// The character [`literal`] wrote.
fn unliteral(text: &str) -> Option<char> {
    if let Some(hex) = text.strip_prefix(r"\x{").and_then(|t| t.strip_suffix('}')) {
        return u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
    }
    let mut it = text.chars();
    match (it.next(), it.next()) {
        (Some(c), None) => Some(c),
        _ => None,
    }
}

/// Most characters a class may list for its JavaScript case closure to be
/// spelled out; a larger class keeps Rust's case folding.
const MAX_CLOSURE: u32 = 20_000;

/// A class under `i` without `u`: JavaScript matches a character when some
/// member has the same `Canonicalize`, so the class is written, with case
/// sensitivity off, as every character whose canonical form is a member's.
pub(super) fn legacy_icase_class(
    chars: &[char],
    i: usize,
    flags: &Flags,
) -> Option<(String, usize)> {
    let negated = chars.get(i) == Some(&'^');
    let mut j = i + usize::from(negated);
    if chars.get(j) == Some(&']') {
        return class(chars, i, flags);
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let mut sets: Vec<String> = Vec::new();
    let mut add = |atom: Atom, ranges: &mut Vec<(char, char)>| match atom {
        Atom::Char(c) => ranges.push((c, c)),
        Atom::Set(text) => sets.push(text),
    };
    loop {
        match chars.get(j) {
            None => return None,
            Some(']') => break,
            Some(_) => {}
        }
        let (first, used) = class_atom(chars, j, flags)?;
        j += used;
        let is_range = chars.get(j) == Some(&'-') && !matches!(chars.get(j + 1), None | Some(']'));
        if is_range {
            let (second, used) = class_atom(chars, j + 1, flags)?;
            j += 1 + used;
            match (first, second) {
                (Atom::Char(lo), Atom::Char(hi)) => ranges.push((lo, hi)),
                // Next to a class escape `-` is itself (Annex B).
                (a, b) => {
                    add(a, &mut ranges);
                    ranges.push(('-', '-'));
                    add(b, &mut ranges);
                }
            }
            continue;
        }
        add(first, &mut ranges);
    }
    let size: u32 = ranges
        .iter()
        .map(|&(lo, hi)| (hi as u32).saturating_sub(lo as u32) + 1)
        .sum();
    if size > MAX_CLOSURE {
        return class(chars, i, flags);
    }
    let mut members: std::collections::BTreeSet<char> = std::collections::BTreeSet::new();
    let mut canons: std::collections::BTreeSet<char> = std::collections::BTreeSet::new();
    for &(lo, hi) in &ranges {
        for c in (lo as u32..=hi as u32).filter_map(char::from_u32) {
            members.insert(c);
            canons.insert(canonicalize(c));
        }
    }
    for &canon in &canons {
        let others = upper_inverse()
            .get(&canon)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for &d in std::iter::once(&canon).chain(others) {
            if canonicalize(d) == canon {
                members.insert(d);
            }
        }
    }
    let mut body = String::new();
    let mut run: Option<(char, char)> = None;
    let flush = |run: Option<(char, char)>, body: &mut String| {
        if let Some((lo, hi)) = run {
            body.push_str(&literal(lo));
            if hi != lo {
                body.push('-');
                body.push_str(&literal(hi));
            }
        }
    };
    for &c in &members {
        run = match run {
            Some((lo, hi)) if hi as u32 + 1 == c as u32 => Some((lo, c)),
            other => {
                flush(other, &mut body);
                Some((c, c))
            }
        };
    }
    flush(run, &mut body);
    for set in &sets {
        body.push_str(set);
    }
    let text = format!("(?-i:[{}{body}])", if negated { "^" } else { "" });
    Some((text, j + 1 - i))
}
