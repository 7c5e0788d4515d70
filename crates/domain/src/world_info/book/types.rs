//! The JSON types of an entry's fields, as SillyTavern's own editor writes
//! and reads them, checked where an entry comes in: a whole file, a card's
//! converted book, one entry's edit.
//!
//! The rule is what SillyTavern itself writes, not a stricter schema:
//!
//! - text fields (`comment`, `content`, `group`, `outletName`,
//!   `automationId`) are strings;
//! - key lists (`key`, `keysecondary`, `triggers`, and `characterFilter`'s
//!   `names` and `tags`) are arrays of strings;
//! - flags (`constant`, `selective`, `disable`, ...) are booleans; the three
//!   overrides `caseSensitive`, `matchWholeWords` and `useGroupScoring` may
//!   also be null (use the global setting) or a string (the `/setentryfield`
//!   command writes its text into a member that held null);
//! - numbers (`order`, `position`, `depth`, `probability`, `role`, ...) are
//!   numbers, null (SillyTavern's editor writes null for an empty
//!   probability, role, sticky, cooldown, delay or scan depth, and saving a
//!   NaN writes null) or a string JavaScript reads as a number (which
//!   `/setentryfield` writes the same way);
//! - `delayUntilRecursion` is a number or a boolean (`true` is level 1);
//! - `uid` is a number or a string (a card's entry ids may be strings);
//! - `characterFilter` is an object.
//!
//! Members SillyTavern does not define (`extensions`, a tool's own data)
//! are not checked and stay as written. A missing member is always fine.

use serde_json::value::RawValue;

use crate::DomainError;
use crate::world_info::entry::js::Js;

use super::Book;
use super::json::{Members, dedup, members};

/// What one field of an entry must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string.
    Text,
    /// An array of strings.
    Strings,
    /// A boolean.
    Flag,
    /// A boolean, null, or a string.
    NullableFlag,
    /// A number, null, or a string that is a number to JavaScript.
    Number,
    /// A [`Kind::Number`] or a boolean (`delayUntilRecursion`).
    Level,
    /// A number or a string (`uid`).
    Uid,
    /// An object whose `isExclude` is a [`Kind::Flag`] and whose `names` and
    /// `tags` are [`Kind::Strings`] (`characterFilter`).
    CharacterFilter,
}

/// Every entry field SillyTavern defines (its editor's template, plus the
/// members its editor adds: `uid`, `displayIndex`, `characterFilter`), and
/// what each holds.
const FIELDS: [(&str, Kind); 42] = [
    ("key", Kind::Strings),
    ("keysecondary", Kind::Strings),
    ("comment", Kind::Text),
    ("content", Kind::Text),
    ("constant", Kind::Flag),
    ("vectorized", Kind::Flag),
    ("selective", Kind::Flag),
    ("selectiveLogic", Kind::Number),
    ("addMemo", Kind::Flag),
    ("order", Kind::Number),
    ("position", Kind::Number),
    ("disable", Kind::Flag),
    ("ignoreBudget", Kind::Flag),
    ("excludeRecursion", Kind::Flag),
    ("preventRecursion", Kind::Flag),
    ("matchPersonaDescription", Kind::Flag),
    ("matchCharacterDescription", Kind::Flag),
    ("matchCharacterPersonality", Kind::Flag),
    ("matchCharacterDepthPrompt", Kind::Flag),
    ("matchScenario", Kind::Flag),
    ("matchCreatorNotes", Kind::Flag),
    ("delayUntilRecursion", Kind::Level),
    ("probability", Kind::Number),
    ("useProbability", Kind::Flag),
    ("depth", Kind::Number),
    ("outletName", Kind::Text),
    ("group", Kind::Text),
    ("groupOverride", Kind::Flag),
    ("groupWeight", Kind::Number),
    ("scanDepth", Kind::Number),
    ("caseSensitive", Kind::NullableFlag),
    ("matchWholeWords", Kind::NullableFlag),
    ("useGroupScoring", Kind::NullableFlag),
    ("automationId", Kind::Text),
    ("role", Kind::Number),
    ("sticky", Kind::Number),
    ("cooldown", Kind::Number),
    ("delay", Kind::Number),
    ("triggers", Kind::Strings),
    ("uid", Kind::Uid),
    ("displayIndex", Kind::Number),
    ("characterFilter", Kind::CharacterFilter),
];

/// The JSON type of `value`, as an error names it. The first byte of valid
/// JSON text tells it, so no value is read whole (nor echoed).
fn type_name(value: &RawValue) -> &'static str {
    match value.get().as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// Longest entry uid an error message writes (the rest is elided).
const UID_SHOWN: usize = 32;

/// `uid` as an error message shows it: at most [`UID_SHOWN`] characters,
/// control characters escaped.
fn shown(uid: &str) -> String {
    let mut out: String = uid
        .chars()
        .take(UID_SHOWN)
        .flat_map(char::escape_debug)
        .collect();
    if uid.chars().nth(UID_SHOWN).is_some() {
        out.push('…');
    }
    out
}

