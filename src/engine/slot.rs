//! One chat's place in memory: its state behind an async lock (which orders
//! the chat's operations), the watch channel its subscribers read, and the
//! published events queued for the lock's next holder.
//!
//! A locked slot is [`Locked`] (its state may be unloaded); a locked slot
//! whose chat is loaded is [`LoadedChat`], which only the engine's load
//! path makes: operations work on a `LoadedChat` and never meet an
//! unloaded chat.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Mutex, OwnedMutexGuard, oneshot, watch};
use tokio::task::JoinHandle;

use super::errors::EngineError;
use super::global_settings::GlobalSettings;
use super::recall_state::RecallState;
use crate::domain::chat::Chat;
use crate::domain::chat::ChatEvent;
use crate::domain::footprint::{Footprint, allocation_bytes};
use crate::domain::ids::ChatKey;
use crate::domain::refresh::{Injection, InjectionKey, Trigger};
use crate::domain::settings::Settings;
use crate::domain::time::{UnixMicros, UnixMillis};
use crate::domain::tokens::CounterKey;
use crate::store::{self, ChatMeta, ChatSettings};

/// What a watch channel's shared state costs besides the value it holds:
/// as tokio lays it out, a lock around the value, a version and two
/// reference counts, and nine `Notify` (eight for receivers, one for the
/// sender).
const WATCH_SHARED_BYTES: usize =
    16 + 3 * size_of::<usize>() + 9 * size_of::<tokio::sync::Notify>();

/// A chat's slot. The lock is held for a whole operation, commit included,
/// so one chat's operations apply in arrival order (tokio's mutex is fair)
/// while other chats proceed; published events queued meanwhile
/// (`publishes`) are applied by the next holder, in their arrival order.
pub(super) struct ChatSlot {
    /// The chat.
    pub key: ChatKey,
    /// `None` until loaded from the store, and again after a failed commit
    /// so that memory is re-read from disk instead of trusted. Shared so an
    /// operation's commit can hold it from a task of its own.
    pub state: Arc<Mutex<Option<Resident>>>,
    /// The latest injections, for subscribers: one watch for both keys, so
    /// a refresh wakes each subscriber once.
    pub latest: watch::Sender<LatestInjections>,
    /// Another replica changed the chat and nobody here watched it, so it
    /// was dropped from memory instead of re-read: `latest` may be behind
    /// the store until the next load (which clears this).
    pub behind: AtomicBool,
    /// The estimated bytes the slot holds, counted in the engine's total
    /// (see [`super::cache`]); set under the chat's lock.
    pub bytes: AtomicUsize,
    /// The use tick of the slot's latest use (least recently used chats
    /// are dropped first).
    pub last_used: AtomicU64,
    /// An injection of this slot went to the all-chats channel: if the slot
    /// is dropped, all-chats streams that fell behind must read it back.
    pub announced: AtomicBool,
    /// Published events waiting, in arrival order, for the next holder of
    /// the lock to apply and commit them together (see
    /// [`super::publish`]).
    pub publishes: parking_lot::Mutex<Vec<QueuedPublish>>,
}

/// A chat's latest injection of each key; `None` before the first refresh
/// (for the message-recap tier: until it was first enabled).
#[derive(Debug, Clone, Default)]
pub struct LatestInjections {
    /// `auto_recap_scene`.
    pub scene: Option<Arc<Injection>>,
    /// `auto_recap_messages`.
    pub messages: Option<Arc<Injection>>,
    /// `auto_recap_recall`.
    pub recall: Option<Arc<Injection>>,
}

impl LatestInjections {
    /// The injection of `key`.
    pub fn get(&self, key: InjectionKey) -> Option<Arc<Injection>> {
        match key {
            InjectionKey::Scene => self.scene.clone(),
            InjectionKey::Messages => self.messages.clone(),
            InjectionKey::Recall => self.recall.clone(),
        }
    }

    /// Every key's, where present.
    pub fn all(&self) -> impl Iterator<Item = Arc<Injection>> + use<> {
        [
            self.scene.clone(),
            self.messages.clone(),
            self.recall.clone(),
        ]
        .into_iter()
        .flatten()
    }

    /// Keeps `injection` if it is newer than what is held for its key.
    pub fn offer(&mut self, injection: Arc<Injection>) -> bool {
        let held = match injection.key {
            InjectionKey::Scene => &mut self.scene,
            InjectionKey::Messages => &mut self.messages,
            InjectionKey::Recall => &mut self.recall,
        };
        let newer = held
            .as_ref()
            .is_none_or(|h| h.revision < injection.revision);
        if newer {
            *held = Some(injection);
        }
        newer
    }
}

