//! Keeping the chats held in memory within `--max-resident-memory`.
//!
//! Every slot carries the estimated bytes of what it holds, set under the
//! chat's lock whenever its state changes (a load, a commit, a drop); the
//! engine keeps their sum. A slot also carries the tick of its latest use.
//! When the sum passes the budget, the least recently used chats that
//! nothing pins are dropped until it is under 90% of the budget; a dropped
//! chat is read again from the store, through the one load path, by the
//! next call that names it.
//!
//! A chat is pinned, and never dropped, while someone holds or waits for
//! its slot (an operation in flight or queued on its lock, a debounce
//! timer, a commit task), while a `Subscribe` stream names it, while it owes
//! a pending debounced refresh, and while a job of its runs. When pinned
//! chats alone pass the budget, nothing pinned is dropped and a warning is
//! logged at most once a minute: the budget is a target for the rest.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use parking_lot::Mutex;

use super::Engine;
use super::slot::{ChatSlot, Resident};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::Injection;
use crate::telemetry;

/// How long between two warnings that pinned chats alone pass the budget.
const PINNED_WARNING_EVERY: Duration = Duration::from_secs(60);

/// Slots removed from the map per hold of its write lock, so that a long
/// eviction pass never keeps other calls from finding their chat for long.
const EVICTION_BATCH: usize = 256;

/// After a pass that could not get under the target (pinned chats), how
/// long before the next pass, unless the estimate grows by a sixteenth of
/// the budget first: each operation must not walk every chat in vain.
const RETRY_AFTER_PINNED: Duration = Duration::from_secs(1);

/// Most chats the eviction log remembers; an all-chats stream that falls
/// behind by more evictions than this reads back every chat of its tenant.
const EVICTION_LOG: usize = 100_000;

/// Chats dropped from memory while all-chats streams were open, in order,
/// so that a stream that fell behind can read back the ones it may have
/// missed an update of (they are no longer among the chats in memory it
/// catches up from).
#[derive(Default)]
struct EvictionLog {
    /// The latest dropped chats, at most [`EVICTION_LOG`].
    chats: std::collections::VecDeque<ChatKey>,
    /// How many were ever logged: `chats` holds numbers
    /// `logged - chats.len()..logged`.
    logged: u64,
}

/// What an all-chats stream that fell behind must read back.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Dropped {
    /// No chat was dropped since its last catch-up.
    None,
    /// These chats were.
    These(Vec<ChatKey>),
    /// More than the log holds: every chat of the tenant.
    All,
}

/// Store reads in flight at once while an all-chats stream catches up.
const CATCH_UP_READS: usize = 8;

/// The budget and the running sums; owned by the engine.
pub(super) struct Residency {
    /// The budget in bytes; 0: none.
    budget: usize,
    /// Sum of every slot's `bytes`.
    total: AtomicUsize,
    /// Use ticks: each use of a slot stamps it with the next one.
    clock: AtomicU64,
    /// Set while one caller evicts; others do not start a second pass.
    evicting: AtomicBool,
    /// When the pinned-chats warning was last logged.
    warned: Mutex<Option<Instant>>,
    /// The estimate and time at the end of the latest pass that stayed
    /// over the target; `None` after a pass that reached it.
    stuck: Mutex<Option<(usize, Instant)>>,
    /// Chats dropped while all-chats streams were open.
    log: Mutex<EvictionLog>,
}

impl Residency {
    pub fn new(budget: usize) -> Residency {
        Residency {
            budget,
            total: AtomicUsize::new(0),
            clock: AtomicU64::new(0),
            evicting: AtomicBool::new(false),
            warned: Mutex::new(None),
            stuck: Mutex::new(None),
            log: Mutex::new(EvictionLog::default()),
        }
    }

    /// The estimated bytes held now.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }

    fn over_budget(&self) -> bool {
        self.budget != 0 && self.total() > self.budget
    }

