//! A chat's message ids to their position keys, without a second copy of
//! each id: the table holds only positions (8 bytes a bucket), hashed by
//! the id of the message at that position and compared by looking that
//! message up in the chat's message list.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::message_list::MessageList;
use crate::footprint::hash_table_bytes;

/// Position keys of a chat's messages, found by id.
///
/// Invariant (kept by [`super::Chat`]): the table holds each position of
/// the chat's list exactly once, and every position it holds is in that
/// list whenever the table may grow (an entry goes in after its message,
/// and out after it), since growing rehashes entries through the list.
#[derive(Debug, Clone, Default)]
pub(super) struct IdIndex {
    seqs: HashTable<i64>,
    /// Seeded per chat, so that client-chosen ids cannot be picked to
    /// collide.
    hasher: DefaultHashBuilder,
}

impl IdIndex {
    /// An index of every message of `messages`, sized for them.
    pub(super) fn of(messages: &MessageList) -> IdIndex {
        let mut index = IdIndex {
            seqs: HashTable::with_capacity(messages.len()),
            hasher: DefaultHashBuilder::default(),
        };
        for (seq, message) in messages.iter() {
            index.insert(messages, index.hash(&message.id), seq);
        }
        index
    }

    /// The hash an id is found by.
    pub(super) fn hash(&self, id: &str) -> u64 {
        self.hasher.hash_one(id)
    }

    /// The position of the message with id `id`.
    pub(super) fn get(&self, messages: &MessageList, id: &str) -> Option<i64> {
        self.seqs
            .find(self.hash(id), |seq| {
                messages.get(*seq).is_some_and(|m| m.id == id)
            })
            .copied()
    }

    /// Whether a message with id `id` is in the chat.
    pub(super) fn contains(&self, messages: &MessageList, id: &str) -> bool {
        self.get(messages, id).is_some()
    }

    /// Enters the message at `seq`, whose id hashes to `hash`
    /// ([`IdIndex::hash`]); it must already be in `messages` (as every
    /// position the table holds).
    pub(super) fn insert(&mut self, messages: &MessageList, hash: u64, seq: i64) {
        let hasher = &self.hasher;
        self.seqs.insert_unique(hash, seq, |held| {
            // Every held position is in the list (the invariant above);
            // were one not, it would hash as 0 and only be
            // harder to find, never wrongly found.
            messages.get(*held).map_or(0, |m| hasher.hash_one(&*m.id))
        });
    }

    /// Takes out the entry of the message `id` at `seq`.
    pub(super) fn remove(&mut self, id: &str, seq: i64) {
        if let Ok(entry) = self.seqs.find_entry(self.hash(id), |held| *held == seq) {
            entry.remove();
        }
    }

    /// The heap bytes of the table: 8 bytes and a control byte a bucket.
    pub(super) fn heap_bytes(&self) -> usize {
        hash_table_bytes(self.seqs.capacity(), std::mem::size_of::<i64>())
    }
}
