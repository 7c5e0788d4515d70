//! The messages a scene-break detection shows ([`Candidates`]): part of
//! its prepared request, which its answer is read against. Which messages
//! they are is [`crate::writing::candidates`]' rule.

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
        self.eligible_count() > settings.writing.scene_break_min_messages as usize
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
