//! Auto-hide: keeps the last N scenes visible and hides everything before.

use super::chat::Chat;

/// Which prefix of a chat auto-hide hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AutoHide {
    /// Messages at or before this position key are hidden; `None` hides none.
    pub through: Option<i64>,
    /// Length of the hidden prefix.
    pub count: usize,
}

impl AutoHide {
    /// Whether the message at position key `seq` is auto-hidden.
    pub fn hides(&self, seq: i64) -> bool {
        self.through.is_some_and(|through| seq <= through)
    }
}

/// With N = `scene_count` and the chat's visible scene breaks in order: when
/// N >= 1 and there are at least N breaks, every message up to and including
/// the N-th break from the end is hidden; otherwise none is.
pub fn auto_hide(chat: &Chat, scene_count: u32) -> AutoHide {
    let Some(nth_from_end) = (scene_count as usize).checked_sub(1) else {
        return AutoHide::default();
    };
    match chat.scene_breaks().iter().rev().nth(nth_from_end) {
        Some(&through) => AutoHide {
            through: Some(through),
            count: chat.count_through(through),
        },
        None => AutoHide::default(),
    }
}

#[cfg(test)]
mod tests {
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
}
