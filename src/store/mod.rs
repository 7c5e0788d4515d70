//! Durable storage behind two small async traits, so the engine does not
//! care which database keeps its rows.
//!
//! - [`ChatStore`]: what every store does. The engine hands it groups of row
//!   writes ([`Write`]); the store's group commit ([`group_commit`]) puts
//!   every group waiting when the database becomes free into one
//!   transaction and answers each caller once that transaction is durable.
//!   Reads load one chat at a time, so a large data set does not slow down
//!   start-up.
//! - [`ReplicaStore`]: what only a store shared by several replicas does:
//!   the feed of other replicas' commits and the reads that catch up with
//!   them. The embedded store, which one process writes, has none of it.
//!
//! Every row is keyed by its tenant and chat ([`ChatKey`]) in columns of
//! their own, so one tenant's queries cannot reach another's rows. A new
//! kind of row is a new table in both stores and new [`Write`] variants:
//! it then commits in the same transaction as the chat writes that cause
//! it, as jobs do ([`Write::Job`], the `jobs` table).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobLane, JobState};
use crate::domain::message::Message;
use crate::domain::profiles::Profiles;
use crate::domain::recall::StoredVector;
use crate::domain::recaps::RecapVersion;
use crate::domain::refresh::Injection;
use crate::domain::settings::SettingsPatch;
use crate::domain::st_chat::verbatim::StFile;
use crate::domain::time::{UnixMicros, UnixMillis};

mod error;
pub mod group_commit;
pub mod lorebooks;
mod migrations;
pub mod postgres;
mod profiles;
pub mod sqlite;
mod vectors;
mod write;

pub use error::{StoreError, panic_message};
pub use lorebooks::{
    DeleteLorebook, LorebookListing, LorebookText, NO_LOREBOOK, PutLorebook, PutLorebookEntry,
    StoredLorebook,
};
pub use postgres::PgStore;
pub(crate) use profiles::with_profiles;
pub use sqlite::SqliteStore;
pub use write::{SharedChat, Write};

/// A chat's own row: its latest injections and refresh bookkeeping.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChatMeta {
    /// Revision of the latest refresh; 0 before the first.
    pub revision: u64,
    /// The latest refresh's result; shared with the chat's subscribers,
    /// which hold the same latest injections.
    pub injection: Option<std::sync::Arc<Injection>>,
    /// The message-recap tier's latest result (its own revision), once the
    /// tier was first enabled.
    pub message_injection: Option<std::sync::Arc<Injection>>,
    /// The recall tier's latest result (its own revision), once the tier
    /// was first enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall_injection: Option<std::sync::Arc<Injection>>,
    /// A debounced refresh is owed: state changed after the latest refresh.
    pub needs_refresh: bool,
    /// The current running-recap version.
    pub current_recap: Option<u32>,
    /// The message-recap tier's revision its next refresh continues above
    /// while it has no injection: 0, or a re-created chat's deleted
    /// predecessor's (see [`Tombstone`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub message_revision_floor: u64,
    /// The recall tier's, likewise.
    #[serde(skip_serializing_if = "is_zero")]
    pub recall_revision_floor: u64,
    /// How the SillyTavern file the chat was imported from began (its
    /// header's members recapd keeps, for the export); `None` for a chat
    /// made through the API.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "crate::domain::st_chat::verbatim::shared_file"
    )]
    pub st_file: Option<std::sync::Arc<StFile>>,
    /// The chat's SillyTavern timed World Info effects (sticky and
    /// cooldown, SillyTavern's `chat_metadata.timedWorldInfo`), as the text
    /// of a JSON object: an imported file's as written, then as
    /// activations advance them (`domain::world_info::timed`). Always an
    /// object's text when present; an export writes it back as it is.
    /// `None`: no effects yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world_info_timed: Option<String>,
    /// The lorebook recapd created for the chat's lore (named then in the
    /// chat's `world_info_chat_book` override), which the chat's deletion
    /// deletes when `lore_delete_book_with_chat` is on. `None`: recapd
    /// created none (a book the chat already named is written to, never
    /// deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lore_book: Option<String>,
    /// The character the chat is with (its key, SillyTavern's avatar file
    /// name): ChatChanged's `character_key`, or an import's character
    /// messages'. Decides its character's profile binding. `None`: unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub character_key: Option<String>,
    /// The group the chat is in, as ChatChanged or ImportChat said (a chat
    /// a group lists is in it without this). `None`: none said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// The chat this one is a branch of (BranchChat). `None`: it is no
    /// branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branched_from: Option<BranchOrigin>,
}

