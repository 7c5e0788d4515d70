//! The recap lane: recap and lore jobs, which ask the LLM. A claim builds
//! the job's request from the chat as it is then (a lore job's from the
//! chat's book too, a merge into a too-long entry made to wait for the
//! entry's compaction first); the answer is parsed and checked before it
//! may land ([`super::apply`] applies it). The claim, the lease and the
//! fences are the driver's ([`super::lane`]).

use std::time::Instant;

use crate::domain::backoff;
use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobKind, JobLane, JobState};
use crate::domain::lore::prepare::LoreInput;
use crate::domain::writing::{self, Answer, AnswerCheck, Candidates, PrepareError};
use crate::llm::{AnswerSchema, CompletionRequest};

use super::super::EngineError;
use super::apply::{self, Retries};
use super::failure::{Endpoint, JobFailure};
use super::lane::{Applying, Claimed, Lane, Outcome, Prepared, Preparing};
use super::queue;
use super::{JobDriver, Jobs};

/// The recap lane (see the module documentation).
pub(super) struct RecapLane;

/// What a recap or lore job asks the LLM.
pub(super) struct RecapAsk {
    /// The request sent to the LLM.
    pub request: CompletionRequest,
    /// A scene-break detection's candidate messages, which its answer
    /// picks from.
    pub candidates: Option<Candidates>,
    /// What the answer is checked against before it may land.
    pub check: AnswerCheck,
}

impl Lane for RecapLane {
    type Ask = RecapAsk;
    type Answer = Answer;

    const LANE: JobLane = JobLane::Recap;
    const DROPPED: &'static str = "job was cancelled or taken over; its answer is dropped";
    const REFUSED: &'static str = "refused by the LLM";

    fn runs(&self, jobs: &Jobs) -> bool {
        jobs.writer().is_some()
    }

    /// A job waiting for another is skipped, and so is a merge while a
    /// scene recap or merge of an earlier break is unfinished: scenes are
    /// merged in the chat's order, whatever order their jobs were queued or
    /// retried in.
    fn may_start(&self, job: &Job, jobs: &[Job], chat: &Chat) -> bool {
        let position = |id: &str| chat.message(id).map(|(seq, _)| seq);
        let scene_work =
            |job: &Job| matches!(job.kind, JobKind::SceneRecap | JobKind::RunningRecap);
        let waiting = job
            .depends_on
            .as_ref()
            .is_some_and(|dep| jobs.iter().any(|j| &j.id == dep));
        // A regeneration reads every scene recap: it waits for all scene
        // work of the chat.
        let scene_work_open = job.kind == JobKind::RegenerateRunningRecap
            && jobs
                .iter()
                .any(|other| other.id != job.id && scene_work(other));
        let earlier_scene_open = job.kind == JobKind::RunningRecap
            && position(&job.message_id).is_some_and(|here| {
                jobs.iter().any(|other| {
                    other.id != job.id
                        && scene_work(other)
                        && position(&other.message_id).is_some_and(|there| there < here)
                })
            });
        !waiting && !earlier_scene_open && !scene_work_open
    }

