//! A SillyTavern World Info file kept losslessly, its entries editable one
//! by one.
//!
//! A [`Book`] holds the file as JSON text member by member: every member
//! at every level keeps the text the file had (numbers keep their
//! spelling, strings their escapes), top-level members and entries keep
//! their order. Only what an edit names is rewritten. Duplicate member
//! names resolve as JavaScript's `JSON.parse` resolves them (the last
//! value, at the first name's place), at every level, so that what recapd
//! reads is what SillyTavern reads.

pub(super) mod json;
pub(super) mod template;
mod types;

use serde_json::Value;
use serde_json::value::RawValue;

use std::sync::{Arc, OnceLock};

use super::entry::Entry;
use super::scan::CompiledKeys;
use crate::DomainError;

use json::{dedup, members, null, object_members, object_text, raw, resolved};

/// Limits a book is checked against (operator-configurable; the server
/// passes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookLimits {
    /// Most entries one book may hold.
    pub max_entries: usize,
    /// Longest key, in bytes: each string of an entry's `key` and
    /// `keysecondary`.
    pub max_key_bytes: usize,
    /// Longest `content`, in bytes.
    pub max_content_bytes: usize,
    /// Largest file, in bytes: the length of [`Book::to_json`], the text
    /// the book is stored and exported as.
    pub max_book_bytes: usize,
}

/// A World Info file: its members in file order, the `entries` object's
/// members (uid, entry JSON text) in file order.
///
/// Invariants: `entries_at < top.len()` and `top[entries_at]` is the
/// `entries` member (its value there is a placeholder: the entries live in
/// `entries`); each entry's text is shared (`Arc`), so a clone of a book
/// to edit one entry copies no entry text; member names are unique at every level down to 64;
/// `scanned` is empty or holds the entries as read for a scan under the
/// name it holds (every change of the entries empties it); `compiled`
/// holds only regex keys compiled from this version's entries (every
/// change of the entries replaces it with an empty one).
#[derive(Clone)]
pub struct Book {
    top: Vec<(String, Box<RawValue>)>,
    entries_at: usize,
    entries: Vec<(String, Arc<RawValue>)>,
    scanned: OnceLock<(String, Arc<[Entry]>)>,
    compiled: Arc<CompiledKeys>,
}

impl std::fmt::Debug for Book {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book")
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// The error for a file SillyTavern does not take.
fn not_a_book(reason: impl Into<String>) -> DomainError {
    DomainError::invalid("json", reason)
}

impl Book {
    /// Reads a SillyTavern World Info file. Refuses only what SillyTavern
    /// refuses (`src/endpoints/worldinfo.js:116-117`): text that is not
    /// JSON, not an object, or has no `entries` member; and, where
    /// SillyTavern's server takes any `entries` value, an `entries` that is
    /// not an object (its editor and scanner cannot read one):
    /// [`DomainError::Invalid`] with field `json`. Also refused so: a member
    /// name with a lone surrogate escape (`"\ud800"`, which JSON.parse
    /// takes; inside values it is kept as written). Any depth of nesting is
    /// read, as JSON.parse reads it. Past `limits`:
    /// [`DomainError::ResourceExhausted`] naming the entry and the limit.
    ///
    /// Reading checks no entry's field types: entries that are not
    /// objects, keys that are numbers, `key` not an array are kept as
    /// written (a book stored before the type checks keeps loading); a
    /// book coming in from a client is checked with [`Book::check_types`].
    pub fn parse(json: &str, limits: &BookLimits) -> Result<Book, DomainError> {
        let mut top =
            object_members(json).map_err(|e| not_a_book(format!("not a JSON object: {e}")))?;
        let entries_at = top
            .iter()
            .position(|(name, _)| name == "entries")
            .ok_or_else(|| not_a_book("no `entries` member"))?;
        let text = top[entries_at].1.get();
        let entries = object_members(text).map_err(|e| {
            not_a_book(format!("`entries` is not an object SillyTavern reads: {e}"))
        })?;
        top[entries_at].1 = null();
        if entries.len() > limits.max_entries {
            return Err(DomainError::ResourceExhausted(format!(
                "the book has {} entries, more than the limit of {}",
                entries.len(),
                limits.max_entries
            )));
        }
        for (uid, entry) in &entries {
            check_entry(uid, entry, limits)?;
        }
        let book = Book {
            top,
            entries_at,
            entries: shared(entries),
            scanned: OnceLock::new(),
            compiled: Arc::default(),
        };
        book.check_size(limits)?;
        Ok(book)
    }

    /// An empty book (`{"entries":{}}`).
    pub fn empty() -> Book {
        Book {
            top: vec![("entries".to_owned(), null())],
            entries_at: 0,
            entries: Vec::new(),
            scanned: OnceLock::new(),
            compiled: Arc::default(),
        }
    }

