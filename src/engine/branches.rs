//! Branches: a new chat made from another as it stood at one of its
//! messages (BranchChat), as SillyTavern's "Create branch" and checkpoints
//! make one, with the memory that belongs to that point of the story.
//!
//! The branch gets the messages up to its message (every swipe, their
//! data: scene breaks and scene recaps), the running-recap versions whose
//! scene ends there or before ([`Chat::branch_through`]), the chat's own
//! settings and enabled state, its character and group (so its profile),
//! its timed World Info effects (SillyTavern's rule drops, at the next
//! scan, an effect started after the branch's last message, as it does
//! for a branch file that inherited them), a copy of its chat book under
//! a new name, and the recall vectors of the passages it keeps (nothing
//! is embedded again). All of it in one commit: a crash or a replica's
//! conflict leaves no half branch. The two chats then share nothing.
//!
//! A chat started from another (StartChatFrom) is the way a long
//! roleplay goes on in a new chat: it has no message, and its first
//! running-recap version is the other chat's current one (marked as
//! carried over), so its own scenes merge on top of it; it uses the other
//! chat's book (not a copy) and its recall reaches the other chat.

use std::sync::Arc;

use super::chats::Change;
use super::commit::Commit;
use super::lorebooks::{HeldBook, templated_name};
use super::recall_state::RecallState;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::recall::StoredVector;
use crate::domain::recaps::RecapVersion;
use crate::domain::refresh::Trigger;
use crate::domain::settings::SettingsPatch;
use crate::domain::settings::{ChatIds, MAX_RECALL_CHATS};
use crate::domain::verbatim::StFile;
use crate::domain::world_info::timed::TimedState;
use crate::domain::writing::macros::speakers;
use crate::store::{BranchOrigin, ChatMeta, ChatSettings, SharedChat, Write};

/// What BranchChat made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branched {
    /// Messages in the branch.
    pub message_count: usize,
    /// Running-recap versions in the branch.
    pub running_recap_count: usize,
    /// The branch's copy of the chat book; `None` when the chat named no
    /// book (or named one that does not exist: the branch names it too).
    pub chat_book: Option<String>,
}

/// What StartChatFrom made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    /// Whether the other chat had a running recap to carry over.
    pub carried_recap: bool,
    /// The book the new chat's settings name as its chat book, if any.
    pub chat_book: Option<String>,
    /// The chats the new chat's recall reaches besides itself.
    pub recall_chats: Vec<String>,
}

/// What a SillyTavern branch file imported as a branch gives the branch
/// besides its parent's content.
pub(super) struct BranchFile {
    /// The file's header, written back by an export.
    pub header: Arc<StFile>,
    /// The group the import named; `None`: the parent's.
    pub group_id: Option<String>,
}

/// The parent as read under its lock: the branch's content and what its
/// row and settings copy.
struct Parent {
    branch: Arc<Chat>,
    settings: ChatSettings,
    meta: ChatMeta,
}

impl Chats {
    /// Makes chat `new_chat` a branch of `from` at its message
    /// `message_id` (see the module documentation). `NotFound` for an
    /// unknown chat or message; `AlreadyExists` when `new_chat` is a chat
    /// already (it is left as it is).
    pub async fn branch_chat(
        &self,
        from: &ChatKey,
        message_id: &str,
        new_chat: &ChatKey,
    ) -> Result<Branched, EngineError> {
        self.branch_with(from, message_id, new_chat, None).await
    }