/// The refusal of the value at `path`: it should have been `expected`.
fn refuse(path: &str, expected: &str, got: &RawValue) -> DomainError {
    DomainError::invalid(path, format!("expected {expected}, got {}", type_name(got)))
}

/// Whether `value` is a string JavaScript's `Number()` reads as a number.
fn numeric_string(value: &RawValue) -> bool {
    serde_json::from_str::<String>(value.get()).is_ok_and(|s| !Js::Str(s).to_number().is_nan())
}

/// Checks an array of strings at `path`.
fn check_strings(path: &str, value: &RawValue) -> Result<(), DomainError> {
    const EXPECTED: &str = "an array of strings";
    if !value.get().starts_with('[') {
        return Err(refuse(path, EXPECTED, value));
    }
    let items: Vec<&RawValue> =
        serde_json::from_str(value.get()).map_err(|_| refuse(path, EXPECTED, value))?;
    match items.iter().position(|item| !item.get().starts_with('"')) {
        Some(at) => Err(refuse(&format!("{path}[{at}]"), "a string", items[at])),
        None => Ok(()),
    }
}

/// Checks `characterFilter` at `path`.
fn check_character_filter(path: &str, value: &RawValue) -> Result<(), DomainError> {
    let mut filter: Members<'_> = members(value.get())
        .map_err(|_| refuse(path, "an object (isExclude, names, tags)", value))?;
    dedup(&mut filter);
    for (name, member) in filter {
        let kind = match name.as_str() {
            "isExclude" => Kind::Flag,
            "names" | "tags" => Kind::Strings,
            _ => continue,
        };
        check_value(&format!("{path}.{name}"), kind, member)?;
    }
    Ok(())
}

/// Checks that `value` holds what `kind` allows; the error names `path`.
fn check_value(path: &str, kind: Kind, value: &RawValue) -> Result<(), DomainError> {
    let first = value.get().as_bytes().first().copied();
    let is_string = first == Some(b'"');
    let is_bool = matches!(first, Some(b't' | b'f'));
    let is_null = first == Some(b'n');
    let is_number = matches!(first, Some(b'-' | b'0'..=b'9'));
    let (ok, expected) = match kind {
        Kind::Text => (is_string, "a string"),
        Kind::Strings => return check_strings(path, value),
        Kind::CharacterFilter => return check_character_filter(path, value),
        Kind::Flag => (is_bool, "a boolean"),
        Kind::NullableFlag => (is_bool || is_null || is_string, "a boolean or null"),
        Kind::Number => (
            is_number || is_null || (is_string && numeric_string(value)),
            "a number or null",
        ),
        Kind::Level => (
            is_bool || is_number || is_null || (is_string && numeric_string(value)),
            "a number or a boolean",
        ),
        Kind::Uid => (is_number || is_string, "a number or a string"),
    };
    if ok {
        return Ok(());
    }
    if is_string && matches!(kind, Kind::Number | Kind::Level) {
        // A string where a number belongs, that JavaScript cannot read as one.
        return Err(DomainError::invalid(
            path,
            format!("expected {expected}, got a string that is not a number"),
        ));
    }
    Err(refuse(path, expected, value))
}

/// Checks one member `name` of an entry; `prefix` names the entry
/// (`entries.<uid>` or `fields`). Members SillyTavern does not define
/// pass.
pub(super) fn check_field(prefix: &str, name: &str, value: &RawValue) -> Result<(), DomainError> {
    match FIELDS.iter().find(|(field, _)| *field == name) {
        Some((_, kind)) => check_value(&format!("{prefix}.{name}"), *kind, value),
        None => Ok(()),
    }
}

/// Checks one entry of a book: it is an object and each member
/// SillyTavern defines has its type.
fn check_entry(uid: &str, entry: &RawValue) -> Result<(), DomainError> {
    let prefix = format!("entries.{}", shown(uid));
    let Ok(mut fields) = members(entry.get()) else {
        return Err(refuse(&prefix, "an object", entry));
    };
    dedup(&mut fields);
    fields
        .into_iter()
        .try_for_each(|(name, value)| check_field(&prefix, &name, value))
}

impl Book {
    /// Checks every entry against the types SillyTavern's editor writes
    /// and reads (see the module's list): each entry is an object, `key`
    /// an array of strings, `content` a string, and so on.
    ///
    /// Errors: [`DomainError::Invalid`] whose field is the path of the
    /// first value at fault (`entries.<uid>.key[2]`, the uid cut to 32
    /// characters) and whose reason says what was expected and which JSON
    /// type came (`expected a string, got an array`); the value itself is
    /// never written into the error. Books read back from the store are
    /// not checked again: a book stored before these checks keeps loading.
    pub fn check_types(&self) -> Result<(), DomainError> {
        self.entries
            .iter()
            .try_for_each(|(uid, entry)| check_entry(uid, entry))
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
