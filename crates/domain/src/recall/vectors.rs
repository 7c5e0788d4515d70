//! Vector similarity over compact vectors: the chat's vectors are compared
//! with the query in 8 bits (all of them, or in a large set those whose
//! signs agree most with the query's), then the best few are scored again
//! with the query in full precision.
//!
//! Vectors are kept normalised to unit length and stored in 8 bits a
//! component (a quarter of 32-bit floats: 388 bytes for all-MiniLM-L6-v2's
//! 384 dimensions instead of 1,536), one flat array slot after slot so the
//! scan reads memory in order: component `x` of a vector whose largest
//! component is `m` is kept as `round(x * 127 / m)`, with `m / 127` as the
//! vector's scale. The scan multiplies integers (the query quantised the
//! same way), so the best `2 * limit` by it are scored again, the query
//! in full precision against each vector's 8-bit components times its
//! scale, and the best `limit` of those (with the floor) are the answer. A
//! similarity so scored differs from the one of the vector as the endpoint
//! gave it by the rounding of its components: about 0.0003 on average and
//! under 0.002 for random vectors of 384 dimensions, at most
//! `sqrt(dims) * largest / 254` however the components fall.
//!
//! A set of [`SIGN_SCAN_FROM`] vectors or more is read in two passes, as
//! such a set outgrows the CPU's caches and a search then waits on memory
//! more than it computes: a first pass compares only the signs of the
//! components (a bit each, 48 bytes for 384 dimensions, an eighth of the
//! 8-bit array, in plain integer code), and the 8-bit pass reads the
//! [`SIGN_SCAN_SHARE`]th of the vectors whose signs agree most with the
//! query's. Two directions close in angle agree in most signs, so the
//! closest vectors are almost always among them: of all-MiniLM-L6-v2's
//! vectors of LoCoMo's 5,882 turns, for its 1,986 questions, 99.9% of the
//! 10 closest were (and retrieval's evidence in the best 10 was the same).
//! In process, at 100,000 vectors of 384 dimensions (issue 44's timing
//! test), the sign pass took about 0.75 ms and the 8-bit pass over its
//! sixteenth about 1 ms, where one 8-bit pass over every vector took 2.6
//! to 5 ms. Below the size, one pass reads every vector.
//!
//! Vectors have at most [`MAX_DIMS`] components: the integer sums cannot
//! overflow below that (`127 * 127 * MAX_DIMS` < 2^31).

use simsimd::SpatialSimilarity;

/// Unit-length vectors of one dimension, by slot number (the caller's),
/// in 8 bits a component (see the module documentation).
/// Invariants: `codes.len() == present.len() * dims`,
/// `signs.len() == present.len() * words(dims)` and
/// `scales.len() == present.len()`; a slot not present holds zeros and a
/// scale of 0; a present vector is its unit vector quantised, with its
/// scale (0 for an all-zero vector given, which matches nothing), and its
/// signs (bit `i % 64` of word `i / 64` set when component `i` is
/// positive).
#[derive(Debug, Default, Clone)]
pub struct VectorSet {
    dims: usize,
    codes: Vec<i8>,
    signs: Vec<u64>,
    scales: Vec<f32>,
    present: Vec<bool>,
    count: usize,
}

/// `v` scaled to unit length (unchanged when it is all zeros or not
/// finite: such a vector matches nothing).
pub fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm.is_finite() && norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
    v
}

/// `unit` in 8 bits a component, written to `codes`; returns the scale
/// (`largest component / 127`; 0 for all zeros).
fn quantise(unit: &[f32], codes: &mut [i8]) -> f32 {
    let largest = unit.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest <= 0.0 || !largest.is_finite() {
        codes.fill(0);
        return 0.0;
    }
    let to_code = 127.0 / largest;
    for (code, x) in codes.iter_mut().zip(unit) {
        // Within -127..=127 by construction; `as` saturates anyway.
        *code = (x * to_code).round() as i8;
    }
    largest / 127.0
}

/// The 64-bit words holding the signs of a vector of `dims` components.
fn words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `codes` (see [`VectorSet`]), written to `signs`.
fn sign_bits(codes: &[i8], signs: &mut [u64]) {
    signs.fill(0);
    for (i, &code) in codes.iter().enumerate() {
        if code > 0 {
            signs[i / 64] |= 1 << (i % 64);
        }
    }
}

/// From how many vectors a search reads the signs first (see the module
/// documentation): below it, the 8-bit scan alone is as fast.
pub const SIGN_SCAN_FROM: usize = 16_384;
/// The share of the vectors (one in this many) whose signs agree most
/// with the query's that the 8-bit scan reads, in sets of
/// [`SIGN_SCAN_FROM`] vectors or more.
pub const SIGN_SCAN_SHARE: usize = 16;

/// How many slots ahead the second pass starts reading a row (see
/// [`VectorSet::similar`]): 8 and 16 measured alike, 2 and 4 slower.
const READ_AHEAD: usize = 8;

