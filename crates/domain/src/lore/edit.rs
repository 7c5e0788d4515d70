//! The changes recapd makes to a book: a new entry for an entity, a
//! merge's or compaction's new content, duplicates merged, and a new
//! chat book seeded from other books. Every change goes through the
//! book's own entry edit (`Book::put_entry`, `Book::delete_entry`), so the
//! rest of the file stays as it was; every change keeps a locked entry as
//! it is.
//!
//! An entry recapd writes: `comment` `<type>-<name>`, `key` the cleaned
//! keywords (the name first), `keysecondary` empty, `content` the facts
//! one per line, `constant` its type's flag, `order` 100, `position` 0
//! (before the character's description), `depth` 4, recursion allowed
//! both ways, `ignoreBudget` false (the entries share the World Info
//! budget with every other), `sticky` 0; the other members are those
//! SillyTavern gives a new entry.

use serde_json::{Value, json};

use crate::DomainError;
use crate::jobs::fingerprint_text;
use crate::world_info::book::{Book, BookLimits};

use super::clean::clean_name;
use super::keys::{clean_keys, defuse_keys, entry_comment, normalise_name};
use super::registry::{Registry, entry_members, keys_member, text_member};
use super::{Entity, EntityTypes, EntryRead};

/// The entry member a client sets to `true` to keep recapd from ever
/// changing the entry (not part of SillyTavern's format; SillyTavern keeps
/// it as it keeps any member it does not know).
pub const LOCKED_FIELD: &str = "recapdLocked";

/// The `order` of the entries recapd writes (SillyTavern's default).
pub const ENTRY_ORDER: i64 = 100;
/// The `depth` of the entries recapd writes.
pub const ENTRY_DEPTH: i64 = 4;

/// The members a seeded entry takes from its source.
const SEEDED_FIELDS: [&str; 8] = [
    "comment", "content", "key", "order", "position", "depth", "constant", "disable",
];

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
    book.entry(uid).map(|raw| fingerprint_text(raw.get()))
}

/// Whether the entry `read` names is in `book` as it was read.
pub fn entry_unchanged(read: &EntryRead, book: Option<&Book>) -> bool {
    book.and_then(|b| entry_fingerprint(b, &read.uid)) == Some(read.fingerprint)
}

/// Whether entry `uid` is locked.
pub fn is_locked(book: &Book, uid: &str) -> bool {
    book.entry(uid)
        .is_some_and(|raw| entry_members(raw.get()).get(LOCKED_FIELD) == Some(&Value::Bool(true)))
}

/// Facts as an entry's content: each line trimmed, blank and repeated
/// lines dropped, joined by line breaks.
fn content_of<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for line in lines {
        let line = line.trim();
        if !line.is_empty() && !kept.contains(&line) {
            kept.push(line);
        }
    }
    kept.join("\n")
}

/// Writes `fields` (a JSON object) over entry `uid` (`None`: a new entry).
fn put(
    book: &mut Book,
    uid: Option<&str>,
    fields: &Value,
    limits: &BookLimits,
) -> Result<String, DomainError> {
    book.put_entry(uid, &fields.to_string(), limits)
}

/// Why `entity` (from an LLM's answer) cannot be written under the
/// operator's limits, if it cannot: its name (its first key) or one of its
/// keywords longer than a key may be, or its facts longer than a content
/// may be. Such an entity is skipped (never created, merged or resolved),
/// not the answer it came in.
pub fn entity_problem(entity: &Entity, limits: &BookLimits) -> Option<String> {
    let name = clean_name(&entity.name);
    if name.len() > limits.max_key_bytes {
        return Some(format!(
            "the name has {} bytes, more than a key may have ({})",
            name.len(),
            limits.max_key_bytes
        ));
    }
    if let Some(long) = defuse_keys(&entity.keywords)
        .iter()
        .find(|k| k.len() > limits.max_key_bytes)
    {
        return Some(format!(
            "a keyword has {} bytes, more than a key may have ({})",
            long.len(),
            limits.max_key_bytes
        ));
    }
    let content = content_of(entity.content.iter().map(String::as_str));
    if content.len() > limits.max_content_bytes {
        return Some(format!(
            "the facts have {} bytes, more than an entry's content may have ({})",
            content.len(),
            limits.max_content_bytes
        ));
    }
    None
}

