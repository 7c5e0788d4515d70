//! A chat's transcript and running recap, and how each event changes them.
//!
//! Every operation checks everything first and changes nothing when it
//! refuses, then reports which rows changed ([`Changes`]) so a store can
//! persist exactly those.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use compact_str::CompactString;

use super::DomainError;
use super::footprint::{Footprint, btree_bytes};
use super::message::{Message, Swipe};
use super::recaps::{NewRecap, RecapVersion, RunningRecaps};
use super::time::UnixMillis;
use super::verbatim::StFile;
use id_index::IdIndex;
use message_list::MessageList;

mod branch;
pub use branch::NotItsStart;
mod id_index;
mod message_data;
mod message_list;

/// One chat event, with its messages already checked ([`super::message::NewMessage::build`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatEvent {
    /// The chat was opened; a non-empty list is the full transcript.
    ChatChanged(Vec<Message>),
    /// A user message was appended.
    MessageSent(Message),
    /// A character message was appended.
    MessageReceived(Message),
    /// The current swipe's text changed.
    MessageEdited {
        /// The message.
        message_id: String,
        /// Its new text.
        text: String,
    },
    /// A message was removed.
    MessageDeleted {
        /// The message.
        message_id: String,
    },
    /// A swipe was chosen, or made when `swipe_id` equals the swipe count.
    MessageSwiped {
        /// The message.
        message_id: String,
        /// The swipe to show.
        swipe_id: u32,
        /// The swipe's text; empty keeps an existing swipe's text.
        text: String,
    },
    /// Older messages, prepended in the given order.
    MoreMessagesLoaded(Vec<Message>),
    /// Only asks for a refresh.
    RefreshRequested,
}

/// The rows an operation changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Messages added or changed (their content or their place).
    pub messages_put: BTreeSet<String>,
    /// Messages removed.
    pub messages_removed: BTreeSet<String>,
    /// Running-recap versions added.
    pub recaps_put: BTreeSet<u32>,
    /// Running-recap versions deleted.
    pub recaps_removed: BTreeSet<u32>,
}

/// A chat: messages in order, each at a position key (`seq`) that only
/// grows for appends and shrinks for prepends, plus its running recap.
///
/// Invariants: `index` maps exactly the ids in `messages` (see
/// [`IdIndex`]); `scene_breaks`
/// holds exactly the positions whose current swipe is a visible scene break;
/// `hidden_by_hand` exactly the positions of messages hidden by hand
/// ([`Message::hidden`]); `message_heap` is the sum of [`held_bytes`] over `messages` (every
/// message enters, changes and leaves through [`Chat::set_messages`],
/// [`Chat::append`], [`Chat::prepend`], [`Chat::update`] and
/// [`Chat::remove`], which keep it; [`Chat::messages_mut`] changes only
/// inline fields).
#[derive(Debug, Clone, Default)]
pub struct Chat {
    messages: MessageList,
    index: IdIndex,
    scene_breaks: BTreeSet<i64>,
    /// Positions of the messages hidden by hand: counting the visible
    /// messages reads these, not every message.
    hidden_by_hand: BTreeSet<i64>,
    recaps: RunningRecaps,
    /// The heap the messages own: the running total behind
    /// [`Chat::resident_bytes`].
    message_heap: usize,
    /// The last [`Chat::count_through`] answer, `(seq, count)`: valid until
    /// a message at or before `seq` is added or removed (appends and
    /// in-place changes keep it).
    counted_through: CountCache,
    /// How the SillyTavern file the chat was imported from began (its
    /// header's members recapd keeps); `None` for a chat made through the
    /// API.
    st_file: Option<Arc<StFile>>,
}

/// [`Chat::count_through`]'s cache. Behind a lock rather than a `Cell` so
/// that a chat can be shared between threads (an export streams a
/// snapshot of it while the engine goes on).
#[derive(Debug, Default)]
struct CountCache(std::sync::Mutex<Option<(i64, usize)>>);

impl CountCache {
    fn get(&self) -> Option<(i64, usize)> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, value: Option<(i64, usize)>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = value;
    }
}