/// Where a branch comes from: its parent chat and the message it was
/// branched at (the parent may since have changed or be gone).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BranchOrigin {
    /// The parent chat's id (same tenant).
    pub chat_id: String,
    /// The parent's message the branch ends at.
    pub message_id: String,
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

impl ChatMeta {
    /// The chat's latest injections held in its row: the running recap's,
    /// then each tier's that ran.
    pub fn injections(&self) -> impl Iterator<Item = &std::sync::Arc<Injection>> {
        [
            &self.injection,
            &self.message_injection,
            &self.recall_injection,
        ]
        .into_iter()
        .flatten()
    }
}

/// What a deleted chat leaves: the last revisions its subscribers were
/// told (its deletion's), so that a chat re-created under the same id
/// continues above them. No content.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tombstone {
    /// The revision of the deletion's `auto_recap_scene` injection.
    pub revision: u64,
    /// The message-recap tier's revision at the deletion (its deletion's
    /// injection's when the tier had one, 0 when it never ran).
    pub message_revision: u64,
    /// The recall tier's, likewise.
    pub recall_revision: u64,
    /// When the chat was deleted, µs since the epoch.
    pub deleted_us: UnixMicros,
}

/// One chat as ListChats shows it, read from the store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatListing {
    /// The chat.
    pub chat_id: String,
    /// Its messages.
    pub message_count: u64,
    /// Its latest revision (0 before the first refresh).
    pub revision: u64,
    /// When it last changed, µs since the epoch.
    pub updated_us: UnixMicros,
    /// Its own settings, when it has some (they decide whether it is
    /// enabled, with the tenant's global settings).
    pub settings: Option<ChatSettings>,
    /// Its row's [`ChatMeta::character_key`].
    pub character_key: Option<String>,
    /// Its row's [`ChatMeta::group_id`].
    pub group_id: Option<String>,
    /// Its row's [`ChatMeta::branched_from`].
    pub branched_from: Option<BranchOrigin>,
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
/// claim clock they were read at.
#[derive(Debug, Clone, Default)]
pub struct LoadedChat {
    /// Its rows; `None` when no event has named it.
    pub chat: Option<StoredChat>,
    /// Its own settings; `None` when it has none.
    pub settings: Option<ChatSettings>,
    /// How many claimed commits changed it (0 for single-writer stores).
    pub clock: u64,
    /// When the latest claimed commit changed it, in ms since the epoch
    /// (`None` for single-writer stores).
    pub changed_ms: Option<UnixMillis>,
    /// The claim clock of its tenant's global settings in the same read
    /// (0 for single-writer stores): settings older than it are stale.
    pub settings_clock: u64,
    /// Its non-terminal jobs (PENDING, RUNNING), oldest first (by creation
    /// time, then id), read with its rows.
    pub jobs: Vec<Job>,
    /// The vectors stored for its passages (recall), in no order.
    pub vectors: Vec<StoredVector>,
    /// What its latest deletion left, if it was ever deleted (kept also
    /// once it is re-created).
    pub tombstone: Option<Tombstone>,
    /// When it last changed ([`Write::Activity`]), µs since the epoch;
    /// `None` when it has no rows.
    pub updated_us: Option<UnixMicros>,
}

