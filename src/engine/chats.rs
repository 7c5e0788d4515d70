//! The chats part: the chats held in memory and the one way to change one.
//!
//! [`Chats`] is a handle, cheap to clone (one `Arc` inside, like
//! mini-redis's `Db`): every clone shares the chat cache, the tenants'
//! global settings, the subscribers and the count of chats. It holds the
//! parts below it and nothing above: the store, the [`Lorebooks`] (a
//! deleted chat's own book goes with it), the job machinery's state
//! ([`Jobs`]: what a commit announces, the chats that want indexing) and
//! the wall clock. The job lanes ([`crate::engine::jobs::JobDriver`]) and
//! World Info ([`crate::engine::world_info::WorldInfo`]) hold a `Chats`;
//! it holds neither, so the compiler keeps the arrows one way.
//!
//! Here: the handle, its loading path ([`Chats::lock`]: the one place a
//! chat not in memory is handled) and the update path ([`update`]). The
//! chat operations are `impl Chats` blocks in the engine's modules that
//! name them (`ops`, `publish`, `files`, `settings_ops`, `lifecycle`,
//! `refreshes`, `replicas`, `recall`, `prompt`, `debounce`, `commit`).

mod update;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::sync::broadcast;
use tokio_util::task::TaskTracker;

use super::cache::ChatCache;
use super::commit;
use super::fanout::Subscribers;
use super::global_settings::{DEFAULT_GLOBAL, GlobalSettings};
use super::job_queue::Jobs;
use super::lorebooks::Lorebooks;
use super::retry::Retry;
use super::slot::{ChatSlot, LoadedChat, Locked, Resident};
use super::{EngineError, TAKEOVER_GRACE};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::{Injection, Trigger};
use crate::domain::settings::{Settings, SettingsPatch};
use crate::domain::time::{UnixMicros, UnixMillis};
use crate::domain::tokens::Counter;
use crate::domain::{DomainError, Limits};
use crate::model_tokenizers::Tokenizers;
use crate::store::{ChatStore, ReplicaStore, TenantSettings};
use crate::telemetry;
use crate::wall_clock::WallClock;
pub(in crate::engine) use update::Change;

/// How many updates the all-chats channel holds for a slow subscriber
/// before that subscriber resynchronises from the latest states.
pub(in crate::engine) const ALL_CHATS_BUFFER: usize = 4096;

/// The chats part's handle; cheap to clone (one `Arc`), so every timer and
/// job task holds its own.
#[derive(Clone)]
pub struct Chats {
    /// The state every clone shares.
    pub(in crate::engine) inner: Arc<ChatsInner>,
}

/// What every clone of a [`Chats`] handle shares.
pub(in crate::engine) struct ChatsInner {
    /// The store of chats and jobs.
    pub(in crate::engine) store: Arc<dyn ChatStore>,
    /// The replica feed when other replicas write the store too: commits
    /// then claim their chat.
    pub(in crate::engine) replicas: Option<Arc<dyn ReplicaStore>>,
    /// Limits on client text and on what the server holds.
    pub(in crate::engine) limits: Limits,
    /// Chats the store holds (for `max_chats`): counted up when a chat is
    /// created here, down when it is deleted here.
    chats_known: AtomicUsize,
    /// Open subscriptions, in all and per client connection.
    pub(in crate::engine) subscribers: Subscribers,
    /// The chats held in memory, within the memory budget.
    pub(in crate::engine) cache: ChatCache,
    /// Each tenant's global settings and their settings clock
    /// (always 0 with a single-writer store).
    global: RwLock<HashMap<Tenant, (u64, GlobalSettings)>>,
    /// One global-settings change at a time in this process (taken before
    /// any chat's lock, never after).
    pub(in crate::engine) global_changes: tokio::sync::Mutex<()>,
    /// Every new injection of any chat, for the all-chats subscribers.
    pub(in crate::engine) all_chats: broadcast::Sender<Arc<Injection>>,
    /// The job machinery's state: what commits announce, the chats that
    /// want an index job, the LLM and embeddings clients.
    pub(in crate::engine) jobs: Jobs,
    /// The store's clock at the latest resync (shared store only).
    pub(in crate::engine) last_resync_ms: Mutex<Option<UnixMillis>>,
    /// The wall clock.
    wall_clock: Arc<dyn WallClock>,
    /// The tenants' lorebooks (a deleted chat's own book goes with it).
    lorebooks: Lorebooks,
    /// Whether an embeddings endpoint is configured (a commit then asks
    /// for indexing when the chat's recall index lacks vectors).
    indexing: bool,
    /// The model tokenizers chats may count with.
    tokenizers: Tokenizers,
    /// The tasks calls leave running (recall's searches away from a
    /// chat's lock and the loads they start), so that a shutdown waits
    /// for them ([`Chats::finish_background`]).
    background: TaskTracker,
}

