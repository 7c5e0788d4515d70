//! Lorebook rows (SillyTavern World Info files a tenant keeps): what the
//! [`Write::Lorebook`](super::Write::Lorebook) and
//! [`Write::DeleteLorebook`](super::Write::DeleteLorebook) writes carry and
//! what the reads give back.
//!
//! A row is keyed by tenant and name, like every row, and carries a
//! `version`: an opaque number that changes at every write of the row and is
//! never reused by a later row of the same name (the engine draws it at
//! random, 63 bits). A write names the version it was computed from and
//! fails with [`StoreError::LorebookChanged`](super::StoreError::LorebookChanged)
//! when the row moved since: two replicas editing one book never lose an
//! update, and a cached parse of a book is valid while its version is the
//! stored one.
//!
//! An entry's edit ([`PutLorebookEntry`]) costs what the entry costs: it
//! moves the row's version and appends the entry's new text to the book's
//! edits (a table of their own), which a read returns with the row's text
//! ([`StoredLorebook::edits`]) to be replayed in order. A write of the
//! whole book (an import, a lore job's change, or the engine's compaction
//! once the edits' bytes pass the book's) replaces the text and drops the
//! edits, as a deletion of the book does.

use std::sync::Arc;

use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;

/// The version a write expects of a book that does not exist yet.
pub const NO_LOREBOOK: u64 = 0;

/// A book's file text, shared (not copied) between the engine and the
/// store; its `Debug` shows its length, not a file of megabytes.
#[derive(Clone, PartialEq, Eq)]
pub struct LorebookText(pub Arc<str>);

impl std::fmt::Debug for LorebookText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LorebookText({} bytes)", self.0.len())
    }
}

/// Creates or replaces one lorebook row, if the stored row's version is
/// still `expect_version` ([`NO_LOREBOOK`]: no row of that name exists);
/// the row then has `version`. Otherwise the whole commit fails with
/// `StoreError::LorebookChanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutLorebook {
    /// The tenant.
    pub tenant: Tenant,
    /// The book's name.
    pub name: String,
    /// The file's text.
    pub json: LorebookText,
    /// Entries in its `entries` object.
    pub entry_count: u64,
    /// When it changed, µs since the epoch.
    pub updated_us: UnixMicros,
    /// The version the change was computed from.
    pub expect_version: u64,
    /// The row's new version: not [`NO_LOREBOOK`], not `expect_version`.
    pub version: u64,
}

/// Changes one entry of a lorebook, if the stored row's version is still
/// `expect_version`: the row takes `version`, `entry_count` and
/// `updated_us`, and the edit is appended to the book's edits (its
/// `uid` and `entry`, the entry's new text, `None` for a deletion), its
/// bytes added to the row's `log_bytes`. Otherwise (changed or gone) the
/// whole commit fails with `StoreError::LorebookChanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutLorebookEntry {
    /// The tenant.
    pub tenant: Tenant,
    /// The book's name.
    pub name: String,
    /// The entry's uid (its name in `entries`).
    pub uid: String,
    /// The entry's JSON object text after the edit; `None`: deleted.
    pub entry: Option<String>,
    /// Entries in the book after the edit.
    pub entry_count: u64,
    /// When it changed, µs since the epoch.
    pub updated_us: UnixMicros,
    /// The version the change was computed from (never [`NO_LOREBOOK`]).
    pub expect_version: u64,
    /// The row's new version: not [`NO_LOREBOOK`], not `expect_version`.
    pub version: u64,
}

impl PutLorebookEntry {
    /// The bytes this edit adds to the book's edits (`log_bytes`): its
    /// uid's, its text's, and one for the row, so a book with edits never
    /// has `log_bytes` 0.
    pub fn log_bytes(&self) -> u64 {
        let bytes = 1 + self.uid.len() + self.entry.as_ref().map_or(0, String::len);
        u64::try_from(bytes).unwrap_or(u64::MAX)
    }
}

/// Deletes one lorebook row if its version is still `expect_version`;
/// otherwise (changed or gone) the commit fails with
/// `StoreError::LorebookChanged`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteLorebook {
    /// The tenant.
    pub tenant: Tenant,
    /// The book's name.
    pub name: String,
    /// The version the deletion was decided on.
    pub expect_version: u64,
}

/// One lorebook as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLorebook {
    /// What lists of books show of it.
    pub listing: LorebookListing,
    /// Its file's text as last written whole.
    pub json: String,
    /// The entry edits made since, in order: (uid, the entry's text,
    /// `None` for a deletion), to replay on `json`.
    pub edits: Vec<(String, Option<String>)>,
    /// The bytes of `edits` (uids and texts).
    pub log_bytes: u64,
}

/// A lorebook as listed: everything but its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LorebookListing {
    /// Its name.
    pub name: String,
    /// Entries in its `entries` object.
    pub entry_count: u64,
    /// When it last changed, µs since the epoch.
    pub updated_us: UnixMicros,
    /// Its version (see the module documentation).
    pub version: u64,
}

/// A version as the databases' signed 64-bit column holds it (versions
/// are drawn below 2^63, so the cast keeps them).
pub(crate) fn version_column(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// A version column read back.
pub(crate) fn version_of(column: i64) -> u64 {
    u64::try_from(column).unwrap_or(0)
}
