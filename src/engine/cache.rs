//! The chat cache: every chat held in memory (its slot), kept within
//! `--max-resident-memory`, and the log of chats dropped from it.
//!
//! [`ChatCache`] is a handle to shared state, cheap to clone (one `Arc`,
//! as mini-redis's `Db`): the engine, its timer tasks and the all-chats
//! streams' catch-up each hold one. It knows slots, their estimated bytes
//! and their use, nothing of the store: a chat dropped from it is read
//! again by the next call that names it, through the engine's one load
//! path.
//!
//! Every slot carries the estimated bytes of what it holds, set under the
//! chat's lock whenever its state changes (a load, a commit, a drop); the
//! cache keeps their sum. A slot also carries the tick of its latest use.
//! When the sum passes the budget, the least recently used chats that
//! nothing pins are dropped until it is under 90% of the budget.
//!
//! A chat is pinned, and never dropped, while someone holds or waits for
//! its slot (an operation in flight or queued on its lock, a debounce
//! timer, a commit task), while a `Subscribe` stream names it, while it owes
//! a pending debounced refresh, and while a job of its runs. When pinned
//! chats alone pass the budget, nothing pinned is dropped and a warning is
//! logged at most once a minute: the budget is a target for the rest.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use super::slot::{ChatSlot, Resident};
use crate::domain::ids::ChatKey;
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

/// Whether chats dropped by an eviction pass go to the eviction log: only
/// while an all-chats stream is open (nobody else reads the log). Asked
/// for each batch, under the map's lock, so a stream that opens during a
/// pass finds every chat dropped after it subscribed in memory or logged.
pub(super) type LogDrops<'a> = &'a dyn Fn() -> bool;

/// Handle to the chat cache; cheap to clone (one `Arc`), every clone sees
/// the same chats.
#[derive(Clone)]
pub(super) struct ChatCache {
    shared: Arc<Shared>,
}

/// The state every [`ChatCache`] handle shares.
struct Shared {
    /// The slots held, by chat.
    chats: RwLock<HashMap<ChatKey, Arc<ChatSlot>>>,
    /// Chats whose next job this process is starting or running now, with
    /// how many (one per lane): they stay in memory.
    running_jobs: Mutex<HashMap<ChatKey, usize>>,
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

impl ChatCache {
    /// An empty cache that keeps chats within `budget` bytes (0: no budget).
    pub fn new(budget: usize) -> ChatCache {
        ChatCache {
            shared: Arc::new(Shared {
                chats: RwLock::new(HashMap::new()),
                running_jobs: Mutex::new(HashMap::new()),
                budget,
                total: AtomicUsize::new(0),
                clock: AtomicU64::new(0),
                evicting: AtomicBool::new(false),
                warned: Mutex::new(None),
                stuck: Mutex::new(None),
                log: Mutex::new(EvictionLog::default()),
            }),
        }
    }

    /// The chat's slot, made (empty: the chat loads on its first lock) if
    /// it is not in memory; stamped as just used.
    pub fn slot(&self, chat: &ChatKey) -> Arc<ChatSlot> {
        if let Some(slot) = self.shared.chats.read().get(chat) {
            self.touch(slot);
            return slot.clone();
        }
        let mut chats = self.shared.chats.write();
        let slot = chats
            .entry(chat.clone())
            .or_insert_with(|| {
                let slot = Arc::new(ChatSlot::new(chat));
                self.admit(&slot);
                slot
            })
            .clone();
        self.touch(&slot);
        metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
        slot
    }

    /// The chat's slot, if it is in memory (not stamped as used).
    pub fn resident(&self, chat: &ChatKey) -> Option<Arc<ChatSlot>> {
        self.shared.chats.read().get(chat).cloned()
    }

    /// Every slot in memory now.
    pub fn slots(&self) -> Vec<Arc<ChatSlot>> {
        self.shared.chats.read().values().cloned().collect()
    }

