//! From a lore job to the request it sends (H2).

use crate::chat::Chat;
use crate::jobs::{JobKind, ReadSet};
use crate::settings::Settings;
use crate::world_info::book::Book;
use crate::writing::{PrepareError, Prepared};

use super::LoreTask;

/// What a lore job's request is built from besides the chat: the job's
/// task and the chat's lorebook as it is now.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoreInput<'a> {
    /// The job's task (`None` for an extraction).
    pub task: Option<&'a LoreTask>,
    /// The chat's lorebook; `None` before it exists.
    pub book: Option<&'a Book>,
    /// The book's name.
    pub book_name: &'a str,
}

/// The request of lore job `kind` on break `message_id`.
pub fn prepare(
    kind: JobKind,
    chat: &Chat,
    settings: &Settings,
    message_id: &str,
    lore: &LoreInput<'_>,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Result<Prepared, PrepareError> {
    todo!(
        "H2: {kind:?} {} {message_id} {lore:?} {}",
        chat.len(),
        count_tokens(&settings.lore_extract_prompt)
    )
}

/// Whether the scene a lore job read is unchanged (its messages are
/// already compared by the caller): for an extraction, also the scene
/// recap it read.
pub fn scene_unchanged(read: &ReadSet, chat: &Chat, message_id: &str) -> bool {
    todo!("H2: {read:?} {} {message_id}", chat.len())
}
