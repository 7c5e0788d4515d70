//! What a running-recap merge builds on and what it makes.
//!
//! A merge folds the scene recap of one break into the running recap. It
//! builds on the newest version whose scene lies before that break, so
//! merging scenes in order chains the versions, and merging an earlier
//! scene again (the extension's regenerate) starts from the version
//! before that scene, not from the latest one. When the current version
//! already covers later scenes, the new version does not replace it: the
//! later scenes are merged again on top of it, one at a time, and the one
//! that reaches the current version's scene becomes current, so the
//! memory never shrinks to an earlier scene. A regeneration rebuilds the
//! running recap from every scene recap at once (the extension's bulk
//! path), editing the current version.

use crate::chat::Chat;
use crate::message::Message;
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
/// base's + 1 (1 without a base) and `excluded_count` the
/// `running_recap_exclude_latest` setting (`exclude_latest`), which a merge
/// records but does not apply, as the extension's merges do.
pub fn merged_recap(
    base: Option<&RecapVersion>,
    break_id: &str,
    content: String,
    exclude_latest: u32,
) -> NewRecap {
    NewRecap {
        content,
        scene_count: base.map_or(1, |b| b.scene_count.saturating_add(1)),
        excluded_count: exclude_latest,
        prev_scene_message_id: base.and_then(|b| b.new_scene_message_id.clone()),
        new_scene_message_id: Some(break_id.to_owned()),
    }
}

/// Whether the current version covers a scene after break `break_id`: a
/// merge of `break_id` then does not replace it with a version that ends
/// earlier (the memory would shrink); it is kept current while the scenes
/// after `break_id` are merged again on top of the new version
/// ([`rebuild_next`]).
pub fn current_covers_later_scene(chat: &Chat, break_id: &str) -> bool {
    current_scene_after(chat, break_id).is_some()
}

/// The next break to merge again after a merge of `break_id` that the
/// current version covers scenes beyond: the first visible break after
/// `break_id`, up to the current version's scene, that has a scene recap.
/// `None` when the current version ends at or before `break_id` (or names
/// no scene in the chat), or no such break is left.
pub fn rebuild_next(chat: &Chat, break_id: &str) -> Option<String> {
    let (here, last) = current_scene_after(chat, break_id)?;
    chat.scene_breaks()
        .range(here + 1..=last)
        .filter_map(|seq| chat.message_at(*seq))
        .find(|m| m.data().has_scene_recap())
        .map(|m| m.id.as_str().to_owned())
}

/// The positions of `break_id` and of the current version's scene, when
/// the latter comes after the former.
fn current_scene_after(chat: &Chat, break_id: &str) -> Option<(i64, i64)> {
    let (here, _) = chat.message(break_id)?;
    let current = chat.recaps().current()?;
    let (last, _) = chat.message(current.new_scene_message_id.as_deref()?)?;
    (last > here).then_some((here, last))
}

/// The scenes a regeneration of the running recap reads, oldest first: the
/// visible breaks that have a scene recap, without the newest
/// `exclude_latest` of them when there are more than that many (the
/// extension's bulk path holds them back the same way).
pub fn regeneration_scenes(chat: &Chat, exclude_latest: u32) -> Vec<&Message> {
    let mut scenes: Vec<&Message> = chat
        .scene_breaks()
        .iter()
        .filter_map(|seq| chat.message_at(*seq))
        .filter(|m| m.data().has_scene_recap())
        .collect();
    let held_back = usize::try_from(exclude_latest).unwrap_or(usize::MAX);
    if scenes.len() > held_back {
        scenes.truncate(scenes.len() - held_back);
    }
    scenes
}

/// The scene recaps a regeneration sends, in order, each under a
/// `[Scene N: name]` line (`[Scene N]` without a name), separated by a
/// blank line.
pub fn scene_recaps_text(scenes: &[&Message]) -> String {
    let mut text = String::new();
    for (i, scene) in scenes.iter().enumerate() {
        if i > 0 {
            text.push_str("\n\n");
        }
        let data = scene.data();
        match data.scene_break_name.as_deref().filter(|n| !n.is_empty()) {
            Some(name) => text.push_str(&format!("[Scene {}: {name}]\n", i + 1)),
            None => text.push_str(&format!("[Scene {}]\n", i + 1)),
        }
        text.push_str(data.scene_recap_memory.as_deref().unwrap_or(""));
    }
    text
}

/// The version a regeneration adds with the model's `content`: it covers
/// `scenes` (from the chat's start to the last of them), records the
/// setting it held back by as `excluded_count` (the setting, as the
/// extension records it, not the number held back), and becomes current.
pub fn regenerated_recap(scenes: &[&Message], exclude_latest: u32, content: String) -> NewRecap {
    NewRecap {
        content,
        scene_count: u32::try_from(scenes.len()).unwrap_or(u32::MAX),
        excluded_count: exclude_latest,
        prev_scene_message_id: None,
        new_scene_message_id: scenes.last().map(|m| m.id.as_str().to_owned()),
    }
}

#[cfg(test)]
mod tests;
