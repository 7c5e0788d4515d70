//! A chat's transcript and running recap, and how each event changes them.
//!
//! Every operation checks everything first and changes nothing when it
//! refuses, then reports which rows changed ([`Changes`]) so a store can
//! persist exactly those.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::DomainError;
use super::message::{Message, MessageData, Swipe};
use super::recaps::{NewRecap, RecapVersion, RunningRecaps};

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
/// Invariants: `index` maps exactly the ids in `messages`; `scene_breaks`
/// holds exactly the positions whose current swipe is a visible scene break.
#[derive(Debug, Clone, Default)]
pub struct Chat {
    messages: BTreeMap<i64, Message>,
    index: HashMap<String, i64>,
    scene_breaks: BTreeSet<i64>,
    recaps: RunningRecaps,
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
        for (seq, message) in messages {
            chat.insert(seq, message);
        }
        chat
    }

    /// Messages in chat order with their position keys.
    pub fn messages(&self) -> impl DoubleEndedIterator<Item = (i64, &Message)> + ExactSizeIterator {
        self.messages.iter().map(|(seq, m)| (*seq, m))
    }

    /// Messages in chat order, for changing cached values (token counts).
    pub fn messages_mut(&mut self) -> impl Iterator<Item = &mut Message> {
        self.messages.values_mut()
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
        let seq = *self.index.get(id)?;
        self.messages.get(&seq).map(|m| (seq, m))
    }

    /// Positions of visible scene breaks, in chat order.
    pub fn scene_breaks(&self) -> &BTreeSet<i64> {
        &self.scene_breaks
    }

    /// Number of messages at or before position `seq`.
    pub fn count_through(&self, seq: i64) -> usize {
        self.messages.range(..=seq).count()
    }

    /// The running recap.
    pub fn recaps(&self) -> &RunningRecaps {
        &self.recaps
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
                    let index = m.swipe_id;
                    if let Some(swipe) = m.swipes.get_mut(index) {
                        swipe.text = text;
                    }
                    m.text_tokens = None;
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

    /// The current swipe's data of a message.
    pub fn message_data(&self, message_id: &str) -> Result<&MessageData, DomainError> {
        let seq = self.seq_of(message_id)?;
        Ok(self.messages[&seq].data())
    }

    /// Sets the present fields of `update` on a message's current swipe.
    pub fn set_message_data(
        &mut self,
        message_id: &str,
        update: &MessageData,
    ) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        self.update(seq, |m| m.data_mut().merge(update))
    }

    /// ST-Auto-Recap's `clear_memory` on a message's current swipe.
    pub fn clear_memory(&mut self, message_id: &str) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        self.update(seq, |m| m.data_mut().clear_memory())
    }

    /// Adds a running-recap version; its scene message ids must exist.
    pub fn add_recap(
        &mut self,
        new: NewRecap,
        created_at_ms: i64,
    ) -> Result<(u32, Changes), DomainError> {
        for (field, id) in [
            ("prev_scene_message_id", &new.prev_scene_message_id),
            ("new_scene_message_id", &new.new_scene_message_id),
        ] {
            if let Some(id) = id
                && !self.index.contains_key(id)
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
            .get(message_id)
            .copied()
            .ok_or_else(|| DomainError::NotFound(format!("message {message_id:?}")))
    }

    fn insert(&mut self, seq: i64, message: Message) {
        self.index.insert(message.id.clone(), seq);
        if message.data().is_visible_scene_break() {
            self.scene_breaks.insert(seq);
        } else {
            self.scene_breaks.remove(&seq);
        }
        self.messages.insert(seq, message);
    }

    fn remove(&mut self, seq: i64) -> Option<Message> {
        let message = self.messages.remove(&seq)?;
        self.index.remove(&message.id);
        self.scene_breaks.remove(&seq);
        Some(message)
    }

    fn update(
        &mut self,
        seq: i64,
        change: impl FnOnce(&mut Message),
    ) -> Result<Changes, DomainError> {
        let Some(mut message) = self.remove(seq) else {
            return Err(DomainError::NotFound(format!("message at {seq}")));
        };
        change(&mut message);
        let mut changes = Changes::default();
        changes.messages_put.insert(message.id.clone());
        self.insert(seq, message);
        Ok(changes)
    }

    fn append(&mut self, message: Message) -> Result<Changes, DomainError> {
        self.refuse_known(&message.id)?;
        let seq = self.messages.keys().next_back().map_or(0, |last| last + 1);
        let mut changes = Changes::default();
        changes.messages_put.insert(message.id.clone());
        self.insert(seq, message);
        Ok(changes)
    }

    fn prepend(&mut self, messages: Vec<Message>) -> Result<Changes, DomainError> {
        refuse_duplicates(&messages)?;
        for m in &messages {
            self.refuse_known(&m.id)?;
        }
        let first = self.messages.keys().next().copied().unwrap_or(0);
        let count = i64::try_from(messages.len()).unwrap_or(i64::MAX);
        let mut changes = Changes::default();
        for (offset, message) in (0..).zip(messages) {
            changes.messages_put.insert(message.id.clone());
            self.insert(first - count + offset, message);
        }
        Ok(changes)
    }

    fn replace_transcript(&mut self, messages: Vec<Message>) -> Result<Changes, DomainError> {
        let mut changes = Changes::default();
        if messages.is_empty() {
            return Ok(changes);
        }
        refuse_duplicates(&messages)?;
        let mut old: HashMap<String, Message> = std::mem::take(&mut self.messages)
            .into_values()
            .map(|m| (m.id.clone(), m))
            .collect();
        self.index.clear();
        self.scene_breaks.clear();
        for (seq, incoming) in (0..).zip(messages) {
            let message = match old.remove(&incoming.id) {
                Some(mut known) => {
                    known.take_content_of(incoming);
                    known
                }
                None => incoming,
            };
            changes.messages_put.insert(message.id.clone());
            self.insert(seq, message);
        }
        changes.messages_removed = old.into_keys().collect();
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
                .get(id)
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
        let count = self.messages[&seq].swipes.len();
        let index = usize::try_from(swipe_id).unwrap_or(usize::MAX);
        if index > count {
            return Err(DomainError::invalid(
                "event.message_swiped.swipe_id",
                format!("{swipe_id} is more than the {count} existing swipes"),
            ));
        }
        self.update(seq, |m| {
            if index == count {
                // A new swipe: its memory starts cleared.
                m.swipes.push(Swipe {
                    text,
                    data: MessageData::default(),
                });
            } else if !text.is_empty() {
                m.swipes[index].text = text;
            }
            m.swipe_id = index;
            m.text_tokens = None;
        })
    }

    fn refuse_known(&self, id: &str) -> Result<(), DomainError> {
        if self.index.contains_key(id) {
            return Err(DomainError::AlreadyExists(format!("message {id:?}")));
        }
        Ok(())
    }
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
pub(crate) mod tests {
    use super::*;
    use crate::domain::Limits;
    use crate::domain::message::NewMessage;

    pub(crate) fn msg(id: &str, text: &str) -> Message {
        NewMessage {
            id: id.into(),
            text: text.into(),
            ..Default::default()
        }
        .build("message", &Limits::default())
        .unwrap()
    }

    pub(crate) fn ids(chat: &Chat) -> Vec<String> {
        chat.messages().map(|(_, m)| m.id.clone()).collect()
    }

    fn chat_of(list: &[&str]) -> Chat {
        let mut chat = Chat::default();
        chat.apply(ChatEvent::ChatChanged(
            list.iter().map(|id| msg(id, id)).collect(),
        ))
        .unwrap();
        chat
    }

    #[test]
    fn sent_and_received_append_and_more_loaded_prepends_in_order() {
        let mut chat = chat_of(&["b"]);
        chat.apply(ChatEvent::MessageSent(msg("c", "hi"))).unwrap();
        chat.apply(ChatEvent::MessageReceived(msg("d", "yo")))
            .unwrap();
        chat.apply(ChatEvent::MoreMessagesLoaded(vec![
            msg("x", ""),
            msg("a", ""),
        ]))
        .unwrap();
        assert_eq!(ids(&chat), ["x", "a", "b", "c", "d"]);
    }

    #[test]
    fn a_message_id_used_twice_is_already_exists_and_changes_nothing() {
        let mut chat = chat_of(&["a", "b"]);
        let err = chat
            .apply(ChatEvent::MessageSent(msg("a", "")))
            .unwrap_err();
        assert!(matches!(err, DomainError::AlreadyExists(_)));
        let err = chat
            .apply(ChatEvent::MoreMessagesLoaded(vec![
                msg("z", ""),
                msg("b", ""),
            ]))
            .unwrap_err();
        assert!(matches!(err, DomainError::AlreadyExists(_)));
        let err = chat
            .apply(ChatEvent::ChatChanged(vec![msg("q", ""), msg("q", "")]))
            .unwrap_err();
        assert!(matches!(err, DomainError::AlreadyExists(_)));
        assert_eq!(ids(&chat), ["a", "b"]);
    }

    #[test]
    fn chat_changed_keeps_known_data_takes_new_text_and_the_lists_order() {
        let mut chat = chat_of(&["a", "b", "c"]);
        chat.set_message_data(
            "b",
            &MessageData {
                memory: Some("recap of b".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let changes = chat
            .apply(ChatEvent::ChatChanged(vec![
                msg("b", "new b"),
                msg("n", ""),
                msg("a", ""),
            ]))
            .unwrap();
        assert_eq!(ids(&chat), ["b", "n", "a"]);
        assert_eq!(changes.messages_removed, BTreeSet::from(["c".to_owned()]));
        let (_, b) = chat.message("b").unwrap();
        assert_eq!(b.text(), "new b");
        assert_eq!(b.data().memory.as_deref(), Some("recap of b"));
        // An empty list only opens the chat.
        chat.apply(ChatEvent::ChatChanged(vec![])).unwrap();
        assert_eq!(ids(&chat), ["b", "n", "a"]);
    }

    #[test]
    fn edit_changes_the_current_swipe_text_and_unknown_ids_are_not_found() {
        let mut chat = chat_of(&["a"]);
        chat.apply(ChatEvent::MessageEdited {
            message_id: "a".into(),
            text: "edited".into(),
        })
        .unwrap();
        assert_eq!(chat.message("a").unwrap().1.text(), "edited");
        for event in [
            ChatEvent::MessageEdited {
                message_id: "zz".into(),
                text: String::new(),
            },
            ChatEvent::MessageDeleted {
                message_id: "zz".into(),
            },
            ChatEvent::MessageSwiped {
                message_id: "zz".into(),
                swipe_id: 0,
                text: String::new(),
            },
        ] {
            assert!(matches!(chat.apply(event), Err(DomainError::NotFound(_))));
        }
    }

    #[test]
    fn a_new_swipe_starts_with_empty_data_and_old_swipes_keep_theirs() {
        let mut chat = chat_of(&["a"]);
        let data = MessageData {
            memory: Some("first".into()),
            ..Default::default()
        };
        chat.set_message_data("a", &data).unwrap();
        let swipe = |id: u32, text: &str| ChatEvent::MessageSwiped {
            message_id: "a".into(),
            swipe_id: id,
            text: text.into(),
        };
        chat.apply(swipe(1, "second")).unwrap();
        assert_eq!(chat.message_data("a").unwrap(), &MessageData::default());
        assert_eq!(chat.message("a").unwrap().1.text(), "second");
        chat.apply(swipe(0, "")).unwrap();
        assert_eq!(chat.message_data("a").unwrap(), &data);
        assert_eq!(chat.message("a").unwrap().1.text(), "a");
        let err = chat.apply(swipe(5, "")).unwrap_err();
        assert!(err.to_string().contains("swipe_id"), "{err}");
    }

    #[test]
    fn scene_breaks_track_the_current_swipe() {
        let mut chat = chat_of(&["a", "b"]);
        let brk = MessageData {
            scene_break: Some(true),
            ..Default::default()
        };
        chat.set_message_data("b", &brk).unwrap();
        assert_eq!(chat.scene_breaks().len(), 1);
        chat.apply(ChatEvent::MessageSwiped {
            message_id: "b".into(),
            swipe_id: 1,
            text: "other".into(),
        })
        .unwrap();
        assert!(chat.scene_breaks().is_empty());
        chat.apply(ChatEvent::MessageDeleted {
            message_id: "a".into(),
        })
        .unwrap();
        assert_eq!(ids(&chat), ["b"]);
    }

    #[test]
    fn deleting_a_scene_message_deletes_the_versions_that_need_it() {
        let mut chat = chat_of(&["s1", "s2", "x"]);
        let scene = MessageData {
            scene_recap_memory: Some("scene recap".into()),
            ..Default::default()
        };
        chat.set_message_data("s1", &scene).unwrap();
        let add = |chat: &mut Chat, scene: Option<&str>| {
            chat.add_recap(
                NewRecap {
                    content: "c".into(),
                    new_scene_message_id: scene.map(str::to_owned),
                    ..Default::default()
                },
                0,
            )
            .unwrap()
            .0
        };
        let keep_unreferenced = add(&mut chat, None);
        let keep_s1 = add(&mut chat, Some("s1"));
        let lose_no_recap = add(&mut chat, Some("s2"));
        let lose_deleted = add(&mut chat, Some("x"));
        let changes = chat
            .apply(ChatEvent::MessageDeleted {
                message_id: "x".into(),
            })
            .unwrap();
        assert_eq!(
            changes.recaps_removed,
            BTreeSet::from([lose_no_recap, lose_deleted])
        );
        let left: Vec<u32> = chat.recaps().versions().map(|v| v.version).collect();
        assert_eq!(left, [keep_unreferenced, keep_s1]);
        assert_eq!(chat.recaps().current_version(), Some(keep_s1));
    }

    #[test]
    fn adding_a_recap_for_an_unknown_scene_message_is_not_found() {
        let mut chat = chat_of(&["a"]);
        let err = chat
            .add_recap(
                NewRecap {
                    prev_scene_message_id: Some("nope".into()),
                    ..Default::default()
                },
                0,
            )
            .unwrap_err();
        assert!(matches!(err, DomainError::NotFound(_)));
        assert_eq!(chat.recaps().versions().count(), 0);
    }

    #[test]
    fn from_parts_restores_order_and_scene_breaks() {
        let mut chat = chat_of(&["a", "b", "c"]);
        chat.set_message_data(
            "c",
            &MessageData {
                scene_break: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
        let rows: Vec<(i64, Message)> =
            chat.messages().rev().map(|(s, m)| (s, m.clone())).collect();
        let back = Chat::from_parts(rows, vec![], None);
        assert_eq!(ids(&back), ["a", "b", "c"]);
        assert_eq!(back.scene_breaks(), chat.scene_breaks());
    }
}