impl Clone for CountCache {
    fn clone(&self) -> CountCache {
        CountCache(std::sync::Mutex::new(self.get()))
    }
}

impl Chat {
    /// Rebuilds a chat from stored rows: `(seq, message)` pairs in any order,
    /// the recap versions and the current version.
    pub fn from_parts(
        messages: Vec<(i64, Message)>,
        versions: Vec<RecapVersion>,
        current: Option<u32>,
    ) -> Chat {
        let mut chat = Chat {
            recaps: RunningRecaps::from_parts(versions, current),
            ..Chat::default()
        };
        chat.set_messages(messages);
        chat
    }

    /// Replaces every message with `messages`, `(seq, message)` pairs in
    /// any order, keeping every invariant of [`Chat`].
    fn set_messages(&mut self, messages: Vec<(i64, Message)>) {
        // Descending, the later of two rows at one position first: the one
        // kept, as inserting them in order would keep it.
        let mut rows = messages;
        rows.sort_by_key(|(seq, _)| *seq);
        rows.reverse();
        rows.dedup_by_key(|(seq, _)| *seq);
        self.scene_breaks.clear();
        self.hidden_by_hand.clear();
        self.counted_through.set(None);
        self.message_heap = 0;
        for (seq, message) in &mut rows {
            compact(message);
            self.register(*seq, message);
        }
        rows.reverse();
        // Built in bulk from sorted rows, holding exactly their number.
        self.messages = MessageList::from_sorted(rows);
        self.index = IdIndex::of(&self.messages);
    }

    /// Messages in chat order with their position keys.
    pub fn messages(&self) -> impl DoubleEndedIterator<Item = (i64, &Message)> + ExactSizeIterator {
        self.messages.iter()
    }

    /// The messages after position `after` (all of them when `None`), in
    /// chat order, with their 0-based index in the whole chat. Starts
    /// where they start: a long chat's earlier messages are not walked.
    pub fn messages_after(
        &self,
        after: Option<i64>,
    ) -> impl Iterator<Item = (usize, i64, &Message)> {
        let first = after.map_or(0, |seq| self.messages.count_through(seq));
        self.messages
            .iter_from(first)
            .enumerate()
            .map(move |(i, (seq, m))| (first + i, seq, m))
    }

    /// Messages in chat order, for changing cached values (token counts).
    /// Only inline fields other than [`Message::hidden`] may change
    /// through it: nothing that owns heap (texts, ids, swipes, what a file
    /// had), or [`Chat::resident_bytes`] would miss it; the hidden flag
    /// changes through [`Chat::unhide_first`].
    pub fn messages_mut(&mut self) -> impl Iterator<Item = &mut Message> {
        self.messages.values_mut()
    }

    /// Shows the first `count` messages again (clears their
    /// [`Message::hidden`]): an import takes a file's auto-hidden prefix
    /// for auto-hide, not for hides made by hand.
    pub fn unhide_first(&mut self, count: usize) {
        for (seq, message) in self.messages.iter_mut().take(count) {
            message.hidden = false;
            self.hidden_by_hand.remove(&seq);
        }
    }

