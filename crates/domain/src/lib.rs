//! Pure rules of ST-Auto-Recap's memory injection, with no transport, runtime
//! or storage in sight: every rule is a plain function over plain data, with
//! its unit tests beside it.
//!
//! - [`ids`]: what a valid chat or message id is.
//! - [`settings`]: the settings, their defaults, validation and merging.
//! - [`message`]: messages, swipes and the per-swipe [`message::MessageData`].
//! - [`chat`]: a chat's transcript and how each event changes it.
//! - [`recaps`]: the versioned running scene recap.
//! - [`autohide`], [`inclusion`], [`template`]: the parts of `refresh_memory`.
//! - [`refresh`]: one refresh, producing an [`refresh::Injection`].
//! - [`prompt`]: prompt assembly with SillyTavern's placement.
//! - [`tokens`]: token counting with tiktoken's vocabularies.
//! - [`footprint`]: how many bytes a chat and its parts hold in memory (the
//!   impls of the domain's own types are in `sizes.rs`, above them all).
//! - [`verbatim`]: what is kept of a SillyTavern chat file without reading
//!   it ([`st_chat`] reads and writes the files).
//! - [`backoff`]: the one back-off policy of every retry.
//! - [`time`]: wall-clock instants as rows store them.
//! - [`jobs`]: the recap jobs recapd runs with an LLM: states, what a job
//!   read, their retry pause; [`writing`]: the instructions each sends an
//!   LLM, their macros and its answers.
//! - [`world_info`]: SillyTavern's World Info (lorebooks): books, activation,
//!   placement; [`lore`]: the lorebook entries recapd writes itself.
//! - [`recall`]: the chat's history cut into passages, searched by keyword
//!   and by vector, and the recall tier it injects.

pub mod autohide;
pub mod backoff;
pub mod chat;
pub mod encoding;
pub mod footprint;
pub mod ids;
pub mod inclusion;
pub mod jobs;
pub mod lore;
pub mod message;
pub mod prompt;
pub mod recall;
pub mod recaps;
pub mod refresh;
pub mod settings;
mod sizes;
pub mod st_chat;
pub mod st_settings;
pub mod template;
pub mod time;
pub mod tokens;
pub mod verbatim;
pub mod world_info;
pub mod writing;

/// Why the domain refused a request. Each variant names the field or the
/// thing involved so that a client can tell what to fix; refusing never
/// changes any state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// A field has a value the rules do not accept.
    #[error("invalid {field}: {reason}")]
    Invalid {
        /// The request field at fault, as spelled in the API.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A chat, message or running-recap version that does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// A message id used twice in one chat.
    #[error("{0} already exists")]
    AlreadyExists(String),
    /// A configured limit (messages per chat, chats, subscribers) is reached.
    #[error("{0}")]
    ResourceExhausted(String),
    /// The request is valid but the state it needs does not hold (no LLM
    /// configured, a job already finished, a break without a scene recap).
    #[error("{0}")]
    FailedPrecondition(String),
}

impl DomainError {
    /// Shorthand for [`DomainError::Invalid`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        DomainError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// Size limits applied to client-supplied text, configurable by the operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest accepted text field (message text, swipe, memory, recap
    /// content, template...), in bytes.
    pub max_text_bytes: usize,
    /// Most messages one chat may hold.
    pub max_messages_per_chat: usize,
    /// Most chats the server keeps.
    pub max_chats: usize,
    /// Most open `Subscribe` streams in all.
    pub max_subscribers: usize,
    /// Most open `Subscribe` streams on one client connection.
    pub max_subscribers_per_connection: usize,
    /// The budget, in bytes, for the estimated memory of chats held in
    /// memory; past it the least recently used chats that nothing pins are
    /// dropped (and read again from the store when next needed). 0: no
    /// budget.
    pub max_resident_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_text_bytes: 1024 * 1024,
            max_messages_per_chat: 1_000_000,
            max_chats: 1_000_000,
            max_subscribers: 100_000,
            max_subscribers_per_connection: 20_000,
            max_resident_bytes: 1 << 30,
        }
    }
}

impl Limits {
    /// Refuses a chat that would hold more than
    /// [`Limits::max_messages_per_chat`] messages.
    pub fn check_chat_size(&self, messages: usize) -> Result<(), DomainError> {
        if messages > self.max_messages_per_chat {
            return Err(DomainError::ResourceExhausted(format!(
                "a chat holds at most {} messages (this event would make {messages})",
                self.max_messages_per_chat
            )));
        }
        Ok(())
    }

    /// Refuses a text field longer than [`Limits::max_text_bytes`]; `field`
    /// (a `&str`, or `format_args!` for a name built from parts) is
    /// formatted only for the error.
    pub fn check_text(&self, field: impl std::fmt::Display, text: &str) -> Result<(), DomainError> {
        if text.len() > self.max_text_bytes {
            return Err(DomainError::invalid(
                field.to_string(),
                format!(
                    "{} bytes is over the maximum of {} bytes",
                    text.len(),
                    self.max_text_bytes
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
