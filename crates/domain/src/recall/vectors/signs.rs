//! The first pass of a large set's search (see [`super`]): each vector's
//! signs against the query's, a bit a component, and the slots of the
//! vectors that disagree least.
//!
//! The pass reads every vector's signs (48 bytes for 384 dimensions) and
//! counts the bits that differ from the query's. recapd's x86-64 builds
//! target x86-64-v2 (`.cargo/config.toml`), whose population count
//! instruction makes `count_ones` one instruction a word: the pass over
//! 100,000 vectors of 384 dimensions then takes about 0.26 ms. x86-64's
//! baseline has no such instruction, and choosing one at run time takes
//! `unsafe`, which this crate forbids: a build for it counts without one,
//! a whole row at once for the common widths (the widths known when
//! compiling, the partial sums of several words added before they are
//! folded into one number; 0.5 to 0.75 ms where `count_ones` took 0.6 to
//! 0.85). Either way the histogram of the counts is kept in the same pass.

/// The 64-bit words holding the signs of a vector of `dims` components.
pub(super) fn words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `codes` (see [`super::VectorSet`]), written to `signs`:
/// bit `i % 64` of word `i / 64` set when component `i` is positive.
pub(super) fn sign_bits(codes: &[i8], signs: &mut [u64]) {
    signs.fill(0);
    for (i, &code) in codes.iter().enumerate() {
        if code > 0 {
            signs[i / 64] |= 1 << (i % 64);
        }
    }
}

/// The slots of the rows of `signs` (`query.len()` words each, one row a
/// slot) that disagree least with `query`, as few as let through `wanted`
/// rows (ties at the edge all in), those with fewer disagreements first
/// (then by slot); a row whose scale in `scales` is 0 (an empty slot) is
/// never let through. `dims` is the
/// vectors' dimension (the most bits that can differ).
pub(super) fn agreeing(
    signs: &[u64],
    scales: &[f32],
    query: &[u64],
    dims: usize,
    wanted: usize,
) -> Vec<u32> {
    let mut disagreements = Vec::with_capacity(scales.len());
    let mut tally = Histogram::new(dims);
    match query.len() {
        // 256, 384, 512, 768, 1,024 and 1,536 dimensions.
        4 => count_rows::<4>(signs, scales, query, &mut disagreements, &mut tally),
        6 => count_rows::<6>(signs, scales, query, &mut disagreements, &mut tally),
        8 => count_rows::<8>(signs, scales, query, &mut disagreements, &mut tally),
        12 => count_rows::<12>(signs, scales, query, &mut disagreements, &mut tally),
        16 => count_rows::<16>(signs, scales, query, &mut disagreements, &mut tally),
        24 => count_rows::<24>(signs, scales, query, &mut disagreements, &mut tally),
        _ => count_any(signs, scales, query, &mut disagreements, &mut tally),
    }
    let (histogram, cutoff) = tally.merged_with_cutoff(wanted);
    // Fewest disagreements first (a counting sort by the histogram, slot
    // order within a count), so that the 8-bit pass meets the likely best
    // early and fewer of the rows after them enter its best so far.
    let mut start: Vec<usize> = histogram[..=cutoff]
        .iter()
        .scan(0, |sum, &n| {
            let at = *sum;
            *sum += n;
            Some(at)
        })
        .collect();
    let mut slots = vec![0u32; histogram[..=cutoff].iter().sum()];
    for (slot, &differ) in disagreements.iter().enumerate() {
        if let Some(at) = start.get_mut(usize::from(differ)) {
            slots[*at] = slot as u32;
            *at += 1;
        }
    }
    slots
}

/// [`agreeing`] as it was before issue 44's ninth session: every row
/// counted a word at a time, the slots in slot order. Not used by
/// searches: kept as the oracle of the tests and the timing's baseline
/// (its answer holds the same slots; a search over either finds the same
/// best, which does not depend on the order rows are read in).
#[cfg(test)]
pub(super) fn agreeing_plain(
    signs: &[u64],
    scales: &[f32],
    query: &[u64],
    dims: usize,
    wanted: usize,
) -> Vec<u32> {
    let mut disagreements = Vec::with_capacity(scales.len());
    let mut tally = Histogram::new(dims);
    count_any(signs, scales, query, &mut disagreements, &mut tally);
    let (_, cutoff) = tally.merged_with_cutoff(wanted);
    let cutoff = u16::try_from(cutoff).unwrap_or(u16::MAX - 1);
    disagreements
        .iter()
        .enumerate()
        .filter(|&(_, &differ)| differ <= cutoff)
        .map(|(slot, _)| slot as u32)
        .collect()
}

