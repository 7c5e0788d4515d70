//! Durable storage behind a small trait, so the engine does not care which
//! database keeps its rows.
//!
//! The engine hands the store groups of row writes ([`Write`]); a store
//! applies all the groups of one [`Store::commit`] call in one transaction and
//! returns only once they are durable. Reads load one chat at a time, so a
//! large data set does not slow down start-up.

use serde::{Deserialize, Serialize};

use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::domain::refresh::Injection;
use crate::domain::settings::SettingsPatch;

pub mod postgres;
pub mod sqlite;

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// The start of every global-settings claim key (see [`Write::Claim`]): not
/// a chat id (those have no control characters), so it never meets a
/// chat's claim.
pub const GLOBAL_SETTINGS_CLAIM: &str = "\u{1e}global settings\u{1f}";

/// The claim key of a tenant's global settings.
pub fn global_settings_claim(tenant: &str) -> String {
    format!("{GLOBAL_SETTINGS_CLAIM}{tenant}")
}

/// The key under which a tenant's global settings are stored (the default
/// tenant's has no suffix); the same in every store.
pub(crate) fn global_settings_key(tenant: &str) -> String {
    if tenant.is_empty() {
        "global_settings".to_owned()
    } else {
        format!("global_settings:{tenant}")
    }
}

/// Why the store could not do what was asked. Nothing of a failed commit is
/// applied.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed (disk full, read-only, corrupt...).
    #[error("storage failed: {0}")]
    Database(String),
    /// A stored row could not be read back.
    #[error("stored data is unreadable: {0}")]
    Corrupt(String),
    /// The store is closed (shutting down).
    #[error("storage is closed")]
    Closed,
    /// Another replica changed the chat after this one read it (a
    /// [`Write::Claim`] did not hold); the caller re-reads and retries.
    #[error("chat {0:?} was changed by another replica; retry")]
    Conflict(String),
}

/// A chat's own row: its latest injection and refresh bookkeeping.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatMeta {
    /// Revision of the latest refresh; 0 before the first.
    pub revision: u64,
    /// The latest refresh's result.
    pub injection: Option<Injection>,
    /// The message-recap tier's latest result (its own revision), once the
    /// tier was first enabled.
    pub message_injection: Option<Injection>,
    /// A debounced refresh is owed: state changed after the latest refresh.
    pub needs_refresh: bool,
    /// The current running-recap version.
    pub current_recap: Option<u32>,
}

/// A chat's own settings: its overrides of the global settings and its
/// enabled state. May exist before the chat does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatSettings {
    /// Fields that replace the global settings for this chat.
    pub overrides: SettingsPatch,
    /// The chat's own enabled state (SetChatEnabled); `None` follows
    /// `default_chat_enabled`.
    pub enabled: Option<bool>,
}

/// One row change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// The group was computed from the chat as it was at `generation`: the
    /// commit fails with [`StoreError::Conflict`] if another writer moved it
    /// since, and otherwise moves it to `generation + 1`. This makes the
    /// database decide the order of a chat's changes, so two replicas never
    /// hand out the same revision or reorder a chat's events. Stores with a
    /// single writer ([`Store::shared`] false) may ignore it.
    Claim {
        /// The chat.
        chat_id: String,
        /// The generation the group was computed from.
        generation: u64,
    },
    /// Creates or replaces a chat's row (this also makes the chat known).
    Chat {
        /// The chat.
        chat_id: String,
        /// Its row.
        meta: ChatMeta,
    },
    /// Creates or replaces a message at a position key.
    Message {
        /// The chat.
        chat_id: String,
        /// Its position key; messages load in ascending order.
        seq: i64,
        /// The message, all swipes included.
        message: Message,
    },
    /// Removes a message.
    DeleteMessage {
        /// The chat.
        chat_id: String,
        /// The message.
        message_id: String,
    },
    /// Creates or replaces a running-recap version.
    Recap {
        /// The chat.
        chat_id: String,
        /// The version.
        version: RecapVersion,
    },
    /// Removes a running-recap version.
    DeleteRecap {
        /// The chat.
        chat_id: String,
        /// Its number.
        version: u32,
    },
    /// Replaces a tenant's global settings (a patch over the defaults).
    GlobalSettings {
        /// The tenant (empty: the default tenant).
        tenant: String,
        /// The settings.
        patch: SettingsPatch,
    },
    /// Marks every chat of a tenant as owing a refresh (a global change is
    /// committed before its refreshes run; a crash in between leaves them
    /// owed).
    AllChatsOweRefresh {
        /// The tenant (empty: the default tenant).
        tenant: String,
    },
    /// Replaces a chat's own settings.
    ChatSettings {
        /// The chat.
        chat_id: String,
        /// Its settings.
        settings: ChatSettings,
    },
}