    /// Number of messages hidden by hand after position `after` (all of
    /// them when `None`): O(hidden messages), never O(messages).
    pub fn hidden_by_hand_after(&self, after: Option<i64>) -> usize {
        match after {
            None => self.hidden_by_hand.len(),
            Some(seq) => self
                .hidden_by_hand
                .range((std::ops::Bound::Excluded(seq), std::ops::Bound::Unbounded))
                .count(),
        }
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the chat has no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// A message and its position key, by id.
    pub fn message(&self, id: &str) -> Option<(i64, &Message)> {
        let seq = self.index.get(&self.messages, id)?;
        self.messages.get(seq).map(|m| (seq, m))
    }

    /// The message at position key `seq`.
    pub fn message_at(&self, seq: i64) -> Option<&Message> {
        self.messages.get(seq)
    }

    /// Positions of visible scene breaks, in chat order.
    pub fn scene_breaks(&self) -> &BTreeSet<i64> {
        &self.scene_breaks
    }

    /// Number of messages at or before position `seq`: a binary search,
    /// O(log n); the answer is kept until the prefix changes, so refreshes
    /// that only append ask again at no cost.
    pub fn count_through(&self, seq: i64) -> usize {
        if let Some((cached, count)) = self.counted_through.get()
            && cached == seq
        {
            return count;
        }
        let count = self.messages.count_through(seq);
        self.counted_through.set(Some((seq, count)));
        count
    }

    fn prefix_changed_at(&self, seq: i64) {
        if self
            .counted_through
            .get()
            .is_some_and(|(cached, _)| seq <= cached)
        {
            self.counted_through.set(None);
        }
    }

    /// How the SillyTavern file the chat was imported from began; `None`
    /// for a chat made through the API.
    pub fn st_file(&self) -> Option<&Arc<StFile>> {
        self.st_file.as_ref()
    }

    /// Sets what [`Chat::st_file`] answers (from an import, or the chat's
    /// stored row).
    pub fn set_st_file(&mut self, file: Option<Arc<StFile>>) {
        self.st_file = file;
    }

    /// The running recap.
    pub fn recaps(&self) -> &RunningRecaps {
        &self.recaps
    }

    /// The bytes this chat holds in memory: its own struct, each message's
    /// struct and heap, the structures the messages sit in (the message
    /// list's buffer, its slack included, the id index's buckets, the
    /// scene-break set), the running-recap versions and what its file had.
    /// Reads a running total: O(1) in the messages, O(recap versions).
    pub fn resident_bytes(&self) -> usize {
        self.structure_bytes() + self.message_heap
    }

    /// [`Chat::resident_bytes`] counted from scratch, message by message,
    /// to check the running total against.
    #[cfg(test)]
    pub(crate) fn resident_bytes_recounted(&self) -> usize {
        self.structure_bytes()
            + self
                .messages
                .iter()
                .map(|(_, m)| held_bytes(m))
                .sum::<usize>()
    }

    /// Everything [`Chat::resident_bytes`] counts but the messages' heap.
    fn structure_bytes(&self) -> usize {
        std::mem::size_of::<Chat>()
            + self.messages.buffer_bytes()
            + self.index.heap_bytes()
            + btree_bytes::<i64, ()>(self.scene_breaks.len())
            + btree_bytes::<i64, ()>(self.hidden_by_hand.len())
            + self.recaps.heap_bytes()
            + self.st_file.heap_bytes()
    }

    /// Applies one event.
    pub fn apply(&mut self, event: ChatEvent) -> Result<Changes, DomainError> {
        match event {
            ChatEvent::ChatChanged(messages) => self.replace_transcript(messages),
            ChatEvent::MessageSent(message) | ChatEvent::MessageReceived(message) => {
                self.append(message)
            }
            ChatEvent::MessageEdited { message_id, text } => {
                let seq = self.seq_of(&message_id)?;
                self.update(seq, |m| {
                    let index = m.current_swipe();
                    if let Some(swipe) = m.swipes.get_mut(index) {
                        swipe.text = text;
                    }
                    m.text_changed();
                })
            }
            ChatEvent::MessageDeleted { message_id } => self.delete(&message_id),
            ChatEvent::MessageSwiped {
                message_id,
                swipe_id,
                text,
            } => self.swipe(&message_id, swipe_id, text),
            ChatEvent::MoreMessagesLoaded(messages) => self.prepend(messages),
            ChatEvent::RefreshRequested => Ok(Changes::default()),
        }
    }

    /// Adds a running-recap version; its scene message ids must exist.
    pub fn add_recap(
        &mut self,
        new: NewRecap,
        created_at_ms: UnixMillis,
    ) -> Result<(u32, Changes), DomainError> {
        for (field, id) in [
            ("prev_scene_message_id", &new.prev_scene_message_id),
            ("new_scene_message_id", &new.new_scene_message_id),
        ] {
            if let Some(id) = id
                && !self.index.contains(&self.messages, id)
            {
                return Err(DomainError::NotFound(format!("{field} message {id:?}")));
            }
        }
        let version = self.recaps.add(new, created_at_ms)?;
        let mut changes = Changes::default();
        changes.recaps_put.insert(version);
        Ok((version, changes))
    }

    /// Makes a running-recap version current.
    pub fn select_recap(&mut self, version: u32) -> Result<Changes, DomainError> {
        self.recaps.select(version)?;
        Ok(Changes::default())
    }

    /// Deletes a running-recap version.
    pub fn delete_recap(&mut self, version: u32) -> Result<Changes, DomainError> {
        self.recaps.delete(version)?;
        let mut changes = Changes::default();
        changes.recaps_removed.insert(version);
        Ok(changes)
    }

    fn seq_of(&self, message_id: &str) -> Result<i64, DomainError> {
        self.index
            .get(&self.messages, message_id)
            .ok_or_else(|| DomainError::NotFound(format!("message {message_id:?}")))
    }

    /// Enters a message about to be put at `seq` in the scene breaks and
    /// the running total (the index takes it once it is in the list).
    fn register(&mut self, seq: i64, message: &Message) {
        if message.data().is_visible_scene_break() {
            self.scene_breaks.insert(seq);
        } else {
            self.scene_breaks.remove(&seq);
        }
        if message.hidden {
            self.hidden_by_hand.insert(seq);
        } else {
            self.hidden_by_hand.remove(&seq);
        }
        self.message_heap += held_bytes(message);
    }

    /// Takes the message at `seq` out, keeping every invariant of [`Chat`].
    fn remove(&mut self, seq: i64) -> Option<Message> {
        let message = self.messages.remove(seq)?;
        self.prefix_changed_at(seq);
        self.index.remove(&message.id, seq);
        self.scene_breaks.remove(&seq);
        self.hidden_by_hand.remove(&seq);
        self.message_heap -= held_bytes(&message);
        Some(message)
    }

    /// Changes the message at `seq` in place, keeping every invariant of
    /// [`Chat`]; `change` must keep the message's id (the index finds it
    /// by its id).
    fn update(
        &mut self,
        seq: i64,
        change: impl FnOnce(&mut Message),
    ) -> Result<Changes, DomainError> {
        let Some(message) = self.messages.get_mut(seq) else {
            return Err(DomainError::NotFound(format!("message at {seq}")));
        };
        let held_before = held_bytes(message);
        change(message);
        compact(message);
        let mut changes = Changes::default();
        changes.messages_put.insert(message.id.as_str().to_owned());
        let scene_break = message.data().is_visible_scene_break();
        let hidden = message.hidden;
        self.message_heap = self.message_heap - held_before + held_bytes(message);
        if hidden {
            self.hidden_by_hand.insert(seq);
        } else {
            self.hidden_by_hand.remove(&seq);
        }
        if scene_break {
            self.scene_breaks.insert(seq);
        } else {
            self.scene_breaks.remove(&seq);
        }
        Ok(changes)
    }

    fn append(&mut self, mut message: Message) -> Result<Changes, DomainError> {
        self.refuse_known(&message.id)?;
        let seq = self.messages.last_seq().map_or(0, |last| last + 1);
        let mut changes = Changes::default();
        changes.messages_put.insert(message.id.as_str().to_owned());
        compact(&mut message);
        self.register(seq, &message);
        let hash = self.index.hash(&message.id);
        self.messages.push_back(seq, message);
        self.index.insert(&self.messages, hash, seq);
        Ok(changes)
    }

    fn prepend(&mut self, messages: Vec<Message>) -> Result<Changes, DomainError> {
        refuse_duplicates(&messages)?;
        for m in &messages {
            self.refuse_known(&m.id)?;
        }
        let first = self.messages.first_seq().unwrap_or(0);
        let mut changes = Changes::default();
        self.messages.make_room(messages.len());
        // Pushed at the front last to first: the batch keeps its order.
        for (seq, mut message) in (i64::MIN..first).rev().zip(messages.into_iter().rev()) {
            changes.messages_put.insert(message.id.as_str().to_owned());
            compact(&mut message);
            self.register(seq, &message);
            let hash = self.index.hash(&message.id);
            self.prefix_changed_at(seq);
            self.messages.push_front(seq, message);
            self.index.insert(&self.messages, hash, seq);
        }
        Ok(changes)
    }

    fn replace_transcript(&mut self, messages: Vec<Message>) -> Result<Changes, DomainError> {
        let mut changes = Changes::default();
        if messages.is_empty() {
            return Ok(changes);
        }
        refuse_duplicates(&messages)?;
        let mut old: HashMap<CompactString, Message> = std::mem::take(&mut self.messages)
            .into_messages()
            .map(|m| (m.id.clone(), m))
            .collect();
        let mut rows = Vec::with_capacity(messages.len());
        for (seq, incoming) in (0..).zip(messages) {
            let message = match old.remove(incoming.id.as_str()) {
                Some(mut known) => {
                    known.take_content_of(incoming);
                    known
                }
                None => incoming,
            };
            changes.messages_put.insert(message.id.as_str().to_owned());
            rows.push((seq, message));
        }
        changes.messages_removed = old.into_keys().map(String::from).collect();
        // Built in bulk, as a load builds it.
        self.set_messages(rows);
        Ok(changes)
    }

    fn delete(&mut self, message_id: &str) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        self.remove(seq);
        let mut changes = Changes::default();
        changes.messages_removed.insert(message_id.to_owned());
        changes.recaps_removed = self.cleanup_recaps();
        Ok(changes)
    }