    /// Builds a book from entries already made as JSON objects (a card's
    /// converted `character_book`): `entries` first, then the top-level
    /// members `rest`, as SillyTavern's converted book is written.
    pub(crate) fn from_parts(
        entries: Vec<(String, Box<RawValue>)>,
        rest: Vec<(String, Box<RawValue>)>,
        limits: &BookLimits,
    ) -> Result<Book, DomainError> {
        let mut top = vec![("entries".to_owned(), null())];
        top.extend(rest.into_iter().filter(|(name, _)| name != "entries"));
        let mut entries = entries;
        dedup(&mut entries);
        if entries.len() > limits.max_entries {
            return Err(DomainError::ResourceExhausted(format!(
                "the book has {} entries, more than the limit of {}",
                entries.len(),
                limits.max_entries
            )));
        }
        for (uid, entry) in &entries {
            check_entry(uid, entry, limits)?;
        }
        let book = Book {
            top,
            entries_at: 0,
            entries: shared(entries),
            scanned: OnceLock::new(),
            compiled: Arc::default(),
        };
        book.check_size(limits)?;
        Ok(book)
    }

    /// The file: unchanged since [`Book::parse`], JSON-equal to what was
    /// read (every member at every level kept as written, numbers as
    /// written, member order kept); edited entries keep their untouched
    /// members as written.
    pub fn to_json(&self) -> String {
        let size = self.file_bytes();
        let entries = object_text(
            self.entries.iter().map(|(uid, e)| (uid.as_str(), e.get())),
            size,
        );
        object_text(
            self.top.iter().enumerate().map(|(i, (name, value))| {
                let text = if i == self.entries_at {
                    entries.as_str()
                } else {
                    value.get()
                };
                (name.as_str(), text)
            }),
            size + 16,
        )
    }

    /// How many entries the book holds.
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// The length in bytes of [`Book::to_json`], computed from the members'
    /// lengths without writing the file (time in the number of entries and
    /// the length of their names, not of their text).
    pub fn file_bytes(&self) -> usize {
        let entries = object_len(
            self.entries
                .iter()
                .map(|(uid, entry)| (uid.as_str(), entry.get().len())),
        );
        object_len(self.top.iter().enumerate().map(|(i, (name, value))| {
            let len = if i == self.entries_at {
                entries
            } else {
                value.get().len()
            };
            (name.as_str(), len)
        }))
    }

    /// Refuses a book whose file is past `limits.max_book_bytes`.
    fn check_size(&self, limits: &BookLimits) -> Result<(), DomainError> {
        let bytes = self.file_bytes();
        if bytes > limits.max_book_bytes {
            return Err(DomainError::ResourceExhausted(format!(
                "the book's file is {bytes} bytes, more than the limit of {} bytes",
                limits.max_book_bytes
            )));
        }
        Ok(())
    }

    /// Entries in file order: (uid = the entry's name in `entries`, the
    /// entry's JSON text, an object for any entry SillyTavern made).
    /// SillyTavern's `Object.keys` lists integer-like uids first, in
    /// ascending order; this is the file's order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &RawValue)> {
        self.entries
            .iter()
            .map(|(uid, entry)| (uid.as_str(), entry.as_ref()))
    }

    /// The entry named `uid` in `entries`.
    pub fn entry(&self, uid: &str) -> Option<&RawValue> {
        self.entries
            .iter()
            .find(|(name, _)| name == uid)
            .map(|(_, entry)| entry.as_ref())
    }

