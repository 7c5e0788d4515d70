use super::*;
use crate::writing::tests::test_chat::chat;

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
