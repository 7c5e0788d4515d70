//! The best `k` documents of a keyword search without scoring them all:
//! MaxScore over document-ordered posting lists, in windows of slots.
//!
//! Each term has a bound: the most it can add to any document's score
//! (the best of its blocks', see [`super::postings`]). Once `k` documents
//! are found, one whose terms' bounds sum to less than the `k`-th best
//! score so far cannot be among the best `k`. So the terms, smallest
//! bound first, whose bounds together stay under the `k`-th best are
//! *non-essential*: a document only they hold cannot enter, and their
//! lists are never walked, only sought (galloping) at the documents the
//! *essential* terms hold. Common words have small idfs and long lists:
//! once `k` documents are found, they are the non-essential ones. Which
//! terms are essential is decided again at each window, as the `k`-th
//! best rises.
//!
//! Before the first window, the rarest terms' lists (short, and holding
//! the documents that score highest) are read whole to find a score the
//! `k`-th best cannot be under ([`seed`]): with it, common terms are
//! non-essential from the first window on, rather than once the windows
//! have reached enough of the best documents, which are spread over the
//! whole chat (issue 44's eleventh session: a six-word query's keyword
//! phase x0.77 at 100,000 messages).
//!
//! A window of slots (small at first, so that `k` documents are found
//! soon; at most [`WINDOW`]) is scored term at a time: each essential
//! list's entries in the window add their share into a small array. The
//! documents touched whose sum plus the non-essential bounds can still
//! beat the `k`-th best are the window's candidates; then each
//! non-essential list, the largest bound first, is sought at the
//! candidates left (or read through the window, when it has few entries
//! for the candidates: a read costs less than a seek), its share
//! replacing its bound, and those that can no longer beat the `k`-th
//! best are dropped. The tests that drop them are branch-free: which
//! documents go is not predictable, and a mispredicted branch costs more
//! than the test. A chat of one window is read in one, without bounds.
//!
//! The result is the exhaustive one to the bit. Sums made in another
//! order than the exhaustive one (term order) may differ from it in the
//! last places, so every comparison allows for that ([`slack`]): the
//! documents that may be among the best `k` (a pool a little larger than
//! `k`, those `keep` rejects left out) are scored again at the end in
//! term order (only the query terms each document has, found from its
//! term list, are sought), and the best `k` of them by those scores are
//! the answer.

use std::collections::BinaryHeap;

use super::part;
use super::postings::{Posting, PostingList};
use crate::recall::search::Ranked;

/// The most slots scored together.
const WINDOW: usize = 4096;
/// The slots of the first window (then twice as many each window, up to
/// [`WINDOW`]).
const FIRST_WINDOW: usize = 256;

/// A non-essential list is read through a window rather than sought at
/// each candidate when it has fewer than this many entries a candidate.
const READ_OR_SEEK: usize = 4;

/// A document of a window that may beat the `k`-th best: the sum of its
/// essential terms' shares (in term order), that with the non-essential
/// shares found so far, and whether any was.
#[derive(Clone, Copy)]
struct Candidate {
    doc: u32,
    sum: f32,
    found: f32,
    more: bool,
}

/// A document that may be among the best `k`: its score as found, and
/// whether that is its score in term order already (no non-essential
/// share in it).
#[derive(Clone, Copy)]
struct Pooled {
    doc: u32,
    found: f32,
    exact: bool,
}

/// What a search reads of the index besides the lists: each slot's
/// length and distinct terms (in term order), the number of documents
/// and their average length.
#[derive(Clone, Copy)]
pub(super) struct Corpus<'a> {
    pub doc_len: &'a [u32],
    pub doc_terms: &'a [Box<[u32]>],
    pub n: f32,
    pub average: f32,
}

/// One query term during a search.
struct Term<'a> {
    postings: &'a [Posting],
    idf: f32,
    /// The most it adds to a document's score.
    bound: f32,
    /// The next entry the window pass reads.
    window: usize,
    /// Where the last seek of a window's candidates left off.
    probe: usize,
    /// Where the last seek of a full score left off.
    exact: usize,
}

/// The first index at or after `from` whose document is at least `doc`
/// (the list's length if none), by galloping.
fn seek(list: &[Posting], from: usize, doc: u32) -> usize {
    match list.get(from) {
        None => return list.len(),
        Some(p) if p.doc >= doc => return from,
        Some(_) => {}
    }
    // list[low].doc < doc
    let mut low = from;
    let mut step = 1;
    loop {
        let high = low.saturating_add(step);
        match list.get(high) {
            Some(p) if p.doc < doc => {
                low = high;
                step = step.saturating_mul(2);
            }
            _ => {
                let high = high.min(list.len());
                let rest = list.get(low + 1..high).unwrap_or_default();
                return low + 1 + rest.partition_point(|p| p.doc < doc);
            }
        }
    }
}

