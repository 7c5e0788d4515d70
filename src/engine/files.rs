//! Whole chats in and out as SillyTavern chat files: an import replaces a
//! chat in one commit, with its World Info state (the chat's
//! `world_info_chat_book` override and its timed effects); an export reads
//! a snapshot that later changes do not touch. Neither copies the chat: the imported chat is shared with the
//! store while it is written, and an export shares the chat in memory
//! (a change made during an export copies it first).

use std::sync::Arc;

use super::chats::Change;
use super::chats::ChatPlace;
use super::commit::Commit;
use super::slot::Resident;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::chat::Chat;
use crate::domain::ids::{ChatKey, check_chat_id};
use crate::domain::refresh::Trigger;
use crate::domain::st_chat::world_info::ChatWorldInfo;
use crate::domain::st_chat::{ImportedChat, st_chat_lines_of};
use crate::store::{BranchOrigin, SharedChat, Write};

/// A chat as it was at one moment, shared rather than copied (later
/// changes do not touch it), with what its export needs besides: the
/// chat's auto-hide count then, since `is_system` is written for messages
/// hidden by hand or by auto-hide, and its World Info state then.
#[derive(Debug, Clone)]
pub struct ChatSnapshot {
    /// The chat.
    pub chat: Arc<Chat>,
    /// The chat's effective `auto_hide_scene_count` at the snapshot.
    pub auto_hide_scene_count: u32,
    /// What the file's `chat_metadata.world_info` and `timedWorldInfo` are
    /// written from: the chat's own `world_info_chat_book` override (not
    /// the global value: in SillyTavern the chat book belongs to the chat)
    /// and its timed effects.
    pub world_info: ChatWorldInfo,
    /// Whether the chat is in a group (its header is then a group chat's).
    pub group_chat: bool,
    /// The chat it is a branch of (its row's parent), written as the
    /// file's `chat_metadata.main_chat`; `None` for a chat that is none.
    pub parent: Option<String>,
}

impl ChatSnapshot {
    /// The lines of the chat's SillyTavern file, without their newlines,
    /// made one at a time (the one place exports write a chat).
    pub fn lines<'a>(&'a self, chat_id: &'a str) -> impl Iterator<Item = String> + 'a {
        st_chat_lines_of(
            chat_id,
            &self.chat,
            self.auto_hide_scene_count,
            &self.world_info,
            self.group_chat,
            self.parent.as_deref(),
        )
    }
}

/// What an import answers with once committed: its counts of messages and
/// versions, and the place under `--max-chats` of the chat it created.
type Imported<'a> = ((usize, usize), Option<ChatPlace<'a>>);

/// An import on its way into memory and the store: parsed, then built
/// into a chat by its first attempt (with the chat's auto-hide count as it
/// is then), which later attempts reuse.
enum Held {
    Parsed(Box<ImportedChat>),
    Built(Arc<Chat>),
}

/// The character of an imported chat: the `original_avatar` (character
/// key) of its character messages (neither the user's nor the narrator's)
/// when they all that have one have the same; `None` when none has one or
/// they differ (a group chat).
pub fn imported_character(chat: &Chat) -> Option<String> {
    let mut keys = chat
        .messages()
        .map(|(_, m)| m)
        .filter(|m| !m.is_user && !m.is_narrator && !m.character_key.is_empty())
        .map(|m| m.character_key.as_str());
    let first = keys.next()?;
    keys.all(|key| key == first).then(|| first.to_owned())
}

impl Chats {
    /// Replaces a chat (created when new) with one read from a SillyTavern
    /// file: all its messages and running-recap versions, its parent when
    /// the file is a branch or checkpoint (`main_chat`; none otherwise),
    /// and its World Info state as the file has it (the chat's `world_info_chat_book`
    /// override is the file's `chat_metadata.world_info`, and cleared when
    /// the file has none; its timed effects are the file's
    /// `timedWorldInfo`, or none), in one commit with an immediate refresh
    /// (trigger CHAT_CHANGED): a reader sees the old chat or the new one.
    /// On failure nothing is stored, and a new chat takes no place under
    /// `--max-chats`. Answers with the number of messages and of versions.
    pub async fn import_chat(
        &self,
        chat_id: &ChatKey,
        imported: ImportedChat,
    ) -> Result<(usize, usize), EngineError> {
        self.import_chat_in_group(chat_id, imported, None).await
    }

    /// [`Chats::import_chat`], the chat then in group `group_id` when
    /// given (else in the group it was in). Either way the chat's
    /// character becomes its character messages' one
    /// ([`imported_character`]).
    pub async fn import_chat_in_group(
        &self,
        chat_id: &ChatKey,
        imported: ImportedChat,
        group_id: Option<String>,
    ) -> Result<(usize, usize), EngineError> {
        self.import_with(chat_id, imported, group_id, false).await
    }

