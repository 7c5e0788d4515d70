//! The engine's read for `RenderPrompt`: a chat's injections, transcript
//! and hidden state, taken in one read under the chat's lock.

use std::sync::Arc;

use super::slot::Resident;
use super::{Chats, EngineError};
use crate::domain::ids::ChatKey;
use crate::domain::prompt::{self, PromptMessage};
use crate::domain::refresh::{Injection, InjectionKey};
use crate::domain::settings::Settings;

/// What a chat gives a rendered prompt, all read at one moment of the chat.
#[derive(Debug, Clone)]
pub struct ChatPrompt {
    /// The chat's injections, `auto_recap_scene`, `auto_recap_messages`
    /// then `auto_recap_recall` (each as [`Chats::injection`] answers it).
    pub injections: [Arc<Injection>; 3],
    /// The history to render: the request's, its linked entries carrying
    /// the stored messages' hidden state, or, when the request gave none,
    /// the chat's visible stored transcript.
    pub history: Vec<PromptMessage>,
}

/// A loaded chat's injection of `key` as it stands: the latest refresh's
/// result, or, for a chat never refreshed, empty text placed where a
/// refresh would place it now, at revision 0 (for a chat re-created after
/// a deletion, the deleted chat's last revision).
pub(super) fn stored_injection(
    resident: &Resident,
    chat_id: &ChatKey,
    settings: &Settings,
    key: InjectionKey,
) -> Arc<Injection> {
    let stored = match key {
        InjectionKey::Scene => &resident.meta.injection,
        InjectionKey::Messages => &resident.meta.message_injection,
        InjectionKey::Recall => &resident.meta.recall_injection,
    };
    if let Some(latest) = stored {
        return latest.clone();
    }
    let enabled = settings.chat_enabled(resident.settings().enabled);
    let mut unrefreshed = Injection::unrefreshed(chat_id, settings, enabled, key);
    // A chat re-created after a deletion is not at 0: its revisions went
    // on past the deleted chat's.
    unrefreshed.revision = match key {
        InjectionKey::Scene => resident.meta.revision,
        InjectionKey::Messages => resident.meta.message_revision_floor,
        InjectionKey::Recall => resident.meta.recall_revision_floor,
    };
    Arc::new(unrefreshed)
}

impl Chats {
    /// A chat's part of a rendered prompt ([`ChatPrompt`]), read under the
    /// chat's lock so the injections, the transcript and the hidden state
    /// (by hand, and auto-hide with the chat's current settings) agree.
    /// An empty `history` becomes the chat's visible stored transcript;
    /// otherwise each entry with a `message_id` takes that message's hidden
    /// state ([`prompt::link_history`]).
    ///
    /// # Errors
    /// NotFound for an unknown chat or a `message_id` the chat does not
    /// hold; store errors while loading the chat.
    pub async fn chat_prompt(
        &self,
        chat_id: &ChatKey,
        mut history: Vec<PromptMessage>,
    ) -> Result<ChatPrompt, EngineError> {
        let global = self.global(&chat_id.tenant);
        self.read_chat(chat_id, |resident| {
            let settings = resident.effective(&global, &chat_id.id);
            let chat = resident
                .chat
                .as_ref()
                .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
            let scene_count = settings.inclusion.auto_hide_scene_count;
            if history.is_empty() {
                history = prompt::chat_history(chat, scene_count);
            } else {
                prompt::link_history(&mut history, chat, scene_count)?;
            }
            let injections = [
                InjectionKey::Scene,
                InjectionKey::Messages,
                InjectionKey::Recall,
            ]
            .map(|key| stored_injection(resident, chat_id, &settings, key));
            Ok(ChatPrompt {
                injections,
                history,
            })
        })
        .await
    }
}
