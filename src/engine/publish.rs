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

use tokio::sync::oneshot;

use super::chats::ChatPlace;
use super::commit::{Commit, Pending};
use super::ops::writes_for;
use super::slot::{Answer, ChatSlot, LoadedChat, QueuedPublish, Resident};
use super::{Chats, EngineError, Next};
use crate::domain::chat::{Chat, ChatEvent};
use crate::domain::ids::ChatKey;
use crate::domain::jobs::Job;
use crate::domain::refresh::Trigger;
use crate::store::Write;
use crate::telemetry::spans;
use tracing::Instrument as _;

/// What applying a batch of events left.
enum Batch<'a> {
    /// Events applied and planned, to commit as one group.
    Staged(Group<'a>),
    /// Every event refused: nothing changed.
    Unchanged,
    /// An event left part of itself in memory: the chat must be read again.
    Spoiled,
}

/// Events applied and planned, with what each answers once committed.
struct Group<'a> {
    pending: Pending,
    /// Each staged event's answer and revision.
    staged: Vec<(Answer, u64)>,
    /// Places under `--max-chats` of chats the events created.
    places: Vec<ChatPlace<'a>>,
    /// Jobs the events changed.
    jobs: Vec<Job>,
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

impl Chats {
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
        let mut withdraw = slot.queue_publish(event, answer);
        loop {
            let locked = tokio::select! {
                biased;
                outcome = &mut answered => {
                    // Answered: taken by an earlier holder.
                    withdraw.disarm();
                    return outcome.unwrap_or_else(|_| Err(EngineError::lost_answer()));
                }
                locked = self.lock(&slot) => locked,
            };
            let chat = match locked {
                Ok(chat) => chat,
                // The chat could not be loaded: the event fails with it,
                // unless an earlier holder already took it.
                Err(error) if withdraw.withdraw() => return Err(error),
                Err(_) => {
                    return answered
                        .await
                        .unwrap_or_else(|_| Err(EngineError::lost_answer()));
                }
            };
            let batch = slot.take_publishes();
            if batch.is_empty() {
                drop(chat);
            } else {
                // In a task of its own, so that this caller going away
                // cannot stop the group between its commit and the memory
                // update.
                let engine = self.clone();
                let slot = slot.clone();
                let served = tokio::spawn(crate::telemetry::spans::carry(async move {
                    engine.serve_publishes(&slot, chat, batch).await;
                }));
                if let Err(error) = served.await {
                    return Err(EngineError::from_join(error));
                }
            }
            match answered.try_recv() {
                Ok(outcome) => {
                    withdraw.disarm();
                    return outcome;
                }
                // Put back for the next holder (see `apply_batch`): take
                // the lock again.
                Err(oneshot::error::TryRecvError::Empty) => {}
                Err(oneshot::error::TryRecvError::Closed) => {
                    withdraw.disarm();
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
        mut chat: LoadedChat,
        batch: Vec<QueuedPublish>,
    ) {
        // The calls whose events this task serves besides its own: the
        // commit's span links to them.
        let span = spans::publish_batch(
            batch.len(),
            batch.iter().filter_map(|q| q.traced_by.as_ref()),
        );
        let applying = AssertUnwindSafe(|| self.apply_batch(slot, &mut chat, batch));
        let group = match std::panic::catch_unwind(applying) {
            Ok(Batch::Staged(group)) => group,
            Ok(Batch::Unchanged) => return,
            Ok(Batch::Spoiled) => {
                let unloaded = chat.unload(slot);
                self.account(slot, unloaded.as_ref());
                return;
            }
            Err(panic) => {
                self.forget_after_panic(slot, chat, &*panic);
                return;
            }
        };
        let Group {
            pending,
            staged,
            places,
            jobs,
        } = group;
        let commit = Commit::group(pending).with_jobs(jobs).in_caller_task();
        match self.commit(slot, chat, commit).instrument(span).await {
            Ok(_) => {
                places.into_iter().for_each(ChatPlace::keep);
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
    }

    /// Applies `batch` in order to the chat in memory and plans each
    /// event's refresh after the one before. A refused event is answered
    /// at once; one that left part of itself in memory spoils the group:
    /// every event of it fails, and those not applied yet are put back for
    /// the next holder.
    fn apply_batch(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        batch: Vec<QueuedPublish>,
    ) -> Batch<'_> {
        let mut pending = self.pending(slot, resident);
        let mut staged: Vec<(Answer, u64)> = Vec::with_capacity(batch.len());
        let mut places = Vec::new();
        let mut jobs = Vec::new();
        let mut queue = batch.into_iter();
        while let Some(queued) = queue.next() {
            // In its caller's trace context: what it queues links there.
            let _context = spans::in_context_of(queued.traced_by.as_ref());
            match self.apply_event(&slot.key, resident, queued.event) {
                Ok(applied) => {
                    let revision = self.stage(
                        slot,
                        resident,
                        &mut pending,
                        applied.writes,
                        applied.next,
                        self,
                    );
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
                    slot.requeue_publishes(queue);
                    return Batch::Spoiled;
                }
            }
        }
        if staged.is_empty() {
            // Every event refused: nothing changed.
            return Batch::Unchanged;
        }
        Batch::Staged(Group {
            pending,
            staged,
            places,
            jobs,
        })
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
        let global = || self.global(&chat_id.tenant);
        let (job_writes, jobs) = self
            .jobs()
            .after_event(chat_id, resident, trigger, &changes, global)
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

#[cfg(test)]
mod tests;
