//! Tests of the chat rules; `msg` and `ids` are shared with other domain tests.

use super::*;
use crate::Limits;
use crate::message::MessageData;
use crate::message::NewMessage;
use crate::time::UnixMillis;

pub(crate) fn msg(id: &str, text: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: text.into(),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

pub(crate) fn ids(chat: &Chat) -> Vec<String> {
    chat.messages().map(|(_, m)| m.id.to_string()).collect()
}

fn chat_of(list: &[&str]) -> Chat {
    let mut chat = Chat::default();
    chat.apply(ChatEvent::ChatChanged(
        list.iter().map(|id| msg(id, id)).collect(),
    ))
    .unwrap();
    chat
}

#[test]
fn sent_and_received_append_and_more_loaded_prepends_in_order() {
    let mut chat = chat_of(&["b"]);
    chat.apply(ChatEvent::MessageSent(msg("c", "hi"))).unwrap();
    chat.apply(ChatEvent::MessageReceived(msg("d", "yo")))
        .unwrap();
    chat.apply(ChatEvent::MoreMessagesLoaded(vec![
        msg("x", ""),
        msg("a", ""),
    ]))
    .unwrap();
    assert_eq!(ids(&chat), ["x", "a", "b", "c", "d"]);
}

#[test]
fn a_message_id_used_twice_is_already_exists_and_changes_nothing() {
    let mut chat = chat_of(&["a", "b"]);
    let err = chat
        .apply(ChatEvent::MessageSent(msg("a", "")))
        .unwrap_err();
    assert!(matches!(err, DomainError::AlreadyExists(_)));
    let err = chat
        .apply(ChatEvent::MoreMessagesLoaded(vec![
            msg("z", ""),
            msg("b", ""),
        ]))
        .unwrap_err();
    assert!(matches!(err, DomainError::AlreadyExists(_)));
    let err = chat
        .apply(ChatEvent::ChatChanged(vec![msg("q", ""), msg("q", "")]))
        .unwrap_err();
    assert!(matches!(err, DomainError::AlreadyExists(_)));
    assert_eq!(ids(&chat), ["a", "b"]);
}

#[test]
fn chat_changed_keeps_known_data_takes_new_text_and_the_lists_order() {
    let mut chat = chat_of(&["a", "b", "c"]);
    chat.set_message_data(
        "b",
        &MessageData {
            memory: Some("recap of b".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let changes = chat
        .apply(ChatEvent::ChatChanged(vec![
            msg("b", "new b"),
            msg("n", ""),
            msg("a", ""),
        ]))
        .unwrap();
    assert_eq!(ids(&chat), ["b", "n", "a"]);
    assert_eq!(changes.messages_removed, BTreeSet::from(["c".to_owned()]));
    let (_, b) = chat.message("b").unwrap();
    assert_eq!(b.text(), "new b");
    assert_eq!(b.data().memory.as_deref(), Some("recap of b"));
    // An empty list only opens the chat.
    chat.apply(ChatEvent::ChatChanged(vec![])).unwrap();
    assert_eq!(ids(&chat), ["b", "n", "a"]);
}

#[test]
fn edit_changes_the_current_swipe_text_and_unknown_ids_are_not_found() {
    let mut chat = chat_of(&["a"]);
    chat.apply(ChatEvent::MessageEdited {
        message_id: "a".into(),
        text: "edited".into(),
    })
    .unwrap();
    assert_eq!(chat.message("a").unwrap().1.text(), "edited");
    for event in [
        ChatEvent::MessageEdited {
            message_id: "zz".into(),
            text: String::new(),
        },
        ChatEvent::MessageDeleted {
            message_id: "zz".into(),
        },
        ChatEvent::MessageSwiped {
            message_id: "zz".into(),
            swipe_id: 0,
            text: String::new(),
        },
    ] {
        assert!(matches!(chat.apply(event), Err(DomainError::NotFound(_))));
    }
}

#[test]
fn a_new_swipe_copies_the_data_but_the_memory_and_old_swipes_keep_theirs() {
    let mut chat = chat_of(&["a"]);
    let data = MessageData {
        memory: Some("first".into()),
        exclude: Some(true),
        scene_break: Some(true),
        scene_recap_memory: Some("scene".into()),
        ..Default::default()
    };
    chat.set_message_data("a", &data).unwrap();
    let swipe = |id: u32, text: &str| ChatEvent::MessageSwiped {
        message_id: "a".into(),
        swipe_id: id,
        text: text.into(),
    };
    chat.apply(swipe(1, "second")).unwrap();
    assert_eq!(
        chat.message_data("a").unwrap(),
        &MessageData {
            exclude: Some(false),
            edited: Some(false),
            scene_break: Some(true),
            scene_recap_memory: Some("scene".into()),
            scene_recap_versions: Some(vec!["scene".into()]),
            scene_recap_current_index: Some(0),
            ..Default::default()
        }
    );
    assert_eq!(chat.message("a").unwrap().1.text(), "second");
    assert_eq!(chat.scene_breaks().len(), 1, "the scene break carries over");
    chat.apply(swipe(0, "")).unwrap();
    let mut first = MessageData::default();
    first.merge(&data).unwrap();
    assert_eq!(chat.message_data("a").unwrap(), &first);
    assert_eq!(chat.message("a").unwrap().1.text(), "a");
    let err = chat.apply(swipe(5, "")).unwrap_err();
    assert!(err.to_string().contains("swipe_id"), "{err}");
}

#[test]
fn scene_breaks_track_the_current_swipe() {
    let mut chat = chat_of(&["a", "b"]);
    let brk = MessageData {
        scene_break: Some(true),
        ..Default::default()
    };
    chat.set_message_data("b", &brk).unwrap();
    assert_eq!(chat.scene_breaks().len(), 1);
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "b".into(),
        swipe_id: 1,
        text: "other".into(),
    })
    .unwrap();
    let unbreak = MessageData {
        scene_break: Some(false),
        ..Default::default()
    };
    chat.set_message_data("b", &unbreak).unwrap();
    assert!(chat.scene_breaks().is_empty());
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "b".into(),
        swipe_id: 0,
        text: String::new(),
    })
    .unwrap();
    assert_eq!(chat.scene_breaks().len(), 1, "swipe 0 is still a break");
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "b".into(),
        swipe_id: 1,
        text: String::new(),
    })
    .unwrap();
    assert!(chat.scene_breaks().is_empty());
    chat.apply(ChatEvent::MessageDeleted {
        message_id: "a".into(),
    })
    .unwrap();
    assert_eq!(ids(&chat), ["b"]);
}

