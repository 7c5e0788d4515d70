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
mod tests {
    use super::*;
    use crate::writing::test_chat::chat;

    fn base_content<'a>(c: &'a Chat, break_id: &str) -> Option<&'a str> {
        merge_base(c, break_id).map(|v| v.content.as_str())
    }

    #[test]
    fn the_base_is_the_newest_version_of_an_earlier_scene() {
        // Breaks at m2, m5, m8; versions 0 (scene m2), 1 (scene m5).
        let c = chat(10)
            .breaks(&[2, 5, 8])
            .recap("after m2", Some(2), 1)
            .recap("after m5", Some(5), 2)
            .build();
        assert_eq!(base_content(&c, "m8"), Some("after m5"));
        assert_eq!(base_content(&c, "m5"), Some("after m2"), "merging m5 again");
        assert_eq!(base_content(&c, "m2"), None, "the first scene");
        assert_eq!(base_content(&c, "gone"), None);
    }

    #[test]
    fn a_regenerated_version_wins_over_an_older_one_of_the_same_scene() {
        let c = chat(10)
            .breaks(&[2, 5])
            .recap("first try", Some(2), 1)
            .recap("after m5", Some(5), 2)
            .recap("second try", Some(2), 1)
            .build();
        assert_eq!(merge_base(&c, "m5").map(|v| v.version), Some(2));
        // For m9 (after both), the highest number is the regenerated m2
        // version, even though its scene is older than m5's.
        assert_eq!(base_content(&c, "m9"), Some("second try"));
    }

    #[test]
    fn versions_without_a_scene_are_never_a_base() {
        let c = chat(6).breaks(&[2]).recap("by hand", None, 3).build();
        assert_eq!(merge_base(&c, "m5"), None);
    }

    #[test]
    fn a_merge_chains_onto_its_base() {
        let c = chat(10)
            .breaks(&[2, 5])
            .recap("after m2", Some(2), 4)
            .build();
        let base = merge_base(&c, "m5");
        assert_eq!(
            merged_recap(base, "m5", "new".into()),
            NewRecap {
                content: "new".into(),
                scene_count: 5,
                excluded_count: 0,
                prev_scene_message_id: Some("m2".into()),
                new_scene_message_id: Some("m5".into()),
            }
        );
        assert_eq!(
            merged_recap(None, "m2", "first".into()),
            NewRecap {
                content: "first".into(),
                scene_count: 1,
                excluded_count: 0,
                prev_scene_message_id: None,
                new_scene_message_id: Some("m2".into()),
            }
        );
    }
}
