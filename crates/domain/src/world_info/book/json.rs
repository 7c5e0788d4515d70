//! JSON text handled member by member, never re-encoded: objects are read
//! as ordered lists of (name, value text), and rebuilt from such lists.
//!
//! Duplicate member names resolve as JavaScript's `JSON.parse` resolves
//! them: the last value wins and sits where the name first appeared.

use serde_json::value::RawValue;

/// The members of one JSON object, in file order, values as their text.
pub(in crate::world_info) type Members<'a> = Vec<(String, &'a RawValue)>;

/// The members of the JSON object `text` (duplicates as written); an error
/// when `text` is not one JSON object.
pub(in crate::world_info) fn members(text: &str) -> Result<Members<'_>, serde_json::Error> {
    crate::verbatim::members(text)
}

/// The elements of the JSON array `text`; `None` when it is not one.
fn elements(text: &str) -> Option<Vec<&RawValue>> {
    serde_json::from_str(text).ok()
}

/// `members` with each duplicate name resolved as `JSON.parse` does (last
/// value, first position). Returns whether any duplicate was dropped.
pub(in crate::world_info) fn dedup<T>(members: &mut Vec<(String, T)>) -> bool {
    let mut seen: std::collections::HashMap<String, usize> =
        std::collections::HashMap::with_capacity(members.len());
    let mut out: Vec<(String, T)> = Vec::with_capacity(members.len());
    let mut dropped = false;
    for (name, value) in members.drain(..) {
        match seen.get(&name) {
            Some(&at) => {
                out[at].1 = value;
                dropped = true;
            }
            None => {
                seen.insert(name.clone(), out.len());
                out.push((name, value));
            }
        }
    }
    *members = out;
    dropped
}

/// A string as JSON text. Serializing a string cannot fail; the empty
/// string stands in should it ever.
pub(in crate::world_info) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

/// The JSON text of an object holding `members` in order.
pub(in crate::world_info) fn object_text<'a>(
    members: impl IntoIterator<Item = (&'a str, &'a str)>,
    capacity: usize,
) -> String {
    let mut text = String::with_capacity(capacity + 2);
    text.push('{');
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&quote(name));
        text.push(':');
        text.push_str(value);
    }
    text.push('}');
    text
}

/// Owned JSON text from text known to be one valid JSON value (made from
/// values serde_json read or wrote); `null` should it ever not be.
pub(in crate::world_info) fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| null())
}

/// The JSON text `null`.
pub(in crate::world_info) fn null() -> Box<RawValue> {
    // "null" is valid JSON text: from_string cannot fail on it.
    RawValue::from_string("null".to_owned()).expect("`null` is valid JSON")
}

/// How deep [`resolved`] looks for duplicate names. serde_json reads raw
/// values of any depth (as `JSON.parse` does) without recursing; looking
/// deeper than this would recurse once per level, and re-read the text
/// once per level.
const RESOLVE_DEPTH: usize = 64;

/// `value` with duplicate member names resolved at every level (down to
/// [`RESOLVE_DEPTH`]), as `JSON.parse` reads it; `None` when it has none
/// (the text stays as is).
pub(in crate::world_info) fn resolved(value: &RawValue) -> Option<String> {
    resolved_below(value, RESOLVE_DEPTH)
}

fn resolved_below(value: &RawValue, depth: usize) -> Option<String> {
    let depth = depth.checked_sub(1)?;
    let text = value.get();
    match text.as_bytes().first() {
        Some(b'{') => {
            let mut members = members(text).ok()?;
            let mut changed = dedup(&mut members);
            let values: Vec<(String, Option<String>)> = members
                .iter()
                .map(|(name, value)| (name.clone(), resolved_below(value, depth)))
                .collect();
            changed |= values.iter().any(|(_, v)| v.is_some());
            if !changed {
                return None;
            }
            let pairs = members.iter().zip(&values).map(|((name, old), (_, new))| {
                (name.as_str(), new.as_deref().unwrap_or(old.get()))
            });
            Some(object_text(pairs, text.len()))
        }
        Some(b'[') => {
            let elements = elements(text)?;
            let values: Vec<Option<String>> =
                elements.iter().map(|e| resolved_below(e, depth)).collect();
            if values.iter().all(Option::is_none) {
                return None;
            }
            let mut out = String::with_capacity(text.len());
            out.push('[');
            for (i, (old, new)) in elements.iter().zip(&values).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(new.as_deref().unwrap_or(old.get()));
            }
            out.push(']');
            Some(out)
        }
        _ => None,
    }
}

/// The members of the JSON object `text` owned, with duplicate names
/// resolved at every level (as [`resolved`]); an error when `text` is not
/// one JSON object.
pub(in crate::world_info) fn object_members(
    text: &str,
) -> Result<Vec<(String, Box<RawValue>)>, serde_json::Error> {
    let mut members = members(text)?;
    dedup(&mut members);
    Ok(members
        .into_iter()
        .map(|(name, value)| {
            let value = match resolved(value) {
                Some(text) => raw(text),
                None => value.to_owned(),
            };
            (name, value)
        })
        .collect())
}
