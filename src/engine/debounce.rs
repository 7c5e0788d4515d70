//! Debounced refreshes: a burst of debounced events costs one timer task
//! whose deadline each event moves; the refresh runs once the chat has been
//! quiet for `debounce_ms`, or at shutdown.

use std::sync::Arc;

use super::commit::{Commit, Debounced};
use super::slot::{ChatSlot, Debounce, LoadedChat, Resident};
use super::{Chats, EngineError, Next};
use crate::domain::refresh::Trigger;
use crate::store::StoreError;
use crate::telemetry::{self, spans};
use tracing::Instrument as _;

impl Chats {
    pub(super) fn schedule_debounce(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        owed: Debounced,
    ) {
        let Debounced {
            trigger,
            delay,
            coalesced,
        } = owed;
        if coalesced > 0 {
            metrics::counter!(telemetry::DEBOUNCE_COALESCED).increment(coalesced);
        }
        let deadline = tokio::time::Instant::now() + delay;
        let traced_by = spans::current();
        if let Some(pending) = resident.debounce.as_mut() {
            pending.trigger = trigger;
            pending.deadline = deadline;
            if let Some(traced_by) = traced_by
                && pending.traced_by.len() < spans::MAX_LINKS
            {
                pending.traced_by.push(traced_by);
            }
            return;
        }
        resident.debounce_ticket += 1;
        let ticket = resident.debounce_ticket;
        let engine = self.clone();
        let slot = slot.clone();
        let timer = tokio::spawn(async move {
            let mut wake = deadline;
            loop {
                tokio::time::sleep_until(wake).await;
                match engine.run_debounced(&slot, Some(ticket)).await {
                    Some(later) => wake = later,
                    None => break,
                }
            }
        });
        resident.debounce = Some(Debounce {
            trigger,
            deadline,
            timer,
            traced_by: traced_by.into_iter().collect(),
        });
    }

    /// Runs a chat's pending debounced refresh. From its timer (`ticket`
    /// set): only if the timer is still the chat's, and once the deadline a
    /// later event moved has come; returns that deadline while it has not.
    pub(super) async fn run_debounced(
        &self,
        slot: &Arc<ChatSlot>,
        ticket: Option<u64>,
    ) -> Option<tokio::time::Instant> {
        // Not loaded: a failed commit dropped the chat, whose next load
        // schedules the refresh again if it is still owed.
        let mut chat = LoadedChat::new(slot.lock().await).ok()?;
        if ticket.is_some_and(|t| t != chat.debounce_ticket) {
            return None;
        }
        let trigger = if ticket.is_some() {
            let deadline = chat.debounce.as_ref()?.deadline;
            if deadline > tokio::time::Instant::now() {
                return Some(deadline);
            }
            // Called from the timer task itself: dropping its handle is enough.
            chat.debounce
                .take()
                .map(|pending| (pending.trigger, pending.traced_by))
        } else {
            chat.cancel_debounce().map(|trigger| (trigger, Vec::new()))
        };
        let (trigger, traced_by) = trigger?;
        let span = spans::debounced_refresh(&traced_by);
        spans::chat_id(&span, &slot.key.id);
        // The commit in this task (nothing cancels a timer), and what
        // follows it carried out here; a refresh changes no job, so there
        // is none to announce.
        let commit = Commit::one(Vec::new(), Next::Refresh(trigger)).in_caller_task();
        match self
            .commit_locked(slot, chat, commit, self)
            .instrument(span)
            .await
        {
            Ok((mut chat, committed)) => {
                self.carry_out(slot, &mut chat, committed);
            }
            // Another replica changed the chat: re-read it, which schedules
            // the refresh again if it is still owed.
            Err(EngineError::Store(StoreError::Conflict(_))) => {
                if let Err(error) = self.lock(slot).await {
                    tracing::warn!(chat = %slot.key, %error, "cannot re-read the chat; its refresh stays owed");
                }
            }
            Err(error) => {
                tracing::error!(chat = %slot.key, %error, "debounced refresh failed; it stays owed and runs at the next load");
            }
        }
        None
    }

    /// Runs every pending debounced refresh now (at shutdown). With a
    /// shared store, a refresh this replica only adopted (it loaded the
    /// chat owing it) is left to the replica that owes it.
    pub async fn flush_debounced(&self) {
        for slot in self.inner.cache.slots() {
            if self.shared() {
                let mut state = slot.lock().await;
                let adopted = state
                    .as_ref()
                    .and_then(|r| r.debounce.as_ref())
                    .is_some_and(|pending| pending.trigger == Trigger::Startup);
                if adopted && let Some(resident) = state.as_mut() {
                    resident.cancel_debounce();
                }
            }
            self.run_debounced(&slot, None).await;
        }
    }
}
