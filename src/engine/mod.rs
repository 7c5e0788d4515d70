//! The engine: per-chat ordering, debounced and immediate refreshes, durable
//! commits, and fan-out of every new injection to subscribers.
//!
//! Each chat has a slot ([`slot::ChatSlot`]) whose async lock is held for a
//! whole operation: the domain change, the refresh it triggers, and the
//! commit of both in one group. Memory changes first and is dropped (the
//! chat reloaded from disk) if the commit fails, so memory never holds what
//! disk does not. Subscribers are told only after the commit.

pub mod commit;
mod debounce;
mod fanout;
mod ops;
mod refreshes;
mod replicas;
mod settings_ops;
mod slot;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{OwnedMutexGuard, broadcast};

use crate::domain::ids::tenant_of;
use crate::domain::refresh::{self, Injection, RefreshContext, Trigger};
use crate::domain::settings::SettingsPatch;
use crate::domain::{DomainError, Limits, tokens};
use crate::store::{Store, StoreError, Write};
use crate::telemetry;
use commit::Committer;
pub use fanout::Updates;
pub use ops::RecapList;
pub use settings_ops::SettingsUpdate;
use slot::{ChatSlot, Resident};

/// Why an engine operation failed. Nothing of a failed operation is applied.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request broke a domain rule.
    #[error(transparent)]
    Domain(#[from] DomainError),
    /// The store failed; the operation was not acknowledged.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How many updates the all-chats channel holds for a slow subscriber
/// before that subscriber resynchronises from the latest states.
const ALL_CHATS_BUFFER: usize = 4096;

/// How many times an operation is re-run, on a fresh read of its chat,
/// when another replica changed the chat first; then it fails (ABORTED).
const MAX_CONFLICT_RETRIES: u32 = 32;

/// With a shared store, how long after a chat's owed debounced refresh was
/// due a replica that did not schedule it runs it (the one that did
/// normally has by then; this covers a replica that stopped).
const TAKEOVER_GRACE_MS: i64 = 1000;

/// Handle to the engine; cheap to clone (one `Arc`), so every service and
/// timer task holds its own.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    /// Other replicas write to the store too: commits claim their chat.
    shared: bool,
    committer: Committer,
    limits: Limits,
    /// Chats the store holds (for `max_chats`).
    chats_known: std::sync::atomic::AtomicUsize,
    /// Open subscriptions, in all and per client connection.
    subscribers: fanout::Subscribers,
    chats: RwLock<HashMap<String, Arc<ChatSlot>>>,
    /// Each tenant's global settings (the default tenant's under "") and
    /// the generation of their claim (always 0 with a single-writer store).
    global: RwLock<HashMap<String, (u64, Arc<SettingsPatch>)>>,
    global_changes: tokio::sync::Mutex<()>,
    all_chats: broadcast::Sender<Arc<Injection>>,
    /// The store's clock at the latest resync (shared store only).
    last_resync_ms: std::sync::Mutex<Option<i64>>,
}

/// A reserved place for a new chat (see [`Engine::reserve_chat`]).
struct ChatPlace<'a> {
    known: &'a std::sync::atomic::AtomicUsize,
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
            self.known.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
}

/// A locked chat slot.
type Guard = OwnedMutexGuard<Option<Resident>>;

/// What an operation asks of the refresh machinery once its change is made.
enum Next {
    /// Nothing: no refresh, none scheduled.
    Nothing,
    /// Refresh now, in the same commit.
    Refresh(Trigger),
    /// Refresh after `debounce_ms` of quiet (now when it is 0).
    Debounce(Trigger),
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn now_ms() -> i64 {
    now_us() / 1000
}

impl Engine {
    /// Builds an engine over `store`, whose commits go through `committer`.
    pub fn new(
        store: Arc<dyn Store>,
        committer: Committer,
        limits: Limits,
    ) -> Result<Engine, EngineError> {
        let global = store.load_global_settings_versioned()?;
        let chats_known = store.chat_ids()?.len();
        let (all_chats, _) = broadcast::channel(ALL_CHATS_BUFFER);
        Ok(Engine {
            inner: Arc::new(Inner {
                shared: store.shared(),
                store,
                committer,
                limits,
                chats_known: std::sync::atomic::AtomicUsize::new(chats_known),
                subscribers: fanout::Subscribers::default(),
                chats: RwLock::new(HashMap::new()),
                global: RwLock::new(
                    global
                        .into_iter()
                        .map(|(tenant, patch, generation)| (tenant, (generation, Arc::new(patch))))
                        .collect(),
                ),
                global_changes: tokio::sync::Mutex::new(()),
                all_chats,
                last_resync_ms: std::sync::Mutex::new(None),
            }),
        })
    }

