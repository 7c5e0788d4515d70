//! What recapd makes of a lore job's answer. The answer object is looked
//! for as the recap jobs' is ([`crate::writing::answer`]: reasoning set
//! aside, a fenced block first, then every JSON object of the text; the
//! first with one of the kind's keys is the answer).
//!
//! - Extraction: `{"entities": [{"type", "name", "keywords", "content"}]}`;
//!   the extension's short keys `t`, `n`, `k`, `c` are read too; `content`
//!   and `keywords` may be one string (content is then split into lines);
//!   an entity with a blank name or no fact is dropped; the type is
//!   lowercased. Texts are cleaned ([`super::clean`]): names and types
//!   lose control and bidirectional characters, keywords are defused
//!   into plain text, content keeps only line breaks and tabs of them.
//!   One invalid entity (not an object, a member of the wrong JSON type,
//!   a name empty once cleaned) is skipped ([`Skipped`]), not the answer.
//! - Resolution: `{"uid": "<uid>" | <number> | null}` (also the
//!   extension's `resolvedUid`); `"new"`, `"none"`, `"null"` and `""` mean
//!   a new entity.
//! - Merge: `{"content": "..." | ["...", ...], "name": "..." | null}`
//!   (also the extension's `canonicalName`); a blank name is none; a name
//!   of the wrong type or empty once cleaned is skipped (no rename).
//! - Compaction: `{"content": ...}` (also the extension's
//!   `compactedContent`).
//!
//! Anything else (no JSON object, no entity list, no content) is an
//! error whose text is the reason, quoting at most
//! [`crate::writing::answer::EXCERPT_CHARS`] characters.

use serde_json::{Map, Value};

use crate::jobs::{JobKind, LoreStep, RequestKind, clip};
use crate::request::answer::{find_object, value_excerpt};

use super::clean::{clean_content, clean_name, defuse_key};
use super::{Entity, LoreAnswer, Skipped};

const ENTITIES: &str = "entities";
const UID: [&str; 2] = ["uid", "resolvedUid"];
const CONTENT: [&str; 2] = ["content", "compactedContent"];
const NAME: [&str; 2] = ["name", "canonicalName"];

/// The most characters of a value or name a [`Skipped`] quotes.
pub const SKIPPED_QUOTE_CHARS: usize = 40;

/// Reads the answer `text` to a lore job of `kind`; the error is the reason.
pub fn parse_answer(kind: JobKind, text: &str) -> Result<LoreAnswer, String> {
    let RequestKind::Lore(step) = kind.request() else {
        return Err(format!("a {} job has no lore answer", kind.name()));
    };
    match step {
        LoreStep::Extract => {
            let object = find_object(text, &[ENTITIES])?;
            let (entities, skipped) = entities(&object)?;
            Ok(LoreAnswer::Entities { entities, skipped })
        }
        LoreStep::Resolve => {
            let object = find_object(text, &UID)?;
            resolved(&object).map(LoreAnswer::Resolved)
        }
        LoreStep::Merge => {
            let object = find_object(text, &CONTENT[..1])?;
            let content = content(&object, &CONTENT[..1])?;
            let mut skipped = Vec::new();
            let name = match first(&object, &NAME) {
                None | Some(Value::Null) => None,
                Some(Value::String(raw)) => {
                    let name = clean_name(raw);
                    if name.is_empty() && !raw.trim().is_empty() {
                        skipped.push(Skipped {
                            what: "name".into(),
                            reason: EMPTY_ONCE_CLEANED.into(),
                        });
                    }
                    Some(name).filter(|n| !n.is_empty())
                }
                Some(other) => {
                    skipped.push(Skipped {
                        what: "name".into(),
                        reason: format!("must be a string or null, not {}", quoted(other)),
                    });
                    None
                }
            };
            Ok(LoreAnswer::Merged {
                content,
                name,
                skipped,
            })
        }
        LoreStep::Compact => {
            let object = find_object(text, &CONTENT)?;
            content(&object, &CONTENT).map(LoreAnswer::Compacted)
        }
    }
}

/// The reason of a name that held only control or bidirectional
/// characters.
const EMPTY_ONCE_CLEANED: &str = "the name is empty once control characters are removed";

/// A value as a skipped entity's reason quotes it: its JSON on one line,
/// cleaned, at most [`SKIPPED_QUOTE_CHARS`] characters.
fn quoted(value: &Value) -> String {
    clip(&clean_name(&value_excerpt(value)), SKIPPED_QUOTE_CHARS)
}

