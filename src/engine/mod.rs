//! The engine: per-chat ordering, debounced and immediate refreshes, durable
//! commits, and fan-out of every new injection to subscribers.
//!
//! Each chat has a slot ([`slot::ChatSlot`]) whose async lock is held for a
//! whole operation: the domain change, the refresh it triggers, and the
//! commit of both in one group. Memory changes first and is dropped (the
//! chat reloaded from the store) if the commit fails, so memory never holds
//! what the store does not. Subscribers are told only after the commit.
//! Published events that arrive while their chat is locked queue on its
//! slot and are applied and committed together by the next holder
//! ([`publish`]): one fsync for all of them.
//! Slots are a cache of the store: past `--max-resident-memory` the least
//! recently used ones that nothing pins leave memory, and the next call
//! that needs the chat loads it again ([`cache`]).
//!
//! # Parts, and the one way they depend on each other
//!
//! From the bottom up; each part uses only parts above it in this list
//! (checked: no import cycle among the engine's modules):
//!
//! 1. [`errors`]: [`EngineError`] and every error the engine makes;
//!    `global_settings`: a tenant's global settings as held.
//! 2. [`slot`]: one chat in memory ([`slot::ChatSlot`]), its state
//!    ([`slot::Resident`]), its lock ([`slot::LoadedChat`]: a locked chat
//!    that is always loaded) and its queue of published events.
//! 3. [`cache`]: the chat cache ([`cache::ChatCache`]): slots, the memory
//!    budget and LRU eviction, the eviction log; a cheap-to-clone handle.
//! 4. [`catch_up`], then [`fanout`]: subscribers' streams; the all-chats
//!    stream catches up through a [`catch_up::CatchUp`] handle (the cache
//!    and the store), not the engine.
//! 5. The root (this file) holds the [`Engine`] handle and its loading
//!    path ([`Engine::lock`]); [`retry`]: optimistic concurrency's one
//!    retry ([`retry::Retry`]), for chats and lorebooks alike. The parts
//!    below extend the engine with `impl Engine` blocks and know nothing
//!    of each other but what is listed. [`lorebooks`]: a part that is a
//!    type, [`Lorebooks`] ([`Engine::lorebooks`]): the tenants' lorebooks
//!    (World Info files), their per-book locks, parsed-book cache and
//!    limits; built from the store, the wall clock and [`retry`], it
//!    holds no chat and no engine (a chat's book is named by its caller).
//! 6. [`commit`]: the end of every chat operation,
//!    [`Engine::commit_locked`], deletion included ([`commit::Commit::erase`]).
//!    A commit says what follows ([`commit::Committed`]: jobs to announce,
//!    debounced refreshes to schedule, indexing wanted) and does none of
//!    it; it reads the recall tier's lines through a [`commit::TierSource`]
//!    its caller gives. It names none of [`jobs`], [`debounce`] or
//!    [`recall`] (checked by `scripts/engine-modules.py`, by path and by
//!    method). Then [`recall`] (the tier's lines) and [`debounce`] (the
//!    timers, which commit a refresh themselves), then [`chats`]: the one
//!    update path, [`Engine::update`] (slot, lock, change, commit, retry),
//!    and [`Engine::commit`], which commits and carries out what follows
//!    (announcing jobs and wanting index jobs through the `jobs::Jobs`
//!    handle: the one tie left between the chats and the job queue).
//! 7. [`prompt`], then [`ops`]: reads and the chat operations.
//! 8. [`jobs`]: the job queue and its runner (takes its own options:
//!    [`QueueOptions`], [`RecapWriter`]). Its state is one handle,
//!    `jobs::Jobs` (cheap to clone, one `Arc` inside): the LLM and
//!    embeddings clients, the lanes' runner state, the WatchJobs channel
//!    and the chats that want an index job; it takes no chat's lock
//!    itself (it holds the store, the wall clock and the chat cache,
//!    parts below it). The driver's parts that lock no chat are its
//!    methods (some are handed a locked chat's state by their caller); what locks and commits a chat (claim, apply, lease
//!    renewal, the job requests) is still `impl Engine` over it. Then
//!    [`publish`], [`files`], [`settings_ops`], [`lifecycle`],
//!    [`refreshes`], [`replicas`], [`job_watch`], which use the parts
//!    above.
//! 9. [`world_info`]: one World Info activation of a chat with the books
//!    [`lorebooks`] loads (before the chat is locked), and the chat's timed
//!    effects committed through [`chats`]' update path.
//!
//! # Glossary
//!
//! - **revision**: a chat's count of refreshes of its running-recap
//!   injection; +1 per refresh, never going back, also across restarts and
//!   replicas. Clients see it on every injection.
//! - **tier revision**: the same for the message-recap tier's injection,
//!   counted apart (it refreshes only while the tier is on).
//! - **version** (optimistic concurrency): what a writer read a record
//!   at, named by its write; the store refuses a write whose version moved
//!   meanwhile (a lost race), and the change runs again on a fresh read
//!   ([`retry::Retry`]: one policy value per kind of record, one loop). A
//!   chat's version counts the commits that changed it, with a shared
//!   store ([`slot::Resident::version`]; the database's `chat_clock`): a
//!   commit claims the version its state was read at. A lorebook's is
//!   random, new at each write (the database's `version`). Not a running
//!   recap's **version**, which numbers the chat's recaps.
//! - **settings clock**: a tenant's global settings' version (the name the
//!   store gives it). A chat read together with a settings clock newer
//!   than the one held here makes the engine re-read the global settings
//!   first.
//! - **debounce ticket**: bumped each time a chat's debounced refresh is
//!   (re)scheduled and carried by its timer, so a timer that lost the race
//!   does nothing.
//! - **wall clock** (`WallClock`): what time it is now, for the instants
//!   rows store; the engine takes it in its options, so a test can set it.
//!   A chat's **version** above is a count of commits, never a time.
//! - **recap writer** ([`RecapWriter`]): the LLM client and its options,
//!   which write recaps as jobs.
//! - **prompt**: the chat prompt `RenderPrompt` builds ([`ChatPrompt`]);
//!   what recapd sends the LLM is a **request**, never a prompt.
//!
//! # Lock order
//!
//! `global_changes` (one global-settings change at a time per process) is
//! taken before any chat's lock, never after. A chat's lock is held across
//! its commit; the in-memory maps (`chats`, `global`) are held only for a
//! lookup, never across an `.await`.

