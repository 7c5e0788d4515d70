use super::*;
use crate::chat::ChatEvent;
use crate::chat::tests::msg;
use crate::message::MessageData;

fn chat_with_breaks(len: usize, breaks: &[usize], invisible: &[usize]) -> Chat {
    let mut chat = Chat::default();
    let messages = (0..len).map(|i| msg(&format!("m{i}"), "text")).collect();
    chat.apply(ChatEvent::ChatChanged(messages)).unwrap();
    for &i in breaks {
        let data = MessageData {
            scene_break: Some(true),
            scene_break_visible: invisible.contains(&i).then_some(false),
            ..Default::default()
        };
        chat.set_message_data(&format!("m{i}"), &data).unwrap();
    }
    chat
}

#[test]
fn hides_through_the_nth_break_from_the_end() {
    // Breaks at m2, m5, m8: the 2nd break from the end is m5.
    let chat = chat_with_breaks(10, &[2, 5, 8], &[]);
    let hidden = auto_hide(&chat, 2);
    assert_eq!(hidden.count, 6);
    let flags: Vec<bool> = chat.messages().map(|(seq, _)| hidden.hides(seq)).collect();
    assert_eq!(
        flags,
        [
            true, true, true, true, true, true, false, false, false, false
        ]
    );
    assert_eq!(auto_hide(&chat, 1).count, 9);
    assert_eq!(auto_hide(&chat, 3).count, 3);
}

#[test]
fn fewer_breaks_than_n_or_n_zero_hides_nothing() {
    let chat = chat_with_breaks(10, &[2, 5], &[]);
    assert_eq!(auto_hide(&chat, 3), AutoHide::default());
    assert_eq!(auto_hide(&chat, 0), AutoHide::default());
    assert_eq!(
        auto_hide(&chat_with_breaks(0, &[], &[]), 2),
        AutoHide::default()
    );
}

#[test]
fn invisible_breaks_do_not_count() {
    let chat = chat_with_breaks(10, &[2, 5, 8], &[5]);
    // Visible breaks: m2, m8. N = 2 hides through m2.
    assert_eq!(auto_hide(&chat, 2).count, 3);
    assert_eq!(auto_hide(&chat, 3).count, 0);
}
