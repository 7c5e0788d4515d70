//! One attempt of one job: claim it under the chat's lock (with the prompt
//! built from the chat as it is then, and what it read recorded), ask the
//! LLM with the lock released (renewing the lease meanwhile), then apply
//! the answer under the lock again, only if the job is still this
//! runner's and what it read is unchanged.

use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobKind, JobState, Lease};
use crate::domain::lore::prepare::LoreInput;
use crate::domain::time::UnixMicros;
use crate::domain::tokens;
use crate::domain::writing::{self, Answer, AnswerCheck, Candidates, PrepareError};
use crate::llm::{AnswerSchema, CompletionRequest, LlmError};
use crate::store::{StoreError, Write};
use crate::telemetry;

use super::super::commit::Commit;
use super::super::slot::Resident;
use super::super::{Engine, EngineError, Next};
use super::apply::job_commit;
use super::failure::{Endpoint, JobFailure};
use super::queue;

/// Stops the lease renewal of an attempt when the attempt ends, however it
/// ends (an answer, or the runner stopping it at shutdown).
pub(super) struct StopOnDrop(tokio::task::JoinHandle<()>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A job this runner claimed, with what to ask.
pub(super) struct Claimed {
    pub job: Job,
    pub request: CompletionRequest,
    pub candidates: Option<Candidates>,
    /// What the answer is checked against before it may land.
    pub check: AnswerCheck,
}

/// What became of a request. A failure's text is what the job's client
/// reads (a category and an error id, [`JobFailure::report`]), its cause
/// already logged.
pub(super) enum Outcome {
    /// A usable answer.
    Answer(Answer),
    /// An answer that did not parse or failed its checks: retried like
    /// [`Outcome::Retry`], counted apart.
    Unusable(String),
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
        let Some(writer) = self.jobs().writer.clone() else {
            return Ok(Step::Idle);
        };
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(chat) = resident.chat.as_deref() else {
            return Ok(Step::Idle);
        };
        if !settings.chat_enabled(resident.settings().enabled) {
            return Ok(Step::Idle);
        }
        let now = self.now();
        let Some(at) = self.next_runnable(resident, chat, now) else {
            return Ok(Step::Idle);
        };
        let kind = resident.jobs[at].kind;
        let book = if kind.is_lore() {
            let book = self.lore_book_for_request(chat_id, &settings).await?;
            if let Some(commit) =
                self.compaction_first(chat_id, resident, at, &settings, book.as_deref(), now)?
            {
                self.commit(&slot, guard, commit).await?;
                return Ok(Step::Settled);
            }
            book
        } else {
            None
        };
        let Some(chat) = resident.chat.as_deref() else {
            return Ok(Step::Idle);
        };
        let job = &resident.jobs[at];
        let lore = LoreInput {
            task: job.lore.as_ref(),
            book: book.as_deref(),
            book_name: &settings.world_info_chat_book,
        };
        let count = |text: &str| tokens::count(settings.tokenizer, text) as usize;
        let prepared =
            match writing::prepare(job.kind, chat, &settings, &job.message_id, &lore, &count) {
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
                    self.commit(
                        &slot,
                        guard,
                        job_commit(Vec::new(), Next::Nothing, ended, Vec::new()),
                    )
                    .await?;
                    return Ok(Step::Settled);
                }
            };
        let lease = self.jobs().queue.lease;
        let job = &mut resident.jobs[at];
        let fence = job.fence;
        job.state = JobState::Running;
        job.attempts += 1;
        job.fence += 1;
        job.lease = Some(Lease {
            owner: self.jobs().owner.clone(),
            until_us: now.saturating_add(lease),
        });
        job.read = prepared.read;
        if job.kind == JobKind::DetectSceneBreak {
            job.message_id = prepared.message_id;
        }
        queue::touch(job, now);
        let claimed = job.clone();
        let model = if settings.llm_model.is_empty() {
            writer.setup.model.clone()
        } else {
            settings.llm_model.clone()
        };
        tracing::debug!(chat = %chat_id, job = %claimed.id, prompt = %prepared.request, "job prompt");
        let request = CompletionRequest {
            model,
            prompt: prepared.request,
            max_tokens: settings.llm_max_tokens,
            temperature: settings.llm_temperature.map(|t| t.value()),
            answer_schema: Some(AnswerSchema {
                name: prepared.schema_name.to_owned(),
                schema: prepared.schema,
            }),
            structured_output: settings.llm_structured_output,
            max_tokens_field: settings.llm_max_tokens_field,
            purpose: claimed.kind.name(),
        };
        self.commit(
            &slot,
            guard,
            job_commit(
                Vec::new(),
                Next::Nothing,
                vec![(claimed.clone(), fence)],
                Vec::new(),
            ),
        )
        .await?;
        Ok(Step::Claimed(Box::new(Claimed {
            job: claimed,
            request,
            candidates: prepared.candidates,
            check: prepared.check,
        })))
    }

    /// The index of the chat's next job to start now, oldest first: a
    /// PENDING job that is due, or a RUNNING one whose runner is gone (its
    /// lease expired, or, with a store only this process writes, it was
    /// claimed by an earlier run of this process). None while a job of the
    /// chat runs under a live lease (index jobs, which run in a lane of
    /// their own, left out). A job waiting for another is skipped,
    /// and so is a merge while a scene recap or merge of an earlier break is
    /// unfinished: scenes are merged in the chat's order, whatever order
    /// their jobs were queued or retried in.
    fn next_runnable(&self, resident: &Resident, chat: &Chat, now: UnixMicros) -> Option<usize> {
        let orphaned = |job: &Job| self.lease_lapsed(job, now);
        // Index jobs run in their own lane (`index`), beside these.
        let jobs = &resident.jobs;
        if jobs
            .iter()
            .any(|j| !j.kind.is_index() && j.state == JobState::Running && !orphaned(j))
        {
            return None;
        }
        let position = |id: &str| chat.message(id).map(|(seq, _)| seq);
        let scene_work =
            |job: &Job| matches!(job.kind, JobKind::SceneRecap | JobKind::RunningRecap);
        jobs.iter().position(|job| {
            if job.kind.is_index() {
                return false;
            }
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
        let Some(writer) = self.jobs().writer.clone() else {
            return Outcome::Fatal("no LLM configured".into());
        };
        let renewal = self.renew_lease_meanwhile(chat, &claimed.job);
        let started = Instant::now();
        let answer = writer.client.complete(&claimed.request).await;
        drop(renewal);
        let kind = claimed.job.kind.name();
        let outcome = match answer {
            Ok(completion) => self.judge_answer(chat, claimed, &completion.text),
            Err(error) => {
                let shown = JobFailure::of(Endpoint::Llm, &error).report(
                    chat,
                    &claimed.job,
                    error.reason(),
                );
                match error {
                    LlmError::Retryable { retry_after, .. } => Outcome::Retry {
                        reason: shown,
                        retry_after,
                    },
                    LlmError::Fatal { .. } => Outcome::Fatal(shown),
                }
            }
        };
        let label = match &outcome {
            Outcome::Answer(_) => "ok",
            Outcome::Unusable(_) => "unusable",
            Outcome::Retry { .. } => "retryable",
            Outcome::Fatal(_) => "fatal",
        };
        metrics::counter!(telemetry::LLM_ATTEMPTS, "kind" => kind, "outcome" => label).increment(1);
        tracing::debug!(%chat, job = %claimed.job.id, outcome = label, seconds = started.elapsed().as_secs_f64(), "LLM answered");
        outcome
    }

    /// What an answer's text comes to: the answer, once it parses and
    /// passes its checks; otherwise an unusable attempt, whose client text
    /// names the category (not JSON, off its schema, over
    /// `--max-text-bytes`, a failed check) and an error id, the model's
    /// words going to the log only (see [`JobFailure::report`]).
    fn judge_answer(&self, chat: &ChatKey, claimed: &Claimed, text: &str) -> Outcome {
        let job = &claimed.job;
        let limit = self.limits().max_text_bytes;
        if text.len() > limit {
            let reason = format!(
                "the answer has {} bytes, over --max-text-bytes ({limit})",
                text.len()
            );
            return Outcome::Retry {
                reason: JobFailure::AnswerRefused(reason.clone()).report(chat, job, &reason),
                retry_after: None,
            };
        }
        let answer = match writing::parse_answer(job.kind, text, claimed.candidates.as_ref()) {
            Ok(answer) => answer,
            Err(reason) => {
                let failure = if writing::answer::holds_json_object(text) {
                    JobFailure::AnswerOffSchema
                } else {
                    JobFailure::AnswerNotJson
                };
                return Outcome::Unusable(failure.report(chat, job, &reason));
            }
        };
        match claimed.check.check(&answer) {
            Ok(()) => Outcome::Answer(answer),
            Err(reason) => {
                // A lore check's reason names the answer's entities (the
                // model's words): it is logged only.
                let failure = if job.kind.is_lore() {
                    JobFailure::AnswerFailedChecks
                } else {
                    JobFailure::AnswerRefused(reason.clone())
                };
                Outcome::Unusable(failure.report(chat, job, &reason))
            }
        }
    }

    /// Whether a RUNNING `job`'s runner is gone at `now`: its lease expired
    /// (or it has none), or, with a store only this process writes, an
    /// earlier run of this process claimed it.
    pub(super) fn lease_lapsed(&self, job: &Job, now: UnixMicros) -> bool {
        let own = &self.jobs().owner;
        let single = !self.shared();
        job.lease
            .as_ref()
            .is_none_or(|lease| lease.until_us < now || (single && &lease.owner != own))
    }

    /// Renews `job`'s lease every third of `--job-lease` until the
    /// returned guard is dropped (the attempt's request is answered, or the
    /// attempt is stopped).
    pub(super) fn renew_lease_meanwhile(&self, chat: &ChatKey, job: &Job) -> StopOnDrop {
        let engine = self.clone();
        let chat = chat.clone();
        let id = job.id.clone();
        let fence = job.fence;
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
        let resident = &mut *guard;
        let lasts = self.jobs().queue.lease;
        let Some(job) = resident
            .jobs
            .iter_mut()
            .find(|j| j.id == job_id && j.fence == fence && j.state == JobState::Running)
        else {
            return Ok(());
        };
        if let Some(lease) = &mut job.lease {
            lease.until_us = self.now().saturating_add(lasts);
        }
        let write = Write::Job {
            job: job.clone(),
            expect_fence: Some(fence),
        };
        self.commit(&slot, guard, Commit::one(vec![write], Next::Nothing))
            .await?;
        Ok(())
    }
}
