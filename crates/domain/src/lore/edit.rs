//! The changes recapd makes to a book: a new entry for an entity, a
//! merge's or compaction's new content, duplicates merged, and a new
//! chat book seeded from other books. Every change keeps a locked entry
//! as it is.

use crate::DomainError;
use crate::world_info::book::{Book, BookLimits};

use super::{Entity, EntityTypes, EntryRead};

/// The entry member a client sets to `true` to keep recapd from ever
/// changing the entry (not part of SillyTavern's format; SillyTavern keeps
/// it as it keeps any member it does not know).
pub const LOCKED_FIELD: &str = "recapdLocked";

/// What a lore job may do to a book: the chat's settings and the
/// operator's book limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoreLimits {
    /// `lore_max_entries`.
    pub max_entries: usize,
    /// `lore_max_keys`.
    pub max_keys: usize,
    /// The operator's limits (entries, key and content bytes).
    pub book: BookLimits,
}

/// A stable fingerprint of entry `uid`'s JSON as `book` holds it; `None`
/// when the book has no such entry.
pub fn entry_fingerprint(book: &Book, uid: &str) -> Option<u64> {
    todo!("H1: {} {uid}", book.entry_count())
}

/// Whether the entry `read` names is in `book` as it was read.
pub fn entry_unchanged(read: &EntryRead, book: Option<&Book>) -> bool {
    todo!("H1: {read:?} {}", book.is_some())
}

/// Whether entry `uid` is locked.
pub fn is_locked(book: &Book, uid: &str) -> bool {
    todo!("H1: {} {uid}", book.entry_count())
}

/// Writes a new entry for `entity`; returns its uid. Refused
/// ([`DomainError::ResourceExhausted`]) when the book holds
/// `limits.max_entries` entries or more.
pub fn create_entry(
    book: &mut Book,
    entity: &Entity,
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<String, DomainError> {
    todo!("H1: {} {entity:?} {types:?} {limits:?}", book.entry_count())
}

/// Replaces entry `uid`'s content with `content`; with `name` (a
/// canonical name other than the current one) renames it, keeping the old
/// name as a key; unions `keywords` into its keys. A locked entry is left
/// as it is (`Ok(false)`); `Ok(true)` when changed.
pub fn merge_entry(
    book: &mut Book,
    uid: &str,
    content: &str,
    name: Option<&str>,
    keywords: &[String],
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<bool, DomainError> {
    todo!(
        "H1: {} {uid} {content} {name:?} {keywords:?} {types:?} {limits:?}",
        book.entry_count()
    )
}

/// Two entries merged into one: which was kept, which removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deduplicated {
    /// The entry kept (the lowest uid, or the locked one).
    pub kept: String,
    /// The entry removed.
    pub removed: String,
}

/// Merges every group of entries of one type and normalised name into
/// one, without a request: into the locked one if one is locked (the
/// others' facts dropped), else into the lowest uid (content lines and
/// keys unioned, in order). Two locked entries are both kept.
pub fn deduplicate(
    book: &mut Book,
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<Vec<Deduplicated>, DomainError> {
    todo!("H1: {} {types:?} {limits:?}", book.entry_count())
}

/// Copies into `book` the entries of `sources` (each book's entries in
/// uid order): their comment, content, keys, order, position, depth,
/// constant and disable fields, at new uids, up to `limits.max_entries`.
/// Returns how many were copied.
pub fn seed(book: &mut Book, sources: &[&Book], limits: &LoreLimits) -> Result<usize, DomainError> {
    todo!("H1: {} {} {limits:?}", book.entry_count(), sources.len())
}
