//! The engine's chat operations, one per API call (settings ones are in
//! `settings_ops`): each locks its chat, applies the domain change, and lets
//! [`Chats::commit`] refresh and commit.

use std::sync::Arc;

use super::chats::Change;
use super::commit::Commit;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::chat::{Changes, Chat};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::inclusion::{self, MessageInclusion};
use crate::domain::message::MessageData;
use crate::domain::recaps::{NewRecap, RecapVersion};
use crate::domain::refresh::{Injection, InjectionKey, Trigger};

use crate::store::Write;

use super::catch_up::CatchUp;
use super::fanout::Updates;
use super::prompt::stored_injection;
use super::slot::Resident;

/// A chat's running-recap versions, ascending, and the current one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecapList {
    /// The current version.
    pub current: Option<u32>,
    /// Every version, ascending.
    pub versions: Vec<RecapVersion>,
}

/// The rows `changes` touched, read from the chat as it now is.
pub(super) fn writes_for(key: &ChatKey, chat: &Chat, changes: &Changes) -> Vec<Write> {
    let mut writes = Vec::new();
    for id in &changes.messages_put {
        if let Some((seq, message)) = chat.message(id) {
            writes.push(Write::Message {
                chat: key.clone(),
                seq,
                message: message.clone(),
            });
        }
    }
    for id in &changes.messages_removed {
        writes.push(Write::DeleteMessage {
            chat: key.clone(),
            message_id: id.clone(),
        });
    }
    for version in &changes.recaps_put {
        if let Some(v) = chat.recaps().get(*version) {
            writes.push(Write::Recap {
                chat: key.clone(),
                version: v.clone(),
            });
        }
    }
    for version in &changes.recaps_removed {
        writes.push(Write::DeleteRecap {
            chat: key.clone(),
            version: *version,
        });
    }
    writes
}

/// The chat, for reading: a shared chat (an export under way) stays shared.
pub(super) fn known_chat_ref<'a>(
    resident: &'a Resident,
    key: &ChatKey,
) -> Result<&'a Chat, EngineError> {
    resident
        .chat
        .as_deref()
        .ok_or_else(|| EngineError::unknown_chat(key))
}

/// The chat, for changing: a shared chat is copied first.
pub(super) fn known_chat<'a>(
    resident: &'a mut Resident,
    key: &ChatKey,
) -> Result<&'a mut Chat, EngineError> {
    resident
        .chat
        .as_mut()
        .map(Arc::make_mut)
        .ok_or_else(|| EngineError::unknown_chat(key))
}

fn recap_list(chat: &Chat) -> RecapList {
    RecapList {
        current: chat.recaps().current_version(),
        versions: chat.recaps().versions().cloned().collect(),
    }
}

impl Chats {
    /// A message's data: of its current swipe, or of swipe `swipe_id`.
    pub async fn message_data(
        &self,
        chat_id: &ChatKey,
        message_id: &str,
        swipe_id: Option<u32>,
    ) -> Result<MessageData, EngineError> {
        self.read_chat(chat_id, |resident| {
            Ok(known_chat_ref(resident, chat_id)?
                .swipe_data(message_id, swipe_id)?
                .clone())
        })
        .await
    }

    /// Sets present fields on a message's current swipe (debounced
    /// refresh); with `edit`, its memory as a hand edit
    /// ([`Chat::edit_message_data`]).
    pub async fn set_message_data(
        &self,
        chat_id: &ChatKey,
        message_id: &str,
        update: &MessageData,
        edit: bool,
    ) -> Result<MessageData, EngineError> {
        update.check(self.limits())?;
        let max_bytes = self.limits().max_text_bytes;
        self.change_message_data(chat_id, message_id, |chat| {
            let mut changes = if edit {
                chat.edit_message_data(message_id, update)?
            } else {
                chat.set_message_data(message_id, update)?
            };
            changes.messages_put.extend(
                chat.fit_scene_recap_versions(message_id, max_bytes)?
                    .messages_put,
            );
            Ok(changes)
        })
        .await
    }

