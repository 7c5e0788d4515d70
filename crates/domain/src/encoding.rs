//! [`EncodingCache`]: a value's encoding for the wire, made once and kept
//! beside it.

use std::fmt;
use std::sync::OnceLock;

use crate::footprint::{Footprint, allocation_bytes};

/// The bytes an outer layer encodes a value into, kept beside the value so
/// that a value shared by many readers (an [`Injection`] behind an `Arc`,
/// read by every `GetInjection` and sent to every subscriber of its
/// revision) is encoded once. The domain never fills or reads it; it knows
/// no wire format.
///
/// Invariants: it is filled at most once ([`EncodingCache::get_or_fill`]),
/// so the value must not change after it is filled (an `Arc`-shared value
/// does not; a value changed through `Arc::make_mut` is changed before it is
/// shared). A clone starts empty, so a copy that is then changed is encoded
/// anew. It takes no part in equality (two values equal in every field are
/// equal whatever their caches hold) and is never serialized.
///
/// [`Injection`]: crate::refresh::Injection
#[derive(Default)]
pub struct EncodingCache(OnceLock<Box<[u8]>>);

impl EncodingCache {
    /// The cached bytes, running `encode` first when there are none yet.
    /// Concurrent first callers wait for one `encode`.
    pub fn get_or_fill(&self, encode: impl FnOnce() -> Vec<u8>) -> &[u8] {
        self.0.get_or_init(|| encode().into_boxed_slice())
    }

    /// The cached bytes, if filled.
    pub fn get(&self) -> Option<&[u8]> {
        self.0.get().map(|bytes| &bytes[..])
    }
}

impl Clone for EncodingCache {
    /// An empty cache: the clone may be changed, its encoding made anew.
    fn clone(&self) -> Self {
        EncodingCache::default()
    }
}

impl PartialEq for EncodingCache {
    /// Always equal: the cache is derived from the value it sits beside.
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for EncodingCache {}

impl fmt::Debug for EncodingCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.get() {
            Some(bytes) => write!(f, "EncodingCache({} bytes)", bytes.len()),
            None => f.write_str("EncodingCache(empty)"),
        }
    }
}

impl Footprint for EncodingCache {
    /// The encoding's allocation once filled; nothing before.
    fn heap_bytes(&self) -> usize {
        self.get().map_or(0, |bytes| allocation_bytes(bytes.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_once_clones_empty_and_counts_its_allocation() {
        let cache = EncodingCache::default();
        assert_eq!(cache.heap_bytes(), 0);
        assert_eq!(cache.get_or_fill(|| vec![1, 2, 3]), &[1, 2, 3]);
        assert_eq!(
            cache.get_or_fill(|| unreachable!("filled once")),
            &[1, 2, 3]
        );
        assert_eq!(cache.heap_bytes(), allocation_bytes(3));
        assert_eq!(cache.clone().get(), None);
        assert_eq!(cache, EncodingCache::default());
        assert_eq!(format!("{cache:?}"), "EncodingCache(3 bytes)");
    }
}