impl ChatSlot {
    /// An empty slot for `key`: the chat loads on its first lock.
    pub fn new(key: &ChatKey) -> ChatSlot {
        ChatSlot {
            key: key.clone(),
            state: Arc::new(Mutex::new(None)),
            latest: watch::Sender::new(LatestInjections::default()),
            behind: AtomicBool::new(false),
            bytes: AtomicUsize::new(0),
            last_used: AtomicU64::new(0),
            announced: AtomicBool::new(false),
            publishes: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// The estimated bytes this slot holds with `state` in it: the slot,
    /// its lock, its watch channel and the injections it keeps, its entry
    /// in the engine's map, and the chat state (see
    /// [`Resident::resident_bytes`]). Allocator headers are counted as
    /// glibc's malloc spends them.
    pub fn bytes_with(&self, state: Option<&Resident>) -> usize {
        // The map's entry: the key (a second copy) and the slot's `Arc`, in
        // a table that is about 70% full on average.
        let entry = (size_of::<(ChatKey, Arc<ChatSlot>)>() + 1) * 10 / 7 + self.key.heap_bytes();
        let own = allocation_bytes(2 * size_of::<usize>() + size_of::<ChatSlot>())
            + self.key.heap_bytes()
            + allocation_bytes(2 * size_of::<usize>() + size_of::<Mutex<Option<Resident>>>())
            + allocation_bytes(WATCH_SHARED_BYTES + size_of::<LatestInjections>());
        // The latest injections are usually the ones the chat's row holds
        // (one allocation, counted there).
        let in_row = |injection: &Arc<Injection>| {
            state.is_some_and(|resident| {
                resident
                    .meta
                    .injections()
                    .any(|held| Arc::ptr_eq(held, injection))
            })
        };
        let latest: usize = self
            .latest
            .borrow()
            .all()
            .filter(|injection| !in_row(injection))
            .map(|injection| injection.heap_bytes())
            .sum();
        entry + own + latest + state.map_or(0, Resident::resident_bytes)
    }
}

impl ChatSlot {
    /// Waits for the slot's lock; the chat may be unloaded (see
    /// [`LoadedChat`] for a lock with the chat loaded).
    pub async fn lock(&self) -> Locked {
        self.state.clone().lock_owned().await
    }

    /// Queues a published event for the lock's next holder; the returned
    /// [`Withdraw`] takes it back if its caller goes away first.
    pub fn queue_publish(&self, event: ChatEvent, answer: Answer) -> Withdraw<'_> {
        let ticket = TICKETS.fetch_add(1, Ordering::Relaxed);
        self.publishes.lock().push(QueuedPublish {
            ticket,
            event,
            answer,
            traced_by: crate::telemetry::spans::current(),
        });
        Withdraw {
            slot: self,
            ticket,
            armed: true,
        }
    }

    /// Every queued event, in arrival order, for the lock's holder.
    pub fn take_publishes(&self) -> Vec<QueuedPublish> {
        std::mem::take(&mut *self.publishes.lock())
    }

    /// Puts events taken but not applied back at the queue's head, in
    /// order, for the next holder.
    pub fn requeue_publishes(&self, events: impl IntoIterator<Item = QueuedPublish>) {
        self.publishes.lock().splice(0..0, events);
    }
}

/// A locked slot: the chat's state, `None` while it is not loaded.
pub(super) type Locked = OwnedMutexGuard<Option<Resident>>;

/// A locked slot whose chat is loaded; derefs to the chat's [`Resident`]
/// state. Made only from a loaded [`Locked`] ([`LoadedChat::new`]), and
/// emptied only by [`LoadedChat::unload`], which consumes it: a
/// `LoadedChat` always holds a loaded chat.
pub(super) struct LoadedChat(Locked);

impl LoadedChat {
    /// The lock, if its chat is loaded; otherwise the lock back.
    pub fn new(locked: Locked) -> Result<LoadedChat, Locked> {
        if locked.is_some() {
            Ok(LoadedChat(locked))
        } else {
            Err(locked)
        }
    }

    /// Drops the chat's memory, which may hold a change the store does not
    /// (a failed commit, a panic): the next operation reads the chat again
    /// from the store, and reads meanwhile know memory is behind. The slot
    /// stays locked by the returned guard.
    pub fn unload(mut self, slot: &ChatSlot) -> Locked {
        *self.0 = None;
        slot.behind.store(true, Ordering::Release);
        self.0
    }
}

impl std::ops::Deref for LoadedChat {
    type Target = Resident;