mod cache;
mod catch_up;
mod chats;
mod commit;
mod debounce;
mod errors;
mod fanout;
mod files;
mod global_settings;
mod job_watch;
mod jobs;
mod lifecycle;
mod lorebooks;
mod ops;
mod prompt;
mod publish;
mod recall;
mod refreshes;
mod replicas;
mod retry;
mod settings_ops;
mod slot;
mod world_info;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::domain::time::{UnixMicros, UnixMillis};
use crate::wall_clock::WallClock;

use parking_lot::{Mutex, RwLock};
use tokio::sync::broadcast;

use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::{Injection, Trigger};
use crate::domain::settings::SettingsPatch;
use crate::domain::{DomainError, Limits};
use crate::store::{ChatStore, ReplicaStore, Stores};
use crate::telemetry;
pub use errors::EngineError;
pub use fanout::Updates;
pub use files::ChatSnapshot;
use global_settings::{DEFAULT_GLOBAL, GlobalSettings};
pub use job_watch::JobUpdates;
#[cfg(test)]
pub(crate) use job_watch::JobsStore;
pub use jobs::{Embedder, JobsConfig, QueueOptions, RecapWriter};
pub use lifecycle::ChatSummary;
pub use lorebooks::{
    LorebookEntry, LorebookLimits, LorebookSummary, Lorebooks,
    MAX_NAME_BYTES as MAX_LOREBOOK_NAME_BYTES, ScanPool, check_name as check_lorebook_name,
};
pub use ops::RecapList;
pub use prompt::ChatPrompt;
pub use recall::{DEFAULT_RECALL_LIMIT, RecallAnswer, RecallHit, RecallRequest};
use retry::Retry;
pub use settings_ops::SettingsUpdate;
use slot::{ChatSlot, LoadedChat, Locked, Resident};
pub use world_info::{ScanRequest, WorldInfoScan};

/// How many updates the all-chats channel holds for a slow subscriber
/// before that subscriber resynchronises from the latest states.
const ALL_CHATS_BUFFER: usize = 4096;

/// How many job state changes a WatchJobs reader may fall behind before
/// it skips to each job's latest state.
pub const JOB_CHANGES_BUFFER: usize = 256;

/// With a shared store, how long after a chat's owed debounced refresh was
/// due a replica that did not schedule it runs it (the one that did
/// normally has by then; this covers a replica that stopped).
const TAKEOVER_GRACE: Duration = Duration::from_secs(1);