    /// Limits on client text.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// A tenant's global settings.
    fn global(&self, tenant: &str) -> Arc<SettingsPatch> {
        let globals = match self.inner.global.read() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        globals
            .get(tenant)
            .map(|(_, patch)| patch.clone())
            .unwrap_or_default()
    }

    /// The generation of the tenant's global settings held here.
    fn global_generation(&self, tenant: &str) -> u64 {
        let globals = match self.inner.global.read() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        globals.get(tenant).map_or(0, |(generation, _)| *generation)
    }

    /// Keeps `patch` as the tenant's global settings unless newer ones are
    /// held (a slow re-read must not undo a change made since).
    fn set_global(&self, tenant: &str, patch: SettingsPatch, generation: u64) {
        let mut globals = match self.inner.global.write() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let held = globals.get(tenant).map(|(g, _)| *g);
        if held.is_none_or(|held| held <= generation) {
            globals.insert(tenant.to_owned(), (generation, Arc::new(patch)));
        }
    }

    fn slot(&self, chat_id: &str) -> Arc<ChatSlot> {
        {
            let chats = match self.inner.chats.read() {
                Ok(c) => c,
                Err(poisoned) => poisoned.into_inner(),
            };
            if let Some(slot) = chats.get(chat_id) {
                return slot.clone();
            }
        }
        let mut chats = match self.inner.chats.write() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        let slot = chats
            .entry(chat_id.to_owned())
            .or_insert_with(|| Arc::new(ChatSlot::new(chat_id)))
            .clone();
        metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
        slot
    }

    /// Drops a slot from memory when nobody else holds it and nobody
    /// watches it. Checked under the map's write lock: any other holder
    /// took its clone under the map's lock, so the count is exact.
    fn forget_slot(&self, slot: Arc<ChatSlot>) {
        let mut chats = match self.inner.chats.write() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        // One reference in the map, one here.
        if Arc::strong_count(&slot) == 2 && slot.latest.receiver_count() == 0 {
            chats.remove(&slot.id);
            metrics::gauge!(telemetry::CHATS_RESIDENT).set(chats.len() as f64);
        }
    }

    fn resident_slots(&self) -> Vec<Arc<ChatSlot>> {
        match self.inner.chats.read() {
            Ok(c) => c.values().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().values().cloned().collect(),
        }
    }

    /// Locks a chat's slot, loading the chat from the store first if needed.
    async fn lock(&self, slot: &Arc<ChatSlot>) -> Result<Guard, EngineError> {
        let mut guard = slot.state.clone().lock_owned().await;
        if guard.is_none() {
            self.load_into(slot, &mut guard, false).await?;
        }
        Ok(guard)
    }

    /// Reads a chat from the store into its locked slot and offers its
    /// stored injections to the slot's subscribers (and, with `announce`, to
    /// the all-chats subscribers: another replica made them). A loaded chat
    /// that still owes a debounced refresh gets it scheduled: after its
    /// debounce delay; with a shared store, counted from the chat's last
    /// change plus [`TAKEOVER_GRACE_MS`], so the replica that owes it
    /// normally runs it first.
    async fn load_into(
        &self,
        slot: &Arc<ChatSlot>,
        guard: &mut Guard,
        announce: bool,
    ) -> Result<(), EngineError> {
        let store = self.inner.store.clone();
        let id = slot.id.clone();
        let (mut loaded, settings_generation) =
            tokio::task::spawn_blocking(move || Resident::load(&*store, &id))
                .await
                .map_err(|e| StoreError::Database(format!("load task failed: {e}")))??;
        if settings_generation > self.global_generation(tenant_of(&slot.id)) {
            // The chat was read after a global change this replica has not
            // heard of yet: refreshes must not use the old settings.
            self.reload_global_settings().await?;
        }
        let stored: Vec<Arc<Injection>> = [&loaded.meta.injection, &loaded.meta.message_injection]
            .into_iter()
            .flatten()
            .map(|i| Arc::new(i.clone()))
            .collect();
        let mut newer = Vec::new();
        slot.behind
            .store(false, std::sync::atomic::Ordering::Release);
        slot.latest.send_if_modified(|latest| {
            for injection in stored {
                if latest.offer(injection.clone()) {
                    newer.push(injection);
                }
            }
            !newer.is_empty()
        });
        if announce {
            for injection in newer {
                let _ = self.inner.all_chats.send(injection);
            }
        }
        if loaded.meta.needs_refresh && loaded.chat.is_some() {
            let settings = loaded.effective(&self.global(tenant_of(&slot.id)));
            if settings.chat_enabled(loaded.settings.enabled) {
                let delay_ms = match (self.inner.shared, loaded.changed_ms) {
                    (true, Some(changed)) => {
                        let due = changed
                            .saturating_add(i64::try_from(settings.debounce_ms).unwrap_or(i64::MAX))
                            .saturating_add(TAKEOVER_GRACE_MS);
                        u64::try_from(due.saturating_sub(now_ms())).unwrap_or(0)
                    }
                    _ => settings.debounce_ms,
                };
                self.schedule_debounce(slot, &mut loaded, Trigger::Startup, delay_ms);
            }
        }
        **guard = Some(loaded);
        Ok(())
    }

