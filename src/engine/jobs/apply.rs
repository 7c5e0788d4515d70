//! Applying a recap lane's answer, under the chat's lock again, the job
//! still this runner's (the driver, [`super::lane`], checked its fence and
//! records failed attempts, with [`record_retry`] and [`fail`]): an answer
//! is applied only if what the job read is unchanged, in the same commit
//! that ends the job and queues what follows from it (the scene recap of a
//! break found, the merge of a scene recap written, the next detection).

use std::time::Duration;

use crate::domain::DomainError;
use crate::domain::backoff::Backoff;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{self, Job, JobKind, JobState};
use crate::domain::message::MessageData;
use crate::domain::refresh::Trigger;
use crate::domain::time::UnixMicros;
use crate::domain::writing::{self, Answer};
use crate::store::Write;

use super::super::commit::Commit;
use super::super::ops::writes_for;
use super::super::slot::Resident;
use super::super::{EngineError, Next};
use super::failure::JobFailure;
use super::lane::Applying;
use super::queue::{self, Changed, Enqueue, Origin, Queued};
use super::{JobDriver, Jobs};

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

impl JobDriver {
    /// Under the chat's lock again, the job still this runner's: applies
    /// `answer` (a lore answer to the chat's book, held until the commit
    /// is durable) and commits.
    pub(super) async fn apply_answer(
        &self,
        applying: Applying<'_>,
        answer: &Answer,
    ) -> Result<(), EngineError> {
        let Applying {
            chat_id,
            slot,
            mut chat,
            at,
            now,
        } = applying;
        if let Answer::Lore(answer) = answer {
            let applied = self
                .take_lore_answer(chat_id, &mut chat, at, answer, now)
                .await?;
            self.chats.commit(&slot, chat, applied.commit).await?;
            // Durable: the book's new state is cached before its lock goes.
            if let Some(written) = applied.written {
                self.chats.lorebooks().keep_written_book(written);
            }
            super::lore::count_outcomes(&applied.outcomes);
            drop(applied.held);
            return Ok(());
        }
        let commit = self.take_answer(chat_id, &mut chat, at, answer, now)?;
        self.chats.commit(&slot, chat, commit).await.map(|_| ())
    }

    /// An answer: discarded (and the work queued again) when what the job
    /// read changed meanwhile; otherwise written to the chat in the commit
    /// that ends the job and queues what follows from it, or, when the
    /// chat refuses it, the job fails.
    fn take_answer(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        at: usize,
        answer: &Answer,
        now: UnixMicros,
    ) -> Result<Commit, EngineError> {
        let chat = resident
            .chat
            .as_deref()
            .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
        let job = resident.jobs[at].clone();
        if !writing::read_unchanged(job.kind, &job.read, chat, &job.message_id) {
            return self.jobs().discard_stale(chat_id, resident, at, &job, now);
        }
        let (result, data, next) = answer_effect(&job, answer);
        let exclude_latest = match job.kind {
            JobKind::RunningRecap | JobKind::RegenerateRunningRecap => {
                resident
                    .effective(&self.chats.global(&chat_id.tenant), &chat_id.id)
                    .writing
                    .running_recap_exclude_latest
            }
            _ => 0,
        };
        let answered = Answered {
            job: &job,
            answer,
            data,
            exclude_latest,
            max_text_bytes: self.chats.limits().max_text_bytes,
            now,
        };
        match write_answer(chat_id, resident, answered) {
            Ok((writes, written)) => {
                let result = written.unwrap_or(result);
                let ended =
                    queue::end_with_dependents(resident, at, JobState::Succeeded, &result, now);
                let fresh = self.follow_ups(chat_id, resident, &job, answer, now)?;
                Ok(job_commit(writes, next, ended, fresh))
            }
            Err(refused) => {
                // The answer cannot be stored as it is (retrying would ask
                // the same): the job fails; the refusal, which may quote
                // the answer, is logged with the id its client sees.
                resident.jobs[at].last_error = queue::short(&JobFailure::NotApplied.report(
                    chat_id,
                    &job,
                    &refused.to_string(),
                ));
                Ok(fail(resident, at, "its answer could not be applied", now))
            }
        }
    }