    fn deref(&self) -> &Resident {
        self.0
            .as_ref()
            .expect("a LoadedChat is made only from a loaded lock and emptied only by unload, which consumes it")
    }
}

impl std::ops::DerefMut for LoadedChat {
    fn deref_mut(&mut self) -> &mut Resident {
        self.0
            .as_mut()
            .expect("a LoadedChat is made only from a loaded lock and emptied only by unload, which consumes it")
    }
}

/// Where a queued event's outcome goes: the revision its chat answers with
/// once the event is durable, or why it failed.
pub(super) type Answer = oneshot::Sender<Result<u64, EngineError>>;

/// Tells queued events apart (see [`Withdraw`]).
static TICKETS: AtomicU64 = AtomicU64::new(0);

/// A published event waiting on its chat's slot for a caller holding the
/// lock (see [`super::publish`]).
pub(super) struct QueuedPublish {
    ticket: u64,
    /// The event.
    pub event: ChatEvent,
    /// Where its outcome goes.
    pub answer: Answer,
    /// Its caller's span, when traced: the event is applied in that
    /// context (jobs it queues link to its call), and a batch served by
    /// another caller links to it.
    pub traced_by: Option<opentelemetry::trace::SpanContext>,
}

/// Takes a queued event back off its slot when its caller goes away (a
/// cancelled RPC) before anyone took it: it is then never applied. Once
/// taken, the event is applied and committed as any other.
pub(super) struct Withdraw<'a> {
    slot: &'a ChatSlot,
    ticket: u64,
    /// Whether the event may still be queued (once it is known to be
    /// taken, dropping this does not look for it).
    armed: bool,
}

impl Withdraw<'_> {
    /// Whether the event was still queued (and is not any more).
    pub fn withdraw(&mut self) -> bool {
        self.armed = false;
        let mut queued = self.slot.publishes.lock();
        let before = queued.len();
        queued.retain(|q| q.ticket != self.ticket);
        queued.len() != before
    }

    /// The event is known taken: dropping this does not look for it.
    pub fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.withdraw();
        }
    }
}

/// A debounced refresh waiting for quiet. Later events of the burst only
/// move `deadline` (the timer task sleeps again), so a burst costs one task.
pub(super) struct Debounce {
    /// The trigger of the burst's latest event.
    pub trigger: Trigger,
    /// When the refresh runs, unless another event moves it.
    pub deadline: tokio::time::Instant,
    /// The timer task; aborted when an immediate refresh covers it.
    pub timer: JoinHandle<()>,
    /// The traced events' spans that owe it (at most
    /// `spans::MAX_LINKS`): the refresh's span links to them.
    pub traced_by: Vec<opentelemetry::trace::SpanContext>,
}

/// A loaded chat.
pub(super) struct Resident {
    /// The transcript and recaps; `None` while no event has named the chat.
    /// Shared so that an export streams a snapshot without copying it and
    /// an import hands it to the store: a change made while it is shared
    /// copies it first (`Arc::make_mut`).
    pub chat: Option<Arc<Chat>>,
    /// The chat's stored row.
    pub meta: ChatMeta,
    /// The chat's own settings; `None` when they are the defaults (most
    /// chats), so that a chat without settings of its own does not carry
    /// a few hundred bytes of empty ones. Read through
    /// [`Resident::settings`].
    own_settings: Option<Box<ChatSettings>>,
    /// The pending debounced refresh, if any.
    pub debounce: Option<Debounce>,
    /// Bumped at every (re)scheduling of the debounce timer, which carries
    /// it: a timer whose ticket is not the latest does nothing.
    pub debounce_ticket: u64,
    /// The counter the latest injection's `token_count` was counted with.
    pub counted_with: Option<CounterKey>,
    /// Whether the store holds the chat's row as `meta` is (so an
    /// operation that leaves `meta` as it is need not write it again).
    pub persisted: bool,
    /// The chat's version this state is at (its optimistic-concurrency
    /// version; the store's `chat_clock`): how many commits changed the
    /// chat in the store (shared stores: the next commit claims it; see
    /// `Write::Claim`).
    pub version: u64,
    /// When the chat last changed in the store, in ms since the epoch, as
    /// loaded (shared stores only).
    pub changed_ms: Option<UnixMillis>,
    /// When an operation last changed the chat (its stored activity), µs
    /// since the epoch; `None` while it has no rows. `--chat-retention`
    /// checks it under the chat's lock.
    pub updated_us: Option<UnixMicros>,
    /// The chat's non-terminal jobs, oldest first, as the store holds them
    /// (changed in memory only together with a commit of the same change).
    pub jobs: Vec<crate::domain::jobs::Job>,
    /// The chat's recall index (`super::recall`). Behind a lock of its own
    /// because a refresh, which reads the rest of the state, brings it up
    /// to date; only ever locked by the holder of the chat's lock.
    pub recall: parking_lot::Mutex<RecallState>,
}

