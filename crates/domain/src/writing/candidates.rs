//! Which messages a scene-break detection looks at, and which of them may
//! be the end of a scene.
//!
//! The open scene is everything after the chat's last visible scene break.
//! Its candidates are the messages a reader of the chat still sees there:
//! not hidden by hand, not auto-hidden, not thoughts. The newest
//! `scene_break_offset` candidates are shown to the model for context but
//! cannot be a break (the story may still be going on there), and a break
//! needs `scene_break_min_messages` candidates before it.

use crate::autohide::auto_hide;
use crate::chat::Chat;
use crate::message::Message;
pub use crate::request::candidates::{Candidate, Candidates};
use crate::settings::Settings;

/// The candidates of `chat`'s open scene under `settings` (see the module
/// documentation).
pub fn detection_candidates(chat: &Chat, settings: &Settings) -> Candidates {
    let mut list: Vec<Candidate> = open_scene(chat, settings)
        .map(|(index, message)| Candidate {
            index,
            message_id: message.id.as_str().to_owned(),
            name: message.name.as_str().to_owned(),
            text: message.text().to_owned(),
            eligible: true,
        })
        .collect();
    let offset = settings.writing.scene_break_offset as usize;
    let eligible_end = list.len().saturating_sub(offset);
    for candidate in &mut list[eligible_end..] {
        candidate.eligible = false;
    }
    let earliest_allowed_break = list
        .get(settings.writing.scene_break_min_messages as usize)
        .map(|c| c.index);
    Candidates {
        list,
        earliest_allowed_break,
    }
}

/// `detection_candidates(chat, settings).ready(settings)` without copying
/// any text: what a trigger asks at every new message.
pub fn detection_ready(chat: &Chat, settings: &Settings) -> bool {
    let needed = (settings.writing.scene_break_min_messages as usize)
        .saturating_add(1)
        .saturating_add(settings.writing.scene_break_offset as usize);
    open_scene(chat, settings)
        .nth(needed.saturating_sub(1))
        .is_some()
}

/// The open scene's candidate messages with their chat indexes.
fn open_scene<'a>(
    chat: &'a Chat,
    settings: &Settings,
) -> impl Iterator<Item = (usize, &'a Message)> + 'a {
    let hide = auto_hide(chat, settings.inclusion.auto_hide_scene_count);
    let last_break = chat.scene_breaks().iter().next_back().copied();
    chat.messages_after(last_break)
        .filter(move |(_, seq, message)| {
            !message.hidden && !message.is_thoughts && !hide.hides(*seq)
        })
        .map(|(index, _, message)| (index, message))
}

#[cfg(test)]
mod tests;