    /// The jobs that follow from an applied answer: the scene recap of a
    /// break found and the next detection; the running recap's merge of a
    /// scene recap written; the merge of the next scene after a merge of a
    /// scene before the current version's.
    fn follow_ups(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        job: &Job,
        answer: &Answer,
        now: UnixMicros,
    ) -> Result<Vec<Job>, EngineError> {
        let settings = resident.effective(&self.chats.global(&chat_id.tenant), &chat_id.id);
        let mut fresh = Vec::new();
        match (answer, job.kind) {
            (Answer::Break(candidate), _) => {
                if settings.writing.auto_scene_recap {
                    fresh.extend(self.jobs().follow_up(
                        resident,
                        chat_id,
                        JobKind::SceneRecap,
                        &candidate.message_id,
                        Origin::Automatic,
                        now,
                    )?);
                }
                // Detection goes on after the break it found.
                let chat = resident
                    .chat
                    .as_deref()
                    .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
                if writing::detection_ready(chat, &settings) {
                    fresh.extend(self.jobs().follow_up(
                        resident,
                        chat_id,
                        JobKind::DetectSceneBreak,
                        "",
                        Origin::Automatic,
                        now,
                    )?);
                }
            }
            (Answer::SceneRecap { .. }, _) => {
                if settings.writing.auto_running_recap {
                    fresh.extend(self.jobs().follow_up(
                        resident,
                        chat_id,
                        JobKind::RunningRecap,
                        &job.message_id,
                        Origin::Automatic,
                        now,
                    )?);
                }
                if settings.lore.auto {
                    fresh.extend(self.jobs().follow_up(
                        resident,
                        chat_id,
                        JobKind::LoreExtract,
                        &job.message_id,
                        Origin::Automatic,
                        now,
                    )?);
                }
            }
            // A merge of a scene before the current version's scene goes
            // on with the next scene, up to the current version's.
            (Answer::Recap(_), JobKind::RunningRecap) => {
                let chat = resident
                    .chat
                    .as_deref()
                    .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
                if let Some(next) = writing::rebuild_next(chat, &job.message_id) {
                    fresh.extend(self.jobs().follow_up(
                        resident,
                        chat_id,
                        JobKind::RunningRecap,
                        &next,
                        Origin::Automatic,
                        now,
                    )?);
                }
            }
            _ => {}
        }
        Ok(fresh)
    }
}

impl Jobs {
    /// The answer of a job whose inputs changed since it read them: the job
    /// is DISCARDED, its work queued again, and the jobs that waited for it
    /// wait for the work queued again (new, or already there); with none,
    /// they end too.
    fn discard_stale(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        at: usize,
        job: &Job,
        now: UnixMicros,
    ) -> Result<Commit, EngineError> {
        let mut ended = vec![queue::end_alone(
            resident,
            at,
            JobState::Discarded,
            "its inputs changed before its answer could be applied; queued again",
            now,
        )];
        let origin = if job.automatic {
            Origin::Automatic
        } else {
            Origin::Request
        };
        let fresh = self.follow_up(resident, chat_id, job.kind, &job.message_id, origin, now)?;
        let handed = queue::hand_over_dependents(
            resident,
            &ended[0].0,
            (job.kind, &job.message_id, &job.subject),
            now,
        );
        ended.extend(handed);
        Ok(job_commit(Vec::new(), Next::Nothing, ended, fresh))
    }

    /// Queues a job that follows from another (never refused: past the
    /// per-chat limit an automatic one is dropped).
    fn follow_up(
        &self,
        resident: &mut Resident,
        chat_id: &ChatKey,
        kind: JobKind,
        message_id: &str,
        origin: Origin,
        now: UnixMicros,
    ) -> Result<Vec<Job>, EngineError> {
        let origin = match origin {
            // A job queued again after a stale answer must not fail the
            // commit that ends the stale one.
            Origin::Request if resident.jobs.len() >= self.queue().max_jobs_per_chat => {
                Origin::Automatic
            }
            other => other,
        };
        Ok(
            match queue::queue(
                resident,
                self.queue(),
                Enqueue::new(chat_id, kind, message_id, origin, now),
            )? {
                Queued::New(job) => vec![job],
                Queued::Existing(_) | Queued::Dropped => Vec::new(),
            },
        )
    }
}