/// How many more than asked the scan keeps for scoring again: the best
/// `limit * RESCORED` by the 8-bit similarity.
const RESCORED: usize = 2;
/// The most components a vector may have (embedding models give hundreds
/// to a few thousand); a longer one is refused.
pub const MAX_DIMS: usize = 65_536;

impl VectorSet {
    /// The dimension (0 before the first vector).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// How many slots hold a vector.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no slot holds a vector.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether `slot` holds a vector.
    pub fn has(&self, slot: u32) -> bool {
        self.present.get(slot as usize).copied().unwrap_or(false)
    }

    /// Puts `vector` (normalised and quantised here) in `slot`. Refused
    /// (false) when it is empty, longer than [`MAX_DIMS`] or its dimension
    /// is not the set's; the first vector sets the dimension.
    pub fn put(&mut self, slot: u32, vector: &[f32]) -> bool {
        if vector.is_empty()
            || vector.len() > MAX_DIMS
            || (self.dims != 0 && vector.len() != self.dims)
        {
            return false;
        }
        if self.dims == 0 {
            self.dims = vector.len();
        }
        let slot = slot as usize;
        if self.present.len() <= slot {
            self.present.resize(slot + 1, false);
            self.scales.resize(slot + 1, 0.0);
            self.codes.resize((slot + 1) * self.dims, 0);
            self.signs.resize((slot + 1) * words(self.dims), 0);
        }
        let unit = normalised(vector.to_vec());
        let codes = &mut self.codes[slot * self.dims..(slot + 1) * self.dims];
        self.scales[slot] = quantise(&unit, codes);
        let width = words(self.dims);
        sign_bits(codes, &mut self.signs[slot * width..(slot + 1) * width]);
        if !self.present[slot] {
            self.present[slot] = true;
            self.count += 1;
        }
        true
    }

    /// Empties `slot`.
    pub fn remove(&mut self, slot: u32) {
        let slot = slot as usize;
        if self.present.get(slot).copied().unwrap_or(false) {
            self.present[slot] = false;
            self.codes[slot * self.dims..(slot + 1) * self.dims].fill(0);
            let width = words(self.dims);
            self.signs[slot * width..(slot + 1) * width].fill(0);
            self.scales[slot] = 0.0;
            self.count -= 1;
        }
    }

    /// The unit vector in `slot` as kept (its 8-bit components times its
    /// scale), if any.
    pub fn get(&self, slot: u32) -> Option<Vec<f32>> {
        self.has(slot).then(|| {
            let scale = self.scales[slot as usize];
            self.row(slot as usize)
                .iter()
                .map(|&code| f32::from(code) * scale)
                .collect()
        })
    }

    fn row(&self, slot: usize) -> &[i8] {
        &self.codes[slot * self.dims..(slot + 1) * self.dims]
    }

