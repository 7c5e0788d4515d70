//! What every request is: the [`Prepared`] request with what it read, why
//! none was made ([`PrepareError`]), the token bound ([`Bound`]), the
//! scene a request reads ([`Scene`]), and each kind's instructions. The
//! recap kinds' builders are [`crate::writing::prepare`]'s, the lore
//! kinds' [`crate::lore::prepare`]'s.

use serde_json::Value;

use super::candidates::Candidates;
use super::check::AnswerCheck;
use super::macros::scene_line;
use crate::chat::Chat;
use crate::jobs::{JobKind, LoreStep, ReadSet, RecapStep, RequestKind, fingerprint};
use crate::message::Message;
use crate::settings::Settings;

/// A request ready to send, and what it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The request, sent as one `user` message.
    pub request: String,
    /// What the request depends on, checked before its answer is applied.
    pub read: ReadSet,
    /// The job's message: for a detection the newest candidate it shows,
    /// for the other kinds the message the job names.
    pub message_id: String,
    /// Detection only: the candidates the request shows, which the answer's
    /// message number is resolved against ([`crate::writing::answer::parse_answer`]).
    pub candidates: Option<Candidates>,
    /// The name of the answer's JSON schema ([`crate::writing::schema`],
    /// [`crate::lore::schema`]).
    pub schema_name: &'static str,
    /// The answer's JSON schema, built from this request.
    pub schema: Value,
    /// What a parsed answer is checked against before it may land
    /// ([`super::check`]).
    pub check: AnswerCheck,
}

/// Why no request was made. The text is the reason, short enough for a
/// job's `result` or `last_error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrepareError {
    /// The job's message is gone or no longer what the job needs (not a
    /// visible break any more, for a scene recap or a merge): the job is
    /// cancelled with this reason.
    #[error("{0}")]
    Gone(String),
    /// Nothing to ask (a detection with no valid break possible, a merge
    /// whose break has no scene recap, a scene or message with no text to
    /// recap): the job ends without a request, with this reason.
    #[error("{0}")]
    NothingToDo(String),
    /// The request cannot fit `max_context_tokens - llm_max_tokens`: the
    /// attempt fails with this reason.
    #[error("{0}")]
    TooLong(String),
}

impl PrepareError {
    /// The reason, as displayed.
    pub fn reason(&self) -> &str {
        match self {
            PrepareError::Gone(r) | PrepareError::NothingToDo(r) | PrepareError::TooLong(r) => r,
        }
    }
}

/// The instructions (prompt setting) of `kind`.
pub(crate) fn instructions(kind: JobKind, settings: &Settings) -> &str {
    match kind.request() {
        RequestKind::Recap(step) => match step {
            RecapStep::DetectSceneBreak => &settings.writing.scene_break_prompt,
            RecapStep::SceneRecap => &settings.writing.scene_recap_prompt,
            // A regeneration is a merge of every scene at once, with the
            // merge's instructions.
            RecapStep::RunningRecap | RecapStep::RegenerateRunningRecap => {
                &settings.writing.running_recap_prompt
            }
            RecapStep::MessageRecap => &settings.writing.message_recap_prompt,
        },
        RequestKind::Lore(step) => match step {
            LoreStep::Extract => &settings.lore.extract_prompt,
            LoreStep::Resolve => &settings.lore.resolve_prompt,
            LoreStep::Merge => &settings.lore.merge_prompt,
            LoreStep::Compact => &settings.lore.compact_prompt,
        },
        RequestKind::Embeddings => "",
    }
}

/// A prepared request of one of the kinds' builders;
/// [`crate::writing::prepare()`] adds the
/// schema and (but for a merge, whose builder makes its own) the check.
pub(crate) fn prepared(
    request: String,
    read: ReadSet,
    message_id: String,
    candidates: Option<Candidates>,
) -> Prepared {
    Prepared {
        request,
        read,
        message_id,
        candidates,
        schema_name: "",
        schema: Value::Null,
        check: AnswerCheck::default(),
    }
}

/// The token bound of a request.
pub(crate) struct Bound<'a> {
    /// `max_context_tokens - llm_max_tokens`; `None`: no bound.
    limit: Option<usize>,
    settings: &'a Settings,
    count_tokens: &'a dyn Fn(&str) -> usize,
}

