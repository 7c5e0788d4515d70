//! The pruned search against the exhaustive one, on a random chat whose
//! slots are removed and reused.

use super::super::KeywordIndex;
use crate::recall::search::best;
use crate::recall::vectors::tests::xorshift;

/// A word drawn from a vocabulary of `size` by a Zipf-like law (a few
/// common words, many rare ones).
fn word(next: &mut impl FnMut() -> u64, size: u64) -> String {
    let u = (next() % 1_000_000) as f64 / 1_000_000.0;
    let rank = (size as f64).powf(u) as u64;
    format!("w{rank}x")
}

/// A text of 1 to 40 words (so lengths and counts vary).
fn text(next: &mut impl FnMut() -> u64, size: u64) -> String {
    let words = 1 + next() % 40;
    let mut out = Vec::new();
    for _ in 0..words {
        let w = word(next, size);
        // Now and then a word said again: counts above 1.
        if next().is_multiple_of(8) {
            out.push(w.clone());
        }
        out.push(w);
    }
    out.join(" ")
}

#[test]
fn the_pruned_search_finds_what_scoring_everything_finds() {
    let mut next = xorshift(44);
    let size = 3000;
    let mut index = KeywordIndex::default();
    let mut present: Vec<u32> = Vec::new();
    let mut free: Vec<u32> = Vec::new();
    let mut slots = 0u32;
    let mut queries = 0;
    let mut seeded = 0;
    // Grows past a few windows of slots, with removals and slots reused
    // (a reused slot lands in the middle of the lists).
    for round in 0..20_000u32 {
        let roll = next() % 10;
        if roll < 2 && !present.is_empty() {
            let at = (next() % present.len() as u64) as usize;
            let slot = present.swap_remove(at);
            index.remove(slot);
            free.push(slot);
        } else if roll < 3 && !present.is_empty() {
            // Edited in place.
            let slot = present[(next() % present.len() as u64) as usize];
            index.insert(slot, &text(&mut next, size));
        } else {
            let slot = if roll < 5 && !free.is_empty() {
                free.swap_remove((next() % free.len() as u64) as usize)
            } else {
                slots += 1;
                slots - 1
            };
            index.insert(slot, &text(&mut next, size));
            present.push(slot);
        }
        if round.is_multiple_of(6) && round > 1000 {
            let words = 1 + next() % 60;
            let query = (0..words)
                .map(|_| word(&mut next, size + 500))
                .collect::<Vec<_>>()
                .join(" ");
            let k = [1, 5, 10, 50, 200, 200, 200, 5000][(next() % 8) as usize];
            let seed = next();
            // Half the queries leave some documents out: a pseudo-random
            // fifth, or every slot above a line (as the recent window).
            let line = (next() % u64::from(slots.max(1))) as u32;
            let kind = next() % 3;
            let keep = move |doc: u32| match kind {
                0 => true,
                1 => (u64::from(doc) ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61 != 0,
                _ => doc < line,
            };
            let found = index.top(&query, k, keep);
            let expected = best(index.scores(&query), k, keep);
            assert_eq!(found, expected, "query {query:?}, k {k}, kind {kind}");
            // The floor the search starts from is never above the k-th
            // best score (a floor above it would have dropped one of the
            // best k, which the comparison above may miss by chance).
            let floor = index.first_floor(&query, k, keep);
            if floor.is_finite() {
                let kth = expected.get(k - 1).map(|(_, score)| *score);
                assert!(
                    kth.is_some_and(|kth| floor <= kth),
                    "{floor} > {kth:?}, {query:?}"
                );
                seeded += 1;
            }
            queries += 1;
        }
        if round.is_multiple_of(1000) {
            index.check();
        }
    }
    index.check();
    assert!(queries >= 2500, "{queries} queries");
    // Most queries' rare terms give a floor (1,811 of 3,167 when written).
    assert!(
        seeded * 3 >= queries,
        "{seeded} of {queries} queries seeded"
    );
    assert!(slots > 8192, "{slots} slots: more than two windows");
}
