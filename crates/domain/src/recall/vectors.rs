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
//! 8-bit array, in plain integer code: `vectors/signs.rs`), and the 8-bit
//! pass reads the [`SIGN_SCAN_SHARE`]th of the vectors whose signs agree
//! most with the query's, those that agree most first. Two directions
//! close in angle agree in most signs, so the closest vectors are almost
//! always among them: of all-MiniLM-L6-v2's vectors of LoCoMo's 5,882
//! turns, for its 1,986 questions, 99.7% of the 10 closest were with a
//! thirty-second kept (99.9% with a sixteenth, 98.2% with a sixty-fourth),
//! and retrieval's evidence in the best 10 was the same as with every
//! vector read. A thirty-second since issue 44's tenth session (a
//! sixteenth before): the 8-bit pass is most of a search's time, and its
//! rows are in huge pages where the system has them (`vectors/rows.rs`).
//! Timings: issue 44's note and BENCHMARKS.md.
//! Below the size, one pass reads every vector.
//!
//! Vectors have at most [`MAX_DIMS`] components: the integer sums cannot
//! overflow below that (`127 * 127 * MAX_DIMS` < 2^31).

use simsimd::SpatialSimilarity;

use rows::Rows;
use signs::{sign_bits, words};

mod rows;
mod signs;

/// Unit-length vectors of one dimension, by slot number (the caller's),
/// in 8 bits a component (see the module documentation).
/// Invariants: `codes` holds `present.len() * dims` bytes,
/// `signs.len() == present.len() * words(dims)` and
/// `scales.len() == present.len()`; a slot not present holds zeros and a
/// scale of 0; a present vector is its unit vector quantised, with its
/// scale (0 for an all-zero vector given, which matches nothing), and its
/// signs (bit `i % 64` of word `i / 64` set when component `i` is
/// positive).
#[derive(Debug, Default, Clone)]
pub struct VectorSet {
    dims: usize,
    codes: Rows,
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

/// From how many vectors a search reads the signs first (see the module
/// documentation): below it, the 8-bit scan alone is as fast.
pub const SIGN_SCAN_FROM: usize = 16_384;
/// The share of the vectors (one in this many) whose signs agree most
/// with the query's that the 8-bit scan reads, in sets of
/// [`SIGN_SCAN_FROM`] vectors or more.
pub const SIGN_SCAN_SHARE: usize = 32;

/// How many slots ahead the second pass asks for a row (see
/// [`VectorSet::ask_for`]): with x86-64's prefetch instruction 16 took
/// the vector phase (both passes) at 100,000 vectors from 0.83 to 0.71 ms
/// against 8, and 32 did no better (with reads instead, 8 and 16 measured alike, 2 and
/// 4 slower).
const READ_AHEAD: usize = 16;

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
            self.codes.grow_to((slot + 1) * self.dims);
            self.signs.resize((slot + 1) * words(self.dims), 0);
        }
        let unit = normalised(vector.to_vec());
        let codes = &mut self.codes.as_mut_slice()[slot * self.dims..(slot + 1) * self.dims];
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
            self.codes.as_mut_slice()[slot * self.dims..(slot + 1) * self.dims].fill(0);
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
        &self.codes.as_slice()[slot * self.dims..(slot + 1) * self.dims]
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
        self.similar_by(query, floor, limit, keep, false)
    }

    /// [`VectorSet::similar`] with the first pass as it was before issue
    /// 44's ninth session (the signs counted a word at a time, the slots
    /// read in slot order), for the timing and as an oracle: the same
    /// answer.
    #[cfg(test)]
    pub(super) fn similar_plain(
        &self,
        query: &[f32],
        floor: f32,
        limit: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Vec<(u32, f32)> {
        self.similar_by(query, floor, limit, keep, true)
    }

    /// [`VectorSet::similar`], its first pass the old one when `plain`.
    fn similar_by(
        &self,
        query: &[f32],
        floor: f32,
        limit: usize,
        keep: impl Fn(u32) -> bool,
        plain: bool,
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
        let candidates = match self.agreeing(&codes, plain) {
            None => {
                let every = (0..self.scales.len())
                    .filter(|&slot| self.scales[slot] != 0.0)
                    .map(|slot| (slot as u32, rough_similarity(slot)));
                super::search::best(every, wanted, keep)
            }
            Some(slots) => {
                // The slots are scattered over an array larger than the
                // CPU's caches: the row (and its scale) a few slots ahead
                // is asked for while this one is scored (see
                // `VectorSet::ask_for`), which made this loop three times
                // faster (issue 44's note). The order (fewest sign
                // disagreements first) does not change the best found,
                // only how many enter on the way.
                let mut touched = 0i8;
                let read = slots.iter().enumerate().map(|(i, &slot)| {
                    if let Some(&ahead) = slots.get(i + READ_AHEAD) {
                        touched ^= self.ask_for(ahead as usize);
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

    /// Starts loading `slot`'s row and scale into the CPU's caches without
    /// waiting for them: x86-64's prefetch instruction on each cache line
    /// (`safe_arch`'s safe form of it), which lets the scoring go on while
    /// the lines arrive. Elsewhere a byte of each line is read, its value
    /// returned for the caller to keep alive: a load that does the same,
    /// though later work waits on it when the processor's window of
    /// pending instructions fills (on x86-64 that wait was most of the
    /// 8-bit pass, issue 44's tenth session).
    fn ask_for(&self, slot: usize) -> i8 {
        let row = self.row(slot);
        let scale = &self.scales[slot];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
        {
            row.iter()
                .step_by(64)
                .chain(row.last())
                .for_each(safe_arch::prefetch_t0);
            safe_arch::prefetch_t0(scale);
            0
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
        {
            row.iter()
                .step_by(64)
                .chain(row.last())
                .fold(scale.to_bits() as i8, |a, &b| a ^ b)
        }
    }

    /// The first pass of a large set's search (see the module
    /// documentation): the slots of the vectors whose signs disagree
    /// least with the query's (quantised as `codes`), as few as let
    /// through a [`SIGN_SCAN_SHARE`]th of the vectors (ties at the edge
    /// all in), fewest disagreements first. `None` for a set below [`SIGN_SCAN_FROM`] vectors:
    /// the scan reads them all.
    fn agreeing(&self, codes: &[i8], plain: bool) -> Option<Vec<u32>> {
        if self.count < SIGN_SCAN_FROM {
            return None;
        }
        let mut query = vec![0u64; words(self.dims)];
        sign_bits(codes, &mut query);
        let wanted = self.count.div_ceil(SIGN_SCAN_SHARE);
        #[cfg(test)]
        if plain {
            return Some(signs::agreeing_plain(
                &self.signs,
                &self.scales,
                &query,
                self.dims,
                wanted,
            ));
        }
        #[cfg(not(test))]
        let _ = plain;
        Some(signs::agreeing(
            &self.signs,
            &self.scales,
            &query,
            self.dims,
            wanted,
        ))
    }

    /// Bytes held on the heap and in the rows' mapping.
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
pub(super) mod tests;
