//! Pure rules of ST-Auto-Recap's memory injection, with no transport, runtime
//! or storage in sight: every rule is a plain function over plain data, with
//! its unit tests beside it.
//!
//! The top-level modules are layered: each uses only the modules listed
//! before it here (a lower layer's, or an earlier one of its own layer) and
//! the crate root's [`DomainError`] and [`Limits`], never one listed after
//! it; `scripts/domain-modules.py` prints the graph and fails on any cycle
//! (CI runs it). A new module goes in the lowest layer whose modules it
//! needs. From the bottom:
//!
//! 1. Vocabulary: [`ids`] (what a valid chat or message id is), [`time`]
//!    (wall-clock instants as rows store them), [`backoff`] (the one
//!    back-off policy of every retry), [`footprint`] (how many bytes a value
//!    holds in memory: the trait and its counting rules), [`encoding`],
//!    [`template`], [`verbatim`] (what is kept of a SillyTavern chat file
//!    without reading it).
//! 2. [`settings`]: the settings, their defaults (the default instructions,
//!    entity types and recall template included: a feature reads its
//!    settings, settings never read a feature), validation and merging;
//!    [`profiles`]: a tenant's settings profiles, their bindings and its
//!    groups, and how a chat's settings resolve through them;
//!    [`tokens`]: token counting with tiktoken's vocabularies.
//! 3. Messages and chats: [`message`] (messages, swipes and the per-swipe
//!    [`message::MessageData`]), [`recaps`] (the versioned running scene
//!    recap), [`chat`] (a chat's transcript and how each event changes it).
//! 4. What is read of a chat: [`autohide`], [`inclusion`] (the parts of
//!    `refresh_memory`), [`st_chat`] (SillyTavern's chat files),
//!    [`world_info`] (SillyTavern's World Info: books, activation,
//!    placement).
//! 5. [`jobs`]: the jobs recapd runs with an LLM or the embeddings
//!    endpoint: kinds, states, what a job read and carries (a lore job's
//!    task, [`jobs::lore_data`]), their retry pause, and the one table
//!    from a job kind to its request ([`jobs::JobKind::request`]): a new
//!    job kind is a row there, and the compiler lists what else it needs.
//! 6. [`request`]: the request kernel every LLM request shares, recap or
//!    lore: the prepared request, its token bound, macros, schema building,
//!    answer reading, what an answer is checked against.
//! 7. The requests: [`lore`] (the lorebook entries recapd writes itself:
//!    matching, edits, and the lore jobs' requests and answers) and, above
//!    it, [`writing`] (the recap jobs' requests and answers, and the one
//!    entry point for any job's request: [`writing::prepare()`],
//!    [`writing::parse_answer`]).
//! 8. On top: [`prompt`] (prompt assembly with SillyTavern's placement),
//!    [`refresh`] (one refresh, producing an [`refresh::Injection`]),
//!    [`recall`] (the chat's history cut into passages, searched by keyword
//!    and by vector, and the recall tier it injects), [`st_settings`]
//!    (SillyTavern's settings files), and the [`footprint::Footprint`] of
//!    every domain type (`sizes.rs`, private).

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
pub mod profiles;
pub mod prompt;
pub mod recall;
pub mod recaps;
pub mod refresh;
pub mod request;
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

/// The default of [`Limits::recall_inline_passages`]: a fifth of the
/// 100,000-passage chat whose search `bench/recall.sh` measured at about
/// 3 ms by keyword and 15 ms hybrid on a slow day of a 2-core machine
/// (issue 44 since brought them to about 0.5 and 1.4 ms in process; a
/// search of 20,000 passages still holds the chat's lock for less than a
/// millisecond).
pub const DEFAULT_RECALL_INLINE_PASSAGES: usize = 20_000;

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
    /// The most passages a chat's recall index may hold for its searches
    /// to run under the chat's lock; a longer chat's recall searches run
    /// on a blocking thread instead (its recall tier then answers from its
    /// previous search until the new one is done).
    pub recall_inline_passages: usize,
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
            recall_inline_passages: DEFAULT_RECALL_INLINE_PASSAGES,
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
