//! SillyTavern chat files (JSONL) in and out: the first line holds the
//! chat's metadata, with ST-Auto-Recap's running-recap versions under
//! `chat_metadata.auto_recap_running_scene_recaps`; each further line is a
//! message, its swipes, and ST-Auto-Recap's per-message data under
//! `extra.auto_recap_memory` (per swipe under `swipe_info[i].extra`).
//!
//! SillyTavern messages have no ids: a message's id is `m<index>`, its
//! position in the file (`m0` is the first message), unless its `extra`
//! carries another in `recapd_message_id` (what an export writes for a
//! message made through the API under another id); the running-recap
//! versions' scene indices become those ids. An explicit id wins: a
//! message whose id from its position is another message's
//! `recapd_message_id` (SillyTavern appends messages after an export
//! wrote `m<N>` on an earlier line) gets a fresh id, reported as a
//! warning; an explicit id used twice refuses the file, naming both lines.
//!
//! `chat_metadata.world_info` and `chat_metadata.timedWorldInfo`, the
//! chat's SillyTavern World Info state, are read apart ([`world_info`]):
//! recapd keeps them in the chat's settings and row, not in the chat, and
//! an export writes back what those hold.
//!
//! Everything recapd does not interpret is kept as the file had it, at
//! every level ([`verbatim`]), and written back in place on export, so a
//! file imported without warnings exports JSON-equal line by line.
//!
//! Reading follows what SillyTavern and the extension really write rather
//! than refusing it: a leading byte-order mark is skipped, a file whose
//! first line is already a message (older group chats and their backups)
//! has no header, `swipe_id` may equal the number of swipes (the message's
//! text is then a swipe being generated), and running-recap versions with a
//! scene index past the last message or a number used twice are repaired
//! and reported as warnings, one `line N: ...` each.

use std::sync::Arc;

use super::autohide::auto_hide;
use super::chat::Chat;
use super::message::Message;
use super::recaps::RecapVersion;
use verbatim::StFile;
use world_info::ChatWorldInfo;

/// The namespace of ST-Auto-Recap's per-message data.
const DATA_KEY: &str = "auto_recap_memory";
/// The metadata key of ST-Auto-Recap's running-recap versions.
const RECAPS_KEY: &str = "auto_recap_running_scene_recaps";
/// The `chat_metadata` member of a SillyTavern branch or checkpoint file
/// naming the chat it was made from.
const MAIN_CHAT_KEY: &str = "main_chat";
/// The `extra` key holding the id of a message whose id is not `m<index>`.
const ID_KEY: &str = "recapd_message_id";

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
    /// How the file began: its header's members recapd keeps, or none.
    pub file: StFile,
    /// The chat's World Info state (`chat_metadata.world_info` and
    /// `timedWorldInfo`), for the chat's settings and row; not part of the
    /// chat ([`ImportedChat::into_chat`] leaves it).
    pub world_info: ChatWorldInfo,
    /// `chat_metadata.main_chat` when it is a non-empty string: the chat
    /// SillyTavern made this one from (a branch or checkpoint file), for
    /// the chat's row. The member stays in the file's metadata as written.
    pub parent: Option<String>,
}

impl ImportedChat {
    /// The chat the file holds, its messages moved rather than copied (a
    /// large import must not hold two copies of its text).
    ///
    /// `is_system` inside the prefix the extension's auto-hide hides (from
    /// the file's visible scene breaks and `auto_hide_scene_count`, the
    /// chat's effective setting) is taken for that auto-hide, not a hide
    /// made by hand: those messages are not hidden by hand, so they show
    /// again when the count or the breaks change, as in the extension.
    pub fn into_chat(self, auto_hide_scene_count: u32) -> Chat {
        let mut chat = Chat::from_parts(self.messages, self.recaps, self.current);
        chat.set_st_file(Some(Arc::new(self.file)));
        let hidden = auto_hide(&chat, auto_hide_scene_count);
        chat.unhide_first(hidden.count);
        chat
    }
}

/// The message id of position `index`.
pub fn message_id(index: usize) -> String {
    format!("m{index}")
}

mod read;
mod read_header;
mod read_message;
pub use crate::verbatim;
pub mod world_info;
mod write;

pub use read::{ChatReader, parse_st_chat, parse_st_chat_bytes};
pub use write::{st_chat_lines, st_chat_lines_of, write_st_chat};

#[cfg(test)]
mod tests;