    /// Whether a pass is worth starting: over budget, and not right after
    /// a pass that pinned chats kept over the target (unless memory grew
    /// much since, or a while passed).
    fn pass_due(&self) -> bool {
        if !self.over_budget() {
            return false;
        }
        match *self.stuck.lock() {
            Some((total, at)) => {
                self.total() > total.saturating_add(self.budget / 16)
                    || at.elapsed() >= RETRY_AFTER_PINNED
            }
            None => true,
        }
    }

    /// What a pass evicts down to: 90% of the budget.
    fn target(&self) -> usize {
        self.budget / 10 * 9
    }

    /// Moves the total from a slot's old estimate to its new one.
    fn replace(&self, old: usize, new: usize) {
        // Add first, so the total never goes below what slots hold.
        self.total.fetch_add(new, Ordering::AcqRel);
        self.total.fetch_sub(old, Ordering::AcqRel);
        // The gauge moves by the same steps, so concurrent changes cannot
        // leave it at a stale value (it starts from the total when the
        // exporter is installed: see `Engine::publish_start_up_metrics`).
        let gauge = metrics::gauge!(telemetry::RESIDENT_BYTES);
        gauge.increment(new as f64);
        gauge.decrement(old as f64);
    }

    /// How many chats the eviction log has had: an all-chats stream's
    /// starting point.
    pub fn evictions_logged(&self) -> u64 {
        self.log.lock().logged
    }

    /// The chats dropped since the log had `seen` of them, and the count
    /// now (the stream's next starting point).
    pub fn evicted_since(&self, seen: u64) -> (Dropped, u64) {
        let log = self.log.lock();
        let missed = log.logged.saturating_sub(seen);
        let dropped = match usize::try_from(missed) {
            Ok(0) => Dropped::None,
            Ok(missed) if missed <= log.chats.len() => {
                let first = log.chats.len() - missed;
                Dropped::These(log.chats.range(first..).cloned().collect())
            }
            _ => Dropped::All,
        };
        (dropped, log.logged)
    }

    /// Logs chats dropped while all-chats streams are open.
    fn log_dropped(&self, chats: Vec<ChatKey>) {
        let mut log = self.log.lock();
        log.logged += chats.len() as u64;
        log.chats.extend(chats);
        let excess = log.chats.len().saturating_sub(EVICTION_LOG);
        log.chats.drain(..excess);
    }

    /// Stamps a slot as just used.
    pub fn touch(&self, slot: &ChatSlot) {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        slot.last_used.store(tick, Ordering::Relaxed);
    }

    /// Counts a new slot (its own bytes, before anything is loaded in it).
    pub fn admit(&self, slot: &ChatSlot) {
        self.touch(slot);
        let bytes = slot.bytes_with(None);
        self.replace(slot.bytes.swap(bytes, Ordering::AcqRel), bytes);
    }

    /// Stops counting a slot that left the map.
    pub fn release(&self, slot: &ChatSlot) {
        self.replace(slot.bytes.swap(0, Ordering::AcqRel), 0);
    }
}

/// Clears [`Residency::evicting`] when an eviction pass ends, however it
/// ends.
struct Evicting<'a>(&'a AtomicBool);

impl Drop for Evicting<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl Engine {
    /// Sets a slot's estimate from its state (the caller holds the chat's
    /// lock) and, when that takes the total past the budget, evicts.
    pub(super) fn account(&self, slot: &ChatSlot, state: Option<&Resident>) {
        let bytes = slot.bytes_with(state);
        let residency = &self.inner.residency;
        residency.replace(slot.bytes.swap(bytes, Ordering::AcqRel), bytes);
        if residency.pass_due() {
            self.evict();
        }
    }