impl Resident {
    /// A chat as the store gave it. Stored injections do not repeat their
    /// chat's key: it is put back here.
    pub fn from_store(key: &ChatKey, loaded: store::LoadedChat) -> Resident {
        let store::LoadedChat {
            chat: stored,
            settings,
            clock,
            changed_ms,
            settings_clock: _,
            jobs,
            vectors,
            tombstone,
            updated_us,
        } = loaded;
        let own_settings = settings
            .filter(|s| *s != ChatSettings::default())
            .map(Box::new);
        let chat_known = stored.is_some();
        let (chat, mut meta) = match stored {
            Some(stored) => {
                let mut chat =
                    Chat::from_parts(stored.messages, stored.recaps, stored.meta.current_recap);
                chat.set_st_file(stored.meta.st_file.clone());
                (Some(Arc::new(chat)), stored.meta)
            }
            // A deleted chat's next life continues its revisions.
            None => (
                None,
                ChatMeta {
                    revision: tombstone.map_or(0, |t| t.revision),
                    message_revision_floor: tombstone.map_or(0, |t| t.message_revision),
                    recall_revision_floor: tombstone.map_or(0, |t| t.recall_revision),
                    ..ChatMeta::default()
                },
            ),
        };
        for injection in [
            &mut meta.injection,
            &mut meta.message_injection,
            &mut meta.recall_injection,
        ]
        .into_iter()
        .flatten()
        {
            // Just decoded: the `Arc` is not shared, nothing is copied.
            std::sync::Arc::make_mut(injection).chat = key.clone();
        }
        Resident {
            chat,
            meta,
            own_settings,
            debounce: None,
            debounce_ticket: 0,
            counted_with: None,
            persisted: chat_known,
            version: clock,
            changed_ms,
            updated_us,
            jobs: jobs
                .into_iter()
                .map(|mut job| {
                    job.chat = key.clone();
                    job
                })
                .collect(),
            recall: parking_lot::Mutex::new(RecallState::loaded(vectors)),
        }
    }

    /// The chat's own settings (the defaults when it has none).
    pub fn settings(&self) -> &ChatSettings {
        static DEFAULTS: std::sync::LazyLock<ChatSettings> =
            std::sync::LazyLock::new(ChatSettings::default);
        self.own_settings.as_deref().unwrap_or(&DEFAULTS)
    }

    /// Replaces the chat's own settings.
    pub fn set_settings(&mut self, settings: ChatSettings) {
        self.own_settings = (settings != ChatSettings::default()).then(|| Box::new(settings));
    }

    /// The effective settings of the chat `chat_id` over its tenant's
    /// `global` ones and profiles: those themselves, shared, for a chat
    /// without settings of its own of a tenant without profiles.
    pub fn effective(&self, global: &GlobalSettings, chat_id: &str) -> Arc<Settings> {
        let chat = crate::domain::profiles::ChatIdentity {
            chat_id,
            character_key: self.meta.character_key.as_deref(),
            group_id: self.meta.group_id.as_deref(),
        };
        global.resolve(chat, self.own_settings.as_deref().map(|own| &own.overrides))
    }

    /// The estimated bytes this state holds beyond its place in the slot:
    /// the chat, its stored row's injections and timed World Info effects,
    /// its settings and its open jobs.
    pub fn resident_bytes(&self) -> usize {
        let chat = self.chat.as_ref().map_or(0, |chat| {
            // The `Arc`'s allocation; the chat counts its own struct.
            allocation_bytes(2 * size_of::<usize>() + size_of::<Chat>()) - size_of::<Chat>()
                + chat.resident_bytes()
        });
        chat + self.meta.injection.heap_bytes()
            + self.meta.message_injection.heap_bytes()
            + self.meta.world_info_timed.heap_bytes()
            + self.meta.lore_book.heap_bytes()
            + self.meta.character_key.heap_bytes()
            + self.meta.group_id.heap_bytes()
            + self.own_settings.as_deref().map_or(0, |s| {
                allocation_bytes(size_of::<ChatSettings>()) + s.overrides.heap_bytes()
            })
            + self.jobs.heap_bytes()
            + self.meta.recall_injection.heap_bytes()
            + self.recall.lock().heap_bytes()
    }

    /// Stops the pending debounced refresh, returning its trigger.
    pub fn cancel_debounce(&mut self) -> Option<Trigger> {
        let pending = self.debounce.take()?;
        pending.timer.abort();
        Some(pending.trigger)
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        self.cancel_debounce();
    }
}
