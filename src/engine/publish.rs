//! Publish: chat events, applied in arrival order and committed in groups.
//!
//! A chat's lock is held across its commit, so that memory never shows what
//! the store does not hold. Events that arrive for a chat while it is locked
//! do not each wait for their own turn and their own fsync: they queue on
//! the chat's slot ([`ChatSlot::publishes`]), and whichever caller takes
//! the lock next applies every queued event in order, plans each one's
//! refresh after the one before, commits them all in one group and answers
//! each with its own outcome. A chat written by many callers at once thus
//! pays one fsync per group instead of one per event, and every guarantee
//! of a single event holds for each: nothing is answered before it is
//! durable, a failed commit fails every event of its group and leaves the
//! chat as the store holds it, and each event is refreshed and pushed in
//! order.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use tokio::sync::oneshot;

use super::ops::writes_for;
use super::slot::{ChatSlot, Resident};
use super::{ChatPlace, Engine, EngineError, Guard, Next};
use crate::domain::chat::{Chat, ChatEvent};
use crate::domain::ids::ChatKey;
use crate::domain::jobs::Job;
use crate::domain::refresh::Trigger;
use crate::store::Write;

/// Where a queued event's outcome goes: the revision its chat answers with
/// once the event is durable, or why it failed.
type Answer = oneshot::Sender<Result<u64, EngineError>>;

/// Tells queued events apart (see [`Withdraw`]).
static TICKETS: AtomicU64 = AtomicU64::new(0);

/// An event waiting on its chat's slot for a caller holding the lock.
pub(super) struct QueuedPublish {
    ticket: u64,
    event: ChatEvent,
    answer: Answer,
}

/// Takes a queued event back off its slot when its caller goes away (a
/// cancelled RPC) before anyone took it: it is then never applied. Once
/// taken, the event is applied and committed as any other.
struct Withdraw<'a> {
    slot: &'a ChatSlot,
    ticket: u64,
    /// Whether the event may still be queued (once it is known to be
    /// taken, dropping this does not look for it).
    armed: bool,
}

impl Withdraw<'_> {
    /// Whether the event was still queued (and is not any more).
    fn withdraw(&mut self) -> bool {
        self.armed = false;
        let mut queued = self.slot.publishes.lock();
        let before = queued.len();
        queued.retain(|q| q.ticket != self.ticket);
        queued.len() != before
    }
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.withdraw();
        }
    }
}

/// One event applied to a chat in memory, not yet planned nor committed.
struct Applied<'a> {
    writes: Vec<Write>,
    next: Next,
    jobs: Vec<Job>,
    /// The place under `--max-chats` of the chat this event created.
    place: Option<ChatPlace<'a>>,
}

/// Why an event was not applied, and whether memory already held part of
/// it (then the chat must be read again from the store).
struct Refused {
    error: EngineError,
    spoiled: bool,
}

impl From<EngineError> for Refused {
    fn from(error: EngineError) -> Refused {
        Refused {
            error,
            spoiled: false,
        }
    }
}

impl Engine {
    /// Applies one chat event; answers with the chat's revision once the
    /// event is durable and, for an immediate trigger, refreshed.
    pub async fn publish(&self, chat_id: &ChatKey, event: ChatEvent) -> Result<u64, EngineError> {
        self.retrying(|| self.publish_once(chat_id, event.clone()))
            .await
    }

    /// Queues the event on its chat, then waits for its answer or for the
    /// chat's lock, whichever comes first; with the lock, applies and
    /// commits every event queued by then (its own included, unless an
    /// earlier holder took it).
    async fn publish_once(&self, chat_id: &ChatKey, event: ChatEvent) -> Result<u64, EngineError> {
        let slot = self.slot(chat_id);
        let (answer, mut answered) = oneshot::channel();
        let ticket = TICKETS.fetch_add(1, Ordering::Relaxed);
        slot.publishes.lock().push(QueuedPublish {
            ticket,
            event,
            answer,
        });
        let mut withdraw = Withdraw {
            slot: &slot,
            ticket,
            armed: true,
        };
        loop {
            let locked = tokio::select! {
                biased;
                outcome = &mut answered => {
                    // Answered: taken by an earlier holder.
                    withdraw.armed = false;
                    return outcome.unwrap_or_else(|_| Err(EngineError::lost_answer()));
                }
                locked = self.lock(&slot) => locked,
            };
            let guard = match locked {
                Ok(guard) => guard,
                // The chat could not be loaded: the event fails with it,
                // unless an earlier holder already took it.
                Err(error) if withdraw.withdraw() => return Err(error),
                Err(_) => {
                    return answered
                        .await
                        .unwrap_or_else(|_| Err(EngineError::lost_answer()));
                }
            };
            let batch = std::mem::take(&mut *slot.publishes.lock());
            if !batch.is_empty() {
                // In a task of its own, so that this caller going away
                // cannot stop the group between its commit and the memory
                // update.
                let engine = self.clone();
                let slot = slot.clone();
                let served = tokio::spawn(async move {
                    let mut guard = guard;
                    engine.serve_publishes(&slot, &mut guard, batch).await;
                });
                if let Err(error) = served.await {
                    return Err(EngineError::from_join(error));
                }
            }
            match answered.try_recv() {
                Ok(outcome) => {
                    withdraw.armed = false;
                    return outcome;
                }
                // Put back for the next holder (see `apply_and_commit`):
                // take the lock again.
                Err(oneshot::error::TryRecvError::Empty) => {}
                Err(oneshot::error::TryRecvError::Closed) => {
                    withdraw.armed = false;
                    return Err(EngineError::lost_answer());
                }
            }
        }
    }

