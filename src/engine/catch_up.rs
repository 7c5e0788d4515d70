//! What an all-chats stream that fell behind reads to catch up: the latest
//! injections of the chats in memory, and of those dropped from memory
//! since its last catch-up, read back from the store. A narrow handle, so
//! the stream holds the cache and the store rather than the whole engine.

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::StreamExt;

use super::cache::{ChatCache, Dropped};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::Injection;
use crate::store::ChatStore;

/// Store reads in flight at once while an all-chats stream catches up.
const CATCH_UP_READS: usize = 8;

/// Handle an all-chats stream catches up through; cheap to clone (two
/// `Arc`s).
#[derive(Clone)]
pub(super) struct CatchUp {
    cache: ChatCache,
    store: Arc<dyn ChatStore>,
}

impl CatchUp {
    /// Catches up from `cache`, reading dropped chats back from `store`.
    pub fn new(cache: ChatCache, store: Arc<dyn ChatStore>) -> CatchUp {
        CatchUp { cache, store }
    }

    /// How many chats the eviction log has had: a new stream's starting
    /// point.
    pub fn evictions_logged(&self) -> u64 {
        self.cache.evictions_logged()
    }

    /// The chats dropped since the log had `seen` of them, and the count
    /// now (see [`ChatCache::evicted_since`]).
    pub fn evicted_since(&self, seen: u64) -> (Dropped, u64) {
        self.cache.evicted_since(seen)
    }

    /// The latest injections of every chat of `tenant` in memory.
    pub fn latest_in_memory(&self, tenant: &Tenant) -> Vec<Arc<Injection>> {
        self.cache
            .slots()
            .iter()
            .filter(|slot| slot.key.tenant == *tenant)
            .flat_map(|slot| slot.latest.borrow().all())
            .collect()
    }

    /// The latest injections of chats dropped from memory (all the
    /// tenant's chats for [`Dropped::All`]), read back from the store. A
    /// chat that cannot be read is logged and left out.
    pub async fn latest_of_dropped(
        &self,
        tenant: &Tenant,
        dropped: Dropped,
    ) -> Vec<Arc<Injection>> {
        let chats = match dropped {
            Dropped::None => return Vec::new(),
            Dropped::These(chats) => chats,
            Dropped::All => match self.store.chats_of(tenant).await {
                Ok(chats) => chats,
                Err(error) => {
                    tracing::warn!(%error, "an all-chats stream fell behind and the chats cannot be listed; it catches up from those in memory");
                    return Vec::new();
                }
            },
        };
        let mut seen = HashSet::new();
        let chats: Vec<ChatKey> = chats
            .into_iter()
            .filter(|chat| chat.tenant == *tenant && seen.insert(chat.clone()))
            .collect();
        // Read straight from the store (memory never holds what the store
        // does not), a few at a time, without taking the chats back into
        // memory: a catch-up must not push the chats in use out.
        let store = &self.store;
        futures_util::stream::iter(chats)
            .map(|chat| async move {
                match store.load(&chat).await {
                    Ok(loaded) => {
                        let meta = loaded.chat.map(|stored| stored.meta).unwrap_or_default();
                        [meta.injection, meta.message_injection, meta.recall_injection]
                            .into_iter()
                            .flatten()
                            .map(|mut injection| {
                                Arc::make_mut(&mut injection).chat = chat.clone();
                                injection
                            })
                            .collect()
                    }
                    Err(error) => {
                        tracing::warn!(%chat, %error, "cannot read back a chat an all-chats stream may have missed an update of");
                        Vec::new()
                    }
                }
            })
            .buffer_unordered(CATCH_UP_READS)
            .flat_map(futures_util::stream::iter)
            .collect()
            .await
    }
}