/// Everything stored about one chat.
#[derive(Debug, Clone, Default)]
pub struct StoredChat {
    /// Its row.
    pub meta: ChatMeta,
    /// Its messages with position keys, in ascending order.
    pub messages: Vec<(i64, Message)>,
    /// Its running-recap versions, ascending.
    pub recaps: Vec<RecapVersion>,
}

/// A chat as one consistent read: its rows, its own settings, and the
/// generation they were read at.
#[derive(Debug, Clone, Default)]
pub struct LoadedChat {
    /// Its rows; `None` when no event has named it.
    pub chat: Option<StoredChat>,
    /// Its own settings; `None` when it has none.
    pub settings: Option<ChatSettings>,
    /// How many claimed commits changed it (0 for single-writer stores).
    pub generation: u64,
    /// When the latest claimed commit changed it, in ms since the epoch
    /// (`None` for single-writer stores).
    pub changed_ms: Option<i64>,
    /// The generation of its tenant's global settings in the same read
    /// (0 for single-writer stores): settings older than it are stale.
    pub settings_generation: u64,
}

/// What other replicas committed, as told by a shared store. A hint only:
/// the engine re-reads what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// These chats reached these generations.
    Chats(Vec<(String, u64)>),
    /// These tenants' global settings changed.
    GlobalSettings(Vec<String>),
    /// Hints may have been missed (the listener reconnected, or a batch
    /// named too much to say): re-read everything held.
    Resync,
}

/// A durable store. Calls block; the engine runs them off the async
/// workers. Implementations must be safe to call from several threads.
pub trait Store: Send + Sync + 'static {
    /// Whether other processes write to the same data (replicas): the engine
    /// then claims each chat it commits ([`Write::Claim`]) and follows
    /// [`Store::changes`].
    fn shared(&self) -> bool {
        false
    }
    /// The feed of other replicas' commits, taken once; `None` for a store
    /// that only this process writes.
    fn changes(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Change>> {
        None
    }
    /// A chat's rows and settings as one read. The default composes
    /// [`Store::load_chat`] and [`Store::load_chat_settings`], which is
    /// consistent only for a store that this process alone writes.
    fn load(&self, chat_id: &str) -> Result<LoadedChat, StoreError> {
        Ok(LoadedChat {
            chat: self.load_chat(chat_id)?,
            settings: self.load_chat_settings(chat_id)?,
            generation: 0,
            changed_ms: None,
            settings_generation: 0,
        })
    }
    /// The chats (and settings claims) changed since `since_ms` on the
    /// store's clock (none when `None`), with their generations, and the
    /// store's clock now, to pass as the next `since_ms`. Empty for
    /// single-writer stores.
    fn changed_since(
        &self,
        since_ms: Option<i64>,
    ) -> Result<(Vec<(String, u64)>, i64), StoreError> {
        let _ = since_ms;
        Ok((Vec::new(), 0))
    }
    /// The current generations of `chat_ids` (absent: never claimed). Empty
    /// for single-writer stores.
    fn generations(&self, chat_ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        let _ = chat_ids;
        Ok(Vec::new())
    }
    /// Applies every group of writes, in order, in one transaction; returns
    /// once it is durable. On error nothing of it is applied.
    fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError>;
    /// A chat's rows, or `None` when no event has named it.
    fn load_chat(&self, chat_id: &str) -> Result<Option<StoredChat>, StoreError>;
    /// A chat's own settings, or `None` when it has none.
    fn load_chat_settings(&self, chat_id: &str) -> Result<Option<ChatSettings>, StoreError>;
    /// Every chat's own settings.
    fn all_chat_settings(&self) -> Result<Vec<(String, ChatSettings)>, StoreError>;
    /// Every tenant's global settings (patches over the defaults).
    fn load_global_settings(&self) -> Result<Vec<(String, SettingsPatch)>, StoreError>;
    /// Every tenant's global settings with the generation of their claim,
    /// read together (0 for single-writer stores).
    fn load_global_settings_versioned(
        &self,
    ) -> Result<Vec<(String, SettingsPatch, u64)>, StoreError> {
        Ok(self
            .load_global_settings()?
            .into_iter()
            .map(|(tenant, patch)| (tenant, patch, 0))
            .collect())
    }
    /// Ids of every known chat.
    fn chat_ids(&self) -> Result<Vec<String>, StoreError>;
    /// Ids of the chats that owe a debounced refresh.
    fn chats_needing_refresh(&self) -> Result<Vec<String>, StoreError>;
    /// Ids of the chats that owe a debounced refresh and have not changed
    /// for `quiet_ms` (as far as the store knows; a store that does not
    /// record when chats change returns every chat that owes one).
    fn chats_owing_refresh_quiet_for(&self, quiet_ms: i64) -> Result<Vec<String>, StoreError> {
        let _ = quiet_ms;
        self.chats_needing_refresh()
    }
}