/// What a row's count is kept as: `u16::MAX` for an empty slot (scale 0,
/// never read), else the count (at most `dims`, below
/// [`super::MAX_DIMS`] a u16; `MAX_DIMS` itself saturates, still the
/// worst).
fn kept(differ: u32, scale: f32) -> u16 {
    if scale == 0.0 {
        u16::MAX
    } else {
        u16::try_from(differ).unwrap_or(u16::MAX - 1)
    }
}

/// How many histograms [`Histogram`] interleaves.
const HISTOGRAMS: usize = 4;

/// The histogram of the rows' counts (index: bits that differ), kept as
/// [`HISTOGRAMS`] interleaved ones (row `i` in the `i % HISTOGRAMS`th)
/// and added up at the end: neighbouring rows often have the same count,
/// and in one histogram each increment of a bin waits on the one before
/// it through memory (a third of the pass, issue 44's tenth session).
struct Histogram {
    bins: Vec<usize>,
    width: usize,
}

impl Histogram {
    /// Empty, for counts of at most `dims`.
    fn new(dims: usize) -> Histogram {
        Histogram {
            bins: vec![0; HISTOGRAMS * (dims + 1)],
            width: dims + 1,
        }
    }

    /// Tallies row `row`'s count `differ` (an empty slot's `u16::MAX` is
    /// past the end: not tallied).
    fn tally(&mut self, row: usize, differ: u16) {
        let differ = usize::from(differ);
        if differ < self.width
            && let Some(n) = self.bins.get_mut(row % HISTOGRAMS * self.width + differ)
        {
            *n += 1;
        }
    }

    /// The histogram (how many rows have each count) and the cutoff: the
    /// fewest disagreements that let through `wanted` rows (the most
    /// possible, `dims`, when fewer rows are counted).
    fn merged_with_cutoff(&self, wanted: usize) -> (Vec<usize>, usize) {
        let mut sum = vec![0; self.width];
        for lane in self.bins.chunks_exact(self.width) {
            sum.iter_mut().zip(lane).for_each(|(s, n)| *s += n);
        }
        let mut seen = 0;
        let cutoff = sum
            .iter()
            .position(|&n| {
                seen += n;
                seen >= wanted
            })
            .unwrap_or(self.width - 1);
        (sum, cutoff)
    }
}

/// [`agreeing`]'s counts for rows of `W` words (at most 30: see
/// [`differ`]), pushed to `out` and tallied in `histogram`.
fn count_rows<const W: usize>(
    signs: &[u64],
    scales: &[f32],
    query: &[u64],
    out: &mut Vec<u16>,
    histogram: &mut Histogram,
) {
    let Ok(query) = <&[u64; W]>::try_from(query) else {
        return count_any(signs, scales, query, out, histogram);
    };
    let (rows, _) = signs.as_chunks::<W>();
    for (i, (row, &scale)) in rows.iter().zip(scales).enumerate() {
        let differ = kept(differ(row, query), scale);
        histogram.tally(i, differ);
        out.push(differ);
    }
}

/// [`agreeing`]'s counts for rows of any width (`count_ones` a word).
fn count_any(
    signs: &[u64],
    scales: &[f32],
    query: &[u64],
    out: &mut Vec<u16>,
    histogram: &mut Histogram,
) {
    for (i, (row, &scale)) in signs
        .chunks_exact(query.len().max(1))
        .zip(scales)
        .enumerate()
    {
        let differ: u32 = row
            .iter()
            .zip(query)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        let differ = kept(differ, scale);
        histogram.tally(i, differ);
        out.push(differ);
    }
}

/// How many bits differ between `a` and `b`, `W` words each (at most 30):
/// `count_ones` a word where the build has a population count instruction
/// (x86-64-v2, as `.cargo/config.toml` builds; 64-bit ARM), else
/// [`differ_without_popcnt`].
fn differ<const W: usize>(a: &[u64; W], b: &[u64; W]) -> u32 {
    if cfg!(any(target_feature = "popcnt", target_arch = "aarch64")) {
        a.iter().zip(b).map(|(a, b)| (a ^ b).count_ones()).sum()
    } else {
        differ_without_popcnt(a, b)
    }
}