    /// `cleanup_invalid_running_recaps`: deletes versions whose scene message
    /// is gone or has no scene recap; returns their numbers.
    fn cleanup_recaps(&mut self) -> BTreeSet<u32> {
        let messages = &self.messages;
        let index = &self.index;
        let valid = |id: &str| {
            index
                .get(messages, id)
                .and_then(|seq| messages.get(seq))
                .is_some_and(|m| m.data().has_scene_recap())
        };
        self.recaps.cleanup(valid).into_iter().collect()
    }

    fn swipe(
        &mut self,
        message_id: &str,
        swipe_id: u32,
        text: String,
    ) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        let count = self.messages.get(seq).map_or(0, |m| m.swipes.len());
        let index = usize::try_from(swipe_id).unwrap_or(usize::MAX);
        if index > count {
            return Err(DomainError::invalid(
                "event.message_swiped.swipe_id",
                format!("{swipe_id} is more than the {count} existing swipes"),
            ));
        }
        self.update(seq, |m| {
            if index != m.current_swipe() {
                m.follow_swipe(m.current_swipe(), index);
            }
            if index == count {
                // A new swipe: the current swipe's data, memory cleared.
                let data = m.data().for_new_swipe();
                m.push_swipe(Swipe {
                    text,
                    data: data.into(),
                    st: None,
                });
            } else if !text.is_empty() {
                m.swipes[index].text = text;
            }
            m.swipe_id = swipe_id;
            m.text_changed();
        })
    }

    fn refuse_known(&self, id: &str) -> Result<(), DomainError> {
        if self.index.contains(&self.messages, id) {
            return Err(DomainError::AlreadyExists(format!("message {id:?}")));
        }
        Ok(())
    }
}

/// Lets go of the data boxes a message was built or decoded with that
/// hold nothing: a resident message holds what it needs.
fn compact(message: &mut Message) {
    for swipe in &mut message.swipes {
        swipe.data.compact();
    }
}

/// The heap a message in a chat owns.
fn held_bytes(message: &Message) -> usize {
    message.heap_bytes()
}

fn refuse_duplicates(messages: &[Message]) -> Result<(), DomainError> {
    let mut seen = HashSet::with_capacity(messages.len());
    for m in messages {
        if !seen.insert(m.id.as_str()) {
            return Err(DomainError::AlreadyExists(format!("message {:?}", m.id)));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