    /// Creates or updates one entry from a JSON object of fields named as
    /// SillyTavern names them; returns its uid.
    ///
    /// - `uid` `None`: a new entry at the lowest free integer uid from 0
    ///   (SillyTavern's `getFreeWorldEntryUid`, world-info.js:4283-4297).
    /// - A new entry (also an unknown `uid`, which must then be a
    ///   non-negative integer) starts as SillyTavern's `createWorldInfoEntry`
    ///   makes one (world-info.js:4057-4069): `uid` as a number, then the
    ///   editor's defaults (`newWorldInfoEntryTemplate`, :4002-4050), then
    ///   `displayIndex` = uid (as its editor sets it, :2365).
    /// - The fields then replace the members they name, in place; a new
    ///   name is appended; a field given as `null` removes the member; a
    ///   `uid` field is ignored.
    ///
    /// Errors: [`DomainError::Invalid`] (`fields` not an object, a bad
    /// uid, a field SillyTavern defines given a value of another type,
    /// named as `fields.<name>` as [`Book::check_types`] names it),
    /// [`DomainError::ResourceExhausted`] (limits). Refusing changes
    /// nothing.
    pub fn put_entry(
        &mut self,
        uid: Option<&str>,
        fields_json: &str,
        limits: &BookLimits,
    ) -> Result<String, DomainError> {
        let mut fields = members(fields_json)
            .map_err(|e| DomainError::invalid("fields", format!("not a JSON object: {e}")))?;
        dedup(&mut fields);
        for (name, value) in &fields {
            // `uid` is ignored and null removes the member: neither is stored.
            if name != "uid" && value.get() != "null" {
                types::check_field("fields", name, value)?;
            }
        }
        let at = uid.and_then(|uid| self.entries.iter().position(|(name, _)| name == uid));
        let (uid, mut current): (String, Vec<(String, Box<RawValue>)>) = match (uid, at) {
            (Some(_), Some(at)) => {
                let (uid, entry) = &self.entries[at];
                // An entry that is not an object is replaced by the fields.
                let current = object_members(entry.get()).unwrap_or_default();
                (uid.clone(), current)
            }
            (Some(uid), None) => {
                let n = integer_uid(uid).ok_or_else(|| {
                    DomainError::invalid(
                        "uid",
                        format!("a new entry's uid is a non-negative integer, not {uid:?}"),
                    )
                })?;
                (uid.to_owned(), template::new_entry(n))
            }
            (None, _) => {
                let n = self.free_uid().ok_or_else(|| {
                    DomainError::ResourceExhausted("no free entry uid below 1000000".to_owned())
                })?;
                (n.to_string(), template::new_entry(n))
            }
        };
        if at.is_none() && self.entries.len() >= limits.max_entries {
            return Err(DomainError::ResourceExhausted(format!(
                "entry {uid}: the book already holds {} entries, the limit",
                self.entries.len()
            )));
        }
        for (name, value) in fields {
            if name == "uid" {
                continue;
            }
            let place = current.iter().position(|(n, _)| *n == name);
            match (value.get() == "null", place) {
                (true, Some(place)) => {
                    current.remove(place);
                }
                (true, None) => {}
                (false, place) => {
                    let value = match resolved(value) {
                        Some(text) => raw(text),
                        None => value.to_owned(),
                    };
                    match place {
                        Some(place) => current[place].1 = value,
                        None => current.push((name, value)),
                    }
                }
            }
        }
        let size = current
            .iter()
            .map(|(n, v)| n.len() + v.get().len() + 4)
            .sum();
        let entry = raw(object_text(
            current.iter().map(|(n, v)| (n.as_str(), v.get())),
            size,
        ));
        check_entry(&uid, &entry, limits)?;
        let before = self.file_bytes();
        let after = match at {
            Some(at) => before - self.entries[at].1.get().len() + entry.get().len(),
            None => {
                before
                    + quoted_len(&uid)
                    + 1
                    + entry.get().len()
                    + usize::from(!self.entries.is_empty())
            }
        };
        if after > limits.max_book_bytes {
            return Err(DomainError::ResourceExhausted(format!(
                "entry {uid}: the book's file would be {after} bytes, more than the limit of {} bytes",
                limits.max_book_bytes
            )));
        }
        let entry: Arc<RawValue> = Arc::from(entry);
        match at {
            Some(at) => self.entries[at].1 = entry,
            None => self.entries.push((uid.clone(), entry)),
        }
        self.scanned = OnceLock::new();
        self.compiled = Arc::default();
        Ok(uid)
    }

    /// Removes the entry named `uid`; [`DomainError::NotFound`] (`entry
    /// <uid>`) when there is none.
    pub fn delete_entry(&mut self, uid: &str) -> Result<(), DomainError> {
        let at = self
            .entries
            .iter()
            .position(|(name, _)| name == uid)
            .ok_or_else(|| DomainError::NotFound(format!("entry {uid}")))?;
        self.entries.remove(at);
        self.scanned = OnceLock::new();
        self.compiled = Arc::default();
        Ok(())
    }

    /// Replays one entry edit as stored (the entry's new JSON text, `None`
    /// for a deletion) the way [`Book::put_entry`] and
    /// [`Book::delete_entry`] made it: an entry of that uid is replaced in
    /// place (or removed), a new one appended. No limit is checked: the
    /// edit was checked when made. [`DomainError::Invalid`] (`json`) when
    /// `entry` is not JSON.
    pub fn replay_entry(&mut self, uid: &str, entry: Option<&str>) -> Result<(), DomainError> {
        self.replay_edits([(uid, entry)])
    }