/// Which jobs [`ChatStore::list_jobs`] reads: one tenant's, newest first
/// (by creation time, then id, both descending).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobQuery {
    /// The tenant.
    pub tenant: Tenant,
    /// Only this chat's; `None`: every chat of the tenant.
    pub chat_id: Option<String>,
    /// Only jobs in these states; empty: all.
    pub states: Vec<JobState>,
    /// At most this many.
    pub limit: usize,
    /// Only jobs strictly after this (created µs, job id) in the order:
    /// the last job of the previous page.
    pub after: Option<(UnixMicros, String)>,
    /// Only jobs last changed (`updated_us`) at or after this, µs since the
    /// epoch; `None`: whenever. A WatchJobs reader that fell behind re-reads
    /// with it the jobs changed since it last kept up (and filters again,
    /// so a store that reads more is slower, never wrong).
    pub changed_since_us: Option<UnixMicros>,
}

/// A tenant's global settings as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantSettings {
    /// The tenant.
    pub tenant: Tenant,
    /// Its settings (a patch over the defaults).
    pub patch: SettingsPatch,
    /// Their claim clock, read with them (0 for single-writer stores).
    pub clock: u64,
    /// Its settings profiles, bindings and groups (claimed and told with
    /// the global settings).
    pub profiles: Profiles,
}

/// What other replicas committed, as told by a shared store. A hint only:
/// the engine re-reads what it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// These chats' claim clocks reached these values.
    Chats(Vec<(ChatKey, u64)>),
    /// These tenants' global settings changed.
    GlobalSettings(Vec<Tenant>),
    /// Hints may have been missed (the listener reconnected, or a batch
    /// named too much to say): re-read everything held.
    Resync,
}

/// A durable store: chat state and its group commit. Implemented by both
/// the embedded store and the PostgreSQL store; safe to call from many
/// tasks at once.
#[async_trait::async_trait]
pub trait ChatStore: Send + Sync + 'static {
    /// Commits one group of writes, together with whatever other groups are
    /// waiting (group commit); resolves once it is durable. On error nothing
    /// of the group is applied (but see [`StoreError::Database`]).
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError>;
    /// A chat's rows and settings as one consistent read.
    async fn load(&self, chat: &ChatKey) -> Result<LoadedChat, StoreError>;
    /// The vectors stored for a chat's passages (recall), in no order
    /// (empty for an unknown chat): what a branch of the chat copies.
    async fn recall_vectors(&self, chat: &ChatKey) -> Result<Vec<StoredVector>, StoreError>;
    /// Every tenant's global settings, with its profiles.
    async fn global_settings(&self) -> Result<Vec<TenantSettings>, StoreError>;
    /// How many chats the store holds, all tenants together.
    async fn chat_count(&self) -> Result<usize, StoreError>;
    /// The chats of one tenant.
    async fn chats_of(&self, tenant: &Tenant) -> Result<Vec<ChatKey>, StoreError>;
    /// The own settings of every chat of one tenant that has some.
    async fn chat_settings_of(
        &self,
        tenant: &Tenant,
    ) -> Result<Vec<(ChatKey, ChatSettings)>, StoreError>;
    /// A page of one tenant's chats (those with a row: every chat an event
    /// named and that was not deleted since), ordered by chat id as bytes,
    /// at most `limit`, strictly after `after` when given.
    async fn list_chats(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ChatListing>, StoreError>;
    /// Chats of every tenant whose last change ([`Write::Activity`]) is
    /// before `changed_before_us`, oldest change first, at most `limit`:
    /// what `--chat-retention` deletes.
    async fn quiet_chats(
        &self,
        changed_before_us: UnixMicros,
        limit: usize,
    ) -> Result<Vec<ChatKey>, StoreError>;
    /// The chats that owe a debounced refresh.
    async fn chats_owing_refresh(&self) -> Result<Vec<ChatKey>, StoreError>;
    /// One job of `tenant` (`None`: no such job, or another tenant's).
    async fn job(&self, tenant: &Tenant, job_id: &str) -> Result<Option<Job>, StoreError>;
    /// A page of one tenant's jobs, as `query` says.
    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError>;
    /// Jobs that may be started now, all tenants, at most `limit` and at
    /// most one per chat (its oldest, by creation time then id), in chat
    /// order (tenant, then chat id), from the first chat after `after`
    /// (from the first chat when `None`): PENDING ones due by `now_us`, and
    /// RUNNING ones whose lease expired before `now_us` (their runner
    /// stopped; a RUNNING job without a lease counts as expired). Chats
    /// that have a RUNNING job under a lease still valid at `now_us` (its
    /// `until_us` not before `now_us`) are left out whole (a chat runs one
    /// job at a time, across replicas too). Only jobs of `lane` count,
    /// for all of this: each lane runs one job of a chat at a time. The
    /// runner pages through the chats with it, round-robin, however many
    /// there are.
    async fn runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&ChatKey>,
        lane: JobLane,
    ) -> Result<Vec<Job>, StoreError>;
    /// The earliest time after `after_us` at which a PENDING job of `lane`
    /// becomes due or a RUNNING one's lease expires, all tenants: when the
    /// lane's runner should look again at the latest. `None` when there is
    /// no such time.
    async fn next_job_due(
        &self,
        after_us: UnixMicros,
        lane: JobLane,
    ) -> Result<Option<UnixMicros>, StoreError>;
    /// One lorebook of `tenant` (`None`: no such book).
    async fn lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<StoredLorebook>, StoreError>;
    /// The versions of those of `names` that `tenant` has, in no order.
    async fn lorebook_versions(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, u64)>, StoreError>;
    /// A page of one tenant's lorebooks, ordered by name as bytes, at most
    /// `limit`, strictly after `after` when given.
    async fn list_lorebooks(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LorebookListing>, StoreError>;
    /// How many lorebooks `tenant` has.
    async fn lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError>;
    /// Stops taking commits and waits until every commit already taken is
    /// durable (or failed). Later commits fail with [`StoreError::Closed`].
    async fn close(&self);
}