/// Handle to the engine; cheap to clone (one `Arc`), so every service and
/// timer task holds its own.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn ChatStore>,
    /// The replica feed when other replicas write the store too: commits
    /// then claim their chat.
    replicas: Option<Arc<dyn ReplicaStore>>,
    limits: Limits,
    /// Chats the store holds (for `max_chats`): counted up when a chat is
    /// created here, down when it is deleted here.
    chats_known: AtomicUsize,
    /// Open subscriptions, in all and per client connection.
    subscribers: fanout::Subscribers,
    /// The chats held in memory, within the memory budget.
    cache: cache::ChatCache,
    /// Each tenant's global settings and their settings clock
    /// (always 0 with a single-writer store).
    global: RwLock<HashMap<Tenant, (u64, GlobalSettings)>>,
    global_changes: tokio::sync::Mutex<()>,
    all_chats: broadcast::Sender<Arc<Injection>>,
    /// The job machinery: the LLM, the lanes' runner state, the WatchJobs
    /// channel, the chats that want an index job.
    jobs: jobs::Jobs,
    /// The store's clock at the latest resync (shared store only).
    last_resync_ms: Mutex<Option<UnixMillis>>,
    /// The wall clock (from [`JobsConfig::wall_clock`]).
    wall_clock: Arc<dyn WallClock>,
    /// The tenants' lorebooks: their locks, parsed books and limits.
    lorebooks: Lorebooks,
    /// The World Info scans' threads and per-tenant shares.
    scan_gate: world_info::ScanGate,
    /// The embeddings model whose vectors recall uses (empty without an
    /// embeddings endpoint: keyword search alone).
    recall_model: String,
    /// Whether an embeddings endpoint is configured (index jobs run).
    indexing: bool,
    /// The embeddings client, for Recall's query texts.
    query_embedder: Option<crate::llm::EmbeddingClient>,
}

/// A reserved place for a new chat (see [`Engine::reserve_chat`]).
struct ChatPlace<'a> {
    known: &'a AtomicUsize,
    kept: bool,
}

impl ChatPlace<'_> {
    /// The chat was stored: the place stays taken.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for ChatPlace<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.known.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// What an operation asks of the refresh machinery once its change is made.
#[derive(Default)]
enum Next {
    /// Nothing: no refresh, none scheduled.
    #[default]
    Nothing,
    /// Refresh now, in the same commit.
    Refresh(Trigger),
    /// Refresh after `debounce_ms` of quiet (now when it is 0).
    Debounce(Trigger),
}

impl Engine {
    /// Builds an engine over `stores`, reading every tenant's global
    /// settings and counting the chats.
    pub async fn new(stores: Stores, limits: Limits) -> Result<Engine, EngineError> {
        Engine::with_jobs(stores, limits, JobsConfig::default()).await
    }

    /// [`Engine::new`] with recaps written by recapd: the LLM (if any) and
    /// the job queue's options. The runner starts with [`Engine::run_jobs`].
    pub async fn with_jobs(
        stores: Stores,
        limits: Limits,
        jobs: JobsConfig,
    ) -> Result<Engine, EngineError> {
        Engine::with_lorebooks(stores, limits, jobs, LorebookLimits::default()).await
    }

    /// [`Engine::with_jobs`] with the operator's lorebook limits.
    pub async fn with_lorebooks(
        stores: Stores,
        limits: Limits,
        jobs: JobsConfig,
        lorebook_limits: LorebookLimits,
    ) -> Result<Engine, EngineError> {
        let Stores { chats, replicas } = stores;
        let global = chats.global_settings().await?;
        let chats_known = chats.chat_count().await?;
        let (all_chats, _) = broadcast::channel(ALL_CHATS_BUFFER);
        let cache = cache::ChatCache::new(limits.max_resident_bytes);
        let jobs_store = chats.clone();
        let shared = replicas.is_some();
        let wall_clock = jobs.wall_clock.clone();
        let recall_model = jobs
            .embedder
            .as_ref()
            .map_or(String::new(), |e| e.setup.model.clone());
        let indexing = jobs.embedder.is_some();
        let query_embedder = jobs.embedder.as_ref().map(|e| e.client.clone());
        let scan_gate = world_info::ScanGate::new(&lorebook_limits.scan_pool);
        let lorebooks = Lorebooks::new(
            chats.clone(),
            replicas.is_some(),
            lorebook_limits,
            wall_clock.clone(),
        );
        Ok(Engine {
            inner: Arc::new(Inner {
                store: chats,
                replicas,
                limits,
                chats_known: AtomicUsize::new(chats_known),
                subscribers: fanout::Subscribers::default(),
                cache: cache.clone(),
                global: RwLock::new(
                    global
                        .into_iter()
                        .map(|g| (g.tenant, (g.clock, GlobalSettings::new(g.patch))))
                        .collect(),
                ),
                global_changes: tokio::sync::Mutex::new(()),
                all_chats,
                jobs: jobs::Jobs::new(jobs, JOB_CHANGES_BUFFER, jobs_store, shared, cache),
                last_resync_ms: Mutex::new(None),
                wall_clock,
                scan_gate,
                lorebooks,
                recall_model,
                indexing,
                query_embedder,
            }),
        })
    }

