//! Recall: the details a running recap leaves out, found again in the
//! chat's history when the current moment needs them.
//!
//! A chat's history is cut into **chunks** ([`chunk`]): each indexable
//! message's current swipe (long ones cut on sentence boundaries, at most
//! `recall_chunk_chars` characters each), and each scene recap. A chat's
//! [`index::RecallIndex`] holds every chunk twice over: its words for
//! keyword search (BM25, [`keyword`]) and, once an embeddings endpoint
//! has answered for it, its vector ([`vectors`]), searched exactly.
//! [`search`] runs both and weighs them together; [`tier`] turns
//! the best hits into the `auto_recap_recall` injection.
//!
//! A chunk is known by its [`ChunkKey`] (message, source, part) and the
//! fingerprint of what its vector is computed from ([`embedding_input`]:
//! a message's chunk after its speaker's name, a scene recap's as it is):
//! a vector belongs to one text of one chunk, so a vector of an older
//! text (or of the same text under another name) is never used for a
//! newer one.
//!
//! Which messages are indexed: every message that is not hidden by hand
//! and not one of the extension's own memory messages, with a non-empty
//! current swipe, auto-hidden ones included (they are what recall is
//! for: their scenes left the prompt).

pub mod chunk;
pub mod index;
pub mod keyword;
pub mod search;
pub mod tier;
pub mod vectors;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::message::Message;

pub use crate::settings::{DEFAULT_RECALL_TEMPLATE, MAX_CHUNK_CHARS, MIN_CHUNK_CHARS};
pub use index::RecallIndex;
pub use search::{Hit, RecallQuery};

/// The placeholder of the recall template.
pub const RECALL_PLACEHOLDER: &str = "{{recall}}";

/// The most hits one search returns.
pub const MAX_HITS: usize = 100;

/// Where a chunk's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Source {
    /// The message's current swipe.
    Message,
    /// The scene recap the message (a scene break) carries.
    SceneRecap,
}

impl Source {
    /// The code rows store.
    pub fn code(self) -> i64 {
        match self {
            Source::Message => 0,
            Source::SceneRecap => 1,
        }
    }

    /// The source of a stored code.
    pub fn from_code(code: i64) -> Option<Source> {
        match code {
            0 => Some(Source::Message),
            1 => Some(Source::SceneRecap),
            _ => None,
        }
    }
}

/// One chunk of a chat's history: the message it comes from, which of the
/// message's texts, and which part of that text (0 for the first).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    /// The message (for a scene recap, the scene-break message).
    pub message_id: CompactString,
    /// Which of its texts.
    pub source: Source,
    /// Which part of that text.
    pub part: u32,
}

/// A chunk's vector as stored: for the chunk's text with `fingerprint`,
/// as the embeddings model `model` gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredVector {
    /// The chunk.
    pub key: ChunkKey,
    /// [`input_fingerprint`] of the chunk.
    pub fingerprint: u64,
    /// The model that computed it.
    pub model: String,
    /// The vector, as the model gave it (the index normalises its copy).
    pub vector: Vec<f32>,
}

// Vectors hold finite numbers only (the embeddings client refuses any
// other answer, and a store reads back what was written), so equality is
// an equivalence.
impl Eq for StoredVector {}

/// The speaker a chunk of `message`'s text of `source` is embedded after:
/// the message's name (trimmed; `None` when blank) for its own text, `None`
/// for the scene recap it carries (a narration of the scene, no one's
/// line).
pub fn speaker(message: &Message, source: Source) -> Option<&str> {
    match source {
        Source::Message => Some(message.name.trim()).filter(|name| !name.is_empty()),
        Source::SceneRecap => None,
    }
}

/// What a chunk's vector is computed from: `"{speaker}: {chunk}"`, or the
/// chunk alone without a speaker. Chat lines are short and a question
/// names who it is about ("what did Mira find at the inn?"): with the
/// name, the embeddings model places the line near questions about its
/// speaker (on LoCoMo, all-MiniLM-L6-v2's vector ranking alone finds a
/// question's evidence in its top 5 for 37% of the questions with it, 27%
/// without).
pub fn embedding_input(speaker: Option<&str>, chunk: &str) -> String {
    match speaker {
        Some(name) => format!("{name}: {chunk}"),
        None => chunk.to_owned(),
    }
}

/// [`crate::jobs::fingerprint_text`] of [`embedding_input`], without
/// building it: a vector is kept only for the input it was computed from.
pub fn input_fingerprint(speaker: Option<&str>, chunk: &str) -> u64 {
    match speaker {
        Some(name) => crate::jobs::fingerprint_parts(&[name, ": ", chunk]),
        None => crate::jobs::fingerprint_text(chunk),
    }
}

/// Whether a message's text is indexed (see the module documentation).
pub fn indexable(message: &Message) -> bool {
    !message.hidden
        && message.data().is_auto_recap_system_memory != Some(true)
        && !message.text().trim().is_empty()
}

#[cfg(test)]
mod tests;