/// Writes a new entry for `entity` at the uid after the book's highest
/// (never a freed one); returns its uid. Refused
/// ([`DomainError::ResourceExhausted`]) when the book holds
/// `limits.max_entries` entries or more.
pub fn create_entry(
    book: &mut Book,
    entity: &Entity,
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<String, DomainError> {
    if book.entry_count() >= limits.max_entries {
        return Err(DomainError::ResourceExhausted(format!(
            "the book holds {} entries, lore_max_entries",
            book.entry_count()
        )));
    }
    let constant = types.get(&entity.kind).is_some_and(|t| t.constant);
    // Past every uid the book holds, never a freed one: a merge or
    // compaction queued for a removed entry's uid must not find another
    // entity there.
    let uid = book
        .entries()
        .filter_map(|(uid, _)| uid.parse::<u64>().ok())
        .max()
        .map_or(0, |max| max.saturating_add(1))
        .to_string();
    let fields = json!({
        "comment": entry_comment(&entity.kind, &entity.name),
        "key": clean_keys(&entity.name, &defuse_keys(&entity.keywords), limits.max_keys),
        "keysecondary": [],
        "content": content_of(entity.content.iter().map(String::as_str)),
        "constant": constant,
        "order": ENTRY_ORDER,
        "position": 0,
        "depth": ENTRY_DEPTH,
        "excludeRecursion": false,
        "preventRecursion": false,
        "ignoreBudget": false,
        "sticky": 0,
    });
    put(book, Some(&uid), &fields, &limits.book)
}

/// Replaces entry `uid`'s content with `content`; with `name` (a
/// canonical name other than the current one and than its keys, cleaned)
/// renames it, keeping the old name as a key; unions `keywords` (an
/// LLM's: defused) into its keys. A locked entry is left as it is
/// (`Ok(false)`); `Ok(true)` when changed.
pub fn merge_entry(
    book: &mut Book,
    uid: &str,
    content: &str,
    name: Option<&str>,
    keywords: &[String],
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<bool, DomainError> {
    if book.entry(uid).is_none() {
        return Err(DomainError::NotFound(format!("entry {uid}")));
    }
    if is_locked(book, uid) {
        return Ok(false);
    }
    let registry = Registry::of(book, types);
    let Some(entry) = registry.get(uid) else {
        return Err(DomainError::NotFound(format!("entry {uid}")));
    };
    // A name the entry already goes by (one of its keys) is no rename: an
    // entity found through an alias would otherwise rename its entry back
    // and forth between its names, scene after scene.
    let name = name.map(clean_name);
    let renamed = name.as_deref().filter(|new| {
        let new = normalise_name(new);
        !new.is_empty()
            && new != normalise_name(&entry.name)
            && !entry.aliases.iter().any(|a| normalise_name(a) == new)
    });
    let current_name = renamed.unwrap_or(&entry.name);
    // The old name right after the new one, so a rename keeps it whatever
    // the key limit; then the keys it had, then the new keywords.
    let mut candidates: Vec<String> = Vec::new();
    if renamed.is_some() {
        candidates.push(entry.name.clone());
    }
    candidates.extend(entry.aliases.iter().cloned());
    candidates.extend(defuse_keys(keywords));
    let mut fields = json!({
        "content": content_of(content.lines()),
        "key": clean_keys(current_name, &candidates, limits.max_keys),
    });
    if let Some(new) = renamed {
        fields["comment"] = Value::String(entry_comment(&entry.kind, new));
    }
    put(book, Some(uid), &fields, &limits.book)?;
    Ok(true)
}

/// A fact as compared with an entry's: lowercase, whitespace collapsed,
/// without the final full stop.
fn fact_form(line: &str) -> String {
    line.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['.', '!'])
        .to_owned()
}

/// Whether every fact of `entity` is already in entry `uid`'s content
/// (compared without case, spacing or a final full stop, as a line or
/// within one): a merge would add nothing, so none is asked for.
pub fn adds_nothing(book: &Book, uid: &str, entity: &Entity) -> bool {
    let Some(raw) = book.entry(uid) else {
        return false;
    };
    let members = entry_members(raw.get());
    let content = fact_form(text_member(&members, "content"));
    entity
        .content
        .iter()
        .map(|line| fact_form(line))
        .filter(|fact| !fact.is_empty())
        .all(|fact| content.contains(&fact))
}

/// Unions `keywords` (an LLM's: defused) into entry `uid`'s keys (cleaned, at most
/// `limits.max_keys`), its content untouched. `Ok(true)` when the keys
/// changed; a locked entry is left as it is.
pub fn add_keys(
    book: &mut Book,
    uid: &str,
    keywords: &[String],
    types: &EntityTypes,
    limits: &LoreLimits,
) -> Result<bool, DomainError> {
    if is_locked(book, uid) {
        return Ok(false);
    }
    let registry = Registry::of(book, types);
    let Some(entry) = registry.get(uid) else {
        return Err(DomainError::NotFound(format!("entry {uid}")));
    };
    let mut candidates = entry.aliases.clone();
    candidates.extend(defuse_keys(keywords));
    let keys = clean_keys(&entry.name, &candidates, limits.max_keys);
    if keys == entry.aliases {
        return Ok(false);
    }
    put(book, Some(uid), &json!({ "key": keys }), &limits.book)?;
    Ok(true)
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
    let registry = Registry::of(book, types);
    let mut groups: Vec<(String, Vec<&super::registry::RegistryEntry>)> = Vec::new();
    for entry in registry.entries.iter().filter(|e| !e.kind.is_empty()) {
        let key = format!("{}\u{0}{}", entry.kind, normalise_name(&entry.name));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(entry),
            None => groups.push((key, vec![entry])),
        }
    }
    let mut merged = Vec::new();
    for (_, members) in groups.into_iter().filter(|(_, m)| m.len() > 1) {
        // Registry order is uid order: the first is the lowest uid.
        let keeper = members
            .iter()
            .find(|e| e.locked)
            .copied()
            .unwrap_or(members[0]);
        let others: Vec<_> = members
            .iter()
            .filter(|e| e.uid != keeper.uid && !e.locked)
            .collect();
        if others.is_empty() {
            continue;
        }
        if !keeper.locked {
            let content = content_of(
                std::iter::once(keeper.content.as_str())
                    .chain(others.iter().map(|e| e.content.as_str()))
                    .flat_map(str::lines),
            );
            let keys: Vec<String> = keeper
                .aliases
                .iter()
                .chain(others.iter().flat_map(|e| e.aliases.iter()))
                .cloned()
                .collect();
            let fields = json!({
                "content": content,
                "key": clean_keys(&keeper.name, &keys, limits.max_keys),
            });
            put(book, Some(&keeper.uid), &fields, &limits.book)?;
        }
        for other in others {
            book.delete_entry(&other.uid)?;
            merged.push(Deduplicated {
                kept: keeper.uid.clone(),
                removed: other.uid.clone(),
            });
        }
    }
    Ok(merged)
}

