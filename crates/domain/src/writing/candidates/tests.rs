use super::*;
use crate::writing::tests::test_chat::{chat as test_chat, settings};

fn indexes(c: &Candidates) -> Vec<usize> {
    c.list.iter().map(|c| c.index).collect()
}

fn eligible(c: &Candidates) -> Vec<usize> {
    c.list
        .iter()
        .filter(|c| c.eligible)
        .map(|c| c.index)
        .collect()
}

#[test]
fn the_newest_offset_candidates_are_not_eligible() {
    let chat = test_chat(12).build();
    let c = detection_candidates(&chat, &settings(3, 4));
    assert_eq!(indexes(&c), (0..12).collect::<Vec<_>>());
    assert_eq!(eligible(&c), (0..9).collect::<Vec<_>>());
    assert_eq!(c.eligible_count(), 9);
    assert_eq!(c.earliest_allowed_break, Some(4));
    assert_eq!(c.newest().map(|c| c.message_id.as_str()), Some("m11"));
}

#[test]
fn offset_zero_makes_every_candidate_eligible_and_a_large_one_none() {
    let chat = test_chat(5).build();
    assert_eq!(
        detection_candidates(&chat, &settings(0, 2)).eligible_count(),
        5
    );
    assert_eq!(
        detection_candidates(&chat, &settings(5, 2)).eligible_count(),
        0
    );
    assert_eq!(
        detection_candidates(&chat, &settings(50, 2)).eligible_count(),
        0
    );
}

#[test]
fn candidates_start_after_the_last_visible_break_only() {
    // m3 is a visible break, m7 a break hidden from view: the open
    // scene starts after m3 and m7 is an ordinary candidate.
    let chat = test_chat(12).breaks(&[3]).invisible_breaks(&[7]).build();
    let c = detection_candidates(&chat, &settings(0, 1));
    assert_eq!(indexes(&c), (4..12).collect::<Vec<_>>());
}

#[test]
fn hidden_and_thought_messages_are_skipped_but_keep_their_chat_index() {
    let chat = test_chat(10).hidden(&[2, 5]).thoughts(&[6]).build();
    let c = detection_candidates(&chat, &settings(2, 3));
    assert_eq!(indexes(&c), [0, 1, 3, 4, 7, 8, 9]);
    assert_eq!(eligible(&c), [0, 1, 3, 4, 7]);
    // Candidate number 3 (0-based) is chat index 4.
    assert_eq!(c.earliest_allowed_break, Some(4));
    assert!(c.valid_break(4).is_some());
    assert!(c.valid_break(5).is_none(), "hidden: not a candidate");
    assert!(c.valid_break(6).is_none(), "a thought: not a candidate");
}

#[test]
fn auto_hidden_messages_are_not_candidates() {
    // With auto-hide keeping 1 scene, everything through the last
    // visible break is auto-hidden; the candidates are only after it.
    let chat = test_chat(8).breaks(&[2, 4]).build();
    let mut s = settings(0, 1);
    s.inclusion.auto_hide_scene_count = 1;
    assert_eq!(indexes(&detection_candidates(&chat, &s)), [5, 6, 7]);
    s.inclusion.auto_hide_scene_count = 0;
    assert_eq!(indexes(&detection_candidates(&chat, &s)), [5, 6, 7]);
}

#[test]
fn earliest_is_none_without_enough_candidates() {
    let chat = test_chat(4).build();
    let c = detection_candidates(&chat, &settings(0, 4));
    assert_eq!(c.earliest_allowed_break, None);
    assert!(c.valid_break(3).is_none());
    assert_eq!(c.valid_breaks().count(), 0);
    let c = detection_candidates(&chat, &settings(0, 3));
    assert_eq!(c.earliest_allowed_break, Some(3));
}

#[test]
fn ready_needs_min_plus_one_eligible_candidates() {
    // offset 2, min 3: ready at 3 + 1 + 2 = 6 candidates.
    let s = settings(2, 3);
    let five_chat = test_chat(5).build();
    let five = detection_candidates(&five_chat, &s);
    assert!(!five.ready(&s));
    assert!(!detection_ready(&five_chat, &s));
    assert_eq!(five.valid_breaks().count(), 0);
    let six_chat = test_chat(6).build();
    let six = detection_candidates(&six_chat, &s);
    assert!(six.ready(&s));
    assert!(detection_ready(&six_chat, &s));
    let hidden = test_chat(6).hidden(&[0]).build();
    assert!(!detection_ready(&hidden, &s));
    let valid: Vec<usize> = six.valid_breaks().map(|c| c.index).collect();
    assert_eq!(valid, [3]);
}

#[test]
fn a_valid_break_is_eligible_and_not_before_the_earliest() {
    let chat = test_chat(12).build();
    let c = detection_candidates(&chat, &settings(3, 4));
    assert!(c.valid_break(3).is_none(), "before the earliest");
    assert_eq!(c.valid_break(4).map(|c| c.message_id.as_str()), Some("m4"));
    assert!(c.valid_break(8).is_some(), "the newest eligible");
    assert!(c.valid_break(9).is_none(), "within the offset");
    assert!(c.valid_break(12).is_none(), "past the end");
    assert!(c.valid_break(usize::MAX).is_none());
}

#[test]
fn keep_newest_keeps_eligibility_and_the_whole_scenes_earliest() {
    let chat = test_chat(12).build();
    let c = detection_candidates(&chat, &settings(3, 4)).keep_newest(5);
    assert_eq!(indexes(&c), [7, 8, 9, 10, 11]);
    assert_eq!(eligible(&c), [7, 8]);
    assert_eq!(c.earliest_allowed_break, Some(4));
    assert!(c.valid_break(7).is_some());
    assert!(c.valid_break(4).is_none(), "dropped from the prompt");
}
