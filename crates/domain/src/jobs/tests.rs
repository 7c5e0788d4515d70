use super::*;
use crate::chat::ChatEvent;
use crate::chat::tests::msg;

fn chat_of(texts: &[&str]) -> Chat {
    let mut chat = Chat::default();
    let messages = texts
        .iter()
        .enumerate()
        .map(|(i, text)| msg(&format!("m{i}"), text))
        .collect();
    chat.apply(ChatEvent::ChatChanged(messages))
        .expect("a valid chat");
    chat
}

#[test]
fn terminal_states_are_the_four_ends() {
    let terminal: Vec<_> = JobState::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .collect();
    assert_eq!(
        terminal,
        [
            JobState::Succeeded,
            JobState::Failed,
            JobState::Cancelled,
            JobState::Discarded
        ]
    );
}

#[test]
fn codes_round_trip() {
    for kind in JobKind::ALL {
        assert_eq!(JobKind::from_code(kind.code()), Some(kind));
    }
    for state in JobState::ALL {
        assert_eq!(JobState::from_code(state.code()), Some(state));
    }
    assert_eq!(JobState::from_code(0), None);
}

#[test]
fn clip_cuts_at_a_character_not_a_byte() {
    assert_eq!(clip("héllo", 2), "hé…");
    assert_eq!(clip("héllo", 5), "héllo");
    assert_eq!(clip("", 0), "");
}

#[test]
fn fingerprint_is_stable_across_builds() {
    // FNV-1a of "a": a published test vector.
    assert_eq!(fingerprint_text("a"), 0xaf63_dc4c_8601_ec8c);
}

#[test]
fn an_edit_hide_or_swipe_changes_what_was_read_but_a_new_message_does_not() {
    let mut chat = chat_of(&["one", "two"]);
    let read = ReadSet {
        messages: chat
            .messages()
            .map(|(_, m)| (m.id.to_string(), fingerprint(m)))
            .collect(),
        ..ReadSet::default()
    };
    assert!(messages_unchanged(&read, &chat));
    chat.apply(ChatEvent::MessageSent(msg("m2", "three")))
        .expect("a new message");
    assert!(
        messages_unchanged(&read, &chat),
        "appended messages do not matter"
    );
    let mut edited = chat.clone();
    edited
        .apply(ChatEvent::MessageEdited {
            message_id: "m1".into(),
            text: "changed".into(),
        })
        .expect("an edit");
    assert!(!messages_unchanged(&read, &edited));
    let mut deleted = chat.clone();
    deleted
        .apply(ChatEvent::MessageDeleted {
            message_id: "m0".into(),
        })
        .expect("a delete");
    assert!(!messages_unchanged(&read, &deleted));
}

#[test]
fn backoff_doubles_to_its_cap_and_honours_retry_after() {
    let ms = Duration::from_millis;
    let policy = Backoff::default();
    assert_eq!(retry_pause(&policy, 1, 1.0, None), ms(1000));
    assert_eq!(retry_pause(&policy, 2, 1.0, None), ms(2000));
    assert_eq!(retry_pause(&policy, 3, 1.0, None), ms(4000));
    assert_eq!(retry_pause(&policy, 30, 1.0, None), ms(60_000));
    assert_eq!(retry_pause(&policy, 3, 0.5, None), ms(2000));
    assert_eq!(retry_pause(&policy, 3, 0.0, None), ms(0));
    assert_eq!(retry_pause(&policy, 1, 0.1, Some(ms(5000))), ms(5000));
}