/// Copies into `book` the entries of `sources` (each book's entries in
/// the order its file holds them): their comment, content, keys, order,
/// position, depth, constant and disable fields, at new uids, up to
/// `limits.max_entries`; an entry with neither content nor keys, or past
/// the operator's limits, is not copied. Returns how many were copied.
pub fn seed(book: &mut Book, sources: &[&Book], limits: &LoreLimits) -> Result<usize, DomainError> {
    let mut copied = 0;
    for source in sources {
        for (_, raw) in source.entries() {
            if book.entry_count() >= limits.max_entries {
                return Ok(copied);
            }
            let members = entry_members(raw.get());
            let mut fields = serde_json::Map::new();
            for name in SEEDED_FIELDS {
                if let Some(value) = members.get(name) {
                    fields.insert(name.to_owned(), value.clone());
                }
            }
            // Keys as SillyTavern's array of strings, whatever the source held.
            fields.insert("key".to_owned(), json!(keys_member(&members)));
            if text_member(&members, "content").is_empty() && keys_member(&members).is_empty() {
                continue;
            }
            // An entry past the operator's limits is left out, not the book.
            match put(book, None, &Value::Object(fields), &limits.book) {
                Ok(_) => copied += 1,
                Err(DomainError::ResourceExhausted(_)) => {}
                Err(other) => return Err(other),
            }
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests;
