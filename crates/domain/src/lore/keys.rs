//! Names and keys of the entries recapd writes: how a name is normalised
//! for matching, the `comment` an entry carries (`<type>-<name>`), and how
//! an entity's keywords become an entry's keys.

use super::EntityTypes;

/// `name` as matching compares it: lowercase, trimmed, inner whitespace
/// collapsed to one space, punctuation around words dropped, a leading
/// article ("the", "a", "an") dropped.
pub fn normalise_name(name: &str) -> String {
    todo!("H1: {name}")
}

/// The `comment` of the entry of an entity of type `kind` named `name`:
/// `<kind>-<name>` (the name as written, trimmed).
pub fn entry_comment(kind: &str, name: &str) -> String {
    todo!("H1: {kind} {name}")
}

/// The type and name an entry's `comment` gives, when it has the shape
/// `<type>-<name>` with a type of `types` and a non-blank name.
pub fn parse_comment(comment: &str, types: &EntityTypes) -> Option<(String, String)> {
    todo!("H1: {comment} {types:?}")
}

/// An entry's keys from its name and keywords: lowercased, trimmed,
/// deduplicated, the name first, generic and temporal words dropped, at
/// most `max`.
pub fn clean_keys(name: &str, keywords: &[String], max: usize) -> Vec<String> {
    todo!("H1: {name} {keywords:?} {max}")
}
