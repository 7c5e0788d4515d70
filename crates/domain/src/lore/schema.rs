//! The JSON schema of each lore answer, sent as the request's
//! `response_format` as the recap jobs' are ([`crate::writing::schema`]:
//! every property required, no other allowed, properties in alphabetical
//! order).
//!
//! | kind | schema name | the answer object |
//! |---|---|---|
//! | extraction | `lore_extract` | `entities`: at most [`MAX_ENTITIES`] objects of `content` (strings), `keywords` (strings), `name` (1 to [`NAME_MAX_CHARS`] characters) and `type` (one of the chat's entity types) |
//! | resolution | `lore_resolve` | `uid`: one of the uids the request lists, or null |
//! | merge | `lore_merge` | `content`: 1 to `recap_max_chars` characters; `name`: a string or null |
//! | compaction | `lore_compact` | `content`: 1 to `recap_max_chars` characters |

use serde_json::{Value, json};

use crate::jobs::{JobKind, LoreStep, RequestKind};
use crate::request::schema::{object, recap_max_chars};
use crate::settings::Settings;

use super::check::MAX_ENTITIES;

/// The most characters of an entity's name in a schema.
pub const NAME_MAX_CHARS: usize = 200;

/// The schema of lore job `kind`'s answer and its name; `uids` are the
/// entries a resolution's request shows (none: only null is allowed).
/// A kind that is not a lore kind gets an object schema with no property.
pub fn answer_schema(kind: JobKind, settings: &Settings, uids: &[String]) -> (&'static str, Value) {
    let content = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": recap_max_chars(settings),
    });
    let RequestKind::Lore(step) = kind.request() else {
        return ("not_lore", object(json!({})));
    };
    match step {
        LoreStep::Extract => {
            let types: Vec<&str> = settings
                .lore
                .entity_types
                .types()
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            let entity = object(json!({
                "content": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "keywords": {"type": "array", "items": {"type": "string"}},
                "name": {"type": "string", "minLength": 1, "maxLength": NAME_MAX_CHARS},
                "type": {"type": "string", "enum": types},
            }));
            (
                "lore_extract",
                object(json!({
                    "entities": {"type": "array", "maxItems": MAX_ENTITIES, "items": entity},
                })),
            )
        }
        LoreStep::Resolve => {
            let uid = if uids.is_empty() {
                json!({"type": "null"})
            } else {
                json!({"anyOf": [{"type": "string", "enum": uids}, {"type": "null"}]})
            };
            ("lore_resolve", object(json!({ "uid": uid })))
        }
        LoreStep::Merge => (
            "lore_merge",
            object(json!({
                "content": content,
                "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            })),
        ),
        LoreStep::Compact => ("lore_compact", object(json!({ "content": content }))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extraction_schema_lists_the_chats_types() {
        let settings = Settings::default();
        let (name, schema) = answer_schema(JobKind::LoreExtract, &settings, &[]);
        assert_eq!(name, "lore_extract");
        let entity = &schema["properties"]["entities"]["items"];
        assert_eq!(
            entity["required"],
            json!(["content", "keywords", "name", "type"])
        );
        assert_eq!(entity["additionalProperties"], json!(false));
        let types = entity["properties"]["type"]["enum"].as_array().unwrap();
        assert_eq!(types.len(), 8);
        assert_eq!(types[7], json!("rule"));
    }

    #[test]
    fn a_resolution_may_name_only_the_listed_uids_or_null() {
        let settings = Settings::default();
        let (_, schema) = answer_schema(JobKind::LoreResolve, &settings, &["3".into(), "9".into()]);
        assert_eq!(
            schema["properties"]["uid"],
            json!({"anyOf": [{"type": "string", "enum": ["3", "9"]}, {"type": "null"}]})
        );
        let (_, none) = answer_schema(JobKind::LoreResolve, &settings, &[]);
        assert_eq!(none["properties"]["uid"], json!({"type": "null"}));
    }

    #[test]
    fn merge_and_compaction_ask_for_content() {
        let settings = Settings::default();
        let (name, merge) = answer_schema(JobKind::LoreMerge, &settings, &[]);
        assert_eq!(name, "lore_merge");
        assert_eq!(merge["required"], json!(["content", "name"]));
        let (name, compact) = answer_schema(JobKind::LoreCompact, &settings, &[]);
        assert_eq!(name, "lore_compact");
        assert_eq!(compact["required"], json!(["content"]));
    }
}