    /// Runs `attempt` again, on a fresh read of its chat, while it fails
    /// because another replica changed the chat first.
    async fn retrying<T, F, Fut>(&self, mut attempt: F) -> Result<T, EngineError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, EngineError>>,
    {
        let mut conflicts = 0;
        loop {
            match attempt().await {
                Err(EngineError::Store(StoreError::Conflict(chat)))
                    if conflicts < MAX_CONFLICT_RETRIES =>
                {
                    conflicts += 1;
                    metrics::counter!(telemetry::REPLICA_CONFLICTS).increment(1);
                    tracing::debug!(
                        chat,
                        conflicts,
                        "another replica changed the chat first; retrying"
                    );
                    // A random, growing pause: two replicas racing on one
                    // chat stop meeting at the same moment.
                    let ceiling_us = (250u64 << conflicts.min(8)).min(50_000);
                    let jitter = u64::from(std::process::id()).wrapping_mul(0x9E37_79B9)
                        ^ u64::try_from(now_us())
                            .unwrap_or(0)
                            .wrapping_mul(0x85EB_CA6B);
                    tokio::time::sleep(Duration::from_micros(jitter % ceiling_us)).await;
                }
                other => return other,
            }
        }
    }

    /// [`Engine::commit_and_publish`] in a task of its own, so that a caller
    /// that goes away (a cancelled RPC) cannot stop it between the commit
    /// and the memory update.
    async fn finish(
        &self,
        slot: &Arc<ChatSlot>,
        guard: Guard,
        writes: Vec<Write>,
        next: Next,
    ) -> Result<u64, EngineError> {
        let engine = self.clone();
        let slot = slot.clone();
        tokio::spawn(async move { engine.commit_and_publish(&slot, guard, writes, next).await })
            .await
            .map_err(|e| StoreError::Database(format!("commit task failed: {e}")))?
    }

