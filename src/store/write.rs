//! The row changes a commit is made of ([`Write`]): each store applies a
//! group of them all-or-nothing, in order.

use crate::domain::chat::Chat;
use crate::domain::ids::{ChatKey, ClaimKey, Tenant};
use crate::domain::jobs::Job;
use crate::domain::message::Message;
use crate::domain::profiles::Profiles;
use crate::domain::recall::{Source, StoredVector};
use crate::domain::recaps::RecapVersion;
use crate::domain::settings::SettingsPatch;
use crate::domain::time::UnixMicros;

use super::{ChatMeta, ChatSettings, DeleteLorebook, PutLorebook, PutLorebookEntry, Tombstone};

/// One row change. A group of them is all-or-nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// The group was computed from what `key` names as it was at claim
    /// clock `clock`: the commit fails with [`StoreError::Conflict`](super::StoreError::Conflict) if
    /// another writer moved it since, and otherwise moves it to
    /// `clock + 1`. The database thus decides the order of a chat's
    /// changes, so two replicas never hand out the same revision or reorder
    /// a chat's events. The engine claims only with a
    /// [`ReplicaStore`](super::ReplicaStore); a
    /// store only this process writes has nothing to check.
    Claim {
        /// The chat, or the tenant's global settings.
        key: ClaimKey,
        /// The claim clock the group was computed from.
        clock: u64,
    },
    /// Creates or replaces a chat's row (this also makes the chat known).
    Chat {
        /// The chat.
        chat: ChatKey,
        /// Its row.
        meta: ChatMeta,
    },
    /// Creates or replaces a message at a position key.
    Message {
        /// The chat.
        chat: ChatKey,
        /// Its position key; messages load in ascending order.
        seq: i64,
        /// The message, all swipes included.
        message: Message,
    },
    /// Replaces every message and running-recap version of a chat with
    /// those of `content` (an import), and removes its recall vectors
    /// (the new content is indexed anew). The chat is shared, not copied: a
    /// large chat is written row by row from the engine's own copy, which
    /// the store lets go of before it answers.
    ReplaceChat {
        /// The chat.
        chat: ChatKey,
        /// Its whole new content.
        content: SharedChat,
    },
    /// Removes a message, and the recall vectors of its passages.
    DeleteMessage {
        /// The chat.
        chat: ChatKey,
        /// The message.
        message_id: String,
    },
    /// Creates or replaces a running-recap version.
    Recap {
        /// The chat.
        chat: ChatKey,
        /// The version.
        version: RecapVersion,
    },
    /// Removes a running-recap version.
    DeleteRecap {
        /// The chat.
        chat: ChatKey,
        /// Its number.
        version: u32,
    },
    /// Replaces a tenant's global settings (a patch over the defaults).
    GlobalSettings {
        /// The tenant.
        tenant: Tenant,
        /// The settings.
        patch: SettingsPatch,
    },
    /// Replaces a tenant's settings profiles, their bindings and its groups
    /// (one row per tenant). Committed with a claim of the tenant's global
    /// settings, and told to other replicas as a change of them.
    Profiles {
        /// The tenant.
        tenant: Tenant,
        /// Its profiles, bindings and groups.
        profiles: Profiles,
    },
    /// Marks every chat of a tenant as owing a refresh (a global change is
    /// committed before its refreshes run; a crash in between leaves them
    /// owed).
    AllChatsOweRefresh {
        /// The tenant.
        tenant: Tenant,
    },
    /// Replaces a chat's own settings.
    ChatSettings {
        /// The chat.
        chat: ChatKey,
        /// Its settings.
        settings: ChatSettings,
    },
    /// Creates or replaces a job (its chat is `job.chat`). With
    /// `expect_fence`, the commit fails with [`StoreError::Fenced`](super::StoreError::Fenced) unless
    /// the stored job exists with exactly that fence: a runner applies its
    /// result (or renews its lease) only while the job is still its own.
    Job {
        /// The job as it now is.
        job: Job,
        /// The fence the stored job must have.
        expect_fence: Option<u64>,
    },
    /// Erases a chat (DeleteChat, retention): its row, messages, running-
    /// recap versions, own settings, jobs (every state), recall vectors and
    /// activity, and
    /// keeps `tombstone` in their place, all in the group's transaction. A
    /// shared store keeps the chat's claim clock: it goes on,
    /// so a replica that read the chat before the deletion conflicts.
    DeleteChat {
        /// The chat.
        chat: ChatKey,
        /// What stays of it.
        tombstone: Tombstone,
    },
    /// Records that a chat changed (an operation wrote its rows): for
    /// ListChats and `--chat-retention`. Written after the chat's row.
    Activity {
        /// The chat.
        chat: ChatKey,
        /// Its messages after the change.
        message_count: u64,
        /// When it changed, µs since the epoch.
        updated_us: UnixMicros,
    },
    /// Removes every terminal job (all tenants) last changed before
    /// `finished_before_us` (`--job-retention`): its `updated_us` is
    /// earlier. Non-terminal jobs stay whatever their age.
    PurgeJobs {
        /// µs since the epoch.
        finished_before_us: UnixMicros,
    },
    /// Creates or replaces a lorebook if its version is the one expected
    /// (see [`lorebooks`](super::lorebooks)).
    Lorebook(PutLorebook),
    /// Changes one entry of a lorebook if its version is the one expected
    /// (see [`lorebooks`](super::lorebooks)).
    LorebookEntry(PutLorebookEntry),
    /// Deletes a lorebook if its version is the one expected.
    DeleteLorebook(DeleteLorebook),
    /// Stores vectors of a chat's passages for recall: each replaces the
    /// row of its chunk (tenant, chat, message, source, part); then, for
    /// each trim, removes the rows of that message and source whose part
    /// is at or past the count given (a text cut into fewer chunks than
    /// before).
    RecallVectors {
        /// The chat.
        chat: ChatKey,
        /// The vectors.
        vectors: Vec<StoredVector>,
        /// `(message id, source, chunks it has now)`.
        trims: Vec<(String, Source, u32)>,
    },
}

/// A whole chat shared with the store for [`Write::ReplaceChat`]; two are
/// equal when they are the same chat in memory.
#[derive(Clone)]
pub struct SharedChat(pub std::sync::Arc<Chat>);

impl PartialEq for SharedChat {
    fn eq(&self, other: &SharedChat) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedChat {}

impl std::fmt::Debug for SharedChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedChat({} messages)", self.0.len())
    }
}