    /// Now on the engine's clock, µs since the epoch.
    fn now(&self) -> UnixMicros {
        self.inner.wall_clock.now()
    }

    /// Now on the engine's clock, whole ms since the epoch.
    fn now_ms(&self) -> UnixMillis {
        self.inner.wall_clock.now_ms()
    }

    /// The embeddings model whose vectors recall uses; empty without an
    /// embeddings endpoint.
    fn recall_model(&self) -> &str {
        &self.inner.recall_model
    }

    /// Whether an embeddings endpoint is configured.
    fn indexing(&self) -> bool {
        self.inner.indexing
    }

    /// The tenants' lorebooks, a handle of their own (clone it to keep
    /// it): the gRPC layer and the chat-side parts reach books through it.
    pub fn lorebooks(&self) -> &Lorebooks {
        &self.inner.lorebooks
    }

    /// Limits on client text.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Shows the engine's metrics before anything happens: the refresh
    /// counter at 0 for every trigger, the open subscribers and the chats
    /// loaded now. Call it once the metrics recorder is installed; it never
    /// lowers a count already recorded.
    pub fn publish_start_up_metrics(&self) {
        for trigger in Trigger::ALL {
            metrics::counter!(telemetry::REFRESHES, "trigger" => trigger.name()).increment(0);
        }
        metrics::gauge!(telemetry::SUBSCRIBERS).increment(0.0);
        for kind in crate::domain::jobs::JobKind::ALL {
            metrics::counter!(telemetry::JOBS_DROPPED, "kind" => kind.name()).increment(0);
            for state in crate::domain::jobs::JobState::ALL {
                metrics::counter!(
                    telemetry::JOB_TRANSITIONS,
                    "kind" => kind.name(),
                    "state" => state.name()
                )
                .increment(0);
            }
        }
        metrics::gauge!(telemetry::JOBS_QUEUED).increment(0.0);
        self.inner.cache.publish_gauges();
        metrics::counter!(telemetry::CHAT_EVICTIONS).increment(0);
        metrics::counter!(telemetry::CHAT_LOADS).increment(0);
        for reason in ["api", "retention"] {
            metrics::counter!(telemetry::CHATS_DELETED, "reason" => reason).increment(0);
        }
    }

    /// Whether other replicas write the store too.
    fn shared(&self) -> bool {
        self.inner.replicas.is_some()
    }

    /// A tenant's global settings.
    fn global(&self, tenant: &Tenant) -> GlobalSettings {
        self.inner
            .global
            .read()
            .get(tenant)
            .map(|(_, global)| global.clone())
            .unwrap_or_else(|| DEFAULT_GLOBAL.clone())
    }

    /// The settings clock of the tenant's global settings held here.
    fn settings_clock(&self, tenant: &Tenant) -> u64 {
        self.inner
            .global
            .read()
            .get(tenant)
            .map_or(0, |(clock, _)| *clock)
    }

    /// Keeps `patch` as the tenant's global settings unless newer ones are
    /// held (a slow re-read must not undo a change made since).
    fn set_global(&self, tenant: &Tenant, patch: SettingsPatch, settings_clock: u64) {
        let global = GlobalSettings::new(patch);
        let mut globals = self.inner.global.write();
        let held = globals.get(tenant).map(|(g, _)| *g);
        if held.is_none_or(|held| held <= settings_clock) {
            globals.insert(tenant.clone(), (settings_clock, global));
        }
    }

    /// The chat's slot (see [`cache::ChatCache::slot`]).
    fn slot(&self, chat: &ChatKey) -> Arc<ChatSlot> {
        self.inner.cache.slot(chat)
    }

    /// Sets a slot's estimate from its state (the caller holds the chat's
    /// lock), evicting when that passes the budget; chats dropped go to
    /// the eviction log while an all-chats stream is open.
    fn account(&self, slot: &ChatSlot, state: Option<&Resident>) {
        let all_chats = &self.inner.all_chats;
        self.inner
            .cache
            .account(slot, state, &|| all_chats.receiver_count() > 0);
    }