    /// Builds the job's request (a job that needs none, or cannot have
    /// one, is settled).
    async fn prepare(
        &self,
        engine: &JobDriver,
        preparing: Preparing<'_>,
    ) -> Result<Prepared<RecapAsk>, EngineError> {
        let Preparing {
            chat_id,
            resident,
            at,
            settings,
            now,
        } = preparing;
        let kind = resident.jobs[at].kind;
        let book = if kind.is_lore() {
            let book = engine.lore_book_for_request(chat_id, settings).await?;
            if let Some(commit) =
                engine.compaction_first(chat_id, resident, at, settings, book.as_deref(), now)?
            {
                return Ok(Prepared::Settled(commit));
            }
            book
        } else {
            None
        };
        let Some(chat) = resident.chat.as_deref() else {
            return Err(EngineError::unknown_chat(chat_id));
        };
        let job = &resident.jobs[at];
        let lore = LoreInput {
            task: job.lore.as_ref(),
            book: book.as_deref(),
            book_name: &settings.world_info.chat_book,
        };
        let counter = engine.chats.counter(settings);
        let count = |text: &str| counter.count(text) as usize;
        let prepared =
            match writing::prepare(job.kind, chat, settings, &job.message_id, &lore, &count) {
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
                    return Ok(Prepared::Settled(apply::end(
                        resident, at, state, &reason, now,
                    )));
                }
            };
        let model = if settings.writing.llm_model.is_empty() {
            let writer = engine.jobs().writer();
            writer.map_or_else(String::new, |writer| writer.setup.model.clone())
        } else {
            settings.writing.llm_model.clone()
        };
        tracing::debug!(chat = %chat_id, job = %job.id, prompt = %prepared.request, "job prompt");
        let request = CompletionRequest {
            model,
            prompt: prepared.request,
            max_tokens: settings.writing.llm_max_tokens,
            temperature: settings.writing.llm_temperature.map(|t| t.value()),
            answer_schema: Some(AnswerSchema {
                name: prepared.schema_name.to_owned(),
                schema: prepared.schema,
            }),
            structured_output: settings.writing.llm_structured_output,
            max_tokens_field: settings.writing.llm_max_tokens_field,
            purpose: job.kind.name(),
        };
        Ok(Prepared::Ask {
            read: prepared.read,
            message_id: (job.kind == JobKind::DetectSceneBreak).then_some(prepared.message_id),
            ask: RecapAsk {
                request,
                candidates: prepared.candidates,
                check: prepared.check,
            },
        })
    }

    /// Asks the LLM, and judges its answer.
    async fn work(
        &self,
        engine: &JobDriver,
        chat: &ChatKey,
        claimed: &Claimed<RecapAsk>,
    ) -> Outcome<Answer> {
        let Some(writer) = engine.jobs().writer().cloned() else {
            return Outcome::Fatal("no LLM configured".into());
        };
        let started = Instant::now();
        let outcome = match writer.client.complete(&claimed.ask.request).await {
            Ok(completion) => judge_answer(
                engine.chats.limits().max_text_bytes,
                chat,
                claimed,
                &completion.text,
            ),
            Err(error) => Outcome::failed(Endpoint::Llm, chat, &claimed.job, error),
        };
        tracing::debug!(%chat, job = %claimed.job.id, outcome = outcome.label(), seconds = started.elapsed().as_secs_f64(), "LLM answered");
        outcome
    }

    fn retries(&self, jobs: &Jobs) -> Retries {
        let writer = jobs.writer();
        Retries {
            max_attempts: writer.map_or(1, |w| w.setup.max_attempts),
            backoff_base: writer.map_or(backoff::DEFAULT_BASE, |w| w.setup.backoff_base),
        }
    }

    async fn apply(
        &self,
        engine: &JobDriver,
        applying: Applying<'_>,
        _claimed: &Claimed<RecapAsk>,
        answer: &Answer,
        _go_on: bool,
    ) -> Result<Option<Claimed<RecapAsk>>, EngineError> {
        engine.apply_answer(applying, answer).await.map(|()| None)
    }
}

/// What an answer's text comes to: the answer, once it parses and
/// passes its checks; otherwise an unusable attempt, whose client text
/// names the category (not JSON, off its schema, over
/// `--max-text-bytes`, a failed check) and an error id, the model's
/// words going to the log only (see [`JobFailure::report`]). `limit` is
/// `--max-text-bytes`.
fn judge_answer(
    limit: usize,
    chat: &ChatKey,
    claimed: &Claimed<RecapAsk>,
    text: &str,
) -> Outcome<Answer> {
    let job = &claimed.job;
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
    let answer = match writing::parse_answer(job.kind, text, claimed.ask.candidates.as_ref()) {
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
    match claimed.ask.check.check(&answer) {
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
