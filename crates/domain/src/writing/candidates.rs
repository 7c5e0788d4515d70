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
use crate::settings::Settings;

/// One message a detection looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its 0-based index in the whole chat (hidden messages count), the
    /// number the prompt shows and the model answers with.
    pub index: usize,
    /// The message's id.
    pub message_id: String,
    /// The speaker's name.
    pub name: String,
    /// The current swipe's text.
    pub text: String,
    /// Whether it may be a break: false for the newest
    /// `scene_break_offset` candidates of the open scene.
    pub eligible: bool,
}

/// The candidates of one detection, in chat order, and where the earliest
/// break may be.
///
/// Invariant: `list` is in ascending `index` order. A list shortened to
/// fit a token budget ([`Candidates::keep_newest`]) keeps the eligibility
/// and the `earliest_allowed_break` computed on the whole open scene.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidates {
    /// The candidates, oldest first.
    pub list: Vec<Candidate>,
    /// The chat index of candidate number `scene_break_min_messages`
    /// (0-based) of the whole open scene; `None` when it has not that many.
    pub earliest_allowed_break: Option<usize>,
}

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
    let offset = settings.scene_break_offset as usize;
    let eligible_end = list.len().saturating_sub(offset);
    for candidate in &mut list[eligible_end..] {
        candidate.eligible = false;
    }
    let earliest_allowed_break = list
        .get(settings.scene_break_min_messages as usize)
        .map(|c| c.index);
    Candidates {
        list,
        earliest_allowed_break,
    }
}

/// `detection_candidates(chat, settings).ready(settings)` without copying
/// any text: what a trigger asks at every new message.
pub fn detection_ready(chat: &Chat, settings: &Settings) -> bool {
    let needed = (settings.scene_break_min_messages as usize)
        .saturating_add(1)
        .saturating_add(settings.scene_break_offset as usize);
    open_scene(chat, settings)
        .nth(needed.saturating_sub(1))
        .is_some()
}

/// The open scene's candidate messages with their chat indexes.
fn open_scene<'a>(
    chat: &'a Chat,
    settings: &Settings,
) -> impl Iterator<Item = (usize, &'a Message)> + 'a {
    let hide = auto_hide(chat, settings.auto_hide_scene_count);
    let last_break = chat.scene_breaks().iter().next_back().copied();
    chat.messages_after(last_break)
        .filter(move |(_, seq, message)| {
            !message.hidden && !message.is_thoughts && !hide.hides(*seq)
        })
        .map(|(index, _, message)| (index, message))
}

impl Candidates {
    /// How many candidates may be a break (before the earliest allowed one
    /// too).
    pub fn eligible_count(&self) -> usize {
        self.list.iter().filter(|c| c.eligible).count()
    }

    /// Whether an automatic detection should run: at least
    /// `scene_break_min_messages + 1` eligible candidates, which is exactly
    /// when some break is valid (the newest eligible candidate is then at
    /// or after the earliest allowed break).
    pub fn ready(&self, settings: &Settings) -> bool {
        self.eligible_count() > settings.scene_break_min_messages as usize
    }

    /// The candidate at chat index `n` if `n` is a valid break: an eligible
    /// candidate's index, at or after the earliest allowed break.
    pub fn valid_break(&self, n: usize) -> Option<&Candidate> {
        let earliest = self.earliest_allowed_break?;
        if n < earliest {
            return None;
        }
        let found = self.list.binary_search_by_key(&n, |c| c.index).ok()?;
        self.list.get(found).filter(|c| c.eligible)
    }

    /// The valid breaks, oldest first.
    pub fn valid_breaks(&self) -> impl Iterator<Item = &Candidate> {
        let earliest = self.earliest_allowed_break;
        self.list
            .iter()
            .filter(move |c| c.eligible && earliest.is_some_and(|e| c.index >= e))
    }

    /// The newest candidate, whose id a detection job reports.
    pub fn newest(&self) -> Option<&Candidate> {
        self.list.last()
    }

    /// These candidates without all but the newest `count` (all of them
    /// when there are no more), each keeping its eligibility and the
    /// earliest allowed break staying that of the whole open scene.
    pub fn keep_newest(&self, count: usize) -> Candidates {
        let skip = self.list.len().saturating_sub(count);
        Candidates {
            list: self.list[skip..].to_vec(),
            earliest_allowed_break: self.earliest_allowed_break,
        }
    }
}

#[cfg(test)]
mod tests;
