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
mod tests {
    use super::*;
    use crate::writing::test_chat::{chat as test_chat, settings};

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
        s.auto_hide_scene_count = 1;
        assert_eq!(indexes(&detection_candidates(&chat, &s)), [5, 6, 7]);
        s.auto_hide_scene_count = 0;
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
}
