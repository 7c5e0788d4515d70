//! The index's slots: the chunk each holds, and beside it, packed, the
//! position of its message, which is all a search asks of most slots.
//!
//! A search asks whether a slot may be a hit (its chunk exists and is
//! neither recent nor one of the query's own messages) of every document
//! that could enter its best few hundred: about 500 slots scattered over
//! the chat for a six-word query at 100,000 messages. Read from the
//! chunks themselves (56 bytes apart, 5.6 MB at 100,000) each was a miss
//! in every cache; the positions alone are 8 bytes a slot, and stay in
//! the processor's caches between searches.

use super::Doc;

/// The position stored for a free slot. A chunk whose message sits at
/// this very position is told apart by its entry in `docs` (positions are
/// the chat's, and nothing keeps a chat from using this one).
const FREE: i64 = i64::MAX;

/// The slots. Invariant: `positions[s]` is `docs[s]`'s `seq` when it
/// holds a chunk and [`FREE`] when it is free; both have one entry a
/// slot.
#[derive(Debug, Clone, Default)]
pub(super) struct Slots {
    docs: Vec<Option<Doc>>,
    positions: Vec<i64>,
}

impl Slots {
    /// The chunk in `slot`, if any.
    pub fn get(&self, slot: u32) -> Option<&Doc> {
        self.docs.get(slot as usize).and_then(Option::as_ref)
    }

    /// How many slots there are, free or not.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Every slot with its chunk, if any, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, Option<&Doc>)> {
        (0u32..).zip(self.docs.iter().map(Option::as_ref))
    }

    /// A new free slot at the end; its number.
    pub fn push_free(&mut self) -> u32 {
        self.docs.push(None);
        self.positions.push(FREE);
        u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
    }

    /// Puts `doc` in `slot` (which must exist).
    pub fn put(&mut self, slot: u32, doc: Doc) {
        if let (Some(entry), Some(position)) = (
            self.docs.get_mut(slot as usize),
            self.positions.get_mut(slot as usize),
        ) {
            *position = doc.seq;
            *entry = Some(doc);
        }
    }

    /// Takes `slot`'s chunk out, leaving it free.
    pub fn take(&mut self, slot: u32) -> Option<Doc> {
        if let Some(position) = self.positions.get_mut(slot as usize) {
            *position = FREE;
        }
        self.docs.get_mut(slot as usize).and_then(Option::take)
    }

    /// Whether `slot` holds a chunk of a message before `before` (any
    /// position when `None`), reading its position only (see the module
    /// documentation).
    pub fn holds_before(&self, slot: u32, before: Option<i64>) -> bool {
        match self.positions.get(slot as usize) {
            None => false,
            Some(&FREE) => self
                .get(slot)
                .is_some_and(|doc| before.is_none_or(|b| doc.seq < b)),
            Some(&seq) => before.is_none_or(|b| seq < b),
        }
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.docs.capacity() * std::mem::size_of::<Option<Doc>>() + self.positions.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::{ChunkKey, Source};

    fn doc(seq: i64) -> Doc {
        Doc {
            key: ChunkKey {
                message_id: "m".into(),
                source: Source::Message,
                part: 0,
            },
            seq,
            range: 0..1,
            fingerprint: 0,
        }
    }

    #[test]
    fn a_slot_holds_what_was_put_until_taken_at_any_position() {
        let mut slots = Slots::default();
        let (a, b) = (slots.push_free(), slots.push_free());
        assert!(!slots.holds_before(a, None), "free");
        assert!(!slots.holds_before(7, None), "no such slot");
        slots.put(a, doc(5));
        assert!(slots.holds_before(a, None));
        assert!(slots.holds_before(a, Some(6)));
        assert!(!slots.holds_before(a, Some(5)), "the window starts at 5");
        // The position free slots are marked with is a position too.
        slots.put(b, doc(i64::MAX));
        assert!(slots.holds_before(b, None));
        assert!(!slots.holds_before(b, Some(i64::MAX)));
        assert_eq!(slots.take(b).map(|d| d.seq), Some(i64::MAX));
        assert!(!slots.holds_before(b, None));
        assert_eq!(slots.take(b), None);
        assert_eq!(slots.len(), 2);
        assert_eq!(slots.iter().filter(|(_, d)| d.is_some()).count(), 1);
    }
}