    /// [`Book::replay_entry`] of each edit in order, in time linear in the
    /// entries and the edits (a book read back with thousands of edits is
    /// not searched once per edit). On an error nothing is changed.
    pub fn replay_edits<'e>(
        &mut self,
        edits: impl IntoIterator<Item = (&'e str, Option<&'e str>)>,
    ) -> Result<(), DomainError> {
        let mut slots: Vec<Option<(String, Arc<RawValue>)>> =
            self.entries.iter().cloned().map(Some).collect();
        let mut at: std::collections::HashMap<String, usize> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (uid, _))| (uid.clone(), i))
            .collect();
        for (uid, entry) in edits {
            match entry {
                None => {
                    if let Some(i) = at.remove(uid) {
                        slots[i] = None;
                    }
                }
                Some(text) => {
                    let entry: Arc<RawValue> = RawValue::from_string(text.to_owned())
                        .map_err(|e| not_a_book(format!("entry {uid}: {e}")))?
                        .into();
                    match at.get(uid) {
                        Some(&i) => slots[i] = Some((uid.to_owned(), entry)),
                        None => {
                            at.insert(uid.to_owned(), slots.len());
                            slots.push(Some((uid.to_owned(), entry)));
                        }
                    }
                }
            }
        }
        self.entries = slots.into_iter().flatten().collect();
        self.scanned = OnceLock::new();
        self.compiled = Arc::default();
        Ok(())
    }

    /// The entries as the scanner reads them ([`Entry::read`]), for the
    /// book named `name`, in file order. Read once per book and name and
    /// kept with the book (a change of an entry reads them again), so a
    /// book scanned before every generation is not re-read each time.
    pub fn scan_entries(&self, name: &str) -> Arc<[Entry]> {
        let read = || -> Arc<[Entry]> {
            self.entries
                .iter()
                .map(|(uid, raw)| Entry::read(uid, name, raw))
                .collect()
        };
        let (kept_for, entries) = self.scanned.get_or_init(|| (name.to_owned(), read()));
        if kept_for == name {
            entries.clone()
        } else {
            read()
        }
    }

    /// This version's compiled regex keys, built as scans first test them
    /// (give them to the scan as [`super::scan::ScanBook::compiled`]);
    /// every change of the entries starts an empty set.
    pub fn compiled_keys(&self) -> &CompiledKeys {
        &self.compiled
    }

    /// The lowest integer from 0 no entry is named after, below SillyTavern's
    /// bound of 1,000,000 (world-info.js:4283-4297: `uid in data.entries`
    /// matches the canonical decimal spelling only).
    fn free_uid(&self) -> Option<u64> {
        let taken: std::collections::HashSet<u64> = self
            .entries
            .iter()
            .filter_map(|(name, _)| integer_uid(name))
            .collect();
        (0..1_000_000).find(|n| !taken.contains(n))
    }
}

/// Entries as the book keeps them: each text shared.
fn shared(entries: Vec<(String, Box<RawValue>)>) -> Vec<(String, Arc<RawValue>)> {
    entries
        .into_iter()
        .map(|(uid, entry)| (uid, Arc::from(entry)))
        .collect()
}

/// The length of a JSON object's text holding members of these names and
/// value lengths, as [`json::object_text`] writes it.
fn object_len<'a>(members: impl Iterator<Item = (&'a str, usize)>) -> usize {
    let mut len = 2;
    for (i, (name, value)) in members.enumerate() {
        len += usize::from(i > 0) + quoted_len(name) + 1 + value;
    }
    len
}

/// The length of `s` as a JSON string written by serde_json (which
/// escapes `"`, `\\` and the C0 controls, nothing else).
fn quoted_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// `uid` as an integer when it is one spelled canonically (as JavaScript
/// spells a number it turns into a property name), below 2^53.
fn integer_uid(uid: &str) -> Option<u64> {
    let n: u64 = uid.parse().ok()?;
    (n.to_string() == uid && n < (1 << 53)).then_some(n)
}

/// Checks one entry against `limits`: each string of `key` and
/// `keysecondary` (an array's strings, or the member itself when it is a
/// string; anything else is not checked), and `content` when a string.
fn check_entry(uid: &str, entry: &RawValue, limits: &BookLimits) -> Result<(), DomainError> {
    let Ok(members) = members(entry.get()) else {
        return Ok(());
    };
    for (name, value) in members {
        match name.as_str() {
            "key" | "keysecondary" => {
                let value: Value = serde_json::from_str(value.get()).unwrap_or(Value::Null);
                let strings: Vec<&str> = match &value {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                if let Some(long) = strings.iter().find(|s| s.len() > limits.max_key_bytes) {
                    return Err(DomainError::ResourceExhausted(format!(
                        "entry {uid}: a {name} of {} bytes is longer than the limit of {} bytes",
                        long.len(),
                        limits.max_key_bytes
                    )));
                }
            }
            "content" => {
                if let Ok(content) = serde_json::from_str::<String>(value.get())
                    && content.len() > limits.max_content_bytes
                {
                    return Err(DomainError::ResourceExhausted(format!(
                        "entry {uid}: content of {} bytes is longer than the limit of {} bytes",
                        content.len(),
                        limits.max_content_bytes
                    )));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
