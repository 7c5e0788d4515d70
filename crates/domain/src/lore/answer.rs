//! What recapd makes of a lore job's answer. The answer object is looked
//! for as the recap jobs' is ([`crate::writing::answer`]: reasoning set
//! aside, a fenced block first, then every JSON object of the text; the
//! first with one of the kind's keys is the answer).
//!
//! - Extraction: `{"entities": [{"type", "name", "keywords", "content"}]}`;
//!   the extension's short keys `t`, `n`, `k`, `c` are read too; `content`
//!   and `keywords` may be one string (content is then split into lines);
//!   an entity with a blank name or no fact is dropped; the type is
//!   lowercased. Texts are trimmed.
//! - Resolution: `{"uid": "<uid>" | <number> | null}` (also the
//!   extension's `resolvedUid`); `"new"`, `"none"`, `"null"` and `""` mean
//!   a new entity.
//! - Merge: `{"content": "..." | ["...", ...], "name": "..." | null}`
//!   (also the extension's `canonicalName`); a blank name is none.
//! - Compaction: `{"content": ...}` (also the extension's
//!   `compactedContent`).
//!
//! Anything else is an error whose text is the reason, quoting at most
//! [`crate::writing::answer::EXCERPT_CHARS`] characters.

use serde_json::{Map, Value};

use crate::jobs::JobKind;
use crate::writing::answer::{find_object, value_excerpt};

use super::{Entity, LoreAnswer};

const ENTITIES: &str = "entities";
const UID: [&str; 2] = ["uid", "resolvedUid"];
const CONTENT: [&str; 2] = ["content", "compactedContent"];
const NAME: [&str; 2] = ["name", "canonicalName"];

/// Reads the answer `text` to a lore job of `kind`; the error is the reason.
pub fn parse_answer(kind: JobKind, text: &str) -> Result<LoreAnswer, String> {
    match kind {
        JobKind::LoreExtract => {
            let object = find_object(text, &[ENTITIES])?;
            entities(&object).map(LoreAnswer::Entities)
        }
        JobKind::LoreResolve => {
            let object = find_object(text, &UID)?;
            resolved(&object).map(LoreAnswer::Resolved)
        }
        JobKind::LoreMerge => {
            let object = find_object(text, &CONTENT[..1])?;
            let content = content(&object, &CONTENT[..1])?;
            let name = match first(&object, &NAME) {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => Some(name.trim().to_owned()).filter(|n| !n.is_empty()),
                Some(other) => {
                    return Err(format!(
                        "name must be a string or null, not {}",
                        value_excerpt(other)
                    ));
                }
            };
            Ok(LoreAnswer::Merged { content, name })
        }
        JobKind::LoreCompact => {
            let object = find_object(text, &CONTENT)?;
            content(&object, &CONTENT).map(LoreAnswer::Compacted)
        }
        JobKind::DetectSceneBreak
        | JobKind::SceneRecap
        | JobKind::RunningRecap
        | JobKind::MessageRecap
        | JobKind::Index => Err(format!("a {} job has no lore answer", kind.name())),
    }
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
                other => Err(format!(
                    "{what} holds {}, not a string",
                    value_excerpt(other)
                )),
            })
            .collect(),
        other => Err(format!(
            "{what} must be a string or a list of strings, not {}",
            value_excerpt(other)
        )),
    }
}

/// Lines of a text or of a list of texts, trimmed, blanks dropped.
fn lines(values: Vec<String>) -> Vec<String> {
    values
        .iter()
        .flat_map(|v| v.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn entities(object: &Map<String, Value>) -> Result<Vec<Entity>, String> {
    let list = match object.get(ENTITIES) {
        Some(Value::Array(list)) => list,
        Some(Value::Null) => return Ok(Vec::new()),
        Some(other) => {
            return Err(format!(
                "entities must be a list, not {}",
                value_excerpt(other)
            ));
        }
        None => return Err("the answer has no entities".into()),
    };
    let mut found = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let Value::Object(item) = item else {
            return Err(format!(
                "entities[{i}] is {}, not an object",
                value_excerpt(item)
            ));
        };
        let text = |keys: &[&str]| -> Result<String, String> {
            match first(item, keys) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.trim().to_owned()),
                Some(other) => Err(format!(
                    "entities[{i}].{} must be a string, not {}",
                    keys[0],
                    value_excerpt(other)
                )),
            }
        };
        let name = text(&["name", "n"])?;
        let kind = text(&["type", "t"])?.to_lowercase();
        let keywords = match first(item, &["keywords", "k"]) {
            Some(value) => strings(value, &format!("entities[{i}].keywords"))?
                .into_iter()
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .collect(),
            None => Vec::new(),
        };
        let content = match first(item, &["content", "c"]) {
            Some(value) => lines(strings(value, &format!("entities[{i}].content"))?),
            None => Vec::new(),
        };
        if name.is_empty() || content.is_empty() {
            continue;
        }
        found.push(Entity {
            kind,
            name,
            keywords,
            content,
        });
    }
    Ok(found)
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
mod tests {
    use super::*;