#[test]
fn deleting_a_scene_message_deletes_the_versions_that_need_it() {
    let mut chat = chat_of(&["s1", "s2", "x"]);
    let scene = MessageData {
        scene_recap_memory: Some("scene recap".into()),
        ..Default::default()
    };
    chat.set_message_data("s1", &scene).unwrap();
    let add = |chat: &mut Chat, scene: Option<&str>| {
        chat.add_recap(
            NewRecap {
                content: "c".into(),
                new_scene_message_id: scene.map(str::to_owned),
                ..Default::default()
            },
            UnixMillis(0),
        )
        .unwrap()
        .0
    };
    let keep_unreferenced = add(&mut chat, None);
    let keep_s1 = add(&mut chat, Some("s1"));
    let lose_no_recap = add(&mut chat, Some("s2"));
    let lose_deleted = add(&mut chat, Some("x"));
    let changes = chat
        .apply(ChatEvent::MessageDeleted {
            message_id: "x".into(),
        })
        .unwrap();
    assert_eq!(
        changes.recaps_removed,
        BTreeSet::from([lose_no_recap, lose_deleted])
    );
    let left: Vec<u32> = chat.recaps().versions().map(|v| v.version).collect();
    assert_eq!(left, [keep_unreferenced, keep_s1]);
    assert_eq!(chat.recaps().current_version(), Some(keep_s1));
}

#[test]
fn adding_a_recap_for_an_unknown_scene_message_is_not_found() {
    let mut chat = chat_of(&["a"]);
    let err = chat
        .add_recap(
            NewRecap {
                prev_scene_message_id: Some("nope".into()),
                ..Default::default()
            },
            UnixMillis(0),
        )
        .unwrap_err();
    assert!(matches!(err, DomainError::NotFound(_)));
    assert_eq!(chat.recaps().versions().count(), 0);
}

#[test]
fn from_parts_restores_order_and_scene_breaks() {
    let mut chat = chat_of(&["a", "b", "c"]);
    chat.set_message_data(
        "c",
        &MessageData {
            scene_break: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    let rows: Vec<(i64, Message)> = chat.messages().rev().map(|(s, m)| (s, m.clone())).collect();
    let back = Chat::from_parts(rows, vec![], None);
    assert_eq!(ids(&back), ["a", "b", "c"]);
    assert_eq!(back.scene_breaks(), chat.scene_breaks());
}

#[test]
fn count_through_stays_right_as_the_chat_changes() {
    let mut chat = chat_of(&["a", "b", "c", "d"]);
    let (seq_c, _) = chat.message("c").unwrap();
    assert_eq!(chat.count_through(seq_c), 3);
    chat.apply(ChatEvent::MessageSent(msg("e", ""))).unwrap();
    assert_eq!(chat.count_through(seq_c), 3, "appends keep the prefix");
    chat.apply(ChatEvent::MoreMessagesLoaded(vec![msg("z", "")]))
        .unwrap();
    assert_eq!(chat.count_through(seq_c), 4);
    chat.apply(ChatEvent::MessageDeleted {
        message_id: "a".into(),
    })
    .unwrap();
    assert_eq!(chat.count_through(seq_c), 3);
    chat.apply(ChatEvent::ChatChanged(vec![msg("c", ""), msg("x", "")]))
        .unwrap();
    let (seq_c, _) = chat.message("c").unwrap();
    assert_eq!(chat.count_through(seq_c), 1);
}

#[test]
fn messages_after_a_position_carry_their_index_in_the_whole_chat() {
    let chat = chat_of(&["a", "b", "c", "d"]);
    let (seq_b, _) = chat.message("b").unwrap();
    let after: Vec<(usize, &str)> = chat
        .messages_after(Some(seq_b))
        .map(|(i, _, m)| (i, m.id.as_str()))
        .collect();
    assert_eq!(after, [(2, "c"), (3, "d")]);
    assert_eq!(chat.messages_after(None).count(), 4);
    let (seq_d, _) = chat.message("d").unwrap();
    assert_eq!(chat.messages_after(Some(seq_d)).count(), 0);
}
