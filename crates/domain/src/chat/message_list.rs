//! A chat's messages with their position keys, in a deque sorted by
//! position: about 144 bytes a message (one `(i64, Message)` entry) where
//! a B-tree's nodes spent about 260, with appends and prepends at either
//! end in amortized O(1) and lookups by position in O(1) while the
//! positions have no gap (no message was deleted), O(log n) otherwise.

use std::collections::VecDeque;

use crate::footprint::allocation_bytes;
use crate::message::Message;

/// The fewest entries a full list grows by.
const MIN_GROWTH: usize = 4;

/// `(seq, message)` entries in strictly ascending `seq`.
///
/// Invariant: positions strictly ascend from front to back (so each
/// position is held once); every operation keeps it.
/// Growth: a full list grows by an eighth of its length (at least
/// [`MIN_GROWTH`]) rather than doubling, so the slack it holds stays
/// small while appends stay amortized O(1).
#[derive(Debug, Clone, Default)]
pub(super) struct MessageList {
    entries: VecDeque<(i64, Message)>,
}

impl MessageList {
    /// A list of `rows`, which must be sorted by strictly ascending
    /// position; it holds exactly their number.
    pub(super) fn from_sorted(mut rows: Vec<(i64, Message)>) -> MessageList {
        debug_assert!(rows.windows(2).all(|w| w[0].0 < w[1].0));
        rows.shrink_to_fit();
        MessageList {
            entries: VecDeque::from(rows),
        }
    }

    /// Number of messages.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no messages.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first message's position.
    pub(super) fn first_seq(&self) -> Option<i64> {
        self.entries.front().map(|(seq, _)| *seq)
    }

    /// The last message's position.
    pub(super) fn last_seq(&self) -> Option<i64> {
        self.entries.back().map(|(seq, _)| *seq)
    }

    /// Where the message at `seq` sits in the list: `seq` minus the first
    /// position when that entry holds `seq` (positions are consecutive
    /// until a message is deleted), else by a binary search. A long
    /// chat's message looked up by id costs one probe instead of 17 at
    /// 100,000 messages, each likely a cache miss (recall's hits, issue 44).
    fn index_of(&self, seq: i64) -> Option<usize> {
        let guess = self
            .first_seq()
            .and_then(|first| seq.checked_sub(first))
            .and_then(|offset| usize::try_from(offset).ok());
        if let Some(index) = guess
            && self.entries.get(index).is_some_and(|(s, _)| *s == seq)
        {
            return Some(index);
        }
        self.entries.binary_search_by_key(&seq, |(s, _)| *s).ok()
    }

    /// The message at position `seq`.
    pub(super) fn get(&self, seq: i64) -> Option<&Message> {
        let index = self.index_of(seq)?;
        self.entries.get(index).map(|(_, m)| m)
    }

    /// The message at position `seq`, to change; its position stays.
    pub(super) fn get_mut(&mut self, seq: i64) -> Option<&mut Message> {
        let index = self.index_of(seq)?;
        self.entries.get_mut(index).map(|(_, m)| m)
    }

    /// Number of messages at or before position `seq`.
    pub(super) fn count_through(&self, seq: i64) -> usize {
        self.entries.partition_point(|(s, _)| *s <= seq)
    }

    /// Messages in order with their positions.
    pub(super) fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (i64, &Message)> + ExactSizeIterator {
        self.entries.iter().map(|(seq, m)| (*seq, m))
    }

    /// Messages from the `index`-th (0-based) on, in order.
    pub(super) fn iter_from(
        &self,
        index: usize,
    ) -> impl DoubleEndedIterator<Item = (i64, &Message)> + ExactSizeIterator {
        self.entries
            .range(index.min(self.len())..)
            .map(|(seq, m)| (*seq, m))
    }

    /// Messages in order, to change; their positions stay.
    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut Message> {
        self.entries.iter_mut().map(|(_, m)| m)
    }

    /// Messages in order with their positions, to change; the positions
    /// stay.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (i64, &mut Message)> {
        self.entries.iter_mut().map(|(seq, m)| (*seq, m))
    }

    /// Appends a message at `seq`, which must be after the last position.
    pub(super) fn push_back(&mut self, seq: i64, message: Message) {
        debug_assert!(self.last_seq().is_none_or(|last| last < seq));
        self.make_room(1);
        self.entries.push_back((seq, message));
    }

    /// Prepends a message at `seq`, which must be before the first
    /// position.
    pub(super) fn push_front(&mut self, seq: i64, message: Message) {
        debug_assert!(self.first_seq().is_none_or(|first| seq < first));
        self.make_room(1);
        self.entries.push_front((seq, message));
    }

    /// Makes room for `additional` more entries: when they do not fit,
    /// grows by them or by an eighth of the length (at least
    /// [`MIN_GROWTH`]), whichever is more.
    pub(super) fn make_room(&mut self, additional: usize) {
        let len = self.entries.len();
        if len + additional > self.entries.capacity() {
            let growth = (len / 8).max(MIN_GROWTH).max(additional);
            self.entries.reserve_exact(growth);
        }
    }

    /// Takes out the message at `seq`. Moves the shorter side of the list
    /// by one: O(n) in the worst case, in the middle.
    pub(super) fn remove(&mut self, seq: i64) -> Option<Message> {
        let index = self.index_of(seq)?;
        self.entries.remove(index).map(|(_, m)| m)
    }

    /// The messages, in order, without their positions.
    pub(super) fn into_messages(self) -> impl Iterator<Item = Message> {
        self.entries.into_iter().map(|(_, m)| m)
    }

    /// The heap bytes of the list's buffer (its capacity's entries; the
    /// messages' own heap not included).
    pub(super) fn buffer_bytes(&self) -> usize {
        allocation_bytes(self.entries.capacity() * std::mem::size_of::<(i64, Message)>())
    }
}

#[cfg(test)]
mod tests;
