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
mod tests;