    /// Drops the least recently used unpinned chats until the estimate is
    /// under 90% of the budget. One pass at a time: a caller that finds a
    /// pass under way leaves it the work.
    fn evict(&self) {
        let residency = &self.inner.residency;
        if residency.evicting.swap(true, Ordering::AcqRel) {
            return;
        }
        let _evicting = Evicting(&residency.evicting);
        let target = residency.target();
        // Oldest use first. The clones held here count in `pinned`.
        let mut candidates: Vec<(u64, Arc<ChatSlot>)> = self
            .inner
            .chats
            .read()
            .values()
            .map(|slot| (slot.last_used.load(Ordering::Relaxed), slot.clone()))
            .collect();
        candidates.sort_unstable_by_key(|(tick, _)| *tick);
        let mut evicted = Vec::new();
        let mut dropped = Vec::new();
        for batch in candidates.chunks(EVICTION_BATCH) {
            if residency.total() <= target {
                break;
            }
            let running_jobs = self.inner.jobs.busy.lock();
            let mut chats = self.inner.chats.write();
            for (_, slot) in batch {
                if residency.total() <= target {
                    break;
                }
                let held = chats.get(&slot.key).is_some_and(|s| Arc::ptr_eq(s, slot));
                if !held || pinned(slot, &running_jobs) {
                    continue;
                }
                chats.remove(&slot.key);
                residency.release(slot);
                if slot.announced.load(Ordering::Acquire) {
                    dropped.push(slot.key.clone());
                }
                evicted.push(slot.clone());
            }
            // Logged before the map's lock is let go: an all-chats stream
            // catching up now finds each dropped chat in memory or here.
            if self.inner.all_chats.receiver_count() > 0 {
                residency.log_dropped(std::mem::take(&mut dropped));
            }
            dropped.clear();
            metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
            drop(chats);
            drop(running_jobs);
        }
        drop(candidates);
        let count = evicted.len();
        if count > 0 {
            // `evicted` holds the last clones: the chats' memory is freed
            // when it goes. Thousands of chats take milliseconds to free,
            // so that is done on a blocking thread rather than in the call
            // that happened to pass the budget.
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(move || drop(evicted))),
                Err(_) => drop(evicted),
            }
            metrics::counter!(telemetry::CHAT_EVICTIONS).increment(count as u64);
            tracing::debug!(
                evicted = count,
                resident_bytes = residency.total(),
                "dropped least recently used chats from memory"
            );
        }
        let total = residency.total();
        *residency.stuck.lock() = (total > target).then(|| (total, Instant::now()));
        if residency.over_budget() {
            self.warn_pinned_over_budget();
        }
    }

    /// The latest injections of chats dropped from memory (all the
    /// tenant's chats for [`Dropped::All`]), read back from the store: for
    /// an all-chats stream that fell behind. A chat that cannot be read is
    /// logged and left out.
    pub(super) async fn latest_of_dropped(
        &self,
        tenant: &Tenant,
        dropped: Dropped,
    ) -> Vec<Arc<Injection>> {
        let chats = match dropped {
            Dropped::None => return Vec::new(),
            Dropped::These(chats) => chats,
            Dropped::All => match self.inner.store.chats_of(tenant).await {
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
        futures_util::stream::iter(chats)
            .map(|chat| async move {
                match self.inner.store.load(&chat).await {
                    Ok(loaded) => {
                        let meta = loaded.chat.map(|stored| stored.meta).unwrap_or_default();
                        [meta.injection, meta.message_injection]
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

    fn warn_pinned_over_budget(&self) {
        let residency = &self.inner.residency;
        let mut warned = residency.warned.lock();
        if warned.is_some_and(|at| at.elapsed() < PINNED_WARNING_EVERY) {
            return;
        }
        *warned = Some(Instant::now());
        tracing::warn!(
            resident_bytes = residency.total(),
            budget = residency.budget,
            chats = self.inner.chats.read().len(),
            "chats that cannot be dropped now (watched, owing a refresh, or in use) hold more than --max-resident-memory"
        );
    }
}

/// Whether a slot must stay in memory. Called under the map's write lock
/// with one clone of the slot held by the caller besides the map's: any
/// other holder took its clone under the map's lock, so the count is exact.
fn pinned(slot: &Arc<ChatSlot>, running_jobs: &HashSet<ChatKey>) -> bool {
    if Arc::strong_count(slot) > 2 || slot.latest.receiver_count() > 0 {
        return true;
    }
    if running_jobs.contains(&slot.key) {
        return true;
    }
    match slot.state.try_lock() {
        Ok(state) => state
            .as_ref()
            .is_some_and(|resident| resident.debounce.is_some()),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests;
