//! One attempt of one job: claim it under the chat's lock (with the prompt
//! built from the chat as it is then, and what it read recorded), ask the
//! LLM with the lock released (renewing the lease meanwhile), then apply
//! the answer under the lock again, only if the job is still this
//! runner's and what it read is unchanged.

use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use crate::domain::chat::Chat;
use crate::domain::generation::{self, Answer, Candidates, PrepareError};
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{self, Job, JobKind, JobState, Lease};
use crate::domain::message::MessageData;
use crate::domain::refresh::Trigger;
use crate::domain::tokens;
use crate::llm::{CompletionRequest, LlmError};
use crate::store::{StoreError, Write};
use crate::telemetry;

use super::super::ops::{missing_state, writes_for};
use super::super::slot::Resident;
use super::super::{Engine, EngineError, Next, now_ms, now_us};
use super::queue::{self, Changed, Origin, Queued};

/// The longest pause between two attempts of a job.
const BACKOFF_CAP_MS: u64 = 60_000;

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// Stops the lease renewal of an attempt when the attempt ends, however it
/// ends (an answer, or the runner stopping it at shutdown).
struct StopOnDrop(tokio::task::JoinHandle<()>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A job this runner claimed, with what to ask.
struct Claimed {
    job: Job,
    request: CompletionRequest,
    candidates: Option<Candidates>,
}

/// What became of a request.
enum Outcome {
    /// A usable answer.
    Answer(Answer),
    /// A failed attempt worth another later (after at least `retry_after`).
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// A failure retrying cannot fix.
    Fatal(String),
}

/// What claiming found.
enum Step {
    /// Nothing of the chat could start now.
    Idle,
    /// A job was settled without a request (gone, nothing to do, too long).
    Settled,
    /// A job is claimed: ask the LLM.
    Claimed(Box<Claimed>),
}

impl Engine {
    /// Starts the next runnable job of `chat`, if any, and sees it through.
    /// Returns whether a job was started or settled (false: the chat had
    /// nothing to do now). `permit` is one of the `--llm-concurrency`
    /// places, held until the request is answered.
    pub(super) async fn run_next_job(
        &self,
        chat: &ChatKey,
        permit: OwnedSemaphorePermit,
    ) -> Result<bool, EngineError> {
        let claimed = match self.retrying(|| self.claim_next(chat)).await {
            Ok(Step::Idle) => return Ok(false),
            Ok(Step::Settled) => return Ok(true),
            Ok(Step::Claimed(claimed)) => claimed,
            // Another runner took it first: it is theirs.
            Err(EngineError::Store(StoreError::Fenced(_))) => return Ok(true),
            Err(error) => return Err(error),
        };
        let outcome = self.ask(chat, &claimed).await;
        drop(permit);
        match self
            .retrying(|| self.apply_outcome(chat, &claimed, &outcome))
            .await
        {
            Err(EngineError::Store(StoreError::Fenced(job))) => {
                tracing::info!(%chat, %job, "job was cancelled or taken over; its answer is dropped");
                Ok(true)
            }
            other => other.map(|()| true),
        }
    }

    /// Under the chat's lock: picks the next runnable job, builds its
    /// prompt, and claims it (or settles it when no request is needed).
    async fn claim_next(&self, chat_id: &ChatKey) -> Result<Step, EngineError> {
        let Some(generation) = self.jobs().generation.clone() else {
            return Ok(Step::Idle);
        };
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(chat) = resident.chat.as_deref() else {
            return Ok(Step::Idle);
        };
        if !settings.chat_enabled(resident.settings.enabled) {
            return Ok(Step::Idle);
        }
        let now = now_us();
        let Some(at) = self.next_runnable(resident, chat, now) else {
            return Ok(Step::Idle);
        };
        let job = &resident.jobs[at];
        let count = |text: &str| tokens::count(settings.tokenizer, text) as usize;
        let prepared = match generation::prepare(job.kind, chat, &settings, &job.message_id, &count)
        {
            Ok(prepared) => prepared,
            Err(error) => {
                let (state, reason) = match error {
                    PrepareError::Gone(reason) => (JobState::Cancelled, reason),
                    PrepareError::NothingToDo(reason) => (JobState::Succeeded, reason),
                    PrepareError::TooLong(reason) => (JobState::Failed, reason),
                };
                if state == JobState::Failed {
                    resident.jobs[at].last_error = queue::short(&reason);
                }
                let ended = queue::end_with_dependents(resident, at, state, &reason, now);
                self.commit_jobs(&slot, guard, Vec::new(), Next::Nothing, ended, Vec::new())
                    .await?;
                return Ok(Step::Settled);
            }
        };
        let lease_us = i64::try_from(self.jobs().queue.lease.as_micros()).unwrap_or(i64::MAX);
        let job = &mut resident.jobs[at];
        let fence = job.fence;
        job.state = JobState::Running;
        job.attempts += 1;
        job.fence += 1;
        job.lease = Some(Lease {
            owner: self.jobs().owner.clone(),
            until_us: now.saturating_add(lease_us),
        });
        job.read = prepared.read;
        if job.kind == JobKind::DetectSceneBreak {
            job.message_id = prepared.message_id;
        }
        queue::touch(job, now);
        let claimed = job.clone();
        let model = if settings.llm_model.is_empty() {
            generation.setup.model.clone()
        } else {
            settings.llm_model.clone()
        };
        tracing::debug!(chat = %chat_id, job = %claimed.id, prompt = %prepared.prompt, "job prompt");
        let request = CompletionRequest {
            model,
            prompt: prepared.prompt,
            max_tokens: settings.llm_max_tokens,
            temperature: settings.llm_temperature.map(|t| t.value()),
        };
        self.commit_jobs(
            &slot,
            guard,
            Vec::new(),
            Next::Nothing,
            vec![(claimed.clone(), fence)],
            Vec::new(),
        )
        .await?;
        Ok(Step::Claimed(Box::new(Claimed {
            job: claimed,
            request,
            candidates: prepared.candidates,
        })))
    }

    /// The index of the chat's next job to start now, oldest first: a
    /// PENDING job that is due, or a RUNNING one whose runner is gone (its
    /// lease expired, or, with a store only this process writes, it was
    /// claimed by an earlier run of this process). None while a job of the
    /// chat runs under a live lease. A job waiting for another is skipped,
    /// and so is a merge while a scene recap or merge of an earlier break is
    /// unfinished: scenes are merged in the chat's order, whatever order
    /// their jobs were queued or retried in.
    fn next_runnable(&self, resident: &Resident, chat: &Chat, now: i64) -> Option<usize> {
        let own = &self.jobs().owner;
        let single = !self.shared();
        let orphaned = |job: &Job| {
            job.lease
                .as_ref()
                .is_none_or(|lease| lease.until_us < now || (single && &lease.owner != own))
        };
        let jobs = &resident.jobs;
        if jobs
            .iter()
            .any(|j| j.state == JobState::Running && !orphaned(j))
        {
            return None;
        }
        let position = |id: &str| chat.message(id).map(|(seq, _)| seq);
        let scene_work =
            |job: &Job| matches!(job.kind, JobKind::SceneRecap | JobKind::RunningRecap);
        jobs.iter().position(|job| {
            let due = match job.state {
                JobState::Pending => job.not_before_us <= now,
                JobState::Running => orphaned(job),
                _ => false,
            };
            let waiting = job
                .depends_on
                .as_ref()
                .is_some_and(|dep| jobs.iter().any(|j| &j.id == dep));
            let earlier_scene_open = job.kind == JobKind::RunningRecap
                && position(&job.message_id).is_some_and(|here| {
                    jobs.iter().any(|other| {
                        other.id != job.id
                            && scene_work(other)
                            && position(&other.message_id).is_some_and(|there| there < here)
                    })
                });
            due && !waiting && !earlier_scene_open
        })
    }

    /// Asks the LLM, renewing the job's lease while the request runs.
    async fn ask(&self, chat: &ChatKey, claimed: &Claimed) -> Outcome {
        let Some(generation) = self.jobs().generation.clone() else {
            return Outcome::Fatal("no LLM configured".into());
        };
        let renewal = {
            let engine = self.clone();
            let chat = chat.clone();
            let id = claimed.job.id.clone();
            let fence = claimed.job.fence;
            let every = self.jobs().queue.lease / 3;
            StopOnDrop(tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    if let Err(error) = engine
                        .retrying(|| engine.renew_lease(&chat, &id, fence))
                        .await
                    {
                        tracing::warn!(%chat, job = %id, %error, "could not renew a job's lease");
                    }
                }
            }))
        };
        let started = Instant::now();
        let answer = generation.client.complete(&claimed.request).await;
        drop(renewal);
        let kind = claimed.job.kind.name();
        let outcome = match answer {
            Ok(completion) => {
                let limit = self.limits().max_text_bytes;
                if completion.text.len() > limit {
                    Outcome::Retry {
                        reason: format!(
                            "the answer has {} bytes, over --max-text-bytes ({limit})",
                            completion.text.len()
                        ),
                        retry_after: None,
                    }
                } else {
                    match generation::parse_answer(
                        claimed.job.kind,
                        &completion.text,
                        claimed.candidates.as_ref(),
                    ) {
                        Ok(answer) => Outcome::Answer(answer),
                        Err(reason) => Outcome::Retry {
                            reason: format!("unusable answer: {reason}"),
                            retry_after: None,
                        },
                    }
                }
            }
            Err(LlmError::Retryable {
                reason,
                retry_after,
            }) => Outcome::Retry {
                reason,
                retry_after,
            },
            Err(LlmError::Fatal { reason }) => Outcome::Fatal(reason),
        };
        let label = match &outcome {
            Outcome::Answer(_) => "ok",
            Outcome::Retry { .. } => "retryable",
            Outcome::Fatal(_) => "fatal",
        };
        metrics::counter!(telemetry::LLM_ATTEMPTS, "kind" => kind, "outcome" => label).increment(1);
        tracing::debug!(%chat, job = %claimed.job.id, outcome = label, seconds = started.elapsed().as_secs_f64(), "LLM answered");
        outcome
    }

    /// Moves a running job's lease on, if the job is still this runner's.
    async fn renew_lease(
        &self,
        chat_id: &ChatKey,
        job_id: &str,
        fence: u64,
    ) -> Result<(), EngineError> {
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let lease_us = i64::try_from(self.jobs().queue.lease.as_micros()).unwrap_or(i64::MAX);
        let Some(job) = resident
            .jobs
            .iter_mut()
            .find(|j| j.id == job_id && j.fence == fence && j.state == JobState::Running)
        else {
            return Ok(());
        };
        if let Some(lease) = &mut job.lease {
            lease.until_us = now_us().saturating_add(lease_us);
        }
        let write = Write::Job {
            job: job.clone(),
            expect_fence: Some(fence),
        };
        self.commit_detached(&slot, guard, vec![write], Next::Nothing)
            .await?;
        Ok(())
    }

    /// Under the chat's lock again: records a failed attempt, or applies
    /// the answer if the job is still this runner's and what it read is
    /// unchanged (DISCARDED and queued afresh otherwise).
    async fn apply_outcome(
        &self,
        chat_id: &ChatKey,
        claimed: &Claimed,
        outcome: &Outcome,
    ) -> Result<(), EngineError> {
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(at) = resident
            .jobs
            .iter()
            .position(|j| j.id == claimed.job.id && j.fence == claimed.job.fence)
        else {
            return Err(StoreError::Fenced(claimed.job.id.clone()).into());
        };
        let now = now_us();
        let fence = claimed.job.fence;
        let max_attempts = self
            .jobs()
            .generation
            .as_ref()
            .map_or(1, |g| g.setup.max_attempts);
        let base_ms = self.jobs().generation.as_ref().map_or(1000, |g| {
            u64::try_from(g.setup.backoff_base.as_millis()).unwrap_or(1000)
        });
        let answer = match outcome {
            Outcome::Retry {
                reason,
                retry_after,
            } => {
                let job = &mut resident.jobs[at];
                job.last_error = queue::short(reason);
                if job.attempts >= max_attempts {
                    let result = format!("gave up after {} attempts", job.attempts);
                    let ended =
                        queue::end_with_dependents(resident, at, JobState::Failed, &result, now);
                    return self
                        .commit_jobs(&slot, guard, Vec::new(), Next::Nothing, ended, Vec::new())
                        .await;
                }
                // A server asking for more than an hour is not waited for
                // longer: the job would sit unseen.
                let retry_after_ms = retry_after
                    .map(|d| d.min(MAX_RETRY_AFTER))
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                let pause_ms = jobs::backoff_ms(
                    job.attempts,
                    base_ms,
                    BACKOFF_CAP_MS,
                    rand::random::<f64>(),
                    retry_after_ms,
                );
                job.state = JobState::Pending;
                job.lease = None;
                job.not_before_us = now.saturating_add(
                    i64::try_from(pause_ms)
                        .unwrap_or(i64::MAX)
                        .saturating_mul(1000),
                );
                queue::touch(job, now);
                let changed = vec![(job.clone(), fence)];
                return self
                    .commit_jobs(&slot, guard, Vec::new(), Next::Nothing, changed, Vec::new())
                    .await;
            }
            Outcome::Fatal(reason) => {
                resident.jobs[at].last_error = queue::short(reason);
                let ended = queue::end_with_dependents(
                    resident,
                    at,
                    JobState::Failed,
                    "refused by the LLM",
                    now,
                );
                return self
                    .commit_jobs(&slot, guard, Vec::new(), Next::Nothing, ended, Vec::new())
                    .await;
            }
            Outcome::Answer(answer) => answer,
        };
        let chat = resident.chat.as_deref().ok_or_else(missing_state)?;
        let job = resident.jobs[at].clone();
        if !generation::read_unchanged(job.kind, &job.read, chat, &job.message_id) {
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
            let fresh =
                self.follow_up(resident, chat_id, job.kind, &job.message_id, origin, now)?;
            // The jobs that waited for this one wait for the work queued
            // again (new, or already there); with none, they end too.
            let replacement = resident
                .jobs
                .iter()
                .find(|j| j.same_work(job.kind, &job.message_id))
                .map(|j| j.id.clone());
            match replacement {
                Some(replacement) => {
                    for waiting in &mut resident.jobs {
                        if waiting.depends_on.as_deref() == Some(job.id.as_str()) {
                            waiting.depends_on = Some(replacement.clone());
                            queue::touch(waiting, now);
                            ended.push((waiting.clone(), waiting.fence));
                        }
                    }
                }
                None => ended.extend(queue::cancel_dependents(resident, &ended[0].0, now)),
            }
            return self
                .commit_jobs(&slot, guard, Vec::new(), Next::Nothing, ended, fresh)
                .await;
        }
        // Apply the answer to the chat, then end the job, then queue what
        // follows from it.
        let (result, data, next) = match answer {
            Answer::NoBreak { rationale } => (
                queue::short(&format!("no scene break: {rationale}")),
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
        };
        let mut writes = Vec::new();
        let mut result = result;
        let applied = (|| -> Result<(), crate::domain::DomainError> {
            // Neither change touches the chat before its checks pass, so a
            // refusal leaves memory as the store holds it.
            let chat = resident
                .chat
                .as_mut()
                .map(std::sync::Arc::make_mut)
                .ok_or_else(|| {
                    crate::domain::DomainError::NotFound(format!("chat {:?}", chat_id.id))
                })?;
            if let Some((message_id, update)) = &data {
                let changes = chat.set_message_data(message_id, update)?;
                writes.extend(writes_for(chat_id, chat, &changes));
            }
            if let (Answer::Recap(text), JobKind::RunningRecap) = (answer, job.kind) {
                let base = generation::merge_base(chat, &job.message_id).cloned();
                let new = generation::merged_recap(base.as_ref(), &job.message_id, text.clone());
                let (version, changes) = chat.add_recap(new, now_ms())?;
                writes.extend(writes_for(chat_id, chat, &changes));
                result = format!("running recap version {version}: {}", queue::short(text));
            }
            Ok(())
        })();
        if let Err(refused) = applied {
            // The answer cannot be stored as it is (retrying would ask the
            // same): the job fails with the reason.
            resident.jobs[at].last_error =
                queue::short(&format!("the answer could not be applied: {refused}"));
            let ended = queue::end_with_dependents(
                resident,
                at,
                JobState::Failed,
                "its answer could not be applied",
                now,
            );
            return self
                .commit_jobs(&slot, guard, Vec::new(), Next::Nothing, ended, Vec::new())
                .await;
        }
        let ended = queue::end_with_dependents(resident, at, JobState::Succeeded, &result, now);
        let mut fresh = Vec::new();
        match (answer, job.kind) {
            (Answer::Break(candidate), _) => {
                if settings.auto_scene_recap {
                    fresh.extend(self.follow_up(
                        resident,
                        chat_id,
                        JobKind::SceneRecap,
                        &candidate.message_id,
                        Origin::Automatic,
                        now,
                    )?);
                }
                // Detection goes on after the break it found.
                let chat = resident.chat.as_deref().ok_or_else(missing_state)?;
                if generation::detection_ready(chat, &settings) {
                    fresh.extend(self.follow_up(
                        resident,
                        chat_id,
                        JobKind::DetectSceneBreak,
                        "",
                        Origin::Automatic,
                        now,
                    )?);
                }
            }
            (Answer::SceneRecap { .. }, _) if settings.auto_running_recap => {
                fresh.extend(self.follow_up(
                    resident,
                    chat_id,
                    JobKind::RunningRecap,
                    &job.message_id,
                    Origin::Automatic,
                    now,
                )?);
            }
            _ => {}
        }
        self.commit_jobs(&slot, guard, writes, next, ended, fresh)
            .await
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
        now: i64,
    ) -> Result<Vec<Job>, EngineError> {
        let origin = match origin {
            // A job queued again after a stale answer must not fail the
            // commit that ends the stale one.
            Origin::Request if resident.jobs.len() >= self.jobs().queue.max_jobs_per_chat => {
                Origin::Automatic
            }
            other => other,
        };
        Ok(
            match queue::queue(
                resident,
                &self.jobs().queue,
                chat_id,
                kind,
                message_id,
                origin,
                now,
                None,
            )? {
                Queued::New(job) => vec![job],
                Queued::Existing(_) | Queued::Dropped => Vec::new(),
            },
        )
    }

    /// Commits chat `writes`, changed jobs (with their expected fences) and
    /// new jobs in one group, then announces every job change.
    async fn commit_jobs(
        &self,
        slot: &std::sync::Arc<super::super::slot::ChatSlot>,
        guard: super::super::Guard,
        mut writes: Vec<Write>,
        next: Next,
        changed: Vec<Changed>,
        fresh: Vec<Job>,
    ) -> Result<(), EngineError> {
        writes.extend(queue::job_writes(&changed));
        writes.extend(fresh.iter().map(|job| Write::Job {
            job: job.clone(),
            expect_fence: None,
        }));
        let mut announce: Vec<Job> = changed.into_iter().map(|(job, _)| job).collect();
        announce.extend(fresh);
        self.commit_detached_jobs(slot, guard, writes, next, announce)
            .await
            .map(|_| ())
    }
}