    #[test]
    fn entities_are_read_in_either_spelling_and_empty_ones_dropped() {
        let text = r#"Here you go:
```json
{"entities": [
  {"type": "Character", "name": " Mira ", "keywords": ["the captain", " "], "content": ["Leads the guard.", "", "Has a scar."]},
  {"t": "location", "n": "Varn", "k": "port city", "c": "A port.\nWalled."},
  {"type": "item", "name": "", "content": ["x"]},
  {"type": "item", "name": "Key", "content": []}
]}
```"#;
        let LoreAnswer::Entities(found) = parse_answer(JobKind::LoreExtract, text).unwrap() else {
            panic!("an extraction");
        };
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].kind, "character");
        assert_eq!(found[0].name, "Mira");
        assert_eq!(found[0].keywords, ["the captain"]);
        assert_eq!(found[0].content, ["Leads the guard.", "Has a scar."]);
        assert_eq!(found[1].keywords, ["port city"]);
        assert_eq!(found[1].content, ["A port.", "Walled."]);
        assert_eq!(
            parse_answer(JobKind::LoreExtract, r#"{"entities": []}"#),
            Ok(LoreAnswer::Entities(vec![]))
        );
        assert!(parse_answer(JobKind::LoreExtract, r#"{"entities": "Mira"}"#).is_err());
        assert!(
            parse_answer(
                JobKind::LoreExtract,
                r#"{"entities": [{"name": 3, "content": "x"}]}"#
            )
            .is_err()
        );
    }

    #[test]
    fn a_resolution_names_a_uid_or_a_new_entity() {
        let uid = |text: &str| parse_answer(JobKind::LoreResolve, text);
        assert_eq!(
            uid(r#"{"uid": "12"}"#),
            Ok(LoreAnswer::Resolved(Some("12".into())))
        );
        assert_eq!(
            uid(r#"{"uid": 12}"#),
            Ok(LoreAnswer::Resolved(Some("12".into())))
        );
        assert_eq!(
            uid(r#"{"resolvedUid": "new"}"#),
            Ok(LoreAnswer::Resolved(None))
        );
        assert_eq!(uid(r#"{"uid": null}"#), Ok(LoreAnswer::Resolved(None)));
        assert!(uid(r#"{"uid": [1]}"#).is_err());
        assert!(uid("no idea").is_err());
    }

    #[test]
    fn a_merge_gives_content_and_maybe_a_name() {
        assert_eq!(
            parse_answer(
                JobKind::LoreMerge,
                r#"{"content": ["Mira is the Master Smith.", "Has a scar."], "name": "Master Mira"}"#
            ),
            Ok(LoreAnswer::Merged {
                content: "Mira is the Master Smith.\nHas a scar.".into(),
                name: Some("Master Mira".into()),
            })
        );
        assert_eq!(
            parse_answer(
                JobKind::LoreMerge,
                r#"{"content": "Mira smiths.", "canonicalName": " "}"#
            ),
            Ok(LoreAnswer::Merged {
                content: "Mira smiths.".into(),
                name: None,
            })
        );
        assert!(parse_answer(JobKind::LoreMerge, r#"{"content": "  "}"#).is_err());
        assert!(parse_answer(JobKind::LoreMerge, r#"{"content": "x", "name": 4}"#).is_err());
    }

    #[test]
    fn a_compaction_gives_content_in_either_spelling() {
        assert_eq!(
            parse_answer(JobKind::LoreCompact, r#"{"compactedContent": "Short."}"#),
            Ok(LoreAnswer::Compacted("Short.".into()))
        );
        assert!(parse_answer(JobKind::LoreCompact, r#"{"summary": "Short."}"#).is_err());
    }
}