/// A reserved place for a new chat (see [`Chats::reserve_chat`]).
pub(in crate::engine) struct ChatPlace<'a> {
    known: &'a AtomicUsize,
    kept: bool,
}

impl ChatPlace<'_> {
    /// The chat was stored: the place stays taken.
    pub(in crate::engine) fn keep(mut self) {
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

/// What [`Chats::new`] is built from: the stores and limits, what the
/// store held at start, and the parts below the chats.
pub(in crate::engine) struct ChatsSetup {
    /// The store of chats and jobs.
    pub store: Arc<dyn ChatStore>,
    /// The replica feed when other replicas write the store too.
    pub replicas: Option<Arc<dyn ReplicaStore>>,
    /// Limits on client text and on what the server holds.
    pub limits: Limits,
    /// Every tenant's global settings, as the store held them at start.
    pub global: Vec<TenantSettings>,
    /// The chats the store held at start (for `max_chats`).
    pub chats_known: usize,
    /// The chat cache (shared with the job queue's state).
    pub cache: ChatCache,
    /// The job queue's state.
    pub jobs: Jobs,
    /// The wall clock.
    pub wall_clock: Arc<dyn WallClock>,
    /// The tenants' lorebooks.
    pub lorebooks: Lorebooks,
    /// The model tokenizers chats may count with.
    pub tokenizers: Tokenizers,
}

impl Chats {
    /// The chats part over what `setup` gives.
    pub(in crate::engine) fn new(setup: ChatsSetup) -> Chats {
        let ChatsSetup {
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
        } = setup;
        let (all_chats, _) = broadcast::channel(ALL_CHATS_BUFFER);
        let indexing = jobs.embedder().is_some();
        Chats {
            inner: Arc::new(ChatsInner {
                store,
                replicas,
                limits,
                chats_known: AtomicUsize::new(chats_known),
                subscribers: Subscribers::default(),
                cache,
                global: RwLock::new(
                    global
                        .into_iter()
                        .map(|g| {
                            let global = GlobalSettings::new(g.patch, g.profiles);
                            (g.tenant, (g.clock, global))
                        })
                        .collect(),
                ),
                global_changes: tokio::sync::Mutex::new(()),
                all_chats,
                jobs,
                last_resync_ms: Mutex::new(None),
                wall_clock,
                lorebooks,
                indexing,
                tokenizers,
                background: TaskTracker::new(),
            }),
        }
    }

    /// Runs `task` on its own, counted among the tasks a shutdown waits
    /// for.
    pub(in crate::engine) fn spawn_background(
        &self,
        task: impl Future<Output = ()> + Send + 'static,
    ) {
        self.spawn_tracked(task);
    }

    /// [`Chats::spawn_background`] for a task whose answer is awaited: a
    /// change that must run to its end even when its caller goes away
    /// (a global settings or profile change and the refreshes after it),
    /// and that a shutdown waits for.
    pub(in crate::engine) fn spawn_tracked<T: Send + 'static>(
        &self,
        task: impl Future<Output = T> + Send + 'static,
    ) -> tokio::task::JoinHandle<T> {
        self.inner
            .background
            .spawn(crate::telemetry::spans::carry(task))
    }

    /// Waits until every task [`Chats::spawn_background`] started has
    /// ended (those started meanwhile too): at shutdown, once no call can
    /// start another, before the last debounced refreshes run.
    pub async fn finish_background(&self) {
        self.inner.background.close();
        self.inner.background.wait().await;
    }

    /// Limits on client text.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// What counts the tokens of a chat with `settings`: its tokenizer,
    /// loaded if it is a model's own (o200k_base when that fails; see
    /// [`Tokenizers::counter`]).
    pub(in crate::engine) fn counter(&self, settings: &Settings) -> Counter {
        self.inner
            .tokenizers
            .counter_for(&settings.inclusion, &settings.writing.llm_model, None)
    }

    /// The counter of `chat`'s refresh: as [`Chats::counter`], and with
    /// the LLM_ENDPOINT tokenizer the chat is refreshed again once the
    /// texts this refresh estimated are counted.
    pub(in crate::engine) fn refresh_counter(
        &self,
        settings: &Settings,
        chat: &ChatKey,
    ) -> Counter {
        self.inner.tokenizers.counter_for(
            &settings.inclusion,
            &settings.writing.llm_model,
            Some(chat),
        )
    }

    /// The model tokenizers chats may count with.
    pub(in crate::engine) fn tokenizers(&self) -> &Tokenizers {
        &self.inner.tokenizers
    }

    /// The tenants' lorebooks.
    pub(in crate::engine) fn lorebooks(&self) -> &Lorebooks {
        &self.inner.lorebooks
    }

    /// The job machinery's state.
    pub(in crate::engine) fn jobs(&self) -> &Jobs {
        &self.inner.jobs
    }

    /// Whether an embeddings endpoint is configured (index jobs run).
    pub(in crate::engine) fn indexing(&self) -> bool {
        self.inner.indexing
    }

    /// The store.
    pub(in crate::engine) fn store(&self) -> &Arc<dyn ChatStore> {
        &self.inner.store
    }

    /// Now on the engine's clock, µs since the epoch.
    pub(in crate::engine) fn now(&self) -> UnixMicros {
        self.inner.wall_clock.now()
    }

    /// Now on the engine's clock, whole ms since the epoch.
    pub(in crate::engine) fn now_ms(&self) -> UnixMillis {
        self.inner.wall_clock.now_ms()
    }

    /// Whether other replicas write the store too.
    pub(in crate::engine) fn shared(&self) -> bool {
        self.inner.replicas.is_some()
    }

    /// A tenant's global settings.
    pub(in crate::engine) fn global(&self, tenant: &Tenant) -> GlobalSettings {
        self.inner
            .global
            .read()
            .get(tenant)
            .map(|(_, global)| global.clone())
            .unwrap_or_else(|| DEFAULT_GLOBAL.clone())
    }

    /// The tenants whose global settings or profiles are held here.
    pub(in crate::engine) fn tenants_with_settings(&self) -> Vec<Tenant> {
        self.inner.global.read().keys().cloned().collect()
    }

    /// The settings clock of the tenant's global settings held here.
    pub(in crate::engine) fn settings_clock(&self, tenant: &Tenant) -> u64 {
        self.inner
            .global
            .read()
            .get(tenant)
            .map_or(0, |(clock, _)| *clock)
    }

    /// Keeps `patch` and `profiles` as the tenant's global settings and
    /// profiles unless newer ones are held (a slow re-read must not undo a
    /// change made since).
    pub(in crate::engine) fn set_global(
        &self,
        tenant: &Tenant,
        patch: SettingsPatch,
        profiles: crate::domain::profiles::Profiles,
        settings_clock: u64,
    ) {
        let global = GlobalSettings::new(patch, profiles);
        let mut globals = self.inner.global.write();
        let held = globals.get(tenant).map(|(g, _)| *g);
        if held.is_none_or(|held| held <= settings_clock) {
            globals.insert(tenant.clone(), (settings_clock, global));
        }
    }

    /// The chat's slot (see [`ChatCache::slot`]).
    pub(in crate::engine) fn slot(&self, chat: &ChatKey) -> Arc<ChatSlot> {
        self.inner.cache.slot(chat)
    }

    /// Sets a slot's estimate from its state (the caller holds the chat's
    /// lock), evicting when that passes the budget; chats dropped go to
    /// the eviction log while an all-chats stream is open.
    pub(in crate::engine) fn account(&self, slot: &ChatSlot, state: Option<&Resident>) {
        let all_chats = &self.inner.all_chats;
        self.inner
            .cache
            .account(slot, state, &|| all_chats.receiver_count() > 0);
    }

    /// Locks a chat's slot, loading the chat from the store first if
    /// needed: the one place where a chat not loaded is handled.
    pub(in crate::engine) async fn lock(
        &self,
        slot: &Arc<ChatSlot>,
    ) -> Result<LoadedChat, EngineError> {
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
    pub(in crate::engine) async fn load_into(
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
            let settings = loaded.effective(&self.global(tenant), &slot.key.id);
            if settings.chat_enabled(loaded.settings().enabled) {
                let debounce = Duration::from_millis(settings.chat.debounce_ms);
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
    pub(in crate::engine) async fn retrying<T, F, Fut>(&self, attempt: F) -> Result<T, EngineError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, EngineError>>,
    {
        Retry::CHATS.run(attempt).await
    }

    /// Reserves a place for a new chat, atomically, so concurrent new
    /// chats cannot pass `max_chats` together; the place is given back
    /// unless [`ChatPlace::keep`] is called.
    pub(in crate::engine) fn reserve_chat(&self) -> Result<ChatPlace<'_>, EngineError> {
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
    pub(in crate::engine) fn free_chat_place(&self) {
        let _ = self
            .inner
            .chats_known
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |known| {
                Some(known.saturating_sub(1))
            });
    }
}
