//! A chat's stored transcript as prompt history, and history entries linked
//! to stored messages.

use crate::Limits;
use crate::chat::ChatEvent;
use crate::inclusion::compute_inclusion;
use crate::message::{MessageData, NewMessage};
use crate::prompt::*;
use crate::settings::Settings;

fn stored(id: &str, name: &str, text: &str, edit: impl FnOnce(&mut NewMessage)) -> Message {
    let mut new = NewMessage {
        id: id.into(),
        name: name.into(),
        text: text.into(),
        ..Default::default()
    };
    edit(&mut new);
    new.build("message", &Limits::default()).unwrap()
}

fn set_break(chat: &mut Chat, id: &str) {
    let data = MessageData {
        scene_break: Some(true),
        ..Default::default()
    };
    chat.set_message_data(id, &data).unwrap();
}

/// u0 Ann, a1 Bob (two swipes, the second current), n2 narrator, h3 hidden
/// by hand, u4 Ann (a user's narrator message), a5 Bob (a thought), u6 Ann;
/// scene breaks on a1 and u4.
fn chat() -> Chat {
    let mut chat = Chat::default();
    let messages = vec![
        stored("u0", "Ann", "Hello", |m| m.is_user = true),
        stored("a1", "Bob", "", |m| {
            m.swipes = vec!["Hi (first swipe)".into(), "Hi Ann".into()];
            m.swipe_id = 1;
        }),
        stored("n2", "Narrator", "Night falls.", |m| m.is_narrator = true),
        stored("h3", "Bob", "(hidden by hand)", |m| m.hidden = true),
        stored("u4", "Ann", "The next day.", |m| {
            m.is_user = true;
            m.is_narrator = true;
        }),
        stored("a5", "Bob", "Bob thinks.", |m| m.is_thoughts = true),
        stored("u6", "Ann", "Bye", |m| m.is_user = true),
    ];
    chat.apply(ChatEvent::ChatChanged(messages)).unwrap();
    set_break(&mut chat, "a1");
    set_break(&mut chat, "u4");
    chat
}

fn stored_msg(role: Role, name: &str, content: &str, id: &str) -> PromptMessage {
    PromptMessage {
        role,
        name: name.into(),
        content: content.into(),
        hidden: false,
        message_id: id.into(),
    }
}

fn ids(history: &[PromptMessage]) -> Vec<&str> {
    history.iter().map(|m| m.message_id.as_str()).collect()
}

#[test]
fn the_stored_transcript_gives_roles_names_and_current_swipes() {
    let history = chat_history(&chat(), 0);
    assert_eq!(
        history,
        [
            stored_msg(Role::User, "Ann", "Hello", "u0"),
            stored_msg(Role::Assistant, "Bob", "Hi Ann", "a1"),
            stored_msg(Role::System, "Narrator", "Night falls.", "n2"),
            // h3 is hidden by hand; a narrator message is SYSTEM even when
            // the user sent it.
            stored_msg(Role::System, "Ann", "The next day.", "u4"),
            stored_msg(Role::Assistant, "Bob", "Bob thinks.", "a5"),
            stored_msg(Role::User, "Ann", "Bye", "u6"),
        ]
    );
}

#[test]
fn auto_hidden_messages_are_left_out_as_the_count_says() {
    let chat = chat();
    // Two breaks: a count of 1 hides through u4, 2 through a1, 3 nothing.
    assert_eq!(ids(&chat_history(&chat, 1)), ["a5", "u6"]);
    assert_eq!(ids(&chat_history(&chat, 2)), ["n2", "u4", "a5", "u6"]);
    assert_eq!(
        ids(&chat_history(&chat, 3)),
        ["u0", "a1", "n2", "u4", "a5", "u6"]
    );
}

#[test]
fn hidden_messages_are_those_get_inclusion_reports_hidden() {
    let chat = chat();
    for count in 0..4 {
        let settings = {
            let mut settings = Settings::default();
            settings.inclusion.auto_hide_scene_count = count;
            settings
        };
        let visible: Vec<String> =
            compute_inclusion(&chat, &settings, &crate::tokens::Counter::default())
                .into_iter()
                .filter(|line| !line.hidden)
                .map(|line| line.message_id)
                .collect();
        assert_eq!(ids(&chat_history(&chat, count)), visible, "count {count}");
    }
}

#[test]
fn a_tail_is_the_end_of_the_whole_history_and_counts_it() {
    let mut chat = chat();
    for round in 0..2 {
        for count in 0..4 {
            let whole = chat_history(&chat, count);
            for limit in 0..9 {
                let tail = chat_history_tail(&chat, count, limit);
                let start = whole.len().saturating_sub(limit);
                assert_eq!(tail.messages, whole[start..], "count {count} limit {limit}");
                assert_eq!(tail.visible, whole.len(), "count {count} limit {limit}");
            }
        }
        // The count follows the messages hidden by hand as they go.
        if round == 0 {
            chat.apply(ChatEvent::MessageDeleted {
                message_id: "h3".into(),
            })
            .unwrap();
        }
    }
}

#[test]
fn in_chat_depth_counts_the_visible_stored_messages() {
    let chat = chat();
    let history = chat_history(&chat, 2);
    let prompts = [ExtensionPrompt {
        key: "k".into(),
        value: "NOTE".into(),
        position: Position::InChat,
        depth: 3,
        role: Role::System,
        scan: false,
    }];
    let rendered = render_prompt(PromptInput {
        mode: PromptMode::TextCompletion,
        story_string: "",
        history: &history,
        continue_last: false,
        prompts: &prompts,
        world_info: None,
        authors_note: None,
        examples: &[],
        user_name: "",
        char_name: "",
    });
    // Visible: n2, u4, a5, u6; depth 3 goes before the last three.
    let order: Vec<&str> = rendered
        .messages
        .iter()
        .map(|m| {
            if m.message_id.is_empty() {
                m.content.as_str()
            } else {
                m.message_id.as_str()
            }
        })
        .collect();
    assert_eq!(order, ["n2", "NOTE", "u4", "a5", "u6"]);
}

#[test]
fn linked_entries_take_the_stored_hidden_state() {
    let chat = chat();
    let entry = |id: &str, hidden: bool| PromptMessage {
        hidden,
        ..stored_msg(Role::User, "Ann", "given text", id)
    };
    let mut history = vec![
        // Auto-hidden with a count of 2 although the entry says visible.
        entry("u0", false),
        // Hidden by hand.
        entry("h3", false),
        // Visible although the entry says hidden (a stale copy).
        entry("u6", true),
        // Not linked: keeps its own flag either way.
        entry("", true),
        entry("", false),
    ];
    link_history(&mut history, &chat, 2).unwrap();
    let hidden: Vec<bool> = history.iter().map(|m| m.hidden).collect();
    assert_eq!(hidden, [true, true, false, true, false]);
    // The entry's own text, name and role stay.
    assert_eq!(
        history[2],
        stored_msg(Role::User, "Ann", "given text", "u6")
    );

    // With no auto-hide, u0 is visible again.
    link_history(&mut history, &chat, 0).unwrap();
    assert!(!history[0].hidden);
}

#[test]
fn an_unknown_linked_id_is_not_found_naming_the_entry() {
    let mut history = vec![
        stored_msg(Role::User, "Ann", "a", "u0"),
        stored_msg(Role::User, "Ann", "b", "gone"),
    ];
    let err = link_history(&mut history, &chat(), 0).unwrap_err();
    assert!(matches!(err, DomainError::NotFound(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        r#"message "gone" (history[1].message_id) not found"#
    );
}