impl<'a> Bound<'a> {
    /// The bound `settings` set, counted with `count_tokens`.
    pub(crate) fn of(settings: &'a Settings, count_tokens: &'a dyn Fn(&str) -> usize) -> Bound<'a> {
        let limit = settings.inclusion.max_context_tokens.map(|max| {
            usize::try_from(max.saturating_sub(settings.writing.llm_max_tokens))
                .unwrap_or(usize::MAX)
        });
        Bound {
            limit,
            settings,
            count_tokens,
        }
    }

    /// Whether `request` fits the bound.
    pub(crate) fn fits(&self, request: &str) -> bool {
        self.limit
            .is_none_or(|limit| (self.count_tokens)(request) <= limit)
    }

    /// `Ok` when `request` fits; otherwise why not, with what it needs.
    pub(crate) fn check(&self, request: &str) -> Result<(), PrepareError> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let needed = (self.count_tokens)(request);
        if needed <= limit {
            return Ok(());
        }
        Err(PrepareError::TooLong(format!(
            "the prompt needs {needed} tokens; {} allows {limit}",
            self.explained()
        )))
    }

    /// How the limit is made, for reasons.
    fn explained(&self) -> String {
        format!(
            "max_context_tokens {} - llm_max_tokens {}",
            self.settings.inclusion.max_context_tokens.unwrap_or(0),
            self.settings.writing.llm_max_tokens
        )
    }
}

/// The job's message when it exists and is a visible break.
pub(crate) fn visible_break<'a>(
    chat: &'a Chat,
    message_id: &str,
) -> Result<(i64, &'a Message), PrepareError> {
    let (seq, message) = chat
        .message(message_id)
        .ok_or_else(|| PrepareError::Gone(gone(message_id)))?;
    if !message.data().is_visible_scene_break() {
        return Err(PrepareError::Gone(format!(
            "message {message_id:?} is no longer a scene break"
        )));
    }
    Ok((seq, message))
}

/// The reason of a job whose message is gone.
pub(crate) fn gone(message_id: &str) -> String {
    format!("message {message_id:?} no longer exists")
}

/// The scene ending at a visible break: the messages after the previous
/// visible break through the break itself, those hidden by hand and
/// thoughts left out (auto-hide does not matter: old scenes can be read
/// again).
pub(crate) struct Scene<'a> {
    /// The break message.
    pub break_message: &'a Message,
    /// The scene's visible messages, oldest first.
    pub messages: Vec<&'a Message>,
}

impl<'a> Scene<'a> {
    /// The scene of break `message_id`: [`PrepareError::Gone`] when the
    /// message is missing or not a visible break,
    /// [`PrepareError::NothingToDo`] when no message of it is visible.
    pub(crate) fn of(chat: &'a Chat, message_id: &str) -> Result<Scene<'a>, PrepareError> {
        let (break_seq, break_message) = visible_break(chat, message_id)?;
        let previous = chat.scene_breaks().range(..break_seq).next_back().copied();
        let messages: Vec<&Message> = chat
            .messages()
            .filter(|(seq, m)| {
                previous.is_none_or(|p| *seq > p)
                    && *seq <= break_seq
                    && !m.hidden
                    && !m.is_thoughts
            })
            .map(|(_, m)| m)
            .collect();
        if messages.is_empty() {
            return Err(PrepareError::NothingToDo(format!(
                "the scene ending at message {message_id:?} has no visible messages"
            )));
        }
        Ok(Scene {
            break_message,
            messages,
        })
    }

    /// `{{scene_messages}}`: one [`scene_line`] per message.
    pub(crate) fn lines(&self) -> String {
        let lines: Vec<String> = self.messages.iter().map(|m| scene_line(m)).collect();
        lines.join("\n")
    }

    /// What reading the scene read: each message's fingerprint, the break's
    /// too (a hidden break is not among the messages, but unhiding it
    /// changes the scene).
    pub(crate) fn read_messages(&self) -> Vec<(String, u64)> {
        let mut read: Vec<(String, u64)> = self
            .messages
            .iter()
            .map(|m| (m.id.as_str().to_owned(), fingerprint(m)))
            .collect();
        if !self.messages.iter().any(|m| m.id == self.break_message.id) {
            read.push((
                self.break_message.id.as_str().to_owned(),
                fingerprint(self.break_message),
            ));
        }
        read
    }

    /// The break's scene recap, when it has a non-empty one.
    pub(crate) fn recap(&self) -> Option<&'a str> {
        self.break_message
            .data()
            .scene_recap_memory
            .as_deref()
            .filter(|r| !r.trim().is_empty())
    }
}
