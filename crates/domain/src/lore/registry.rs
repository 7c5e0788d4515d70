//! The registry: a compact view of a book's entries, by type and name,
//! that matching searches and a resolution's prompt lists
//! (`{{lore_registry}}`). It is read off the book itself every time (the
//! book is the one truth: an entry a client adds or edits is in it at once).

use serde_json::{Map, Value};

use crate::world_info::book::Book;

use super::EntityTypes;
use super::edit::LOCKED_FIELD;
use super::keys::parse_comment;

/// The most characters of an entry's synopsis.
pub const SYNOPSIS_MAX_CHARS: usize = 120;

/// One entry as the registry sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryEntry {
    /// Its uid.
    pub uid: String,
    /// Its type, from a `<type>-<name>` comment; empty for an entry whose
    /// comment has another shape.
    pub kind: String,
    /// Its name: from the comment, or the comment itself (or its first key
    /// when the comment is blank).
    pub name: String,
    /// Its keys, as other names it goes by.
    pub aliases: Vec<String>,
    /// A one-line synopsis: the start of its content.
    pub synopsis: String,
    /// Its content.
    pub content: String,
    /// Whether a client locked it ([`super::edit::LOCKED_FIELD`]).
    pub locked: bool,
}

/// The entries of one book, in uid order (integer uids by value first).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    /// The entries.
    pub entries: Vec<RegistryEntry>,
}

/// An entry's members, when it is a JSON object.
pub(crate) fn entry_members(json: &str) -> Map<String, Value> {
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(members)) => members,
        _ => Map::new(),
    }
}

/// A string member, or empty.
pub(crate) fn text_member<'a>(members: &'a Map<String, Value>, name: &str) -> &'a str {
    members.get(name).and_then(Value::as_str).unwrap_or("")
}

/// An entry's keys: its `key` array's strings (a lone string as one key).
pub(crate) fn keys_member(members: &Map<String, Value>) -> Vec<String> {
    match members.get("key") {
        Some(Value::Array(keys)) => keys
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(key)) if !key.is_empty() => vec![key.clone()],
        _ => Vec::new(),
    }
}

/// The first line of `content`, cut at its first sentence's end when that
/// comes early, and to [`SYNOPSIS_MAX_CHARS`] characters (with `…`).
fn synopsis(content: &str) -> String {
    let line = content
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let sentence = line
        .char_indices()
        .find(|(i, c)| matches!(c, '.' | '!' | '?') && *i > 20)
        .map_or(line, |(i, c)| &line[..i + c.len_utf8()]);
    crate::jobs::clip(sentence, SYNOPSIS_MAX_CHARS)
}

/// Orders uids as SillyTavern's integer uids count (then any other text).
fn uid_order(uid: &str) -> (u64, &str) {
    (uid.parse::<u64>().unwrap_or(u64::MAX), uid)
}

impl Registry {
    /// The registry of `book` under the chat's entity types.
    pub fn of(book: &Book, types: &EntityTypes) -> Registry {
        let mut entries: Vec<RegistryEntry> = book
            .entries()
            .map(|(uid, raw)| {
                let members = entry_members(raw.get());
                let comment = text_member(&members, "comment");
                let aliases = keys_member(&members);
                let content = text_member(&members, "content").to_owned();
                let (kind, name) = parse_comment(comment, types).unwrap_or_else(|| {
                    let name = if comment.trim().is_empty() {
                        aliases.first().cloned().unwrap_or_default()
                    } else {
                        comment.trim().to_owned()
                    };
                    (String::new(), name)
                });
                RegistryEntry {
                    uid: uid.to_owned(),
                    kind,
                    name,
                    aliases,
                    synopsis: synopsis(&content),
                    content,
                    locked: members.get(LOCKED_FIELD) == Some(&Value::Bool(true)),
                }
            })
            .collect();
        entries.sort_by(|a, b| uid_order(&a.uid).cmp(&uid_order(&b.uid)));
        Registry { entries }
    }

    /// The entry of uid `uid`.
    pub fn get(&self, uid: &str) -> Option<&RegistryEntry> {
        self.entries.iter().find(|e| e.uid == uid)
    }

