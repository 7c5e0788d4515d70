//! Whole chats in and out as SillyTavern chat files: an import replaces a
//! chat in one commit; an export reads a snapshot that later changes do
//! not touch. Neither copies the chat: the imported chat is shared with the
//! store while it is written, and an export shares the chat in memory
//! (a change made during an export copies it first).

use std::sync::Arc;

use super::ops::{missing_state, unknown_chat};
use super::{Engine, EngineError, Next};
use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::refresh::Trigger;
use crate::domain::st_chat::{ImportedChat, st_chat_lines};
use crate::store::{SharedChat, Write};

/// The lines of a chat's SillyTavern file, without their newlines, made
/// one at a time (the one place exports write a chat).
pub fn chat_file_lines<'a>(chat_id: &'a str, chat: &'a Chat) -> impl Iterator<Item = String> + 'a {
    st_chat_lines(chat_id, chat)
}

impl Engine {
    /// Replaces a chat (created when new) with one read from a SillyTavern
    /// file: all its messages and running-recap versions, in one commit
    /// with an immediate refresh (trigger CHAT_CHANGED): a reader sees the
    /// old chat or the new one. On failure nothing is stored, and a new
    /// chat takes no place under `--max-chats`. Answers with the number of
    /// messages and of versions.
    pub async fn import_chat(
        &self,
        chat_id: &ChatKey,
        imported: ImportedChat,
    ) -> Result<(usize, usize), EngineError> {
        let held = parking_lot::Mutex::new(Some(Arc::new(imported.into_chat())));
        self.retrying(|| self.import_chat_once(chat_id, &held))
            .await
    }

    /// One attempt. The chat is taken from `held`: once committed, memory
    /// holds the only reference, so the chat's next change copies nothing.
    /// With a shared store a conflict retries, so `held` keeps one too.
    async fn import_chat_once(
        &self,
        chat_id: &ChatKey,
        held: &parking_lot::Mutex<Option<Arc<Chat>>>,
    ) -> Result<(usize, usize), EngineError> {
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let chat = held.lock().take().ok_or_else(missing_state)?;
        if self.shared() {
            *held.lock() = Some(chat.clone());
        }
        let place = match resident.chat {
            None => Some(self.reserve_chat()?),
            Some(_) => None,
        };
        let writes = vec![Write::ReplaceChat {
            chat: chat_id.clone(),
            content: SharedChat(chat.clone()),
        }];
        let counts = (chat.len(), chat.recaps().versions().count());
        resident.chat = Some(chat);
        self.commit_detached(&slot, guard, writes, Next::Refresh(Trigger::ChatChanged))
            .await?;
        if let Some(place) = place {
            place.keep();
        }
        Ok(counts)
    }

    /// A chat as it is now, shared rather than copied: later changes do not
    /// touch it. Write it with [`chat_file_lines`].
    pub async fn chat_snapshot(&self, chat_id: &ChatKey) -> Result<Arc<Chat>, EngineError> {
        self.read_chat(chat_id, |resident| {
            resident.chat.clone().ok_or_else(|| unknown_chat(chat_id))
        })
        .await
    }

    /// A chat as a whole SillyTavern chat file.
    pub async fn export_chat(&self, chat_id: &ChatKey) -> Result<Vec<u8>, EngineError> {
        let chat = self.chat_snapshot(chat_id).await?;
        let mut out = Vec::new();
        for line in chat_file_lines(&chat_id.id, &chat) {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        Ok(out)
    }
}