/// How many bits differ between `a` and `b`, `W` words each (at most 30),
/// counted without a population count instruction (x86-64's baseline has
/// none, and `count_ones` is then a dozen shifts, masks and adds a word): each word's bits are
/// summed in pairs and then in 4-bit fields (at most 4 each), three words'
/// fields added together (at most 12, below 16), those folded into bytes
/// and added over the row (at most 24 a group of three words: below 256
/// for up to ten groups, 30 words), the bytes added in pairs into 16-bit
/// lanes (a row may differ in more than 255 bits) and the lanes summed by
/// one multiplication. The same count as `count_ones` (a test compares them).
fn differ_without_popcnt<const W: usize>(a: &[u64; W], b: &[u64; W]) -> u32 {
    const PAIRS: u64 = 0x5555_5555_5555_5555;
    const NIBBLES: u64 = 0x3333_3333_3333_3333;
    const BYTES: u64 = 0x0f0f_0f0f_0f0f_0f0f;
    const LANES: u64 = 0x00ff_00ff_00ff_00ff;
    const LANE_ONES: u64 = 0x0001_0001_0001_0001;
    let mut bytes = 0u64;
    for (a, b) in a.chunks(3).zip(b.chunks(3)) {
        let mut nibbles = 0u64;
        for (a, b) in a.iter().zip(b) {
            let x = a ^ b;
            let x = x - ((x >> 1) & PAIRS);
            nibbles += (x & NIBBLES) + ((x >> 2) & NIBBLES);
        }
        bytes += (nibbles & BYTES) + ((nibbles >> 4) & BYTES);
    }
    // Bytes to 16-bit lanes (a row's count may pass 255), then summed.
    let lanes = (bytes & LANES) + ((bytes >> 8) & LANES);
    (lanes.wrapping_mul(LANE_ONES) >> 48) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::vectors::tests::xorshift;

    #[test]
    fn a_row_s_count_is_count_ones_for_every_width() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1Du64);
        for _ in 0..2_000 {
            let a: [u64; 30] = std::array::from_fn(|_| next());
            // All ones now and then: the largest count.
            let b: [u64; 30] = if next().is_multiple_of(8) {
                a.map(|x| !x)
            } else {
                std::array::from_fn(|_| next())
            };
            let plain = |w: usize| -> u32 {
                a[..w]
                    .iter()
                    .zip(&b[..w])
                    .map(|(x, y)| (x ^ y).count_ones())
                    .sum()
            };
            let first = |w: usize| (a[..w].to_vec(), b[..w].to_vec());
            macro_rules! check {
                ($($w:literal),*) => {$(
                    let (x, y) = first($w);
                    let (x, y): ([u64; $w], [u64; $w]) =
                        (x.try_into().expect("w"), y.try_into().expect("w"));
                    assert_eq!(differ(&x, &y), plain($w), "{} words", $w);
                    assert_eq!(differ_without_popcnt(&x, &y), plain($w), "{} words", $w);
                )*};
            }
            check!(1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 29, 30);
        }
    }

    #[test]
    fn the_rows_kept_are_the_same_by_any_width_s_count() {
        // 3,000 rows of 6 words (and of 5, the plain path), a few empty:
        // the fixed-width count and the plain one keep the same slots, fewest
        // disagreements first.
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15u64);
        for width in [5, 6, 12] {
            let rows = 3_000;
            let signs: Vec<u64> = (0..rows * width).map(|_| next()).collect();
            let scales: Vec<f32> = (0..rows)
                .map(|_| if next().is_multiple_of(50) { 0.0 } else { 0.01 })
                .collect();
            let query: Vec<u64> = (0..width).map(|_| next()).collect();
            let dims = width * 64;
            let (mut plain, mut histogram) = (Vec::new(), Histogram::new(dims));
            count_any(&signs, &scales, &query, &mut plain, &mut histogram);
            let found = agreeing(&signs, &scales, &query, dims, rows / 16);
            assert!(found.len() >= rows / 16, "{}", found.len());
            let worst = found.iter().map(|&s| plain[s as usize]).max();
            let cutoff = worst.expect("some rows");
            let mut expected: Vec<u32> = (0..rows as u32)
                .filter(|&s| plain[s as usize] <= cutoff)
                .collect();
            expected.sort_by_key(|&s| (plain[s as usize], s));
            assert_eq!(found, expected, "width {width}");
            assert!(found.iter().all(|&s| scales[s as usize] != 0.0));
            // The cutoff is the first count that lets enough through.
            let below = plain.iter().filter(|&&d| d < cutoff).count();
            assert!(below < rows / 16, "{below}");
        }
    }
}