/// The factor a sum is multiplied by before it is compared with another
/// made in another order, for `terms` terms: sums of `terms` floats made
/// in two orders differ by less than `terms` units in the last place of
/// the larger (and each share by a few), so this covers both with room.
/// Comparisons chain at most three such gaps (a bound against a found
/// score against the `k`-th found), hence its cube where they do.
fn slack(terms: usize) -> f32 {
    1.0 + (terms as f32 + 16.0) * f32::EPSILON * 4.0
}

/// Document `doc`'s length as a float (0 for a slot the index does not
/// know: not reached, the lists hold present documents only).
fn length(doc_len: &[u32], doc: u32) -> f32 {
    doc_len.get(doc as usize).copied().unwrap_or(0) as f32
}

impl Term<'_> {
    /// The term's share of `doc`'s score (0 if `doc` is not in its
    /// list), seeking forward from `cursor` (one of its own).
    fn share(&self, cursor: &mut usize, doc: u32, doc_len: &[u32], average: f32) -> f32 {
        *cursor = seek(self.postings, *cursor, doc);
        match self.postings.get(*cursor) {
            Some(p) if p.doc == doc => {
                part(self.idf, p.count as f32, length(doc_len, doc), average)
            }
            _ => 0.0,
        }
    }
}

/// The most entries the seed reads (see [`seed`]), per document wanted.
const SEED_ENTRIES_PER_DOC: usize = 8;

