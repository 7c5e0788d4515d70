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
//! The engine is five parts that are handles, each cheap to clone and
//! owning its state;
//! a part holds the handles of the parts below it and nothing above, so
//! the compiler keeps the arrows one way. [`Engine`] is the facade over
//! them that the gRPC layer and the app reach the parts through.
//!
//! - [`Lorebooks`]: the tenants' lorebooks, their per-book locks, parsed
//!   books and limits; it holds the store and the wall clock, no chat.
//! - `job_queue::Jobs`: the job queue's state and rules, below the
//!   chats: the LLM and embeddings clients, the queue's options, each
//!   lane's runner state, the WatchJobs channel, the chats that want an
//!   index job, and what a chat event does to jobs
//!   (`Jobs::after_event`). It locks no chat; a caller that holds a
//!   chat's lock hands it the chat's state.
//! - [`Chats`]: the chats held in memory (the cache, the tenants' global
//!   settings, the subscribers, the count of chats), loading
//!   ([`Chats::lock`]) and the one update path ([`Chats::update`]: slot,
//!   lock, change, commit, conflict retry). It holds the store, the
//!   lorebooks, the job queue's state and the wall clock. The chat
//!   operations are `impl Chats` blocks in the modules that name them.
//! - [`JobDriver`] ([`jobs`]): the job requests and the runners, one
//!   driver over the `Lane` trait (claim, work, apply, the fences in one
//!   place), and WatchJobs ([`job_watch`]). It holds a [`Chats`].
//! - [`WorldInfo`] ([`world_info`]): one World Info activation of a chat,
//!   its timed effects committed through the chats' update path. It holds
//!   a [`Chats`] and the scans' gate.
//!
//! Modules, from the bottom up; each uses only modules above it in this
//! list by path (checked by `scripts/engine-modules.py`: no import cycle).
//! Within the chats' modules (item 7) methods call each other both ways
//! (`Chats::lock` schedules an owed debounced refresh; a load re-reads
//! the global settings); between the parts, the handles keep the arrows.
//!
//! 1. [`errors`]: [`EngineError`]; `global_settings`: a tenant's global
//!    settings as held.
//! 2. [`slot`]: one chat in memory ([`slot::ChatSlot`]), its state
//!    ([`slot::Resident`]), its lock ([`slot::LoadedChat`]: a locked chat
//!    that is always loaded) and its queue of published events.
//! 3. [`cache`]: the chat cache ([`cache::ChatCache`]): slots, the memory
//!    budget and LRU eviction, the eviction log.
//! 4. [`catch_up`], then [`fanout`]: subscribers' streams.
//! 5. [`retry`]: optimistic concurrency's one retry ([`retry::Retry`]),
//!    for chats and lorebooks alike; [`lorebooks`]; [`job_queue`].
//! 6. [`commit`]: the end of every chat operation,
//!    [`Chats::commit_locked`], deletion included ([`commit::Commit::erase`]).
//!    A commit says what follows ([`commit::Committed`]: jobs to announce,
//!    debounced refreshes to schedule, indexing wanted) and does none of
//!    it; it reads the recall tier's lines through a [`commit::TierSource`]
//!    its caller gives. It names none of [`jobs`], [`job_queue`],
//!    [`debounce`] or [`recall`] (checked by the same script, by path and
//!    by method).
//! 7. [`chats`] and the chat operations that extend it: [`recall`],
//!    [`debounce`], [`prompt`], [`ops`], [`publish`], [`files`],
//!    [`settings_ops`], [`profile_ops`], [`lifecycle`], [`refreshes`], [`replicas`].
//!    [`Chats::commit`] commits and carries out what follows while the
//!    chat is still locked (`Jobs::announce`, `Jobs::want_index`, the
//!    debounce timer).
//! 8. [`jobs`], then [`job_watch`]; [`world_info`].
//! 9. The root (this file): [`Engine`] and [`EngineOptions`].
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

mod branch_files;
mod branches;
mod cache;
mod catch_up;
mod chats;
mod commit;
mod debounce;
mod errors;
mod fanout;
mod files;
mod global_settings;
mod job_queue;
mod job_watch;
mod jobs;
mod lifecycle;
mod lorebooks;
mod ops;
mod profile_ops;
mod prompt;
mod publish;
mod recall;
mod recall_state;
mod refreshes;
mod replicas;
mod retry;
mod settings_ops;
mod slot;
mod world_info;

use std::sync::Arc;
use std::time::Duration;

use crate::domain::Limits;
use crate::domain::refresh::Trigger;
use crate::model_tokenizers::Tokenizers;
use crate::store::Stores;
use crate::telemetry;
use crate::wall_clock::{SystemClock, WallClock};
pub use branch_files::FileImported;
pub use branches::{Branched, Started};
pub use chats::Chats;
pub use errors::EngineError;
pub use fanout::Updates;
pub use files::ChatSnapshot;
pub use job_queue::{Embedder, QueueOptions, RecapWriter};
pub use job_watch::JobUpdates;
#[cfg(test)]
pub(crate) use job_watch::JobsStore;
pub use jobs::JobDriver;
pub use lifecycle::ChatSummary;
pub use lorebooks::{
    LorebookEntry, LorebookLimits, LorebookSummary, Lorebooks,
    MAX_NAME_BYTES as MAX_LOREBOOK_NAME_BYTES, ScanPool, check_name as check_lorebook_name,
};
pub use ops::RecapList;
pub use profile_ops::ProfileChange;
pub use prompt::ChatPrompt;
pub use recall::{DEFAULT_RECALL_LIMIT, RecallAnswer, RecallHit, RecallRequest};
pub use settings_ops::SettingsUpdate;
pub use world_info::{ScanRequest, WorldInfo, WorldInfoScan};