    /// Makes another scene-recap version of a message's current swipe
    /// current (debounced refresh).
    pub async fn select_scene_recap_version(
        &self,
        chat_id: &ChatKey,
        message_id: &str,
        index: u32,
    ) -> Result<MessageData, EngineError> {
        self.change_message_data(chat_id, message_id, |chat| {
            chat.select_scene_recap_version(message_id, index)
        })
        .await
    }

    /// `clear_memory` on a message's current swipe (debounced refresh).
    pub async fn clear_memory(
        &self,
        chat_id: &ChatKey,
        message_id: &str,
    ) -> Result<MessageData, EngineError> {
        self.change_message_data(chat_id, message_id, |chat| chat.clear_memory(message_id))
            .await
    }

    async fn change_message_data(
        &self,
        chat_id: &ChatKey,
        message_id: &str,
        change: impl Fn(&mut Chat) -> Result<Changes, DomainError> + Sync,
    ) -> Result<MessageData, EngineError> {
        self.update(chat_id, |_, resident| {
            let chat = known_chat(resident, chat_id)?;
            let changes = change(chat)?;
            let writes = writes_for(chat_id, chat, &changes);
            let data = chat.message_data(message_id)?.clone();
            let next = Next::Debounce(Trigger::MessageDataChanged);
            Ok(Change::Commit(Commit::one(writes, next), data))
        })
        .await
    }

    /// Adds a running-recap version and makes it current (immediate refresh).
    pub async fn add_recap(
        &self,
        chat_id: &ChatKey,
        new: NewRecap,
    ) -> Result<RecapVersion, EngineError> {
        self.limits().check_text("content", &new.content)?;
        self.change_recaps(chat_id, |chat| {
            let (version, changes) = chat.add_recap(new.clone(), self.now_ms())?;
            let added =
                chat.recaps().get(version).cloned().ok_or_else(|| {
                    DomainError::NotFound(format!("running recap version {version}"))
                })?;
            Ok((added, changes))
        })
        .await
        .map(|(_, added)| added)
    }

    /// Makes a version current (immediate refresh).
    pub async fn select_recap(
        &self,
        chat_id: &ChatKey,
        version: u32,
    ) -> Result<RecapList, EngineError> {
        self.change_recaps(chat_id, |chat| Ok(((), chat.select_recap(version)?)))
            .await
            .map(|(list, ())| list)
    }

    /// Deletes a version (immediate refresh).
    pub async fn delete_recap(
        &self,
        chat_id: &ChatKey,
        version: u32,
    ) -> Result<RecapList, EngineError> {
        self.change_recaps(chat_id, |chat| Ok(((), chat.delete_recap(version)?)))
            .await
            .map(|(list, ())| list)
    }

    async fn change_recaps<T>(
        &self,
        chat_id: &ChatKey,
        change: impl Fn(&mut Chat) -> Result<(T, Changes), DomainError> + Sync,
    ) -> Result<(RecapList, T), EngineError> {
        self.update(chat_id, |_, resident| {
            let chat = known_chat(resident, chat_id)?;
            let (value, changes) = change(chat)?;
            let writes = writes_for(chat_id, chat, &changes);
            let list = recap_list(chat);
            let next = Next::Refresh(Trigger::RunningRecapChanged);
            Ok(Change::Commit(Commit::one(writes, next), (list, value)))
        })
        .await
    }

    /// A chat's running-recap versions.
    pub async fn list_recaps(&self, chat_id: &ChatKey) -> Result<RecapList, EngineError> {
        self.read_chat(chat_id, |resident| {
            Ok(recap_list(known_chat_ref(resident, chat_id)?))
        })
        .await
    }

