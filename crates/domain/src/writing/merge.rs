//! What a running-recap merge builds on and what it makes.
//!
//! A merge folds the scene recap of one break into the running recap. It
//! builds on the newest version whose scene lies before that break, so
//! merging scenes in order chains the versions, and merging an earlier
//! scene again (the extension's regenerate) starts from the version
//! before that scene, not from the latest one. Either way the new version
//! becomes current.

use crate::chat::Chat;
use crate::recaps::{NewRecap, RecapVersion};

/// The version a merge of break `break_id` builds on: the newest (highest
/// version number) whose `new_scene_message_id` names a message before
/// `break_id` in the chat. `None` when there is none, when `break_id` is
/// not in the chat, or when every version names no scene or a message
/// that is gone (such versions are never a base).
pub fn merge_base<'a>(chat: &'a Chat, break_id: &str) -> Option<&'a RecapVersion> {
    let (break_seq, _) = chat.message(break_id)?;
    chat.recaps()
        .versions()
        .filter(|v| {
            v.new_scene_message_id
                .as_deref()
                .and_then(|id| chat.message(id))
                .is_some_and(|(seq, _)| seq < break_seq)
        })
        .max_by_key(|v| v.version)
}

/// The new version a merge of break `break_id` adds with the model's
/// `content`: `prev_scene_message_id` is the base's scene (none without a
/// base), `new_scene_message_id` is `break_id`, `scene_count` is the
/// base's + 1 (1 without a base) and `excluded_count` is 0.
pub fn merged_recap(base: Option<&RecapVersion>, break_id: &str, content: String) -> NewRecap {
    NewRecap {
        content,
        scene_count: base.map_or(1, |b| b.scene_count.saturating_add(1)),
        excluded_count: 0,
        prev_scene_message_id: base.and_then(|b| b.new_scene_message_id.clone()),
        new_scene_message_id: Some(break_id.to_owned()),
    }
}

#[cfg(test)]
mod tests;
