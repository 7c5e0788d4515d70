//! The tests of [`VectorSet`] and its helpers.

use super::*;

/// A xorshift generator of pseudo-random numbers from `state` (not 0):
/// the same numbers every run.
pub(in crate::recall) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[test]
fn the_closest_vector_scores_highest_and_floors_apply() {
    let mut set = VectorSet::default();
    assert!(set.put(0, &[1.0, 0.0, 0.0]));
    assert!(set.put(1, &[1.0, 1.0, 0.0]));
    assert!(set.put(3, &[0.0, 0.0, 2.0]));
    assert!(!set.put(2, &[1.0, 0.0]), "another dimension is refused");
    let all = |_| true;
    let hits = set.similar(&[2.0, 0.1, 0.0], 0.5, 10, all);
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 1]);
    assert!((hits[0].1 - 0.99875).abs() < 1e-2);
    assert!(set.similar(&[1.0, 0.0], 0.0, 10, all).is_empty());
    assert_eq!(
        set.similar(&[2.0, 0.1, 0.0], 0.5, 10, |slot| slot != 0)[0].0,
        1
    );
    assert_eq!(set.similar(&[2.0, 0.1, 0.0], 0.5, 1, all).len(), 1);
    set.remove(0);
    assert_eq!(set.len(), 2);
    assert!(set.similar(&[1.0, 0.0, 0.0], 0.9, 10, all).is_empty());
}

