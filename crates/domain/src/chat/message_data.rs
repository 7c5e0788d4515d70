//! A message's recap data: reading it (of any swipe), setting, editing and
//! clearing it, and selecting a scene-recap version.

use super::{Changes, Chat};
use crate::DomainError;
use crate::message::{Message, MessageData};

impl Chat {
    /// The current swipe's data of a message.
    pub fn message_data(&self, message_id: &str) -> Result<&MessageData, DomainError> {
        let seq = self.seq_of(message_id)?;
        // The index holds only positions in the list (its invariant).
        self.messages
            .get(seq)
            .map(Message::data)
            .ok_or_else(|| DomainError::NotFound(format!("message {message_id:?}")))
    }

    /// Sets the present fields of `update` on a message's current swipe
    /// (all or, when the update is refused, none).
    pub fn set_message_data(
        &mut self,
        message_id: &str,
        update: &MessageData,
    ) -> Result<Changes, DomainError> {
        self.change_data(message_id, |data| data.merge(update))
    }

    /// A hand edit of a message's memory on its current swipe: the other
    /// present fields of `update` are set as [`Chat::set_message_data`]
    /// sets them, then its `memory` as ST-Auto-Recap's `edit_memory` does
    /// ([`MessageData::edit_memory`]). An update without `memory` is
    /// refused.
    pub fn edit_message_data(
        &mut self,
        message_id: &str,
        update: &MessageData,
    ) -> Result<Changes, DomainError> {
        let Some(text) = update.memory.as_deref() else {
            return Err(DomainError::invalid(
                "data.memory",
                "an edit sets the memory: give data.memory (\"\" empties it)",
            ));
        };
        let others = MessageData {
            memory: None,
            ..update.clone()
        };
        self.change_data(message_id, |data| {
            data.merge(&others)?;
            data.edit_memory(text);
            Ok(())
        })
    }

    /// Makes scene-recap version `index` of a message's current swipe
    /// current (its text becomes the scene recap).
    pub fn select_scene_recap_version(
        &mut self,
        message_id: &str,
        index: u32,
    ) -> Result<Changes, DomainError> {
        self.change_data(message_id, |data| data.select_scene_recap_version(index))
    }

    /// The data of swipe `swipe_id` of a message (its current swipe's
    /// when `None`).
    pub fn swipe_data(
        &self,
        message_id: &str,
        swipe_id: Option<u32>,
    ) -> Result<&MessageData, DomainError> {
        let Some(swipe_id) = swipe_id else {
            return self.message_data(message_id);
        };
        let seq = self.seq_of(message_id)?;
        let message = self
            .messages
            .get(seq)
            .ok_or_else(|| DomainError::NotFound(format!("message {message_id:?}")))?;
        usize::try_from(swipe_id)
            .ok()
            .and_then(|i| message.swipes.get(i))
            .map(|swipe| &*swipe.data)
            .ok_or_else(|| {
                DomainError::invalid(
                    "swipe_id",
                    format!(
                        "{swipe_id} is not a swipe of message {message_id:?} (it has {})",
                        message.swipes.len()
                    ),
                )
            })
    }

    /// Changes a message's current-swipe data with `change`; a refused
    /// change leaves the data as it was.
    fn change_data(
        &mut self,
        message_id: &str,
        change: impl FnOnce(&mut MessageData) -> Result<(), DomainError>,
    ) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        let mut data = self.message_data(message_id)?.clone();
        change(&mut data)?;
        self.update(seq, |m| {
            *m.data_mut() = data;
            m.data_changed();
        })
    }

    /// ST-Auto-Recap's `clear_memory` on a message's current swipe.
    pub fn clear_memory(&mut self, message_id: &str) -> Result<Changes, DomainError> {
        let seq = self.seq_of(message_id)?;
        self.update(seq, |m| {
            m.data_mut().clear_memory();
            m.data_changed();
        })
    }
}
