//! Where a set's 8-bit rows live: on the heap while they are small, in an
//! anonymous memory mapping of their own once they pass [`MAPPED_FROM`]
//! bytes, given to the kernel's transparent huge pages where it offers
//! them (Linux).
//!
//! Why: a large set's search reads a share of its rows, scattered over
//! the whole array (see [`super`]). On 4 KiB pages nearly every row read
//! is on a page of its own, so it costs a miss in the CPU's address cache
//! (in a virtual machine, a walk of two page tables) before its memory is
//! even asked for. In 2 MiB pages the whole array of 100,000 rows of 384
//! components needs 19 entries. Most Linux systems give huge pages only
//! to memory that asks for them (`madvise` mode), which the heap's
//! allocator does not; a mapping of its own can ask. Measured (issue 44's
//! note): the 8-bit pass over a sixteenth of 100,000 rows 0.86 to 0.94 ms
//! on 4 KiB pages, 0.61 to 0.65 ms in huge pages.
//!
//! A mapping is memory, not a file: nothing is written anywhere, and where
//! the system refuses a mapping the rows stay on the heap, just as fast as
//! before.

use memmap2::MmapMut;

/// From how many bytes the rows move to a mapping of their own: below it a
/// huge page would be mostly empty, and the rows fit the CPU's caches
/// anyway (16,384 rows of 256 components, where a set starts its search
/// with the signs, are 4 MiB).
pub(super) const MAPPED_FROM: usize = 4 << 20;

/// A huge page's size on x86-64 and most 64-bit ARM systems: a mapping's
/// length is rounded up to it, so that its end is not a partial page.
const HUGE_PAGE: usize = 2 << 20;

/// The rows' bytes, grown only (a removed vector's row is zeroed in place).
/// Invariant: `len` bytes are in use, every one past what was written is
/// zero, and `len` is at most the storage's capacity. Once the system
/// refuses a mapping, the rows stay on the heap (`refused`): no mapping is
/// asked for again at every growth.
#[derive(Debug, Default)]
pub(super) struct Rows {
    storage: Storage,
    len: usize,
    refused: bool,
}

#[derive(Debug)]
enum Storage {
    Heap(Vec<i8>),
    Mapped(MmapMut),
}

impl Default for Storage {
    fn default() -> Self {
        Storage::Heap(Vec::new())
    }
}

impl Rows {
    /// The bytes in use.
    pub(super) fn as_slice(&self) -> &[i8] {
        match &self.storage {
            Storage::Heap(v) => &v[..self.len],
            Storage::Mapped(map) => bytemuck::cast_slice(&map[..self.len]),
        }
    }

    /// The bytes in use, to write.
    pub(super) fn as_mut_slice(&mut self) -> &mut [i8] {
        match &mut self.storage {
            Storage::Heap(v) => &mut v[..self.len],
            Storage::Mapped(map) => bytemuck::cast_slice_mut(&mut map[..self.len]),
        }
    }

    /// Grows to `len` bytes in use (the new ones zero); a smaller `len`
    /// changes nothing. Past [`MAPPED_FROM`] bytes the rows move to a
    /// mapping (doubling its length when it is full, as a `Vec` would),
    /// or stay on the heap where the system gives no mapping.
    pub(super) fn grow_to(&mut self, len: usize) {
        if len <= self.len {
            return;
        }
        let fits = match &self.storage {
            Storage::Heap(_) => len < MAPPED_FROM || self.refused,
            Storage::Mapped(map) => len <= map.len(),
        };
        if !fits {
            match mapping(len.max(self.capacity().saturating_mul(2))) {
                Some(mut map) => {
                    map[..self.len].copy_from_slice(bytemuck::cast_slice(self.as_slice()));
                    self.storage = Storage::Mapped(map);
                }
                None => self.refused = true,
            }
        }
        match &mut self.storage {
            // A mapping is zero when made and the bytes past `len` were
            // never written: growing writes nothing.
            Storage::Mapped(map) if len <= map.len() => {}
            Storage::Mapped(map) => {
                // No larger mapping to be had: back to the heap.
                let mut heap = Vec::with_capacity(len);
                heap.extend_from_slice(bytemuck::cast_slice::<u8, i8>(&map[..self.len]));
                heap.resize(len, 0);
                self.storage = Storage::Heap(heap);
            }
            Storage::Heap(v) => v.resize(len, 0),
        }
        self.len = len;
    }

    /// Bytes held (a mapping's whole length: the kernel may back all of it).
    pub(super) fn capacity(&self) -> usize {
        match &self.storage {
            Storage::Heap(v) => v.capacity(),
            Storage::Mapped(map) => map.len(),
        }
    }

    /// Whether the rows are in a mapping of their own (for the tests).
    #[cfg(test)]
    pub(super) fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped(_))
    }
}

impl Clone for Rows {
    fn clone(&self) -> Self {
        let mut copy = Rows::default();
        copy.grow_to(self.len);
        copy.as_mut_slice().copy_from_slice(self.as_slice());
        copy
    }
}

/// A zeroed anonymous mapping of at least `len` bytes (rounded up to a
/// huge page), advised to use huge pages; `None` when the system gives
/// none.
fn mapping(len: usize) -> Option<MmapMut> {
    let len = len.checked_next_multiple_of(HUGE_PAGE)?;
    let map = MmapMut::map_anon(len).ok()?;
    // Only a hint: a kernel without transparent huge pages (or with them
    // off) refuses it, and the rows work the same on small pages.
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    Some(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_bytes_across_the_move_to_a_mapping_and_its_growth() {
        let mut rows = Rows::default();
        let step = 1 << 20;
        let mut expected = Vec::new();
        for round in 0..12u8 {
            let start = rows.as_slice().len();
            rows.grow_to(start + step);
            expected.resize(start + step, 0);
            // The new bytes are zero, the old ones unchanged.
            assert_eq!(rows.as_slice(), &expected[..], "round {round}");
            let i8_round = i8::try_from(round).expect("rounds below 128");
            for (i, b) in rows.as_mut_slice()[start..].iter_mut().enumerate() {
                *b = i8_round.wrapping_add(i as i8);
            }
            for (i, b) in expected[start..].iter_mut().enumerate() {
                *b = i8_round.wrapping_add(i as i8);
            }
            assert!(rows.capacity() >= rows.as_slice().len());
        }
        // 12 MiB: past the size, so in a mapping where the system gives
        // one (every system the tests run on).
        #[cfg(any(unix, windows))]
        assert!(rows.is_mapped());
        assert_eq!(rows.as_slice(), &expected[..]);
        let copy = rows.clone();
        assert_eq!(copy.as_slice(), rows.as_slice());
        rows.as_mut_slice()[0] = 99;
        assert_ne!(copy.as_slice()[0], 99, "a clone is a copy");
    }

    #[test]
    fn small_rows_stay_on_the_heap_and_a_smaller_length_changes_nothing() {
        let mut rows = Rows::default();
        rows.grow_to(1_000);
        rows.as_mut_slice()[999] = 5;
        rows.grow_to(10);
        assert_eq!(rows.as_slice().len(), 1_000);
        assert_eq!(rows.as_slice()[999], 5);
        assert!(!rows.is_mapped());
        assert_eq!(rows.clone().as_slice(), rows.as_slice());
    }
}