    /// The entries a listing of `candidates` shows, in its order: the
    /// candidates the book has (each once, in their order), then the
    /// others, at most `max_lines`.
    pub fn listed(&self, candidates: &[String], max_lines: usize) -> Vec<&RegistryEntry> {
        let mut shown: Vec<&RegistryEntry> = Vec::new();
        for uid in candidates {
            if let Some(entry) = self.get(uid)
                && !shown.iter().any(|e| e.uid == entry.uid)
            {
                shown.push(entry);
            }
        }
        shown.extend(self.entries.iter().filter(|e| !candidates.contains(&e.uid)));
        shown.truncate(max_lines);
        shown
    }

    /// `{{lore_registry}}`: one line per entry of [`Registry::listed`]:
    /// `- uid <uid>: <type> "<name>" (also: <aliases>) - <synopsis>`.
    pub fn listing(&self, candidates: &[String], max_lines: usize) -> String {
        let lines: Vec<String> = self
            .listed(candidates, max_lines)
            .into_iter()
            .map(|entry| {
                let kind = if entry.kind.is_empty() {
                    String::new()
                } else {
                    format!("{} ", entry.kind)
                };
                let also = if entry.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" (also: {})", entry.aliases.join(", "))
                };
                let summary = if entry.synopsis.is_empty() {
                    String::new()
                } else {
                    format!(" - {}", crate::request::macros::one_line(&entry.synopsis))
                };
                format!(
                    "- uid {}: {kind}\"{}\"{also}{summary}",
                    entry.uid,
                    crate::request::macros::one_line(&entry.name)
                )
            })
            .collect();
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lore::default_entity_types;
    use crate::world_info::book::BookLimits;

    pub(crate) const LIMITS: BookLimits = BookLimits {
        max_entries: 1000,
        max_key_bytes: 1024,
        max_content_bytes: 100_000,
        max_book_bytes: usize::MAX,
    };

    fn book(entries: &str) -> Book {
        Book::parse(&format!(r#"{{"entries":{{{entries}}}}}"#), &LIMITS).unwrap()
    }

    #[test]
    fn entries_are_read_with_their_type_name_keys_and_lock() {
        let book = book(
            r#""10":{"uid":10,"comment":"location-The Silver Stag","key":["silver stag","the stag"],"content":"An inn by the north gate, run by Oda. It has six rooms."},
               "2":{"uid":2,"comment":"Eldoria","key":["eldoria"],"content":"A kingdom.","recapdLocked":true},
               "3":{"uid":3,"comment":"","key":"mira","content":""}"#,
        );
        let registry = Registry::of(&book, &default_entity_types());
        let uids: Vec<&str> = registry.entries.iter().map(|e| e.uid.as_str()).collect();
        assert_eq!(uids, ["2", "3", "10"]);
        let inn = registry.get("10").unwrap();
        assert_eq!(
            (inn.kind.as_str(), inn.name.as_str()),
            ("location", "The Silver Stag")
        );
        assert_eq!(inn.aliases, ["silver stag", "the stag"]);
        assert_eq!(inn.synopsis, "An inn by the north gate, run by Oda.");
        assert!(!inn.locked);
        let kingdom = registry.get("2").unwrap();
        assert_eq!(
            (kingdom.kind.as_str(), kingdom.name.as_str()),
            ("", "Eldoria")
        );
        assert!(kingdom.locked);
        assert_eq!(registry.get("3").unwrap().name, "mira");
    }

    #[test]
    fn the_listing_puts_candidates_first_and_stops_at_its_length() {
        let book = book(
            r#""0":{"comment":"character-Mira","key":["mira","the captain"],"content":"Captain of the guard."},
               "1":{"comment":"location-Harbor","key":[],"content":"Where ships dock.\nBusy."}"#,
        );
        let registry = Registry::of(&book, &default_entity_types());
        let listing = registry.listing(&["1".into()], 10);
        assert_eq!(
            listing,
            "- uid 1: location \"Harbor\" - Where ships dock.\n- uid 0: character \"Mira\" (also: mira, the captain) - Captain of the guard."
        );
        assert_eq!(registry.listing(&[], 1).lines().count(), 1);
        let shown: Vec<&str> = registry
            .listed(&["1".into(), "9".into(), "1".into()], 10)
            .iter()
            .map(|e| e.uid.as_str())
            .collect();
        assert_eq!(shown, ["1", "0"]);
    }
}
