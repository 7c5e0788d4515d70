//! Generated chats shared by the bench tool and the criterion benches.

use recapd::domain::Limits;
use recapd::domain::chat::{Chat, ChatEvent};
use recapd::domain::message::{Message, MessageData, NewMessage};
use recapd::domain::recaps::NewRecap;
use recapd::domain::time::UnixMillis;

/// A typical message text (about 25 tokens).
pub const TEXT: &str = "She opened the door and looked out over the harbour, where the ships were coming in with the evening tide.";

/// Message `m{i}`, alternately from the user and the character.
pub fn message(i: usize, text: &str) -> Message {
    NewMessage {
        id: format!("m{i}"),
        name: if i.is_multiple_of(2) {
            "User".into()
        } else {
            "Alice".into()
        },
        text: text.to_owned(),
        is_user: i.is_multiple_of(2),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("generated messages are valid")
}

/// A chat of `n` messages: every third has a recap, every 60th is a scene
/// break with a scene recap, and a running recap of about 2 KB is current.
pub fn build_chat(n: usize) -> Chat {
    let mut chat = Chat::default();
    let messages = (0..n).map(|i| message(i, TEXT)).collect();
    chat.apply(ChatEvent::ChatChanged(messages))
        .expect("fresh ids");
    for i in (0..n).step_by(3) {
        let data = MessageData {
            memory: Some(format!("Recap of message {i}: the ships came in.")),
            scene_break: (i.is_multiple_of(60)).then_some(true),
            scene_recap_memory: (i.is_multiple_of(60)).then(|| format!("Scene ending at {i}.")),
            ..Default::default()
        };
        chat.set_message_data(&format!("m{i}"), &data)
            .expect("message exists");
    }
    chat.add_recap(
        NewRecap {
            content: TEXT.repeat(20),
            ..Default::default()
        },
        UnixMillis(0),
    )
    .expect("first version");
    chat
}