/// The commit of chat `writes` with changed jobs (with their expected
/// fences) and new jobs, in one group, every job change announced once
/// durable.
pub(super) fn job_commit(
    mut writes: Vec<Write>,
    next: Next,
    changed: Vec<Changed>,
    fresh: Vec<Job>,
) -> Commit {
    writes.extend(queue::job_writes(&changed));
    writes.extend(fresh.iter().map(|job| Write::Job {
        job: job.clone(),
        expect_fence: None,
    }));
    let mut announce: Vec<Job> = changed.into_iter().map(|(job, _)| job).collect();
    announce.extend(fresh);
    Commit::one(writes, next).with_jobs(announce)
}

/// How many attempts a job gets and the first pause after a failed one
/// (the LLM's or the embeddings endpoint's options).
#[derive(Debug, Clone, Copy)]
pub(super) struct Retries {
    /// Attempts before the job fails.
    pub max_attempts: u32,
    /// The first pause; it doubles per attempt up to
    /// `backoff::DEFAULT_MAX`, with full jitter.
    pub backoff_base: Duration,
}

/// A failed attempt that may be tried again: the job at `at` waits out
/// its back-off (or the server's `Retry-After`, at most an hour), or, past
/// its attempts, fails with the jobs that wait for it. Returns the commit
/// and whether the job gave up (FAILED).
pub(super) fn record_retry(
    resident: &mut Resident,
    at: usize,
    reason: &str,
    retry_after: Option<Duration>,
    now: UnixMicros,
    retries: Retries,
) -> (Commit, bool) {
    let policy = Backoff {
        min: retries.backoff_base,
        ..Backoff::default()
    };
    let job = &mut resident.jobs[at];
    let fence = job.fence;
    job.last_error = queue::short(reason);
    if job.attempts >= retries.max_attempts {
        let result = format!("gave up after {} attempts", job.attempts);
        return (end(resident, at, JobState::Failed, &result, now), true);
    }
    // A server asking for more than an hour is not waited for longer: the
    // job would sit unseen.
    let pause = jobs::retry_pause(
        &policy,
        job.attempts,
        rand::random::<f64>(),
        retry_after.map(|d| d.min(MAX_RETRY_AFTER)),
    );
    job.state = JobState::Pending;
    job.lease = None;
    job.not_before_us = now.saturating_add(pause);
    queue::touch(job, now);
    let changed = vec![(job.clone(), fence)];
    (
        job_commit(Vec::new(), Next::Nothing, changed, Vec::new()),
        false,
    )
}

/// The job fails with the jobs that wait for it (its `last_error` already
/// set).
pub(super) fn fail(resident: &mut Resident, at: usize, result: &str, now: UnixMicros) -> Commit {
    end(resident, at, JobState::Failed, result, now)
}

/// The job ends in `state` with `result`, and the jobs that wait for it
/// with it: the commit of a job settled without an answer.
pub(super) fn end(
    resident: &mut Resident,
    at: usize,
    state: JobState,
    result: &str,
    now: UnixMicros,
) -> Commit {
    let ended = queue::end_with_dependents(resident, at, state, result, now);
    job_commit(Vec::new(), Next::Nothing, ended, Vec::new())
}

