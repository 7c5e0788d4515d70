//! What the engine holds of lorebooks: one async lock per book (so edits of
//! one book in this process run one after another) and a cache of parsed
//! books, each with the stored version it was parsed from.
//!
//! Invariant: a book enters the cache only under its lock (after a commit
//! of it, or a read of its row), so the cache never goes back to an older
//! version than a write of this process left it at. Across replicas the
//! cache is trusted only once the stored version is read and matches.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;
use crate::domain::world_info::book::Book;

/// The bytes the cache keeps parsed at most: a book weighs its text's
/// length (standing for the parsed entries) plus the estimated size of
/// the regex keys its scans compiled (`CompiledKeys::footprint_bytes`,
/// which grows as scans compile keys: the weight is counted again each
/// time the book is looked up or kept). Past the budget the least
/// recently used books are dropped (and parsed again from the store when
/// next needed). One book larger than the whole budget is still kept,
/// alone.
pub(super) const CACHE_BUDGET_BYTES: usize = 256 * 1024 * 1024;

/// A book's key: its tenant and name.
pub(super) type BookKey = (Tenant, String);

/// A book as loaded: parsed, with the stored version and what a listing
/// shows of it.
#[derive(Clone, Debug)]
pub(super) struct Loaded {
    /// The stored version it was parsed from (or committed as).
    pub(super) version: u64,
    /// The book.
    pub(super) book: Arc<Book>,
    /// When it last changed, µs since the epoch.
    pub(super) updated_us: UnixMicros,
    /// Its file's length, in bytes (its weight in the cache).
    pub(super) bytes: usize,
    /// The bytes of the entry edits stored since its text was last
    /// written whole (see `store::lorebooks`): past the book's own bytes
    /// the next edit writes the book whole again.
    pub(super) log_bytes: u64,
}

/// One cached book, when it was last used (a tick of the cache) and the
/// weight it was last counted at in the cache's total.
struct Cached {
    loaded: Loaded,
    used: u64,
    weight: usize,
}

/// What `loaded` weighs now: its text plus its compiled keys.
fn weight(loaded: &Loaded) -> usize {
    loaded
        .bytes
        .saturating_add(loaded.book.compiled_keys().footprint_bytes())
}

/// The parsed books, least recently used dropped past the budget.
#[derive(Default)]
struct BookCache {
    books: HashMap<BookKey, Cached>,
    bytes: usize,
    tick: u64,
}

impl BookCache {
    /// Drops the least recently used books while past the budget (the
    /// last one stays).
    fn evict_past_budget(&mut self) {
        while self.bytes > CACHE_BUDGET_BYTES && self.books.len() > 1 {
            let Some(oldest) = self
                .books
                .iter()
                .min_by_key(|(_, c)| c.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(gone) = self.books.remove(&oldest) {
                self.bytes -= gone.weight;
            }
        }
    }
}

/// The per-book locks and the cache, shared by the engine's handles.
#[derive(Default)]
pub(in crate::engine) struct Shelf {
    locks: Mutex<HashMap<BookKey, Arc<tokio::sync::Mutex<()>>>>,
    cache: Mutex<BookCache>,
}

/// A book's lock, held; dropping it lets the next waiter in, and forgets
/// the lock when nobody else holds or waits for it.
pub(super) struct BookGuard<'a> {
    shelf: &'a Shelf,
    key: BookKey,
    lock: Arc<tokio::sync::Mutex<()>>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<'a> BookGuard<'a> {
    /// The shelf the lock belongs to.
    pub(super) fn shelf(&self) -> &'a Shelf {
        self.shelf
    }
}

impl Drop for BookGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut locks = self.shelf.locks.lock();
        // The map's and this guard's: nobody else holds or waits. Clones
        // are taken under the map's lock, so none appears meanwhile.
        if Arc::strong_count(&self.lock) <= 2 {
            locks.remove(&self.key);
        }
    }
}

impl Shelf {
    /// Waits for the book's lock.
    pub(super) async fn lock(&self, key: &BookKey) -> BookGuard<'_> {
        let lock = self.locks.lock().entry(key.clone()).or_default().clone();
        let guard = lock.clone().lock_owned().await;
        BookGuard {
            shelf: self,
            key: key.clone(),
            lock,
            guard: Some(guard),
        }
    }

    /// The cached book, if there is one and (when `version` is given) it
    /// was parsed from that version.
    pub(super) fn cached(&self, key: &BookKey, version: Option<u64>) -> Option<Loaded> {
        let mut cache = self.cache.lock();
        cache.tick += 1;
        let tick = cache.tick;
        let cached = cache.books.get_mut(key)?;
        if version.is_some_and(|v| v != cached.loaded.version) {
            return None;
        }
        cached.used = tick;
        let loaded = cached.loaded.clone();
        // The keys its last scans compiled count from now on.
        let now = weight(&loaded);
        let before = std::mem::replace(&mut cached.weight, now);
        cache.bytes = cache.bytes.saturating_sub(before).saturating_add(now);
        cache.evict_past_budget();
        Some(loaded)
    }

    /// Caches `loaded` as the book's current state (call with its lock
    /// held), dropping the least recently used books past the budget.
    pub(super) fn keep(&self, key: BookKey, loaded: Loaded) {
        let mut cache = self.cache.lock();
        cache.tick += 1;
        let used = cache.tick;
        let weight = weight(&loaded);
        cache.bytes += weight;
        if let Some(old) = cache.books.insert(
            key,
            Cached {
                loaded,
                used,
                weight,
            },
        ) {
            cache.bytes -= old.weight;
        }
        cache.evict_past_budget();
    }

    /// Forgets the book (deleted, or found gone).
    pub(super) fn forget(&self, key: &BookKey) {
        let mut cache = self.cache.lock();
        if let Some(gone) = cache.books.remove(key) {
            cache.bytes -= gone.weight;
        }
    }

    /// How many books have a lock in the map (for tests).
    #[cfg(test)]
    pub(super) fn locks_held(&self) -> usize {
        self.locks.lock().len()
    }

    /// How many books are cached and their bytes (for tests).
    #[cfg(test)]
    pub(super) fn cache_size(&self) -> (usize, usize) {
        let cache = self.cache.lock();
        (cache.books.len(), cache.bytes)
    }
}