    /// The best `limit` vectors by cosine similarity with `query`
    /// (normalised here) among the slots `keep` lets through, each at
    /// least `floor`, as `(slot, similarity)` best first (ties: the lower
    /// slot). Empty when the query's dimension is not the set's. The scan
    /// is over the 8-bit vectors (in a large set, those whose signs agree
    /// most with the query's); the similarities given are scored again in
    /// full precision (see the module documentation).
    pub fn similar(
        &self,
        query: &[f32],
        floor: f32,
        limit: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Vec<(u32, f32)> {
        if self.count == 0 || query.len() != self.dims || limit == 0 {
            return Vec::new();
        }
        let query = normalised(query.to_vec());
        let mut codes = vec![0i8; self.dims];
        let query_scale = quantise(&query, &mut codes);
        if query_scale == 0.0 {
            return Vec::new();
        }
        // No floor here: the floor applies to the similarities scored
        // again, so the rounding never drops a passage that reaches it.
        let rough_similarity =
            |slot: usize| dot_i8(self.row(slot), &codes) as f32 * self.scales[slot] * query_scale;
        let wanted = limit.saturating_mul(RESCORED);
        let candidates = match self.agreeing(&codes) {
            None => {
                let every = (0..self.scales.len())
                    .filter(|&slot| self.scales[slot] != 0.0)
                    .map(|slot| (slot as u32, rough_similarity(slot)));
                super::search::best(every, wanted, keep)
            }
            Some(slots) => {
                // The slots are scattered over an array larger than the
                // CPU's caches: reading a byte of each cache line of the
                // row a few slots ahead starts its loads while this row
                // is scored (a prefetch in safe code), which made this
                // loop three times faster (issue 44's note).
                let mut touched = 0i8;
                let read = slots.iter().enumerate().map(|(i, &slot)| {
                    if let Some(&ahead) = slots.get(i + READ_AHEAD) {
                        let row = self.row(ahead as usize);
                        touched ^= row
                            .iter()
                            .step_by(64)
                            .chain(row.last())
                            .fold(0, |a, &b| a ^ b);
                    }
                    (slot, rough_similarity(slot as usize))
                });
                let found = super::search::best(read, wanted, keep);
                std::hint::black_box(touched);
                found
            }
        };
        let mut exact: Vec<(u32, f32)> = candidates
            .into_iter()
            .filter_map(|(slot, _)| {
                let scale = self.scales[slot as usize];
                let row = self.row(slot as usize);
                let similarity = dot_codes_f32(row, &query) * scale;
                (similarity >= floor).then_some((slot, similarity))
            })
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        exact.truncate(limit);
        exact
    }

    /// The first pass of a large set's search (see the module
    /// documentation): the slots, in order, of the vectors whose signs
    /// disagree least with the query's (quantised as `codes`), as few as
    /// let through a [`SIGN_SCAN_SHARE`]th of the vectors (ties at the
    /// edge all in). `None` for a set below [`SIGN_SCAN_FROM`] vectors:
    /// the scan reads them all.
    fn agreeing(&self, codes: &[i8]) -> Option<Vec<u32>> {
        if self.count < SIGN_SCAN_FROM {
            return None;
        }
        let width = words(self.dims);
        let mut query = vec![0u64; width];
        sign_bits(codes, &mut query);
        // At most `dims` disagreements; below MAX_DIMS (65,536) a count
        // fits in u16, and MAX_DIMS itself saturates (still the worst).
        let disagreements: Vec<u16> = self
            .signs
            .chunks_exact(width)
            .zip(&self.scales)
            .map(|(row, &scale)| {
                let differ: u32 = row
                    .iter()
                    .zip(&query)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum();
                // An empty slot (scale 0) is never read.
                if scale == 0.0 {
                    u16::MAX
                } else {
                    u16::try_from(differ).unwrap_or(u16::MAX - 1)
                }
            })
            .collect();
        let mut histogram = vec![0usize; self.dims + 1];
        for &differ in &disagreements {
            if let Some(n) = histogram.get_mut(usize::from(differ)) {
                *n += 1;
            }
        }
        let wanted = self.count.div_ceil(SIGN_SCAN_SHARE);
        let mut seen = 0;
        let cutoff = histogram
            .iter()
            .position(|&n| {
                seen += n;
                seen >= wanted
            })
            .unwrap_or(self.dims);
        let cutoff = u16::try_from(cutoff).unwrap_or(u16::MAX - 1);
        Some(
            disagreements
                .iter()
                .enumerate()
                .filter(|&(_, &differ)| differ <= cutoff)
                .map(|(slot, _)| slot as u32)
                .collect(),
        )
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.codes.capacity()
            + self.signs.capacity() * std::mem::size_of::<u64>()
            + self.scales.capacity() * std::mem::size_of::<f32>()
            + self.present.capacity()
    }
}

/// The dot product of 8-bit components with full-precision ones, summed
/// in [`LANES`] running sums so that the compiler can use vector
/// instructions (one running sum is a chain of dependent additions: it
/// took half a microsecond for 384 components).
fn dot_codes_f32(codes: &[i8], query: &[f32]) -> f32 {
    let mut sums = [0f32; LANES];
    let mut code_blocks = codes.chunks_exact(LANES);
    let mut query_blocks = query.chunks_exact(LANES);
    for (c, q) in (&mut code_blocks).zip(&mut query_blocks) {
        for ((sum, &c), q) in sums.iter_mut().zip(c).zip(q) {
            *sum += f32::from(c) * q;
        }
    }
    let rest: f32 = code_blocks
        .remainder()
        .iter()
        .zip(query_blocks.remainder())
        .map(|(&c, q)| f32::from(c) * q)
        .sum();
    sums.iter().sum::<f32>() + rest
}

/// How many running sums [`dot_codes_f32`] keeps.
const LANES: usize = 16;

/// The dot product of 8-bit vectors, by `simsimd` (the widest integer
/// instructions the CPU has, picked at run time: AVX2, AVX-512 VNNI,
/// NEON; plain code elsewhere). Exact: the sum of the products as an
/// integer (no sum overflows for vectors of at most [`MAX_DIMS`]
/// components, 127 * 127 each). Plain Rust on x86-64's baseline
/// instruction set took about 50 ns a 384-dimension vector (issue 44's
/// note).
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    // Lengths are equal here (both the set's dimension); the sum is an
    // integer below 2^31, exactly representable.
    <i8 as SpatialSimilarity>::dot(a, b).map_or(0, |sum| sum as i32)
}

/// The mean of unit vectors, normalised: the direction "between" them.
/// `None` for no vectors.
pub fn centroid<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Option<Vec<f32>> {
    let mut sum: Option<Vec<f32>> = None;
    for v in vectors {
        match &mut sum {
            None => sum = Some(v.to_vec()),
            Some(s) if s.len() == v.len() => s.iter_mut().zip(v).for_each(|(a, b)| *a += b),
            Some(_) => {}
        }
    }
    sum.map(normalised)
}

#[cfg(test)]
pub(super) mod tests {
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
}