    /// [`Chats::branch_chat`], the branch taking from `file` (a
    /// SillyTavern branch file imported as a branch) its header and group
    /// instead of the parent's.
    pub(super) async fn branch_with(
        &self,
        from: &ChatKey,
        message_id: &str,
        new_chat: &ChatKey,
        file: Option<BranchFile>,
    ) -> Result<Branched, EngineError> {
        if from == new_chat {
            return Err(already_exists(new_chat));
        }
        let parent = self
            .read_chat(from, |resident| {
                let chat = resident
                    .chat
                    .as_deref()
                    .ok_or_else(|| EngineError::unknown_chat(from))?;
                let mut branch = chat.branch_through(message_id).ok_or_else(|| {
                    DomainError::NotFound(format!("message {message_id:?} of chat {:?}", from.id))
                })?;
                if let Some(file) = &file {
                    branch.set_st_file(Some(file.header.clone()));
                }
                Ok(Parent {
                    branch: Arc::new(branch),
                    settings: resident.settings().clone(),
                    meta: resident.meta.clone(),
                })
            })
            .await?;
        // A vector whose passage changed since the read above no longer
        // matches its text and is dropped when the branch's index is built.
        let vectors: Vec<StoredVector> = self
            .inner
            .store
            .recall_vectors(from)
            .await?
            .into_iter()
            .filter(|v| parent.branch.message(&v.key.message_id).is_some())
            .collect();
        let mut settings = parent.settings.clone();
        let mut timed = parent.meta.world_info_timed.clone();
        let parent_book = parent
            .settings
            .overrides
            .world_info_chat_book
            .clone()
            .filter(|name| !name.is_empty());
        let book = match &parent_book {
            Some(name) => self.copy_book(new_chat, &parent, name).await?,
            None => None,
        };
        if let (Some((held, _)), Some(old)) = (&book, &parent_book) {
            let new = held.name().to_owned();
            if let Some(json) = &timed {
                let mut state = TimedState::from_json(json);
                state.rename_book(old, &new);
                timed = Some(state.to_json());
            }
            settings.overrides.world_info_chat_book = Some(new);
        }
        let now = self.now();
        let book_write = book
            .as_ref()
            .map(|(held, copy)| held.write(copy.clone(), now));
        let origin = BranchOrigin {
            chat_id: from.id.clone(),
            message_id: message_id.to_owned(),
        };
        let place = self
            .update(new_chat, |_, resident| {
                if resident.chat.is_some() {
                    return Err(already_exists(new_chat));
                }
                let place = self.reserve_chat()?;
                let chat = parent.branch.clone();
                let mut writes = vec![Write::ReplaceChat {
                    chat: new_chat.clone(),
                    content: SharedChat(chat.clone()),
                }];
                // Settings stored for the id before it was a chat are
                // replaced too.
                if settings != *resident.settings() {
                    writes.push(Write::ChatSettings {
                        chat: new_chat.clone(),
                        settings: settings.clone(),
                    });
                }
                resident.set_settings(settings.clone());
                if let Some((write, _)) = &book_write {
                    writes.push(write.clone());
                }
                if !vectors.is_empty() {
                    writes.push(Write::RecallVectors {
                        chat: new_chat.clone(),
                        vectors: vectors.clone(),
                        trims: Vec::new(),
                    });
                }
                // The row, written by the commit, carries the rest.
                let meta = &mut resident.meta;
                meta.world_info_timed.clone_from(&timed);
                meta.character_key.clone_from(&parent.meta.character_key);
                meta.group_id = match &file {
                    Some(BranchFile {
                        group_id: Some(group),
                        ..
                    }) => Some(group.clone()),
                    _ => parent.meta.group_id.clone(),
                };
                meta.st_file = chat.st_file().cloned();
                meta.lore_book = book.as_ref().map(|(held, _)| held.name().to_owned());
                meta.branched_from = Some(origin.clone());
                *resident.recall.lock() = RecallState::loaded(vectors.clone());
                resident.chat = Some(chat);
                let commit = Commit::one(writes, Next::Refresh(Trigger::ChatChanged));
                Ok(Change::Commit(commit, place))
            })
            .await?;
        place.keep();
        let chat_book = book.as_ref().map(|(held, _)| held.name().to_owned());
        if let Some((_, written)) = book_write {
            self.lorebooks().keep_written_book(written);
        }
        Ok(Branched {
            message_count: parent.branch.len(),
            running_recap_count: parent.branch.recaps().versions().count(),
            chat_book: chat_book.or(parent_book),
        })
    }

