//! The registry: a compact view of a book's entries, by type and name,
//! that matching searches and a resolution's prompt lists
//! (`{{lore_registry}}`). It is read off the book itself every time (the
//! book is the one truth: an entry a client adds or edits is in it at once).

use crate::world_info::book::Book;

use super::EntityTypes;

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

/// The entries of one book, in uid order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registry {
    /// The entries.
    pub entries: Vec<RegistryEntry>,
}

impl Registry {
    /// The registry of `book` under the chat's entity types.
    pub fn of(book: &Book, types: &EntityTypes) -> Registry {
        todo!("H1: {} {types:?}", book.entry_count())
    }

    /// The entry of uid `uid`.
    pub fn get(&self, uid: &str) -> Option<&RegistryEntry> {
        self.entries.iter().find(|e| e.uid == uid)
    }

    /// `{{lore_registry}}`: one line per entry, `candidates` first (in
    /// their order), then the others, at most `max_lines` lines:
    /// `- uid <uid>: <type> "<name>" (also: <aliases>) - <synopsis>`.
    pub fn listing(&self, candidates: &[String], max_lines: usize) -> String {
        todo!("H1: {candidates:?} {max_lines}")
    }
}