#[test]
fn the_8_bit_search_ranks_as_the_exact_one() {
    // Pseudo-random unit vectors of 384 dimensions: the best 10 by the
    // 8-bit scan scored again are (but for near ties at the edge) the
    // best 10 in full precision, with similarities within 0.01.
    let mut random = xorshift(0x9E37_79B9_7F4A_7C15u64);
    let mut next = move || (random() >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
    let vectors: Vec<Vec<f32>> = (0..2000)
        .map(|_| (0..384).map(|_| next()).collect())
        .collect();
    let mut set = VectorSet::default();
    for (slot, v) in vectors.iter().enumerate() {
        assert!(set.put(slot as u32, v));
    }
    let query: Vec<f32> = (0..384).map(|_| next()).collect();
    let unit = normalised(query.clone());
    let mut exact: Vec<(u32, f32)> = vectors
        .iter()
        .enumerate()
        .map(|(slot, v)| {
            (
                slot as u32,
                normalised(v.clone())
                    .iter()
                    .zip(&unit)
                    .map(|(a, b)| a * b)
                    .sum(),
            )
        })
        .collect();
    let by_slot: Vec<f32> = exact.iter().map(|h| h.1).collect();
    exact.sort_by(|a, b| b.1.total_cmp(&a.1));
    let found = set.similar(&query, -1.0, 10, |_| true);
    assert_eq!(found.len(), 10);
    let tenth = exact[9].1;
    let mut same = 0;
    for (slot, similarity) in &found {
        let truth = by_slot[*slot as usize];
        assert!(
            (similarity - truth).abs() < 0.01,
            "{similarity} against {truth}"
        );
        assert!(
            truth >= tenth - 0.01,
            "{truth} is far below the tenth best {tenth}"
        );
        same += usize::from(exact[..10].iter().any(|h| h.0 == *slot));
    }
    assert!(same >= 9, "{same} of the best 10");
    // A byte a component (the arrays grow by doubling).
    assert!(
        set.heap_bytes() < 2 * 2000 * (384 + 5),
        "{}",
        set.heap_bytes()
    );
    assert!(
        set.heap_bytes() < 2000 * 384 * 4 / 2,
        "under half of 32-bit floats"
    );
}

#[test]
fn a_large_set_read_by_its_signs_first_finds_the_closest() {
    // Past SIGN_SCAN_FROM vectors, each the sum of eight "words"
    // drawn by Zipf's law from 2,000 random vectors, so that every
    // vector shares the common words' direction (as a model's do,
    // and as makes signs agree the most); queries are sums of three
    // words. The two-pass search finds (nearly) the 10 closest by
    // exact similarity.
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
    let words: Vec<Vec<f32>> = (0..2000)
        .map(|_| {
            (0..384)
                .map(|_| (next() % 1000) as f32 / 1000.0 - 0.5)
                .collect()
        })
        .collect();
    let mut zipf = move || {
        // Rank r with probability about 1 / r (ranks 1..2000).
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
        ((2000f64.powf(u)) as usize).clamp(1, 2000) - 1
    };
    let mut sum_of = |n: usize| -> Vec<f32> {
        let mut sum = vec![0f32; 384];
        for _ in 0..n {
            let word = &words[zipf()];
            sum.iter_mut().zip(word).for_each(|(s, x)| *s += x);
        }
        normalised(sum)
    };
    let vectors: Vec<Vec<f32>> = (0..SIGN_SCAN_FROM + 3_000).map(|_| sum_of(8)).collect();
    let mut set = VectorSet::default();
    for (slot, v) in vectors.iter().enumerate() {
        assert!(set.put(slot as u32, v));
    }
    let (mut found_in_best, queries) = (0, 20);
    for _ in 0..queries {
        let query = sum_of(3);
        let mut exact: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .map(|(slot, v)| (slot, v.iter().zip(&query).map(|(a, b)| a * b).sum()))
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let found = set.similar(&query, -1.0, 10, |_| true);
        assert_eq!(found.len(), 10);
        // The first pass as it was finds the same, rows left out or not.
        assert_eq!(found, set.similar_plain(&query, -1.0, 10, |_| true));
        let some = |slot: u32| slot % 7 != 3;
        assert_eq!(
            set.similar(&query, 0.1, 200, some),
            set.similar_plain(&query, 0.1, 200, some)
        );
        let best: Vec<usize> = exact[..10].iter().map(|h| h.0).collect();
        found_in_best += found
            .iter()
            .filter(|(slot, _)| best.contains(&(*slot as usize)))
            .count();
    }
    assert!(
        found_in_best * 100 >= queries * 10 * 97,
        "{found_in_best} of the {} best",
        queries * 10
    );
}

#[test]
fn a_vector_past_the_most_components_is_refused_and_the_sums_hold() {
    let mut set = VectorSet::default();
    assert!(!set.put(0, &vec![1.0; MAX_DIMS + 1]));
    assert!(set.put(0, &vec![1.0; MAX_DIMS]));
    // The largest sum the set can make fits.
    let codes = vec![-127i8; MAX_DIMS];
    assert_eq!(dot_i8(&codes, &codes), 127 * 127 * MAX_DIMS as i32);
    let hits = set.similar(&vec![2.0; MAX_DIMS], 0.99, 5, |_| true);
    assert_eq!(hits.len(), 1);
    assert!((hits[0].1 - 1.0).abs() < 0.01);
}

#[test]
fn the_8_bit_dot_product_is_the_exact_integer_sum() {
    let a: Vec<i8> = (0..37).map(|i| i as i8).collect();
    let b = vec![-1i8; 37];
    assert_eq!(dot_i8(&a, &b), -(0..37).sum::<i32>());
    // Every length up to a few vectors' worth, every sign.
    let mut random = xorshift(0x2545_F491_4F6C_DD1Du64);
    let mut next = move || (random() >> 56) as u8 as i8;
    for len in [1, 15, 16, 17, 63, 64, 65, 383, 384, 385, 1536] {
        let a: Vec<i8> = (0..len).map(|_| next().max(-127)).collect();
        let b: Vec<i8> = (0..len).map(|_| next().max(-127)).collect();
        let plain: i32 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        assert_eq!(dot_i8(&a, &b), plain, "{len}");
    }
}

#[test]
fn the_centroid_points_between() {
    let c = centroid([&[1.0f32, 0.0][..], &[0.0, 1.0][..]]).expect("two vectors");
    assert!((c[0] - c[1]).abs() < 1e-6 && (c[0] - 0.70710677).abs() < 1e-5);
    assert!(centroid(std::iter::empty()).is_none());
}