/// A score the `k`-th best of the search cannot be under, found before
/// the windows: the shortest lists (the rarest terms, whose documents
/// score highest), read whole while their entries stay within
/// [`SEED_ENTRIES_PER_DOC`] times `k`, give each of their documents the
/// sum of those terms' shares, at most its score; the `k`-th best such
/// sum among the documents `keep` lets through (divided by `slack`, as
/// the sums are made in another order than the exhaustive one) is at
/// most the `k`-th best score. Negative infinity when those lists hold
/// fewer than `k` documents `keep` lets through. Without it, the `k`-th
/// best found rises only as the windows reach the best documents, spread
/// over the whole chat, and until then the windows read and test
/// documents that cannot enter.
fn seed(
    terms: &[Term<'_>],
    doc_len: &[u32],
    average: f32,
    k: usize,
    slack: f32,
    keep: impl Fn(u32) -> bool,
) -> f32 {
    let budget = k.saturating_mul(SEED_ENTRIES_PER_DOC);
    let mut by_length: Vec<&Term<'_>> = terms.iter().collect();
    by_length.sort_by_key(|t| t.postings.len());
    let mut read = 0usize;
    let mut shares: Vec<(u32, f32)> = Vec::new();
    for term in by_length {
        read += term.postings.len();
        if read > budget {
            break;
        }
        shares.extend(term.postings.iter().map(|p| {
            (
                p.doc,
                part(term.idf, p.count as f32, length(doc_len, p.doc), average),
            )
        }));
    }
    if shares.len() < k {
        return f32::NEG_INFINITY;
    }
    shares.sort_unstable_by_key(|(doc, _)| *doc);
    let mut sums: Vec<(u32, f32)> = Vec::with_capacity(shares.len());
    for (doc, share) in shares {
        match sums.last_mut() {
            Some((last, sum)) if *last == doc => *sum += share,
            _ => sums.push((doc, share)),
        }
    }
    if sums.len() < k {
        return f32::NEG_INFINITY;
    }
    sums.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
    let mut kept = 0;
    for (doc, sum) in sums {
        if keep(doc) {
            kept += 1;
            if kept == k {
                return sum / slack;
            }
        }
    }
    f32::NEG_INFINITY
}

/// The search's terms for `lists` in `corpus`, each with its bound when
/// `bounded` (else an infinite one: a chat of one window needs none).
fn search_terms<'a>(
    lists: &[(u32, &'a PostingList)],
    corpus: &Corpus<'_>,
    bounded: bool,
) -> Vec<Term<'a>> {
    let Corpus {
        doc_len,
        n,
        average,
        ..
    } = *corpus;
    lists
        .iter()
        .map(|(_, list)| {
            let idf = super::idf(n, list.len() as f32);
            let bound = if bounded {
                list.bound(doc_len, |count, len| {
                    part(idf, count as f32, len as f32, average)
                })
            } else {
                f32::INFINITY
            };
            Term {
                postings: list.postings(),
                idf,
                bound,
                window: 0,
                probe: 0,
                exact: 0,
            }
        })
        .collect()
}

/// [`seed`]'s floor for `lists` in `corpus` (for the tests).
#[cfg(test)]
pub(super) fn first_floor(
    lists: &[(u32, &PostingList)],
    corpus: &Corpus<'_>,
    k: usize,
    keep: impl Fn(u32) -> bool,
) -> f32 {
    let terms = search_terms(lists, corpus, false);
    seed(
        &terms,
        corpus.doc_len,
        corpus.average,
        k,
        slack(terms.len()),
        keep,
    )
}

/// The best `k` documents of `lists` (the query's distinct terms and
/// their lists, in term order, none empty) in `corpus` that `keep` lets
/// through, `(doc, score)` best first (ties: the lower slot); see the
/// module documentation. `keep` is asked only of documents that may be
/// among the best `k`.
pub(super) fn top(
    lists: &[(u32, &PostingList)],
    corpus: &Corpus<'_>,
    k: usize,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32)> {
    if k == 0 || lists.is_empty() {
        return Vec::new();
    }
    let Corpus {
        doc_len,
        doc_terms,
        average,
        ..
    } = *corpus;
    let ids: Vec<u32> = lists.iter().map(|(id, _)| *id).collect();
    // Windows no larger than the slots (a small chat's search zeroes
    // little); a chat of one window is read in one (the `k`-th best would
    // be known too late to spare much), and needs no bounds.
    let window = doc_len.len().clamp(64, WINDOW).next_power_of_two();
    let single = doc_len.len() <= window;
    let mut terms = search_terms(lists, corpus, !single);
    let slack = slack(terms.len());
    let (square, cube) = (slack * slack, slack * slack * slack);
    // The terms by bound, smallest first, and the sums of the bounds of
    // the first i of them.
    let mut order: Vec<usize> = (0..terms.len()).collect();
    order.sort_by(|a, b| terms[*a].bound.total_cmp(&terms[*b].bound).then(a.cmp(b)));
    let mut below = vec![0f32; order.len() + 1];
    for (i, t) in order.iter().enumerate() {
        below[i + 1] = below[i] + terms[*t].bound;
    }
    let seeded = if single {
        f32::NEG_INFINITY
    } else {
        seed(&terms, doc_len, average, k, slack, &keep)
    };
    let mut essential = vec![true; terms.len()];
    // order[..cheap] are the non-essential terms.
    let mut cheap = 0;
    // The best `k` found so far, by their found scores.
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::with_capacity(k.min(4096) + 1);
    let mut pool: Vec<Pooled> = Vec::new();
    // Whether every score found was the exact one (then the best `k` are
    // known already).
    let mut all_exact = true;
    let mut sums = vec![0f32; window];
    let mut shares = vec![0f32; window];
    let mut touched = [0u64; WINDOW / 64];
    let mut candidates = vec![
        Candidate {
            doc: 0,
            sum: 0.0,
            found: 0.0,
            more: false,
        };
        window
    ];
    let mut size = if single { window } else { FIRST_WINDOW };
    let mut from: u32 = 0;
    loop {
        // `out(bound)`: a document whose score is at most `bound` cannot
        // be among the best `k` (no branch: which documents are dropped
        // is not predictable, and a mispredicted branch costs more than
        // the test).
        let floor = heap
            .peek()
            .filter(|_| heap.len() >= k)
            .map_or(f32::NEG_INFINITY, |r| r.0)
            .max(seeded);
        let out = |bound: f32| bound * cube < floor;
        while cheap < order.len() && out(below[cheap + 1]) {
            essential[order[cheap]] = false;
            cheap += 1;
        }
        // The window starts at the first essential entry not read yet.
        let mut first = None;
        for (t, term) in terms.iter_mut().enumerate() {
            if essential[t] {
                term.window = seek(term.postings, term.window, from);
                if let Some(p) = term.postings.get(term.window) {
                    first = Some(first.map_or(p.doc, |f: u32| f.min(p.doc)));
                }
            }
        }
        let Some(start) = first else {
            break;
        };
        let end = u64::from(start) + size as u64;
        for (t, term) in terms.iter_mut().enumerate() {
            if !essential[t] {
                continue;
            }
            while let Some(p) = term.postings.get(term.window) {
                if u64::from(p.doc) >= end {
                    break;
                }
                let i = (p.doc - start) as usize;
                sums[i] += part(term.idf, p.count as f32, length(doc_len, p.doc), average);
                touched[i / 64] |= 1 << (i % 64);
                term.window += 1;
            }
        }
        // Kept in place: `candidates[..count]`.
        let mut count = 0;
        for (word, bits) in touched[..size.div_ceil(64)].iter_mut().enumerate() {
            let mut bits = std::mem::take(bits);
            while bits != 0 {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let sum = std::mem::take(&mut sums[i]);
                candidates[count] = Candidate {
                    doc: start + i as u32,
                    sum,
                    found: sum,
                    more: false,
                };
                count += usize::from(!out(sum + below[cheap]));
            }
        }
        for j in (0..cheap).rev() {
            if count == 0 {
                break;
            }
            let term = &mut terms[order[j]];
            let rest = below[j];
            // Its entries in the window: read them all when there are few
            // enough for the candidates (a read costs a few times less
            // than a seek), or seek them at each candidate.
            let low = seek(term.postings, term.probe, start);
            let high = match u32::try_from(end) {
                Ok(end) => seek(term.postings, low, end),
                Err(_) => term.postings.len(),
            };
            let entries = term.postings.get(low..high).unwrap_or_default();
            let mut kept = 0;
            if entries.len() < READ_OR_SEEK * count {
                for p in entries {
                    shares[(p.doc - start) as usize] =
                        part(term.idf, p.count as f32, length(doc_len, p.doc), average);
                }
                for r in 0..count {
                    let mut c = candidates[r];
                    let share = shares[(c.doc - start) as usize];
                    c.found += share;
                    c.more |= share > 0.0;
                    candidates[kept] = c;
                    kept += usize::from(!out(c.found + rest));
                }
                for p in entries {
                    shares[(p.doc - start) as usize] = 0.0;
                }
                term.probe = high;
            } else {
                let mut cursor = low;
                for r in 0..count {
                    let mut c = candidates[r];
                    let share = term.share(&mut cursor, c.doc, doc_len, average);
                    c.found += share;
                    c.more |= share > 0.0;
                    candidates[kept] = c;
                    kept += usize::from(!out(c.found + rest));
                }
                term.probe = cursor;
            }
            count = kept;
        }
        for c in &candidates[..count] {
            let floor = heap
                .peek()
                .filter(|_| heap.len() >= k)
                .map_or(seeded, |r| r.0.max(seeded));
            if c.found * square < floor || !keep(c.doc) {
                continue;
            }
            all_exact &= !c.more;
            pool.push(Pooled {
                doc: c.doc,
                found: if c.more { c.found } else { c.sum },
                exact: !c.more,
            });
            if heap.len() < k
                || heap
                    .peek()
                    .is_some_and(|worst| Ranked(c.found, c.doc) < *worst)
            {
                heap.push(Ranked(c.found, c.doc));
                if heap.len() > k {
                    heap.pop();
                }
            }
        }
        if pool.len() > k.max(64).saturating_mul(2)
            && let Some(floor) = heap
                .peek()
                .filter(|_| heap.len() >= k)
                .map(|r| r.0.max(seeded))
        {
            pool.retain(|p| p.found * square >= floor);
        }
        size = (size * 2).min(window);
        match u32::try_from(end) {
            Ok(next) => from = next,
            Err(_) => break,
        }
    }
    if all_exact {
        return ranked(heap);
    }
    // The pool's scores in term order, as the exhaustive search sums them
    // (the pool is in slot order), and the best `k` of them.
    let mut best: BinaryHeap<Ranked> = BinaryHeap::with_capacity(k.min(4096) + 1);
    let floor = heap.peek().filter(|_| heap.len() >= k).map(|r| r.0);
    for p in pool {
        if floor.is_some_and(|floor| p.found * square < floor) {
            continue;
        }
        let score = if p.exact {
            p.found
        } else {
            // The query's terms the document has, in term order (the
            // others add nothing), sought in their lists.
            let mut score = 0f32;
            let mut q = 0;
            let own = doc_terms.get(p.doc as usize).map_or(&[][..], |t| &t[..]);
            for id in own {
                q += ids.get(q..).unwrap_or_default().partition_point(|i| i < id);
                if ids.get(q) == Some(id)
                    && let Some(term) = terms.get_mut(q)
                {
                    let mut cursor = term.exact;
                    score += term.share(&mut cursor, p.doc, doc_len, average);
                    term.exact = cursor;
                }
            }
            score
        };
        if best.len() < k
            || best
                .peek()
                .is_some_and(|worst| Ranked(score, p.doc) < *worst)
        {
            best.push(Ranked(score, p.doc));
            if best.len() > k {
                best.pop();
            }
        }
    }
    ranked(best)
}

/// The heap's documents, best first.
fn ranked(heap: BinaryHeap<Ranked>) -> Vec<(u32, f32)> {
    heap.into_sorted_vec()
        .into_iter()
        .map(|Ranked(score, doc)| (doc, score))
        .collect()
}