/// What an answer does, by its kind: the job's result text, the message
/// data it sets (on which message), and the refresh it asks for.
fn answer_effect(job: &Job, answer: &Answer) -> (String, Option<(String, MessageData)>, Next) {
    match answer {
        Answer::NoBreak { rationale } => (
            // The model's words: shown, but without control or
            // bidirectional characters (a result is shown as one line).
            queue::short(&format!(
                "no scene break: {}",
                crate::domain::lore::clean::clean_name(rationale)
            )),
            None,
            Next::Nothing,
        ),
        Answer::Break(candidate) => (
            format!(
                "scene break at #{} ({})",
                candidate.index, candidate.message_id
            ),
            Some((
                candidate.message_id.clone(),
                MessageData {
                    scene_break: Some(true),
                    scene_break_visible: Some(true),
                    ..MessageData::default()
                },
            )),
            Next::Refresh(Trigger::RecapGenerated),
        ),
        Answer::SceneRecap { name, recap } => (
            queue::short(recap),
            Some((
                job.message_id.clone(),
                MessageData {
                    scene_recap_memory: Some(recap.clone()),
                    scene_break_name: Some(name.clone()),
                    ..MessageData::default()
                },
            )),
            Next::Refresh(Trigger::RecapGenerated),
        ),
        Answer::Recap(text) if job.kind == JobKind::MessageRecap => (
            queue::short(text),
            Some((
                job.message_id.clone(),
                MessageData {
                    memory: Some(text.clone()),
                    ..MessageData::default()
                },
            )),
            Next::Refresh(Trigger::RecapGenerated),
        ),
        Answer::Recap(_) => (String::new(), None, Next::Refresh(Trigger::RecapGenerated)),
        // Lore answers are applied to the chat's book (`LoreApply`,
        // jobs/lore/effects.rs).
        Answer::Lore(_) => (String::new(), None, Next::Nothing),
    }
}

/// An answer to write, with what writing it needs.
struct Answered<'a> {
    job: &'a Job,
    answer: &'a Answer,
    /// The message data the answer sets.
    data: Option<(String, MessageData)>,
    /// The chat's `running_recap_exclude_latest` (running-recap kinds).
    exclude_latest: u32,
    /// The text limit, which a scene's versions together keep to.
    max_text_bytes: usize,
    now: UnixMicros,
}

/// Writes an answer into the chat: its message data, and for a running
/// recap the merged (or regenerated) version, whose result text it
/// returns. A merge of a scene before the current version's keeps that
/// version current (the scenes after it are merged again: see
/// [`writing::rebuild_next`]). Neither change touches the chat before its
/// checks pass, so a refusal leaves memory as the store holds it. A new
/// version is dated `now`.
fn write_answer(
    chat_id: &ChatKey,
    resident: &mut Resident,
    answered: Answered<'_>,
) -> Result<(Vec<Write>, Option<String>), DomainError> {
    let Answered {
        job,
        answer,
        data,
        exclude_latest,
        max_text_bytes,
        now,
    } = answered;
    let chat = resident
        .chat
        .as_mut()
        .map(std::sync::Arc::make_mut)
        .ok_or_else(|| DomainError::NotFound(format!("chat {:?}", chat_id.id)))?;
    let mut writes = Vec::new();
    let mut result = None;
    if let Some((message_id, update)) = &data {
        let mut changes = chat.set_message_data(message_id, update)?;
        changes.messages_put.extend(
            chat.fit_scene_recap_versions(message_id, max_text_bytes)?
                .messages_put,
        );
        writes.extend(writes_for(chat_id, chat, &changes));
    }
    let Answer::Recap(text) = answer else {
        return Ok((writes, result));
    };
    let (new, keep_current) = match job.kind {
        JobKind::RunningRecap => {
            let base = writing::merge_base(chat, &job.message_id);
            let new = writing::merged_recap(base, &job.message_id, text.clone(), exclude_latest);
            // The current version stays only while a later scene is left
            // to merge again up to it (else this merge is the newest).
            let keep = writing::rebuild_next(chat, &job.message_id)
                .and_then(|_| chat.recaps().current_version());
            (new, keep)
        }
        // The scenes the request was made of (its read set, in chat
        // order), not those of the chat now.
        JobKind::RegenerateRunningRecap => {
            let scenes: Vec<&str> = job
                .read
                .messages
                .iter()
                .map(|(id, _)| id.as_str())
                .collect();
            (
                writing::regenerated_recap(&scenes, exclude_latest, text.clone()),
                None,
            )
        }
        _ => return Ok((writes, result)),
    };
    let (version, changes) = chat.add_recap(new, now.to_millis())?;
    if let Some(current) = keep_current {
        chat.select_recap(current)?;
    }
    writes.extend(writes_for(chat_id, chat, &changes));
    result = Some(match keep_current {
        Some(current) => format!(
            "running recap version {version} (version {current}, which ends at a later scene, \
             stays current while the scenes after this one are merged again): {}",
            queue::short(text)
        ),
        None => format!("running recap version {version}: {}", queue::short(text)),
    });
    Ok((writes, result))
}