/// A store that several replicas write at once: the feed of the others'
/// commits, and the reads that catch up with them.
#[async_trait::async_trait]
pub trait ReplicaStore: Send + Sync + 'static {
    /// The feed of other replicas' commits; `Some` the first time only.
    fn changes(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<Change>>;
    /// The chats changed since `since_ms` on the store's clock (none when
    /// `None`), with their claim clocks, and the store's clock now, to pass
    /// as the next `since_ms`.
    async fn changed_since(
        &self,
        since_ms: Option<UnixMillis>,
    ) -> Result<(Vec<(ChatKey, u64)>, UnixMillis), StoreError>;
    /// The current claim clocks of `chats` (absent: never claimed).
    async fn clocks(&self, chats: &[ChatKey]) -> Result<Vec<(ChatKey, u64)>, StoreError>;
    /// The chats that owe a debounced refresh and have not changed for
    /// `quiet`.
    async fn chats_owing_refresh_quiet_for(
        &self,
        quiet: Duration,
    ) -> Result<Vec<ChatKey>, StoreError>;
}

/// The stores the engine works with: always a [`ChatStore`]; with several
/// replicas, the same database as a [`ReplicaStore`] too.
#[derive(Clone)]
pub struct Stores {
    /// Chat state and commits.
    pub chats: std::sync::Arc<dyn ChatStore>,
    /// The replica feed; `None` when this process alone writes the store.
    pub replicas: Option<std::sync::Arc<dyn ReplicaStore>>,
}

impl Stores {
    /// A store that this process alone writes.
    pub fn single(store: std::sync::Arc<dyn ChatStore>) -> Stores {
        Stores {
            chats: store,
            replicas: None,
        }
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Serialises a row body.
pub(crate) fn to_json<T: Serialize>(what: &str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::corrupt(what.to_owned(), e))
}

/// Reads a row body back.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(what.to_owned(), e))
}
