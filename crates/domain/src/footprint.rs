//! How many bytes a value holds in memory: what the resident-memory budget
//! (issue 15) counts a chat as.
//!
//! [`Footprint::heap_bytes`] is what a value owns on the heap, not its own
//! inline size (the container it sits in counts that). Each allocation is
//! counted as glibc's malloc spends it ([`allocation_bytes`]): the request
//! plus an 8-byte header, rounded up to 16, at least 32 bytes; a
//! zero-capacity buffer owns nothing. Collections count their buckets or
//! nodes with an honest guess at how full they are ([`btree_bytes`],
//! [`hash_table_bytes`]). `tests/footprint.rs` checks the sum against
//! real allocations.

use std::collections::BTreeMap;
use std::mem::size_of;
use std::sync::Arc;

/// Bytes a value owns on the heap (see the module doc for how they count).
pub trait Footprint {
    /// The heap bytes this value owns, its own inline size not included.
    fn heap_bytes(&self) -> usize;
}

/// What glibc's malloc spends on a request of `requested` bytes: the
/// request plus its 8-byte chunk header rounded up to 16, at least 32;
/// nothing for a request of 0 (Rust allocates nothing then).
pub const fn allocation_bytes(requested: usize) -> usize {
    if requested == 0 {
        return 0;
    }
    let chunk = (requested + 8 + 15) & !15;
    if chunk < 32 { 32 } else { chunk }
}

/// Entries a B-tree node of the standard library holds at most.
const BTREE_CAPACITY: usize = 11;

/// Entries per node of a B-tree grown one insert at a time in ascending
/// order (appends): a full node splits into 6 and 5 entries, so a leaf
/// keeps about 6 entries and its parent one more between it and the next.
const BTREE_ENTRIES_PER_NODE: usize = 7;

/// The heap bytes of the nodes of a `BTreeMap<K, V>` (or a `BTreeSet<K>`
/// with `V = ()`) of `len` entries grown one insert at a time (the
/// entries' own heap not included). A tree of at most 11 entries is one
/// leaf.
pub const fn btree_bytes<K, V>(len: usize) -> usize {
    // A leaf: parent pointer, its index there and its length (12 bytes,
    // padded to 16 with the arrays' alignment), then the keys and values.
    let leaf = allocation_bytes(16 + BTREE_CAPACITY * (size_of::<K>() + size_of::<V>()));
    // An internal node adds its 12 child pointers.
    let internal = allocation_bytes(
        16 + BTREE_CAPACITY * (size_of::<K>() + size_of::<V>()) + (BTREE_CAPACITY + 1) * 8,
    );
    if len == 0 {
        return 0;
    }
    if len <= BTREE_CAPACITY {
        return leaf;
    }
    let leaves = len.div_ceil(BTREE_ENTRIES_PER_NODE);
    // Each level above has one node per (entries per node) nodes below.
    let mut internals = 0;
    let mut level = leaves;
    while level > 1 {
        level = level.div_ceil(BTREE_ENTRIES_PER_NODE);
        internals += level;
    }
    leaves * leaf + internals * internal
}

/// The heap bytes of a SwissTable (`HashMap`, `HashSet`, hashbrown's
/// `HashTable`) of `capacity` (as its `capacity()` answers) with entries
/// of `entry_size` bytes: one entry and one control byte per bucket, plus
/// 16 control bytes of padding. Buckets are a power of two, at most 7/8
/// of them usable (all but one below 8 buckets).
pub const fn hash_table_bytes(capacity: usize, entry_size: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    let entries = (buckets * entry_size + 15) & !15;
    allocation_bytes(entries + buckets + 16)
}

/// Implements [`Footprint`] as "owns nothing" for values kept inline.
macro_rules! inline_only {
    ($($ty:ty),* $(,)?) => {$(
        impl Footprint for $ty {
            fn heap_bytes(&self) -> usize {
                0
            }
        }
    )*};
}

/// Used by the impls of the domain's own types too (`sizes.rs`).
pub(crate) use inline_only;

inline_only!(bool, u8, u16, u32, u64, usize, i32, i64, ());

impl Footprint for String {
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.capacity())
    }
}

/// Inline up to 24 bytes (nothing on the heap), else one allocation of
/// its capacity.
impl Footprint for compact_str::CompactString {
    fn heap_bytes(&self) -> usize {
        if self.is_heap_allocated() {
            allocation_bytes(self.capacity())
        } else {
            0
        }
    }
}

impl Footprint for str {
    /// A `str` owned through a box or an `Arc` is counted by its owner.
    fn heap_bytes(&self) -> usize {
        0
    }
}

impl<T: Footprint> Footprint for Vec<T> {
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.capacity() * size_of::<T>())
            + self.iter().map(Footprint::heap_bytes).sum::<usize>()
    }
}

/// A boxed slice: one allocation of exactly its length.
impl<T: Footprint> Footprint for Box<[T]> {
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.len() * size_of::<T>())
            + self.iter().map(Footprint::heap_bytes).sum::<usize>()
    }
}

impl<T: Footprint> Footprint for Box<T> {
    fn heap_bytes(&self) -> usize {
        allocation_bytes(size_of::<T>()) + (**self).heap_bytes()
    }
}

impl<T: Footprint> Footprint for Option<T> {
    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, Footprint::heap_bytes)
    }
}

impl<A: Footprint, B: Footprint> Footprint for (A, B) {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes() + self.1.heap_bytes()
    }
}

/// Counted as owned by whoever holds it: a chat's `Arc` shares its value
/// with a stored row only for the time a commit takes.
impl<T: Footprint> Footprint for Arc<T> {
    fn heap_bytes(&self) -> usize {
        // The two reference counts, then the value.
        allocation_bytes(2 * size_of::<usize>() + size_of::<T>()) + (**self).heap_bytes()
    }
}

/// A map's nodes as grown one insert at a time ([`btree_bytes`]), plus
/// its entries' heap.
impl<K: Footprint, V: Footprint> Footprint for BTreeMap<K, V> {
    fn heap_bytes(&self) -> usize {
        btree_bytes::<K, V>(self.len())
            + self
                .iter()
                .map(|(k, v)| k.heap_bytes() + v.heap_bytes())
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests;
