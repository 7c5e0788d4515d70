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
        merged_recap(base, "m5", "new".into(), 1),
        NewRecap {
            content: "new".into(),
            scene_count: 5,
            excluded_count: 1,
            prev_scene_message_id: Some("m2".into()),
            new_scene_message_id: Some("m5".into()),
        }
    );
    assert_eq!(
        merged_recap(None, "m2", "first".into(), 1),
        NewRecap {
            content: "first".into(),
            scene_count: 1,
            excluded_count: 1,
            prev_scene_message_id: None,
            new_scene_message_id: Some("m2".into()),
        }
    );
}

/// Breaks at m2, m5 and m8, each with a scene recap.
fn three_scenes() -> crate::writing::tests::test_chat::Builder {
    chat(10)
        .breaks(&[2, 5, 8])
        .scene_recap(2, "They meet.")
        .scene_recap(5, "They race.")
        .scene_recap(8, "They part.")
}

#[test]
fn a_merge_of_an_older_scene_goes_on_to_the_scenes_after_it() {
    // The current version ends at m8: merging m2 again must not leave the
    // memory at m2; m5, then m8, are merged again on top.
    let c = three_scenes().recap("all three", Some(8), 3).build();
    assert!(current_covers_later_scene(&c, "m2"));
    assert_eq!(rebuild_next(&c, "m2").as_deref(), Some("m5"));
    assert_eq!(rebuild_next(&c, "m5").as_deref(), Some("m8"));
    assert_eq!(
        rebuild_next(&c, "m8"),
        None,
        "the current version's own scene"
    );
    assert!(!current_covers_later_scene(&c, "m8"));
    // Scenes without a recap are skipped.
    let c = chat(10)
        .breaks(&[2, 5, 8])
        .scene_recap(2, "They meet.")
        .scene_recap(8, "They part.")
        .recap("all", Some(8), 2)
        .build();
    assert_eq!(rebuild_next(&c, "m2").as_deref(), Some("m8"));
    // A current version that names no scene covers none.
    let c = three_scenes().recap("by hand", None, 1).build();
    assert!(!current_covers_later_scene(&c, "m2"));
}

#[test]
fn a_regeneration_holds_back_the_newest_scenes_only_when_there_are_more() {
    let c = three_scenes().build();
    let ids = |scenes: Vec<&crate::message::Message>| -> Vec<String> {
        scenes.iter().map(|m| m.id.to_string()).collect()
    };
    assert_eq!(ids(regeneration_scenes(&c, 1)), ["m2", "m5"]);
    assert_eq!(ids(regeneration_scenes(&c, 0)), ["m2", "m5", "m8"]);
    assert_eq!(ids(regeneration_scenes(&c, 2)), ["m2"]);
    // Three scenes, three held back: not more than that many, so all read.
    assert_eq!(ids(regeneration_scenes(&c, 3)), ["m2", "m5", "m8"]);
    let scenes = regeneration_scenes(&c, 1);
    assert_eq!(
        scene_recaps_text(&scenes),
        "[Scene 1]\nThey meet.\n\n[Scene 2]\nThey race."
    );
    assert_eq!(
        regenerated_recap(&scenes, 1, "rebuilt".into()),
        NewRecap {
            content: "rebuilt".into(),
            scene_count: 2,
            excluded_count: 1,
            prev_scene_message_id: None,
            new_scene_message_id: Some("m5".into()),
        }
    );
}