    /// Applies `batch` in order to the locked chat and commits it as one
    /// group, answering each event. A panic drops the chat's memory (the
    /// next operation re-reads it) and fails the events not yet answered:
    /// with its message when it came from the commit, as "ended without an
    /// answer" when it came from applying an event.
    async fn serve_publishes(
        &self,
        slot: &Arc<ChatSlot>,
        guard: &mut Guard,
        batch: Vec<QueuedPublish>,
    ) {
        let serving = self.apply_and_commit(slot, guard, batch);
        if let Err(panic) = AssertUnwindSafe(serving).catch_unwind().await {
            self.forget_after_panic(slot, guard, &*panic);
            self.account(slot, guard.as_ref());
        }
    }

    async fn apply_and_commit(
        &self,
        slot: &Arc<ChatSlot>,
        guard: &mut Guard,
        batch: Vec<QueuedPublish>,
    ) {
        let Some(resident) = guard.as_mut() else {
            for queued in batch {
                let _ = queued.answer.send(Err(EngineError::missing_state()));
            }
            return;
        };
        let mut pending = self.pending(slot, resident);
        let mut staged: Vec<(Answer, u64)> = Vec::with_capacity(batch.len());
        let mut places = Vec::new();
        let mut jobs = Vec::new();
        let mut queue = batch.into_iter();
        while let Some(queued) = queue.next() {
            match self.apply_event(&slot.key, resident, queued.event) {
                Ok(applied) => {
                    let revision =
                        self.stage(slot, resident, &mut pending, applied.writes, applied.next);
                    staged.push((queued.answer, revision));
                    places.extend(applied.place);
                    jobs.extend(applied.jobs);
                }
                Err(Refused {
                    error,
                    spoiled: false,
                }) => {
                    let _ = queued.answer.send(Err(error));
                }
                Err(Refused {
                    error,
                    spoiled: true,
                }) => {
                    // Memory holds part of a refused event: the group fails
                    // as a failed commit would, the chat is read again, and
                    // the events not applied yet wait for the next holder.
                    for (answer, _) in staged {
                        let _ = answer.send(Err(error.copy()));
                    }
                    let _ = queued.answer.send(Err(error));
                    slot.publishes.lock().splice(0..0, queue);
                    **guard = None;
                    slot.behind.store(true, Ordering::Release);
                    self.account(slot, guard.as_ref());
                    return;
                }
            }
        }
        if staged.is_empty() {
            // Every event refused: nothing changed.
            return;
        }
        match self.commit_pending_guarded(slot, guard, pending).await {
            Ok(()) => {
                places.into_iter().for_each(ChatPlace::keep);
                for job in jobs {
                    self.announce_job(job);
                }
                for (answer, revision) in staged {
                    let _ = answer.send(Ok(revision));
                }
            }
            Err(error) => {
                for (answer, _) in staged {
                    let _ = answer.send(Err(error.copy()));
                }
            }
        }
        // Committed or dropped, the chat's memory changed: count it.
        self.account(slot, guard.as_ref());
    }

    /// One event's change to the chat in memory, with the rows and jobs it
    /// writes and the refresh it asks for.
    fn apply_event(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        event: ChatEvent,
    ) -> Result<Applied<'_>, Refused> {
        let trigger = Trigger::of(&event);
        let needs_known_message = matches!(
            event,
            ChatEvent::MessageEdited { .. }
                | ChatEvent::MessageDeleted { .. }
                | ChatEvent::MessageSwiped { .. }
        );
        let current = resident.chat.as_ref().map_or(0, |c| c.len());
        let after = match &event {
            ChatEvent::ChatChanged(messages) if !messages.is_empty() => messages.len(),
            ChatEvent::MessageSent(_) | ChatEvent::MessageReceived(_) => current + 1,
            ChatEvent::MoreMessagesLoaded(messages) => current + messages.len(),
            _ => current,
        };
        self.limits()
            .check_chat_size(after)
            .map_err(EngineError::from)?;
        let place = match resident.chat {
            None if !needs_known_message => Some(self.reserve_chat()?),
            _ => None,
        };
        // A refused event leaves the chat as it was.
        let changes = match resident.chat.as_mut().map(Arc::make_mut) {
            Some(chat) => chat.apply(event).map_err(EngineError::from)?,
            None if needs_known_message => return Err(EngineError::unknown_chat(chat_id).into()),
            None => {
                let mut chat = Chat::default();
                let changes = chat.apply(event).map_err(EngineError::from)?;
                resident.chat = Some(Arc::new(chat));
                changes
            }
        };
        let mut writes = resident
            .chat
            .as_ref()
            .map(|chat| writes_for(chat_id, chat, &changes))
            .unwrap_or_default();
        let (job_writes, jobs) = self
            .jobs_after_event(chat_id, resident, trigger, &changes)
            .map_err(|error| Refused {
                error,
                spoiled: true,
            })?;
        writes.extend(job_writes);
        let next = if trigger.is_debounced() {
            Next::Debounce(trigger)
        } else {
            Next::Refresh(trigger)
        };
        Ok(Applied {
            writes,
            next,
            jobs,
            place,
        })
    }
}