    /// The latest refresh's result for `key`; revision 0 with empty text for
    /// a known chat never refreshed (or whose message-recap tier never ran).
    pub async fn injection(
        &self,
        chat_id: &ChatKey,
        key: InjectionKey,
    ) -> Result<Arc<Injection>, EngineError> {
        let slot = self.slot(chat_id);
        let watched = slot.latest.borrow().get(key);
        let behind = slot.behind.load(std::sync::atomic::Ordering::Acquire);
        // A deleted chat's last injection is for its subscribers: a read
        // of the chat finds it unknown.
        if let Some(latest) = watched.filter(|w| !behind && !w.deleted) {
            return Ok(latest);
        }
        drop(slot);
        let global = self.global(&chat_id.tenant);
        self.read_chat(chat_id, |resident| {
            known_chat_ref(resident, chat_id)?;
            let settings = resident.effective(&global, &chat_id.id);
            Ok(stored_injection(resident, chat_id, &settings, key))
        })
        .await
    }

    /// Runs a refresh now (the Refresh RPC).
    pub async fn refresh(&self, chat_id: &ChatKey) -> Result<Arc<Injection>, EngineError> {
        self.refresh_chat(chat_id, Trigger::RefreshRequested).await
    }

    /// The inclusion of every message as a refresh would compute it now.
    pub async fn inclusion(&self, chat_id: &ChatKey) -> Result<Vec<MessageInclusion>, EngineError> {
        let global = self.global(&chat_id.tenant);
        self.read_chat(chat_id, |resident| {
            let settings = resident.effective(&global, &chat_id.id);
            let counter = self.counter(&settings);
            let key = counter.key();
            let uncounted = known_chat_ref(resident, chat_id)?
                .messages()
                .any(|(_, m)| m.text_tokens.map(|(k, _)| k) != Some(key));
            // Counted texts are kept in the chat; a chat that needs none
            // stays shared (an export under way is not copied).
            if uncounted {
                inclusion::count_texts(known_chat(resident, chat_id)?, &counter);
            }
            Ok(inclusion::compute_inclusion(
                known_chat_ref(resident, chat_id)?,
                &settings,
                &counter,
            ))
        })
        .await
    }

    /// Runs `read` on a chat's state. A chat that turns out not to exist
    /// (and has no settings, no subscriber and no other caller) does not
    /// stay in memory, so reads of made-up ids cannot fill it.
    pub(super) async fn read_chat<T>(
        &self,
        chat_id: &ChatKey,
        read: impl FnOnce(&mut Resident) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let result = read(resident);
        let unused = resident.chat.is_none()
            && *resident.settings() == crate::store::ChatSettings::default()
            && resident.debounce.is_none();
        drop(guard);
        if unused {
            self.inner.cache.forget(slot);
        }
        result
    }

    /// Updates for the named chats (after a snapshot of each that has been
    /// refreshed), or for every chat when `chat_ids` is empty.
    /// `connection` identifies the client connection, for the
    /// per-connection limit.
    pub async fn subscribe(
        &self,
        tenant: &Tenant,
        chat_ids: &[ChatKey],
        connection: Option<std::net::SocketAddr>,
    ) -> Result<Updates, EngineError> {
        let permit = self
            .inner
            .subscribers
            .admit(&self.inner.limits, connection)?;
        if chat_ids.is_empty() {
            // Read before subscribing: a chat dropped in between is read
            // back at a catch-up rather than missed.
            let catch_up = CatchUp::new(self.inner.cache.clone(), self.inner.store.clone());
            let evictions_seen = catch_up.evictions_logged();
            return Ok(Updates::all_chats(
                catch_up,
                self.inner.all_chats.subscribe(),
                permit,
                tenant.clone(),
                evictions_seen,
            ));
        }
        let mut receivers = Vec::with_capacity(chat_ids.len());
        for chat_id in chat_ids {
            let slot = self.slot(chat_id);
            // Subscribed under the chat's lock, so a concurrent catch-up
            // sees the watcher and re-reads rather than drops the chat.
            let guard = self.lock(&slot).await?;
            receivers.push((chat_id.clone(), slot.latest.subscribe()));
            drop(guard);
        }
        Ok(Updates::chats(receivers, permit))
    }
}