/// How many job state changes a WatchJobs reader may fall behind before
/// it skips to each job's latest state.
pub const JOB_CHANGES_BUFFER: usize = 256;

/// With a shared store, how long after a chat's owed debounced refresh was
/// due a replica that did not schedule it runs it (the one that did
/// normally has by then; this covers a replica that stopped).
const TAKEOVER_GRACE: Duration = Duration::from_secs(1);

/// What an engine is built with besides its stores; every field has a
/// default ([`EngineOptions::default`]: no LLM, no embeddings endpoint,
/// the default limits, the system's clock).
#[derive(Clone)]
pub struct EngineOptions {
    /// Limits on client text and on what the server holds.
    pub limits: Limits,
    /// The operator's lorebook limits (sizes, the World Info scans' pool).
    pub lorebooks: LorebookLimits,
    /// What writes recaps; `None` without `--llm-url` (no recaps are
    /// written, but jobs can still be listed, watched and cancelled).
    pub writer: Option<RecapWriter>,
    /// What indexes passages and embeds recall's queries; `None` without
    /// `--embedding-url` (recall searches by keyword alone).
    pub embedder: Option<Embedder>,
    /// The job queue's retention, lease and per-chat limit.
    pub queue: QueueOptions,
    /// What time it is, for every instant the engine stores or compares
    /// (job times, activity, retention cut-offs): the system's by default,
    /// a [`crate::wall_clock::ManualClock`] in tests that set the time.
    pub wall_clock: Arc<dyn WallClock>,
    /// The model tokenizers chats may count with (`--tokenizers-dir`);
    /// none by default.
    pub tokenizers: Tokenizers,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            limits: Limits::default(),
            lorebooks: LorebookLimits::default(),
            writer: None,
            embedder: None,
            queue: QueueOptions::default(),
            wall_clock: Arc::new(SystemClock),
            tokenizers: Tokenizers::default(),
        }
    }
}

/// The engine: a facade over its parts, which the gRPC layer and the app
/// reach through it. Cheap to clone (three handles, a few `Arc`s).
///
/// It owns no state of its own: [`Chats`] holds the chats (and, below
/// them, the lorebooks and the job machinery's state), [`JobDriver`] runs
/// and requests jobs over the chats, [`WorldInfo`] activates World Info
/// over the chats and the lorebooks.
#[derive(Clone)]
pub struct Engine {
    chats: Chats,
    jobs: JobDriver,
    world_info: WorldInfo,
}

impl Engine {
    /// Builds an engine over `stores` with `options`, reading every
    /// tenant's global settings and counting the chats. The job runner
    /// starts with [`JobDriver::run_jobs`].
    pub async fn new(stores: Stores, options: EngineOptions) -> Result<Engine, EngineError> {
        let Stores {
            chats: store,
            replicas,
        } = stores;
        let EngineOptions {
            limits,
            lorebooks: lorebook_limits,
            writer,
            embedder,
            queue,
            wall_clock,
            tokenizers,
        } = options;
        let global = store.global_settings().await?;
        let chats_known = store.chat_count().await?;
        let cache = cache::ChatCache::new(limits.max_resident_bytes);
        let shared = replicas.is_some();
        let scan_gate = world_info::ScanGate::new(&lorebook_limits.scan_pool);
        let lorebooks = Lorebooks::new(store.clone(), shared, lorebook_limits, wall_clock.clone());
        let jobs = job_queue::Jobs::new(job_queue::JobsSetup {
            writer,
            embedder,
            queue,
            wall_clock: wall_clock.clone(),
            changes_buffer: JOB_CHANGES_BUFFER,
            store: store.clone(),
            replicated: shared,
            cache: cache.clone(),
        });
        let chats = Chats::new(chats::ChatsSetup {
            store,
            replicas,
            limits,
            global,
            chats_known,
            cache,
            jobs,
            wall_clock,
            lorebooks,
            tokenizers,
        });
        Ok(Engine {
            jobs: JobDriver::new(chats.clone()),
            world_info: WorldInfo::new(chats.clone(), scan_gate),
            chats,
        })
    }

    /// The chats: events, memory, settings, injections, imports and
    /// exports, recall, prompts.
    pub fn chats(&self) -> &Chats {
        &self.chats
    }

    /// The job queue: requests, listing, cancelling, the runners.
    pub fn jobs(&self) -> &JobDriver {
        &self.jobs
    }

    /// World Info activation (ScanWorldInfo, RenderPrompt's lore).
    pub fn world_info(&self) -> &WorldInfo {
        &self.world_info
    }

    /// The tenants' lorebooks, a handle of their own (clone it to keep
    /// it).
    pub fn lorebooks(&self) -> &Lorebooks {
        self.chats.lorebooks()
    }

    /// Limits on client text.
    pub fn limits(&self) -> &Limits {
        self.chats.limits()
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
        self.chats.inner.cache.publish_gauges();
        metrics::counter!(telemetry::CHAT_EVICTIONS).increment(0);
        metrics::counter!(telemetry::CHAT_LOADS).increment(0);
        for reason in ["api", "retention"] {
            metrics::counter!(telemetry::CHATS_DELETED, "reason" => reason).increment(0);
        }
        for reason in ["load", "encode", "endpoint", "queue_full", "no_endpoint"] {
            metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => reason).increment(0);
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

#[cfg(test)]
mod tests;
