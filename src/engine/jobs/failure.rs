//! What a job's client is told when an attempt fails: one fixed category
//! ([`JobFailure`]) and an [`ErrorId`], never the cause. The cause (the
//! OS's, the resolver's or TLS's words, an endpoint's status text or body,
//! the model's answer) goes to the log at warn, once, under the same id,
//! with the chat and the job, so an operator given the `last_error` a
//! client saw finds the cause with one grep (`error_id=<id>`).
//!
//! The texts are stable (docs/errors.md lists them): a client may match
//! on them. Metrics never carry them; only [`JobFailure::label`], one of a
//! fixed set, may appear in a log field.

use std::fmt;

use crate::domain::ids::ChatKey;
use crate::domain::jobs::Job;
use crate::error_id::ErrorId;
use crate::llm::{FailureKind, LlmError};

/// Most characters of a reason recapd itself wrote that a
/// [`JobFailure::AnswerRefused`] shows, so that the id always fits in a
/// job's 300-character `last_error`.
const SHOWN_REASON_CHARS: usize = 200;

/// Which endpoint a request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The chat-completions endpoint (`--llm-url`).
    Llm,
    /// The embeddings endpoint (`--embedding-url`).
    Embeddings,
}

impl Endpoint {
    /// How a client's text names it.
    fn name(self) -> &'static str {
        match self {
            Endpoint::Llm => "the LLM endpoint",
            Endpoint::Embeddings => "the embeddings endpoint",
        }
    }
}

/// The category of one failed attempt of a job: all its `last_error` says
/// about the cause. Each has a fixed text ([`fmt::Display`]); only
/// [`JobFailure::AnswerRefused`] adds words, and those are recapd's own
/// (counts, limits, field names), never bytes an endpoint sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobFailure {
    /// No HTTP answer: the connection was refused or reset, the name did
    /// not resolve, TLS failed, or the answer was cut short.
    Unreachable(Endpoint),
    /// The endpoint answered this status (not a success).
    Answered(Endpoint, u16),
    /// No whole answer within the request's timeout.
    TimedOut(Endpoint),
    /// A successful status whose body is not JSON.
    ReplyNotJson(Endpoint),
    /// JSON that is not the API's answer (no choices, an error object,
    /// vectors missing or of the wrong shape).
    ReplyMalformed(Endpoint),
    /// The endpoint's answer had no text.
    ReplyEmpty(Endpoint),
    /// The endpoint's answer was over the most bytes read.
    ReplyTooLong(Endpoint),
    /// No model named: set one (nothing was sent).
    NoModel(Endpoint),
    /// The request could not be built (nothing was sent).
    NotSent(Endpoint),
    /// The model's answer holds no JSON object.
    AnswerNotJson,
    /// The model's answer holds JSON, but not the object the schema asks
    /// for (a member missing, of the wrong type, out of range).
    AnswerOffSchema,
    /// The model's answer failed a check; the reason is recapd's own text
    /// (no byte of the answer in it).
    AnswerRefused(String),
    /// The model's answer failed a check whose reason would quote it (a
    /// lore answer's entities): the reason is logged only.
    AnswerFailedChecks,
    /// The answer passed its checks, but the chat or the book refused it.
    NotApplied,
}

impl JobFailure {
    /// The category of an endpoint's error.
    pub fn of(endpoint: Endpoint, error: &LlmError) -> JobFailure {
        match error.kind() {
            FailureKind::Unreachable => JobFailure::Unreachable(endpoint),
            FailureKind::Status(code) => JobFailure::Answered(endpoint, code),
            FailureKind::TimedOut => JobFailure::TimedOut(endpoint),
            FailureKind::NotJson => JobFailure::ReplyNotJson(endpoint),
            FailureKind::Malformed => JobFailure::ReplyMalformed(endpoint),
            FailureKind::Empty => JobFailure::ReplyEmpty(endpoint),
            FailureKind::TooLong => JobFailure::ReplyTooLong(endpoint),
            FailureKind::NoModel => JobFailure::NoModel(endpoint),
            FailureKind::NotSent => JobFailure::NotSent(endpoint),
        }
    }

    /// A short fixed name of the category, for the log's `category` field.
    pub fn label(&self) -> &'static str {
        match self {
            JobFailure::Unreachable(_) => "unreachable",
            JobFailure::Answered(..) => "status",
            JobFailure::TimedOut(_) => "timeout",
            JobFailure::ReplyNotJson(_) => "reply_not_json",
            JobFailure::ReplyMalformed(_) => "reply_malformed",
            JobFailure::ReplyEmpty(_) => "reply_empty",
            JobFailure::ReplyTooLong(_) => "reply_too_long",
            JobFailure::NoModel(_) => "no_model",
            JobFailure::NotSent(_) => "not_sent",
            JobFailure::AnswerNotJson => "answer_not_json",
            JobFailure::AnswerOffSchema => "answer_off_schema",
            JobFailure::AnswerRefused(_) | JobFailure::AnswerFailedChecks => "answer_refused",
            JobFailure::NotApplied => "not_applied",
        }
    }

    /// The text a client reads in the job's `last_error`: the category's
    /// text and a fresh [`ErrorId`]. `cause` (anything: an endpoint's
    /// words, the model's answer, already scrubbed of the API key) is
    /// logged at warn with the id, the chat, the job and the category, and
    /// goes nowhere else; it is logged quoted and escaped, so a line break
    /// in it cannot start a line of its own.
    pub fn report(&self, chat: &ChatKey, job: &Job, cause: &str) -> String {
        let id = ErrorId::new();
        tracing::warn!(
            %chat,
            job = %job.id,
            kind = job.kind.name(),
            error_id = %id,
            category = self.label(),
            cause = ?cause,
            "job attempt failed: {self}"
        );
        format!("{self} (error id {id})")
    }
}

impl fmt::Display for JobFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobFailure::Unreachable(e) => write!(f, "{} could not be reached", e.name()),
            JobFailure::Answered(e, code) => write!(f, "{} answered {code}", e.name()),
            JobFailure::TimedOut(e) => write!(f, "{} timed out", e.name()),
            JobFailure::ReplyNotJson(e) => write!(f, "{}'s answer was not JSON", e.name()),
            JobFailure::ReplyMalformed(e) => {
                write!(f, "{}'s answer did not follow its API", e.name())
            }
            JobFailure::ReplyEmpty(e) => write!(f, "{}'s answer was empty", e.name()),
            JobFailure::ReplyTooLong(e) => write!(f, "{}'s answer was too long", e.name()),
            JobFailure::NoModel(Endpoint::Llm) => {
                f.write_str("no model named: set --llm-model or the chat's llm_model")
            }
            JobFailure::NoModel(Endpoint::Embeddings) => {
                f.write_str("no model named: set --embedding-model")
            }
            JobFailure::NotSent(e) => write!(f, "the request to {} could not be built", e.name()),
            JobFailure::AnswerNotJson => f.write_str("the answer was not JSON"),
            JobFailure::AnswerOffSchema => f.write_str("the answer did not follow the schema"),
            JobFailure::AnswerRefused(reason) => write!(
                f,
                "the answer did not pass its checks: {}",
                crate::domain::jobs::clip(reason, SHOWN_REASON_CHARS)
            ),
            JobFailure::AnswerFailedChecks => f.write_str("the answer did not pass its checks"),
            JobFailure::NotApplied => f.write_str("the answer could not be applied"),
        }
    }
}

#[cfg(test)]
mod tests;
