//! Vector similarity, searched exactly: every vector of the chat is
//! compared with the query (a chat holds thousands of chunks, not
//! billions). Vectors are kept normalised to unit length in one flat
//! array, slot after slot, so the cosine similarity is a dot product and
//! the scan reads memory in order.

/// Unit-length vectors of one dimension, by slot number (the caller's).
/// Invariants: `data.len() == present.len() * dims`; a slot not present
/// holds zeros; every present vector has length 1 (or is all zeros, for a
/// zero vector given).
#[derive(Debug, Default, Clone)]
pub struct VectorSet {
    dims: usize,
    data: Vec<f32>,
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

    /// Puts `vector` (normalised here) in `slot`. Refused (false) when it is
    /// empty or its dimension is not the set's; the first vector sets the
    /// dimension.
    pub fn put(&mut self, slot: u32, vector: &[f32]) -> bool {
        if vector.is_empty() || (self.dims != 0 && vector.len() != self.dims) {
            return false;
        }
        if self.dims == 0 {
            self.dims = vector.len();
        }
        let slot = slot as usize;
        if self.present.len() <= slot {
            self.present.resize(slot + 1, false);
            self.data.resize((slot + 1) * self.dims, 0.0);
        }
        let unit = normalised(vector.to_vec());
        self.data[slot * self.dims..(slot + 1) * self.dims].copy_from_slice(&unit);
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
            self.data[slot * self.dims..(slot + 1) * self.dims].fill(0.0);
            self.count -= 1;
        }
    }

    /// The unit vector in `slot`, if any.
    pub fn get(&self, slot: u32) -> Option<&[f32]> {
        self.has(slot)
            .then(|| &self.data[slot as usize * self.dims..(slot as usize + 1) * self.dims])
    }

    /// The cosine similarity of every vector with `query` (normalised
    /// here) that reaches `floor`, as `(slot, similarity)`, in no order.
    /// Empty when the query's dimension is not the set's.
    pub fn similar(&self, query: &[f32], floor: f32) -> Vec<(u32, f32)> {
        if self.count == 0 || query.len() != self.dims {
            return Vec::new();
        }
        let query = normalised(query.to_vec());
        let mut out = Vec::new();
        for (slot, row) in self.data.chunks_exact(self.dims).enumerate() {
            let similarity = dot(row, &query);
            if similarity >= floor && self.present[slot] {
                out.push((slot as u32, similarity));
            }
        }
        out
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<f32>() + self.present.capacity()
    }
}

/// The dot product, in eight lanes so the compiler can use SIMD.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() - a.len() % 8);
    let (b8, b_rest) = b.split_at(a8.len());
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + rest
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
mod tests {
    use super::*;

    #[test]
    fn the_closest_vector_scores_highest_and_floors_apply() {
        let mut set = VectorSet::default();
        assert!(set.put(0, &[1.0, 0.0, 0.0]));
        assert!(set.put(1, &[1.0, 1.0, 0.0]));
        assert!(set.put(3, &[0.0, 0.0, 2.0]));
        assert!(!set.put(2, &[1.0, 0.0]), "another dimension is refused");
        let mut hits = set.similar(&[2.0, 0.1, 0.0], 0.5);
        hits.sort_by(|a, b| b.1.total_cmp(&a.1));
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 1]);
        assert!((hits[0].1 - 0.99875).abs() < 1e-3);
        assert!(set.similar(&[1.0, 0.0], 0.0).is_empty());
        set.remove(0);
        assert_eq!(set.len(), 2);
        assert!(set.similar(&[1.0, 0.0, 0.0], 0.9).is_empty());
    }

    #[test]
    fn the_dot_product_covers_every_lane() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let b = vec![1.0; 19];
        assert_eq!(dot(&a, &b), (0..19).sum::<i32>() as f32);
    }

    #[test]
    fn the_centroid_points_between() {
        let c = centroid([&[1.0f32, 0.0][..], &[0.0, 1.0][..]]).expect("two vectors");
        assert!((c[0] - c[1]).abs() < 1e-6 && (c[0] - 0.70710677).abs() < 1e-5);
        assert!(centroid(std::iter::empty()).is_none());
    }
}
