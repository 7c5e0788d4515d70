//! SillyTavern chat files (JSONL) in and out: the first line holds the
//! chat's metadata, with ST-Auto-Recap's running-recap versions under
//! `chat_metadata.auto_recap_running_scene_recaps`; each further line is a
//! message, its swipes, and ST-Auto-Recap's per-message data under
//! `extra.auto_recap_memory` (per swipe under `swipe_info[i].extra`).
//!
//! SillyTavern messages have no ids: a message's id is `m<index>`, its
//! position in the file (`m0` is the first message), and the running-recap
//! versions' scene indices become those ids.
//!
//! Reading follows what SillyTavern and the extension really write rather
//! than refusing it: a leading byte-order mark is skipped, a file whose
//! first line is already a message (older group chats and their backups)
//! has no header, `swipe_id` may equal the number of swipes (the message's
//! text is then a swipe being generated), and running-recap versions with a
//! scene index past the last message or a number used twice are repaired
//! and reported as warnings, one `line N: ...` each.

use super::chat::Chat;
use super::message::Message;
use super::recaps::RecapVersion;

/// The namespace of ST-Auto-Recap's per-message data.
const DATA_KEY: &str = "auto_recap_memory";
/// The metadata key of ST-Auto-Recap's running-recap versions.
const RECAPS_KEY: &str = "auto_recap_running_scene_recaps";

/// A chat read from a file.
#[derive(Debug, Clone)]
pub struct ImportedChat {
    /// The messages, in order, with their position keys.
    pub messages: Vec<(i64, Message)>,
    /// The running-recap versions.
    pub recaps: Vec<RecapVersion>,
    /// The current version, as the file names it (it may name no version).
    pub current: Option<u32>,
    /// What was repaired while reading, one `line N: what` each, in file
    /// order; empty for a file read as written.
    pub warnings: Vec<String>,
}

impl ImportedChat {
    /// The chat the file holds, its messages moved rather than copied (a
    /// large import must not hold two copies of its text).
    pub fn into_chat(self) -> Chat {
        Chat::from_parts(self.messages, self.recaps, self.current)
    }
}

/// The message id of position `index`.
pub fn message_id(index: usize) -> String {
    format!("m{index}")
}

mod read;
mod write;

pub use read::{ChatReader, parse_st_chat, parse_st_chat_bytes};
pub use write::{st_chat_lines, write_st_chat};

#[cfg(test)]
mod tests;