    /// Commits `writes` together with the chat's row and, per `next`, a
    /// refresh; then updates memory, tells subscribers and (re)schedules the
    /// debounce timer. On a store error the slot is unloaded.
    async fn commit_and_publish(
        &self,
        slot: &Arc<ChatSlot>,
        mut guard: Guard,
        mut writes: Vec<Write>,
        next: Next,
    ) -> Result<u64, EngineError> {
        let global = self.global(tenant_of(&slot.id));
        let Some(resident) = guard.as_mut() else {
            return Err(StoreError::Database("chat state missing after load".into()).into());
        };
        let settings = resident.effective(&global);
        let enabled = settings.chat_enabled(resident.settings.enabled);
        let next = match next {
            // A disabled chat is refreshed only by immediate triggers.
            Next::Debounce(_) if !enabled => Next::Nothing,
            Next::Debounce(trigger) if settings.debounce_ms == 0 => Next::Refresh(trigger),
            other => other,
        };
        let mut meta = resident.meta.clone();
        let mut refreshed = None;
        let mut refreshed_messages = None;
        let mut schedule = None;
        if let Some(chat) = &resident.chat {
            match next {
                Next::Refresh(trigger) => {
                    let same_tokenizer = resident.counted_with == Some(settings.tokenizer);
                    let previous = meta.injection.as_ref();
                    let reusable =
                        previous.filter(|_| resident.counted_with == Some(settings.tokenizer));
                    let ctx = RefreshContext {
                        chat_id: &slot.id,
                        settings: &settings,
                        enabled,
                        revision: meta.revision + 1,
                        trigger,
                        now_us: now_us(),
                    };
                    let started = Instant::now();
                    let injection = refresh::refresh(chat, ctx, |text| match reusable {
                        Some(p) if p.text == text => p.token_count,
                        _ => tokens::count(settings.tokenizer, text),
                    });
                    metrics::histogram!(telemetry::REFRESH_DURATION)
                        .record(started.elapsed().as_secs_f64());
                    metrics::counter!(telemetry::REFRESHES, "trigger" => trigger.name())
                        .increment(1);
                    meta.revision = injection.revision;
                    meta.needs_refresh = false;
                    meta.injection = Some(injection.clone());
                    refreshed = Some(Arc::new(injection));
                    // The message-recap tier, while on, and once more when
                    // it goes off so subscribers drop it.
                    let previous = meta.message_injection.as_ref();
                    if settings.message_recaps_enabled
                        || previous.is_some_and(|p| !p.text.is_empty())
                    {
                        let ctx = RefreshContext {
                            revision: previous.map_or(0, |p| p.revision) + 1,
                            ..ctx
                        };
                        let tier =
                            refresh::refresh_message_recaps(chat, ctx, |text| match previous {
                                Some(p) if p.text == text && same_tokenizer => p.token_count,
                                _ => tokens::count(settings.tokenizer, text),
                            });
                        meta.message_injection = Some(tier.clone());
                        refreshed_messages = Some(Arc::new(tier));
                    }
                }
                Next::Debounce(trigger) => {
                    meta.needs_refresh = true;
                    schedule = Some(trigger);
                }
                Next::Nothing => {}
            }
            meta.current_recap = chat.recaps().current_version();
            // Most debounced events leave the row as it is: skip the write.
            if meta != resident.meta || !resident.persisted {
                writes.push(Write::Chat {
                    chat_id: slot.id.clone(),
                    meta: meta.clone(),
                });
            }
        }
        let claimed = self.inner.shared && !writes.is_empty();
        if claimed {
            writes.insert(
                0,
                Write::Claim {
                    chat_id: slot.id.clone(),
                    generation: resident.generation,
                },
            );
        }
        if let Err(error) = self.inner.committer.commit(writes).await {
            match &error {
                StoreError::Conflict(_) => {
                    tracing::debug!(chat = %slot.id, "changed by another replica; reloading")
                }
                _ => {
                    tracing::warn!(chat = %slot.id, %error, "commit failed; chat reloads from the store")
                }
            }
            *guard = None;
            // Memory is no longer trusted: reads load the chat again.
            slot.behind
                .store(true, std::sync::atomic::Ordering::Release);
            return Err(error.into());
        }
        if claimed {
            resident.generation += 1;
        }
        resident.persisted |= resident.chat.is_some();
        resident.meta = meta;
        if let Some(injection) = &refreshed {
            resident.cancel_debounce();
            resident.counted_with = Some(settings.tokenizer);
            tracing::debug!(
                chat = %slot.id,
                trigger = ?injection.trigger,
                revision = injection.revision,
                tokens = injection.token_count,
                text = %injection.text,
                "[MEMORY INJECTION] refreshed"
            );
        }
        let fresh: Vec<Arc<Injection>> = refreshed.into_iter().chain(refreshed_messages).collect();
        if !fresh.is_empty() {
            // One send for both keys: each subscriber wakes once.
            slot.latest.send_modify(|latest| {
                for injection in &fresh {
                    latest.offer(injection.clone());
                }
            });
            for injection in fresh {
                let _ = self.inner.all_chats.send(injection);
            }
        }
        if let Some(trigger) = schedule {
            self.schedule_debounce(slot, resident, trigger, settings.debounce_ms);
        }
        Ok(resident.meta.revision)
    }

    /// Reserves a place for a new chat, atomically, so concurrent new
    /// chats cannot pass `max_chats` together; the place is given back
    /// unless [`ChatPlace::keep`] is called.
    fn reserve_chat(&self) -> Result<ChatPlace<'_>, EngineError> {
        let max = self.inner.limits.max_chats;
        self.inner
            .chats_known
            .fetch_update(
                std::sync::atomic::Ordering::AcqRel,
                std::sync::atomic::Ordering::Acquire,
                |known| (known < max).then_some(known + 1),
            )
            .map_err(|_| {
                DomainError::ResourceExhausted("no more chats can be created on this server".into())
            })?;
        Ok(ChatPlace {
            known: &self.inner.chats_known,
            kept: false,
        })
    }

    /// Every resident chat's latest injection.
    fn latest_of_every_chat(&self) -> Vec<Arc<Injection>> {
        self.resident_slots()
            .iter()
            .flat_map(|slot| slot.latest.borrow().all())
            .collect()
    }
}