    /// Drops a slot from memory when nobody else holds it and nobody
    /// watches it. Checked under the map's write lock: any other holder
    /// took its clone under the map's lock, so the count is exact.
    pub fn forget(&self, slot: Arc<ChatSlot>) {
        let mut chats = self.shared.chats.write();
        // One reference in the map, one here.
        if Arc::strong_count(&slot) == 2 && slot.latest.receiver_count() == 0 {
            chats.remove(&slot.key);
            self.release(&slot);
            metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
        }
    }

    /// Sets the resident-chats and resident-bytes gauges from the cache as
    /// it is (at start-up, once the metrics recorder is installed).
    pub fn publish_gauges(&self) {
        // Under the map's lock, as every other update of these gauges.
        let chats = self.shared.chats.read();
        metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
        metrics::gauge!(telemetry::RESIDENT_BYTES).set(self.total() as f64);
    }

    /// The estimated bytes held now.
    pub fn total(&self) -> usize {
        self.shared.total.load(Ordering::Acquire)
    }

    /// Marks a chat as running a job of this process: it stays in memory
    /// until [`ChatCache::job_ended`].
    pub fn job_started(&self, chat: &ChatKey) {
        *self
            .shared
            .running_jobs
            .lock()
            .entry(chat.clone())
            .or_default() += 1;
    }

    /// A job [`ChatCache::job_started`] marked ended (the chat stays
    /// pinned while another lane's job of it runs).
    pub fn job_ended(&self, chat: &ChatKey) {
        let mut running = self.shared.running_jobs.lock();
        if let Some(count) = running.get_mut(chat) {
            *count -= 1;
            if *count == 0 {
                running.remove(chat);
            }
        }
    }

    /// The chats running a job of this process now.
    #[cfg(test)]
    pub fn running_jobs(&self) -> std::collections::HashSet<ChatKey> {
        self.shared.running_jobs.lock().keys().cloned().collect()
    }

    /// Sets a slot's estimate from its state (the caller holds the chat's
    /// lock) and, when that takes the total past the budget, evicts.
    pub fn account(&self, slot: &ChatSlot, state: Option<&Resident>, log: LogDrops) {
        let bytes = slot.bytes_with(state);
        self.replace(slot.bytes.swap(bytes, Ordering::AcqRel), bytes);
        if self.pass_due() {
            self.evict(log);
        }
    }

    /// How many chats the eviction log has had: an all-chats stream's
    /// starting point.
    pub fn evictions_logged(&self) -> u64 {
        self.shared.log.lock().logged
    }