    /// Locks a chat's slot, loading the chat from the store first if
    /// needed: the one place where a chat not loaded is handled.
    async fn lock(&self, slot: &Arc<ChatSlot>) -> Result<LoadedChat, EngineError> {
        let mut locked = slot.lock().await;
        if locked.is_none() {
            self.load_into(slot, &mut locked, false).await?;
        }
        LoadedChat::new(locked)
            .map_err(|_| EngineError::Panicked("a chat's load left it unloaded".into()))
    }

    /// Reads a chat from the store into its locked slot and offers its
    /// stored injections to the slot's subscribers (and, with `announce`, to
    /// the all-chats subscribers: another replica made them). A loaded chat
    /// that still owes a debounced refresh gets it scheduled: after its
    /// debounce delay; with a shared store, counted from the chat's last
    /// change plus [`TAKEOVER_GRACE`], so the replica that owes it
    /// normally runs it first.
    async fn load_into(
        &self,
        slot: &Arc<ChatSlot>,
        guard: &mut Locked,
        announce: bool,
    ) -> Result<(), EngineError> {
        let started = std::time::Instant::now();
        let loaded = self.inner.store.load(&slot.key).await?;
        metrics::counter!(telemetry::CHAT_LOADS).increment(1);
        metrics::histogram!(telemetry::CHAT_LOAD_DURATION).record(started.elapsed().as_secs_f64());
        let tenant = &slot.key.tenant;
        if loaded.settings_clock > self.settings_clock(tenant) {
            // The chat was read after a global change this replica has not
            // heard of yet: refreshes must not use the old settings.
            self.reload_global_settings().await?;
        }
        // A deleted chat (not re-created since) offers its last injections:
        // subscribers here learn of a deletion another replica made.
        let deleted = match (&loaded.chat, loaded.tombstone) {
            (None, Some(tombstone)) => commit::deleted_injections(&slot.key, &tombstone),
            _ => Vec::new(),
        };
        let mut loaded = Resident::from_store(&slot.key, loaded);
        let stored: Vec<Arc<Injection>> =
            loaded.meta.injections().cloned().chain(deleted).collect();
        let mut newer = Vec::new();
        slot.behind.store(false, Ordering::Release);
        slot.latest.send_if_modified(|latest| {
            for injection in stored {
                if latest.offer(injection.clone()) {
                    newer.push(injection);
                }
            }
            !newer.is_empty()
        });
        if announce {
            if !newer.is_empty() {
                slot.announced.store(true, Ordering::Release);
            }
            for injection in newer {
                let _ = self.inner.all_chats.send(injection);
            }
        }
        if loaded.meta.needs_refresh && loaded.chat.is_some() {
            let settings = loaded.effective(&self.global(tenant));
            if settings.chat_enabled(loaded.settings().enabled) {
                let debounce = Duration::from_millis(settings.debounce_ms);
                let delay = match (self.shared(), loaded.changed_ms) {
                    (true, Some(changed)) => {
                        let due = changed
                            .saturating_add(debounce)
                            .saturating_add(TAKEOVER_GRACE);
                        due.since(self.now_ms())
                    }
                    _ => debounce,
                };
                self.schedule_debounce(
                    slot,
                    &mut loaded,
                    commit::Debounced {
                        trigger: Trigger::Startup,
                        delay,
                        coalesced: 0,
                    },
                );
            }
        }
        **guard = Some(loaded);
        self.account(slot, guard.as_ref());
        Ok(())
    }

    /// Runs `attempt` again, on a fresh read of its chat, while it fails
    /// because another replica changed the chat first ([`Retry::CHATS`]).
    async fn retrying<T, F, Fut>(&self, attempt: F) -> Result<T, EngineError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, EngineError>>,
    {
        Retry::CHATS.run(attempt).await
    }

    /// Reserves a place for a new chat, atomically, so concurrent new
    /// chats cannot pass `max_chats` together; the place is given back
    /// unless [`ChatPlace::keep`] is called.
    fn reserve_chat(&self) -> Result<ChatPlace<'_>, EngineError> {
        let max = self.inner.limits.max_chats;
        self.inner
            .chats_known
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |known| {
                (known < max).then_some(known + 1)
            })
            .map_err(|_| {
                DomainError::ResourceExhausted("no more chats can be created on this server".into())
            })?;
        Ok(ChatPlace {
            known: &self.inner.chats_known,
            kept: false,
        })
    }

    /// Frees the place of a deleted chat under `max_chats`. Saturating:
    /// with a shared store this replica counts the chats that existed when
    /// it started and those it created, not those other replicas created,
    /// so a deletion may name a chat it never counted.
    fn free_chat_place(&self) {
        let _ = self
            .inner
            .chats_known
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |known| {
                Some(known.saturating_sub(1))
            });
    }
}

#[cfg(test)]
mod tests;
