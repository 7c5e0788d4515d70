//! A SillyTavern branch or checkpoint file imported as a branch of the
//! chat it was made from (ImportChat's `branch_from_main_chat`), so the
//! memory of that point of the story comes along, as BranchChat's would.
//!
//! SillyTavern writes a branch file as its parent's first messages, copied,
//! with `chat_metadata.main_chat` naming the parent. When that parent is a
//! chat here whose first messages are the file's ([`Chat::starting_with`]),
//! the chat is made as BranchChat makes a branch at the file's last
//! message, but with the file's header (written back by an export) and the
//! group the import names. Otherwise the file is imported as it is, and
//! the answer says why it was not branched. Either way the chat must be
//! new: a branch never replaces a chat.
//!
//! [`Chat::starting_with`]: crate::domain::chat::Chat::starting_with

use std::sync::Arc;

use super::branches::BranchFile;
use super::{Chats, EngineError};
use crate::domain::ids::{ChatKey, check_chat_id};
use crate::domain::st_chat::ImportedChat;

/// What an import that asked for a branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileImported {
    /// Messages in the chat.
    pub message_count: usize,
    /// Running-recap versions in the chat.
    pub running_recap_count: usize,
    /// The chat it was branched from; `None` when it was imported from
    /// the file alone.
    pub branched_from: Option<String>,
    /// Why it was imported from the file alone; `None` when branched.
    pub not_branched: Option<String>,
}

impl Chats {
    /// Imports `imported` as new chat `chat_id`, as a branch of the chat
    /// the file names as its parent when that chat starts with the file's
    /// messages (see the module documentation). `AlreadyExists` when
    /// `chat_id` is a chat already.
    pub async fn import_branch_file(
        &self,
        chat_id: &ChatKey,
        imported: ImportedChat,
        group_id: Option<String>,
    ) -> Result<FileImported, EngineError> {
        match self.branch_point(chat_id, &imported).await? {
            Ok((parent, message_id)) => {
                let file = BranchFile {
                    header: Arc::new(imported.file),
                    group_id,
                };
                let branched = self
                    .branch_with(&parent, &message_id, chat_id, Some(file))
                    .await?;
                Ok(FileImported {
                    message_count: branched.message_count,
                    running_recap_count: branched.running_recap_count,
                    branched_from: Some(parent.id),
                    not_branched: None,
                })
            }
            Err(reason) => {
                let (message_count, running_recap_count) =
                    self.import_with(chat_id, imported, group_id, true).await?;
                Ok(FileImported {
                    message_count,
                    running_recap_count,
                    branched_from: None,
                    not_branched: Some(reason),
                })
            }
        }
    }

    /// The parent and its message a branch of the file's would end at, or
    /// why there is none. The parent may change before the branch is made:
    /// the branch then holds its messages as they are then.
    async fn branch_point(
        &self,
        chat_id: &ChatKey,
        imported: &ImportedChat,
    ) -> Result<Result<(ChatKey, String), String>, EngineError> {
        let Some(parent) = imported.parent.as_deref() else {
            return Ok(Err(
                "the file names no parent chat (chat_metadata.main_chat)".to_owned(),
            ));
        };
        // Not echoed: it may be as long as the file allows.
        if let Err(why) = check_chat_id("chat_metadata.main_chat", parent) {
            return Ok(Err(format!("its parent is no valid chat id: {why}")));
        }
        let parent = chat_id.tenant.chat(parent);
        if parent == *chat_id {
            return Ok(Err("the file names itself as its parent".to_owned()));
        }
        let messages = imported.messages.iter().map(|(_, m)| m);
        self.read_chat(&parent, |resident| {
            Ok(match resident.chat.as_deref() {
                None => Err(format!("its parent {:?} is no chat here", parent.id)),
                Some(chat) => match chat.starting_with(messages) {
                    Ok(message_id) => Ok((parent.clone(), message_id.to_owned())),
                    Err(why) => Err(format!(
                        "its messages are not the start of chat {:?}: {why}",
                        parent.id
                    )),
                },
            })
        })
        .await
    }
}