    /// The chats dropped since the log had `seen` of them, and the count
    /// now (the stream's next starting point).
    pub fn evicted_since(&self, seen: u64) -> (Dropped, u64) {
        let log = self.shared.log.lock();
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

    fn over_budget(&self) -> bool {
        self.shared.budget != 0 && self.total() > self.shared.budget
    }

    /// Whether a pass is worth starting: over budget, and not right after
    /// a pass that pinned chats kept over the target (unless memory grew
    /// much since, or a while passed).
    fn pass_due(&self) -> bool {
        if !self.over_budget() {
            return false;
        }
        match *self.shared.stuck.lock() {
            Some((total, at)) => {
                self.total() > total.saturating_add(self.shared.budget / 16)
                    || at.elapsed() >= RETRY_AFTER_PINNED
            }
            None => true,
        }
    }

    /// What a pass evicts down to: 90% of the budget.
    fn target(&self) -> usize {
        self.shared.budget / 10 * 9
    }

    /// Moves the total from a slot's old estimate to its new one.
    fn replace(&self, old: usize, new: usize) {
        // Add first, so the total never goes below what slots hold.
        self.shared.total.fetch_add(new, Ordering::AcqRel);
        self.shared.total.fetch_sub(old, Ordering::AcqRel);
        // The gauge moves by the same steps, so concurrent changes cannot
        // leave it at a stale value (it starts from the total when the
        // exporter is installed: see `ChatCache::publish_gauges`).
        let gauge = metrics::gauge!(telemetry::RESIDENT_BYTES);
        gauge.increment(new as f64);
        gauge.decrement(old as f64);
    }

    /// Logs chats dropped while all-chats streams are open.
    fn log_dropped(&self, chats: Vec<ChatKey>) {
        let mut log = self.shared.log.lock();
        log.logged += chats.len() as u64;
        log.chats.extend(chats);
        let excess = log.chats.len().saturating_sub(EVICTION_LOG);
        log.chats.drain(..excess);
    }

    /// Stamps a slot as just used.
    fn touch(&self, slot: &ChatSlot) {
        let tick = self.shared.clock.fetch_add(1, Ordering::Relaxed);
        slot.last_used.store(tick, Ordering::Relaxed);
    }

    /// Counts a new slot (its own bytes, before anything is loaded in it).
    fn admit(&self, slot: &ChatSlot) {
        self.touch(slot);
        let bytes = slot.bytes_with(None);
        self.replace(slot.bytes.swap(bytes, Ordering::AcqRel), bytes);
    }

    /// Stops counting a slot that left the map.
    fn release(&self, slot: &ChatSlot) {
        self.replace(slot.bytes.swap(0, Ordering::AcqRel), 0);
    }

    /// Drops the least recently used unpinned chats until the estimate is
    /// under 90% of the budget. One pass at a time: a caller that finds a
    /// pass under way leaves it the work.
    fn evict(&self, log: LogDrops) {
        let shared = &*self.shared;
        if shared.evicting.swap(true, Ordering::AcqRel) {
            return;
        }
        let _evicting = Evicting(&shared.evicting);
        let target = self.target();
        // Oldest use first. The clones held here count in `pinned`.
        let mut candidates: Vec<(u64, Arc<ChatSlot>)> = shared
            .chats
            .read()
            .values()
            .map(|slot| (slot.last_used.load(Ordering::Relaxed), slot.clone()))
            .collect();
        candidates.sort_unstable_by_key(|(tick, _)| *tick);
        let mut evicted = Vec::new();
        let mut dropped = Vec::new();
        for batch in candidates.chunks(EVICTION_BATCH) {
            if self.total() <= target {
                break;
            }
            let running_jobs = shared.running_jobs.lock();
            let mut chats = shared.chats.write();
            for (_, slot) in batch {
                if self.total() <= target {
                    break;
                }
                let held = chats.get(&slot.key).is_some_and(|s| Arc::ptr_eq(s, slot));
                if !held || pinned(slot, &running_jobs) {
                    continue;
                }
                chats.remove(&slot.key);
                self.release(slot);
                if slot.announced.load(Ordering::Acquire) {
                    dropped.push(slot.key.clone());
                }
                evicted.push(slot.clone());
            }
            // Logged before the map's lock is let go: an all-chats stream
            // catching up now finds each dropped chat in memory or here.
            if log() {
                self.log_dropped(std::mem::take(&mut dropped));
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
                resident_bytes = self.total(),
                "dropped least recently used chats from memory"
            );
        }
        let total = self.total();
        *shared.stuck.lock() = (total > target).then(|| (total, Instant::now()));
        if self.over_budget() {
            self.warn_pinned_over_budget();
        }
    }

    fn warn_pinned_over_budget(&self) {
        let shared = &*self.shared;
        let mut warned = shared.warned.lock();
        if warned.is_some_and(|at| at.elapsed() < PINNED_WARNING_EVERY) {
            return;
        }
        *warned = Some(Instant::now());
        tracing::warn!(
            resident_bytes = self.total(),
            budget = shared.budget,
            chats = shared.chats.read().len(),
            "chats that cannot be dropped now (watched, owing a refresh, or in use) hold more than --max-resident-memory"
        );
    }
}

/// Clears [`Shared::evicting`] when an eviction pass ends, however it
/// ends.
struct Evicting<'a>(&'a AtomicBool);

impl Drop for Evicting<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Whether a slot must stay in memory. Called under the map's write lock
/// with one clone of the slot held by the caller besides the map's: any
/// other holder took its clone under the map's lock, so the count is exact.
fn pinned(slot: &Arc<ChatSlot>, running_jobs: &HashMap<ChatKey, usize>) -> bool {
    if Arc::strong_count(slot) > 2 || slot.latest.receiver_count() > 0 {
        return true;
    }
    if running_jobs.contains_key(&slot.key) {
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