    /// [`Chats::import_chat_in_group`]; when `new_only`, `AlreadyExists`
    /// if `chat_id` is a chat already (nothing changes).
    pub(super) async fn import_with(
        &self,
        chat_id: &ChatKey,
        mut imported: ImportedChat,
        group_id: Option<String>,
        new_only: bool,
    ) -> Result<(usize, usize), EngineError> {
        let world_info = std::mem::take(&mut imported.world_info);
        // A parent that is no valid chat id (a hostile file's may be as long
        // as the file) is not recorded; the file's header keeps it, so an
        // export still writes it back.
        let parent = imported
            .parent
            .take()
            .filter(|chat_id| check_chat_id("chat_metadata.main_chat", chat_id).is_ok())
            .map(|chat_id| BranchOrigin {
                chat_id,
                message_id: String::new(),
            });
        let held = parking_lot::Mutex::new(Some(Held::Parsed(Box::new(imported))));
        let (counts, place) = self
            .update(chat_id, |_, resident| {
                if new_only && resident.chat.is_some() {
                    return Err(DomainError::AlreadyExists(format!("chat {:?}", chat_id.id)).into());
                }
                self.import_into(chat_id, resident, &held, (&world_info, &group_id, &parent))
            })
            .await?;
        if let Some(place) = place {
            place.keep();
        }
        Ok(counts)
    }

    /// One attempt's change. The chat is taken from `held`: once
    /// committed, memory holds the only reference, so the chat's next
    /// change copies nothing. With a shared store a conflict retries, so
    /// `held` keeps one too.
    fn import_into(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        held: &parking_lot::Mutex<Option<Held>>,
        (world_info, group_id, parent): (&ChatWorldInfo, &Option<String>, &Option<BranchOrigin>),
    ) -> Result<Change<Imported<'_>>, EngineError> {
        let auto_hide = resident
            .effective(&self.global(&chat_id.tenant), &chat_id.id)
            .inclusion
            .auto_hide_scene_count;
        let chat = match held.lock().take().ok_or_else(EngineError::import_lost)? {
            Held::Parsed(imported) => Arc::new(imported.into_chat(auto_hide)),
            Held::Built(chat) => chat,
        };
        if self.shared() {
            *held.lock() = Some(Held::Built(chat.clone()));
        }
        let place = match resident.chat {
            None => Some(self.reserve_chat()?),
            Some(_) => None,
        };
        let mut writes = vec![Write::ReplaceChat {
            chat: chat_id.clone(),
            content: SharedChat(chat.clone()),
        }];
        // The chat book is a setting of the chat's own; only that field
        // changes (nothing any check of the settings reads).
        let mut own = resident.settings().clone();
        if own.overrides.world_info_chat_book != world_info.book {
            own.overrides
                .world_info_chat_book
                .clone_from(&world_info.book);
            resident.set_settings(own.clone());
            writes.push(Write::ChatSettings {
                chat: chat_id.clone(),
                settings: own,
            });
        }
        // The chat's row, written by the commit, carries the timed effects
        // and the chat's character.
        resident.meta.world_info_timed.clone_from(&world_info.timed);
        resident.meta.character_key = imported_character(&chat);
        // A SillyTavern branch or checkpoint file names its parent; a file
        // that names none makes the chat no branch.
        resident.meta.branched_from.clone_from(parent);
        if group_id.is_some() {
            resident.meta.group_id.clone_from(group_id);
        }
        let counts = (chat.len(), chat.recaps().versions().count());
        resident.chat = Some(chat);
        let commit = Commit::one(writes, Next::Refresh(Trigger::ChatChanged));
        Ok(Change::Commit(commit, (counts, place)))
    }

    /// A chat as it is now ([`ChatSnapshot`]).
    pub async fn chat_snapshot(&self, chat_id: &ChatKey) -> Result<ChatSnapshot, EngineError> {
        let global = self.global(&chat_id.tenant);
        self.read_chat(chat_id, |resident| {
            let chat = resident
                .chat
                .clone()
                .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
            Ok(ChatSnapshot {
                chat,
                auto_hide_scene_count: resident
                    .effective(&global, &chat_id.id)
                    .inclusion
                    .auto_hide_scene_count,
                world_info: ChatWorldInfo {
                    book: resident.settings().overrides.world_info_chat_book.clone(),
                    timed: resident.meta.world_info_timed.clone(),
                },
                group_chat: global
                    .group_of(crate::domain::profiles::ChatIdentity {
                        chat_id: &chat_id.id,
                        character_key: None,
                        group_id: resident.meta.group_id.as_deref(),
                    })
                    .is_some(),
                parent: resident
                    .meta
                    .branched_from
                    .as_ref()
                    .map(|origin| origin.chat_id.clone()),
            })
        })
        .await
    }

    /// A chat as a whole SillyTavern chat file.
    pub async fn export_chat(&self, chat_id: &ChatKey) -> Result<Vec<u8>, EngineError> {
        let snapshot = self.chat_snapshot(chat_id).await?;
        let mut out = Vec::new();
        for line in snapshot.lines(&chat_id.id) {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        Ok(out)
    }
}