/// The first of `keys` the object has.
fn first<'a>(object: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| object.get(*k))
}

/// Strings of a value that may be one string or an array of them; `what`
/// names the value in an error.
fn strings(value: &Value, what: &str) -> Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::String(text) => Ok(text.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("{what} holds {}, not a string", quoted(other))),
            })
            .collect(),
        other => Err(format!(
            "{what} must be a string or a list of strings, not {}",
            quoted(other)
        )),
    }
}

/// Lines of a text or of a list of texts, cleaned ([`clean_content`]),
/// trimmed, blanks dropped.
fn lines(values: Vec<String>) -> Vec<String> {
    values
        .iter()
        .map(|v| clean_content(v))
        .flat_map(|v| {
            v.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The entities of an extraction, and those skipped. Err when the answer
/// has no entity list.
fn entities(object: &Map<String, Value>) -> Result<(Vec<Entity>, Vec<Skipped>), String> {
    let list = match object.get(ENTITIES) {
        Some(Value::Array(list)) => list,
        Some(Value::Null) => return Ok((Vec::new(), Vec::new())),
        Some(other) => {
            return Err(format!(
                "entities must be a list, not {}",
                value_excerpt(other)
            ));
        }
        None => return Err("the answer has no entities".into()),
    };
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for (i, item) in list.iter().enumerate() {
        match entity(item) {
            Ok(Some(entity)) => found.push(entity),
            Ok(None) => {}
            Err((name, reason)) => skipped.push(Skipped {
                what: match name {
                    Some(name) => format!("entities[{i}] ({})", clip(&name, SKIPPED_QUOTE_CHARS)),
                    None => format!("entities[{i}]"),
                },
                reason,
            }),
        }
    }
    Ok((found, skipped))
}

/// One entity of an extraction: `None` when it is blank (no name, or no
/// fact), the error (with its cleaned name when it has one) when invalid.
fn entity(item: &Value) -> Result<Option<Entity>, (Option<String>, String)> {
    let Value::Object(item) = item else {
        return Err((None, format!("is {}, not an object", quoted(item))));
    };
    let text = |keys: &[&str]| -> Result<String, String> {
        match first(item, keys) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(format!(
                "{} must be a string, not {}",
                keys[0],
                quoted(other)
            )),
        }
    };
    let raw_name = text(&["name", "n"]).map_err(|reason| (None, reason))?;
    let name = clean_name(&raw_name);
    let named = || Some(name.clone()).filter(|n| !n.is_empty());
    let kind =
        clean_name(&text(&["type", "t"]).map_err(|reason| (named(), reason))?).to_lowercase();
    let keywords = match first(item, &["keywords", "k"]) {
        Some(value) => strings(value, "keywords")
            .map_err(|reason| (named(), reason))?
            .iter()
            .map(|k| defuse_key(k))
            .filter(|k| !k.is_empty())
            .collect(),
        None => Vec::new(),
    };
    let content = match first(item, &["content", "c"]) {
        Some(value) => lines(strings(value, "content").map_err(|reason| (named(), reason))?),
        None => Vec::new(),
    };
    if name.is_empty() && !raw_name.trim().is_empty() {
        return Err((None, EMPTY_ONCE_CLEANED.into()));
    }
    if name.is_empty() || content.is_empty() {
        return Ok(None);
    }
    Ok(Some(Entity {
        kind,
        name,
        keywords,
        content,
    }))
}

fn resolved(object: &Map<String, Value>) -> Result<Option<String>, String> {
    match first(object, &UID) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(uid)) => {
            let uid = uid.trim().trim_start_matches('#');
            if uid.is_empty() || ["new", "none", "null"].contains(&uid.to_lowercase().as_str()) {
                Ok(None)
            } else {
                Ok(Some(uid.to_owned()))
            }
        }
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64().map(|n| n.to_string())),
        Some(other) => Err(format!(
            "uid must be an entry's uid or null, not {}",
            value_excerpt(other)
        )),
    }
}

/// The content of a merge or compaction: a text, or a list of lines
/// joined; not blank.
fn content(object: &Map<String, Value>, keys: &[&str]) -> Result<String, String> {
    let value = first(object, keys).ok_or_else(|| "the answer has no content".to_owned())?;
    let text = lines(strings(value, "content")?).join("\n");
    if text.is_empty() {
        return Err("the answer's content is empty".into());
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
