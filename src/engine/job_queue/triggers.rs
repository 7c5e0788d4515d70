//! What chat events do to jobs, decided under the chat's lock and
//! committed with the event: a removed message cancels its jobs; a new
//! character message may start (or, in a burst, postpone) a scene-break
//! detection; a new message may queue the message recap of the message
//! `message_recap_lag` behind it.

use std::time::Duration;

use crate::domain::chat::Changes;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobKind, JobState};
use crate::domain::refresh::Trigger;
use crate::domain::writing;
use crate::store::Write;

use super::Jobs;
use super::queue::{self, Enqueue, Origin, Queued};
use crate::engine::EngineError;
use crate::engine::global_settings::GlobalSettings;
use crate::engine::slot::Resident;

impl Jobs {
    /// The job writes an event's `changes` (made by `trigger`) call for,
    /// and the jobs to announce once they are committed. `global` gives
    /// the tenant's global settings; it is called only when an LLM writes
    /// recaps (a Publish without one reads no settings here).
    pub(in crate::engine) fn after_event(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        trigger: Trigger,
        changes: &Changes,
        global: impl FnOnce() -> GlobalSettings,
    ) -> Result<(Vec<Write>, Vec<Job>), EngineError> {
        let now = self.clock_now();
        let mut changed = Vec::new();
        for removed in &changes.messages_removed {
            while let Some(at) = resident
                .jobs
                .iter()
                .position(|j| j.kind != JobKind::DetectSceneBreak && &j.message_id == removed)
            {
                changed.extend(queue::end_with_dependents(
                    resident,
                    at,
                    JobState::Cancelled,
                    "its message was deleted",
                    now,
                ));
            }
        }
        let mut writes = queue::job_writes(&changed);
        let mut announce: Vec<Job> = changed.into_iter().map(|(job, _)| job).collect();
        if self.writer().is_none() {
            return Ok((writes, announce));
        }
        let settings = resident.effective(&global(), &chat_id.id);
        let Some(chat) = resident.chat.as_deref() else {
            return Ok((writes, announce));
        };
        if !settings.chat_enabled(resident.settings().enabled) {
            return Ok((writes, announce));
        }
        let options = *self.queue();
        if trigger == Trigger::MessageReceived
            && settings.writing.auto_scene_break_detection
            && writing::detection_ready(chat, &settings)
        {
            let due = now.saturating_add(Duration::from_millis(settings.chat.debounce_ms));
            let pending = resident
                .jobs
                .iter_mut()
                .find(|j| j.kind == JobKind::DetectSceneBreak && j.state == JobState::Pending);
            match pending {
                // A burst makes one detection: the queued one waits on.
                Some(job) if job.automatic => {
                    job.not_before_us = job.not_before_us.max(due);
                    queue::touch(job, now);
                    writes.push(Write::Job {
                        job: job.clone(),
                        expect_fence: Some(job.fence),
                    });
                }
                Some(_) => {}
                None => {
                    let work = Enqueue::new(
                        chat_id,
                        JobKind::DetectSceneBreak,
                        "",
                        Origin::Automatic,
                        now,
                    )
                    .due_at(due);
                    if let Queued::New(job) = queue::queue(resident, &options, work)? {
                        writes.push(Write::Job {
                            job: job.clone(),
                            expect_fence: None,
                        });
                        announce.push(job);
                    }
                }
            }
        }
        let Some(chat) = resident.chat.as_deref() else {
            return Ok((writes, announce));
        };
        if matches!(trigger, Trigger::MessageSent | Trigger::MessageReceived)
            && settings.writing.auto_message_recaps
        {
            let lag = settings.writing.message_recap_lag as usize;
            let target = chat
                .messages()
                .rev()
                .nth(lag)
                .filter(|(_, m)| m.data().memory.as_deref().is_none_or(str::is_empty))
                .map(|(_, m)| m.id.clone());
            if let Some(message_id) = target
                && let Queued::New(job) = queue::queue(
                    resident,
                    &options,
                    Enqueue::new(
                        chat_id,
                        JobKind::MessageRecap,
                        &message_id,
                        Origin::Automatic,
                        now,
                    ),
                )?
            {
                writes.push(Write::Job {
                    job: job.clone(),
                    expect_fence: None,
                });
                announce.push(job);
            }
        }
        Ok((writes, announce))
    }
}