    /// The parent's chat book `name`, to copy for branch `new_chat`: a new
    /// book, locked, named by `lore_book_name_template` for the branch
    /// (made free), and the book's content. `None` when no book has that
    /// name (the branch then names it as its parent does).
    async fn copy_book(
        &self,
        new_chat: &ChatKey,
        parent: &Parent,
        name: &str,
    ) -> Result<Option<(HeldBook<'_>, crate::domain::world_info::book::Book)>, EngineError> {
        let lorebooks = self.lorebooks();
        let Some(book) = lorebooks.book_now(&new_chat.tenant, name).await? else {
            return Ok(None);
        };
        let template = self
            .global(&new_chat.tenant)
            .settings
            .with(&parent.settings.overrides)
            .lore
            .book_name_template;
        let names = speakers(&parent.branch);
        let wanted = templated_name(&template, new_chat, &names.user, &names.char);
        let free = lorebooks.free_book_name(&new_chat.tenant, &wanted).await?;
        let held = lorebooks.hold_book(&new_chat.tenant, &free).await?;
        Ok(Some((held, (*book).clone())))
    }
}

impl Chats {
    /// Makes chat `new_chat` start from `from` (see the module
    /// documentation): no message, `from`'s current running recap as its
    /// first version (marked as carried over from `from`), the book
    /// `from` uses as its chat book, and `recall_chats` reaching `from`
    /// and the chats `from` reaches (at most `MAX_RECALL_CHATS`); its
    /// character and group are `from`'s, so its profile too. One commit.
    /// `NotFound` for an unknown `from`; `AlreadyExists` when `new_chat`
    /// is a chat already.
    pub async fn start_chat_from(
        &self,
        from: &ChatKey,
        new_chat: &ChatKey,
    ) -> Result<Started, EngineError> {
        if from == new_chat {
            return Err(already_exists(new_chat));
        }
        let global = self.global(&from.tenant);
        let (current, own, meta, effective) = self
            .read_chat(from, |resident| {
                let chat = resident
                    .chat
                    .as_deref()
                    .ok_or_else(|| EngineError::unknown_chat(from))?;
                Ok((
                    chat.recaps().current().cloned(),
                    resident.settings().clone(),
                    resident.meta.clone(),
                    resident.effective(&global, &from.id),
                ))
            })
            .await?;
        let carried = current.map(|v| RecapVersion {
            version: 0,
            created_at_ms: self.now_ms(),
            content: v.content,
            scene_count: v.scene_count,
            excluded_count: v.excluded_count,
            prev_scene_message_id: None,
            new_scene_message_id: None,
            st: None,
            carried_from: Some(from.id.clone()),
        });
        let carried_recap = carried.is_some();
        let current = carried.as_ref().map(|v| v.version);
        let chat = Arc::new(Chat::from_parts(
            Vec::new(),
            carried.into_iter().collect(),
            current,
        ));
        let book = Some(effective.world_info.chat_book.clone()).filter(|b| !b.is_empty());
        let mut reach = vec![from.id.clone()];
        for id in effective.recall.chats.ids() {
            if *id != new_chat.id && !reach.contains(id) {
                reach.push(id.clone());
            }
        }
        reach.truncate(MAX_RECALL_CHATS);
        let settings = ChatSettings {
            overrides: SettingsPatch {
                world_info_chat_book: book.clone(),
                recall_chats: Some(ChatIds(reach.clone())),
                ..SettingsPatch::default()
            },
            enabled: own.enabled,
        };
        global.settings.with(&settings.overrides).validate()?;
        let place = self
            .update(new_chat, |_, resident| {
                if resident.chat.is_some() {
                    return Err(already_exists(new_chat));
                }
                let place = self.reserve_chat()?;
                let writes = vec![
                    Write::ReplaceChat {
                        chat: new_chat.clone(),
                        content: SharedChat(chat.clone()),
                    },
                    Write::ChatSettings {
                        chat: new_chat.clone(),
                        settings: settings.clone(),
                    },
                ];
                resident.set_settings(settings.clone());
                resident.meta.character_key.clone_from(&meta.character_key);
                resident.meta.group_id.clone_from(&meta.group_id);
                resident.chat = Some(chat.clone());
                let commit = Commit::one(writes, Next::Refresh(Trigger::ChatChanged));
                Ok(Change::Commit(commit, place))
            })
            .await?;
        place.keep();
        Ok(Started {
            carried_recap,
            chat_book: book,
            recall_chats: reach,
        })
    }
}

/// `new_chat` is a chat already.
fn already_exists(new_chat: &ChatKey) -> EngineError {
    DomainError::AlreadyExists(format!("chat {:?}", new_chat.id)).into()
}
