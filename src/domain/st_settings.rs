//! ST-Auto-Recap's own settings object (from its `extension_settings`), in
//! its own vocabulary, turned into a recapd settings change
//! (`ImportSettings`). Keys recapd has no use for are reported, never
//! silently dropped.
//!
//! The object is read as users' files really hold it: `null` for a key
//! clears that setting; numbers and booleans written as strings (the
//! extension's dropdowns and older versions store `"2"`, `"true"`) are
//! read as such; a `message_recap_context_type` other than `"percent"` is
//! ABSOLUTE (the extension's radio buttons store `"tokens"`); a negative
//! `auto_hide_scene_count` is 0 (off). Anything else that cannot be read
//! is an error naming the key.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::DomainError;
use super::ids;
use super::settings::{self, ContextType, Position, Role, SettingsPatch};

/// The result of an import: the change to apply and the keys left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedSettings {
    /// The settings the object sets.
    pub patch: SettingsPatch,
    /// recapd settings fields (as named in `UpdateSettings.clear`) whose
    /// key the object gives as `null`, in field order; cleared before
    /// `patch` is applied. Never a field `patch` sets.
    pub clear: Vec<String>,
    /// The object's `chats_enabled`: chat ids (SillyTavern's chat file
    /// names without `.jsonl`, as `recapd import` names chats) to each
    /// chat's own enabled state. Every id follows the chat-id rules.
    pub chats_enabled: BTreeMap<String, bool>,
    /// Keys of the object that recapd does not use, sorted.
    pub ignored_keys: Vec<String>,
}

/// Sets one field of a patch from an extension key's value (never `null`).
type Reader = fn(&mut SettingsPatch, &str, &Value) -> Result<(), DomainError>;

/// The extension's keys recapd reads: each with the recapd settings field
/// it sets (and that a `null` clears) and how its value is read.
const KEYS: [(&str, &str, Reader); 16] = [
    ("running_scene_recap_position", "position", |p, k, v| {
        p.position = Some(position(k, v)?);
        Ok(())
    }),
    ("running_scene_recap_depth", "depth", |p, k, v| {
        let depth = i32::try_from(integer(k, v)?).unwrap_or(i32::MAX);
        p.depth = Some(settings::check_depth(depth).map_err(|_| invalid(k, "must be 0..=1000"))?);
        Ok(())
    }),
    ("running_scene_recap_role", "role", |p, k, v| {
        p.role = Some(role(k, v)?);
        Ok(())
    }),
    ("running_scene_recap_scan", "scan", |p, k, v| {
        p.scan = Some(boolean(k, v)?);
        Ok(())
    }),
    ("running_scene_recap_template", "template", |p, k, v| {
        let template = v.as_str().ok_or_else(|| invalid(k, "must be a string"))?;
        p.template = Some(template.to_owned());
        Ok(())
    }),
    (
        "include_user_messages",
        "include_user_messages",
        |p, k, v| {
            p.include_user_messages = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "include_system_messages",
        "include_system_messages",
        |p, k, v| {
            p.include_system_messages = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "include_narrator_messages",
        "include_narrator_messages",
        |p, k, v| {
            p.include_narrator_messages = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "message_length_threshold",
        "message_length_threshold",
        |p, k, v| {
            p.message_length_threshold = Some(non_negative(k, v)?);
            Ok(())
        },
    ),
    (
        "message_recap_context_limit",
        "message_recap_context_limit",
        |p, k, v| {
            p.message_recap_context_limit = Some(non_negative(k, v)?);
            Ok(())
        },
    ),
    (
        "message_recap_context_type",
        "message_recap_context_type",
        |p, k, v| {
            // The extension reads anything but "percent" as a token count; its
            // own radio buttons store "tokens".
            p.message_recap_context_type = Some(match v.as_str() {
                Some("percent") => ContextType::Percent,
                Some(_) => ContextType::Absolute,
                None => return Err(invalid(k, "must be \"percent\" or another string")),
            });
            Ok(())
        },
    ),
    (
        "auto_hide_scene_count",
        "auto_hide_scene_count",
        |p, k, v| {
            // The extension's -1 (like any negative count) is "off", recapd's 0.
            let count = i32::try_from(integer(k, v)?.max(0)).unwrap_or(i32::MAX);
            p.auto_hide_scene_count = Some(
                settings::check_scene_count(count).map_err(|_| invalid(k, "must be a count"))?,
            );
            Ok(())
        },
    ),
    ("show_prefill", "show_prefill", |p, k, v| {
        p.show_prefill = Some(boolean(k, v)?);
        Ok(())
    }),
    ("default_chat_enabled", "default_chat_enabled", |p, k, v| {
        p.default_chat_enabled = Some(boolean(k, v)?);
        Ok(())
    }),
    (
        "use_global_toggle_state",
        "use_global_toggle_state",
        |p, k, v| {
            p.use_global_toggle_state = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    ("global_toggle_state", "global_toggle_state", |p, k, v| {
        p.global_toggle_state = Some(boolean(k, v)?);
        Ok(())
    }),
];

fn invalid(key: &str, reason: impl Into<String>) -> DomainError {
    DomainError::invalid(format!("json.{key}"), reason)
}

/// `true`/`false`, or the same written as a string (`"true"`).
fn boolean(key: &str, value: &Value) -> Result<bool, DomainError> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
    .ok_or_else(|| invalid(key, "must be true or false"))
}

/// A number, or a number written as a string (`"2"`, `"12.5"`); fractions
/// are rounded down, as the extension's integer settings are used.
fn integer(key: &str, value: &Value) -> Result<i64, DomainError> {
    let whole = |f: f64| Some(f).filter(|f| f.is_finite()).map(|f| f.floor() as i64);
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().and_then(whole)),
        // The extension's dropdowns (and older versions) store numbers as
        // strings.
        Value::String(s) => {
            let s = s.trim();
            s.parse()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(whole))
        }
        _ => None,
    }
    .ok_or_else(|| invalid(key, "must be a number"))
}

fn non_negative(key: &str, value: &Value) -> Result<u64, DomainError> {
    let n = integer(key, value)?;
    u64::try_from(n).map_err(|_| invalid(key, format!("{n} must not be negative")))
}

/// SillyTavern's extension prompt type: NONE -1, IN_PROMPT 0, IN_CHAT 1,
/// BEFORE_PROMPT 2.
fn position(key: &str, value: &Value) -> Result<Position, DomainError> {
    match integer(key, value)? {
        -1 => Ok(Position::None),
        0 => Ok(Position::InPrompt),
        1 => Ok(Position::InChat),
        2 => Ok(Position::BeforePrompt),
        n => Err(invalid(
            key,
            format!("{n} is not a SillyTavern position (-1, 0, 1 or 2)"),
        )),
    }
}

/// SillyTavern's extension prompt role: SYSTEM 0, USER 1, ASSISTANT 2.
fn role(key: &str, value: &Value) -> Result<Role, DomainError> {
    match integer(key, value)? {
        0 => Ok(Role::System),
        1 => Ok(Role::User),
        2 => Ok(Role::Assistant),
        n => Err(invalid(
            key,
            format!("{n} is not a SillyTavern role (0, 1 or 2)"),
        )),
    }
}

/// The chats' own enabled states: an object of chat ids to booleans.
fn chats_enabled(key: &str, value: &Value) -> Result<BTreeMap<String, bool>, DomainError> {
    let object = value
        .as_object()
        .ok_or_else(|| invalid(key, "must be an object of chat ids to true or false"))?;
    object
        .iter()
        .map(|(chat, enabled)| {
            let entry = format!("{key}[{chat:?}]");
            ids::check_chat_id(&format!("json.{entry}"), chat)?;
            Ok((chat.clone(), boolean(&entry, enabled)?))
        })
        .collect()
}

/// Reads ST-Auto-Recap's settings object (JSON text).
pub fn import_st_settings(json: &str) -> Result<ImportedSettings, DomainError> {
    let object: Map<String, Value> = match serde_json::from_str(json) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return Err(DomainError::invalid("json", "must be a JSON object")),
        Err(e) => return Err(DomainError::invalid("json", format!("does not parse: {e}"))),
    };
    let mut imported = ImportedSettings {
        patch: SettingsPatch::default(),
        clear: Vec::new(),
        chats_enabled: BTreeMap::new(),
        ignored_keys: Vec::new(),
    };
    for (key, value) in &object {
        let k = key.as_str();
        if k == "chats_enabled" {
            // `null` has no entries: no chat's state changes.
            if !value.is_null() {
                imported.chats_enabled = chats_enabled(k, value)?;
            }
            continue;
        }
        let Some(&(_, field, read)) = KEYS.iter().find(|(extension_key, ..)| *extension_key == k)
        else {
            imported.ignored_keys.push(key.clone());
            continue;
        };
        if value.is_null() {
            imported.clear.push(field.to_owned());
        } else {
            read(&mut imported.patch, k, value)?;
        }
    }
    imported.ignored_keys.sort();
    imported
        .clear
        .sort_by_key(|field| settings::FIELD_NAMES.iter().position(|name| name == field));
    Ok(imported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extensions_vocabulary_becomes_recapds() {
        let imported = import_st_settings(
            r#"{
                "running_scene_recap_position": 1,
                "running_scene_recap_depth": "4",
                "running_scene_recap_role": 2,
                "running_scene_recap_scan": true,
                "running_scene_recap_template": "MEM {{running_recap}}",
                "include_user_messages": false,
                "message_length_threshold": 3,
                "message_recap_context_limit": 12.7,
                "message_recap_context_type": "percent",
                "auto_hide_scene_count": -1,
                "show_prefill": true,
                "default_chat_enabled": false,
                "use_global_toggle_state": true,
                "global_toggle_state": false,
                "chats_enabled": {"a": true},
                "auto_lorebooks_enabled_by_default": true,
                "running_scene_recap_prompt": "..."
            }"#,
        )
        .unwrap();
        let p = &imported.patch;
        assert_eq!(p.position, Some(Position::InChat));
        assert_eq!(
            (p.depth, p.role, p.scan),
            (Some(4), Some(Role::Assistant), Some(true))
        );
        assert_eq!(p.template.as_deref(), Some("MEM {{running_recap}}"));
        assert_eq!(p.include_user_messages, Some(false));
        assert_eq!(
            p.include_system_messages, None,
            "absent keys change nothing"
        );
        assert_eq!(
            (p.message_length_threshold, p.message_recap_context_limit),
            (Some(3), Some(12))
        );
        assert_eq!(p.message_recap_context_type, Some(ContextType::Percent));
        assert_eq!(p.auto_hide_scene_count, Some(0));
        assert_eq!(
            (p.show_prefill, p.default_chat_enabled),
            (Some(true), Some(false))
        );
        assert_eq!(
            (p.use_global_toggle_state, p.global_toggle_state),
            (Some(true), Some(false))
        );
        assert_eq!(
            imported.ignored_keys,
            [
                "auto_lorebooks_enabled_by_default",
                "running_scene_recap_prompt"
            ]
        );
        assert_eq!(imported.chats_enabled, BTreeMap::from([("a".into(), true)]));
        assert!(imported.clear.is_empty());
    }

    #[test]
    fn a_null_key_clears_its_setting_and_sets_nothing() {
        let imported = import_st_settings(
            r#"{
                "running_scene_recap_template": null,
                "running_scene_recap_depth": null,
                "message_recap_context_limit": null,
                "running_scene_recap_role": 1,
                "chats_enabled": null,
                "profile": null
            }"#,
        )
        .unwrap();
        assert_eq!(
            imported.clear,
            ["depth", "template", "message_recap_context_limit"],
            "recapd's field names, in field order"
        );
        assert_eq!(
            imported.patch,
            SettingsPatch {
                role: Some(Role::User),
                ..SettingsPatch::default()
            }
        );
        assert!(imported.chats_enabled.is_empty());
        assert_eq!(imported.ignored_keys, ["profile"]);
    }

    #[test]
    fn numbers_and_booleans_written_as_strings_are_read_as_such() {
        let imported = import_st_settings(
            r#"{
                "running_scene_recap_position": "1",
                "running_scene_recap_depth": " 6 ",
                "running_scene_recap_role": "2",
                "running_scene_recap_scan": "true",
                "include_user_messages": "false",
                "show_prefill": " true ",
                "message_length_threshold": "10",
                "message_recap_context_limit": "12.9",
                "auto_hide_scene_count": "3"
            }"#,
        )
        .unwrap();
        let p = &imported.patch;
        assert_eq!(
            (p.position, p.depth, p.role),
            (Some(Position::InChat), Some(6), Some(Role::Assistant))
        );
        assert_eq!(
            (p.scan, p.include_user_messages, p.show_prefill),
            (Some(true), Some(false), Some(true))
        );
        assert_eq!(
            (
                p.message_length_threshold,
                p.message_recap_context_limit,
                p.auto_hide_scene_count
            ),
            (Some(10), Some(12), Some(3))
        );
    }

    #[test]
    fn any_context_type_but_percent_is_absolute() {
        for (value, expected) in [
            ("\"percent\"", ContextType::Percent),
            ("\"tokens\"", ContextType::Absolute),
            ("\"absolute\"", ContextType::Absolute),
            ("\"Percent\"", ContextType::Absolute),
            ("\"\"", ContextType::Absolute),
        ] {
            let imported =
                import_st_settings(&format!("{{\"message_recap_context_type\": {value}}}"))
                    .unwrap();
            assert_eq!(
                imported.patch.message_recap_context_type,
                Some(expected),
                "{value}"
            );
        }
    }

    #[test]
    fn a_negative_auto_hide_count_is_off() {
        for (value, expected) in [("-1", 0), ("-7", 0), ("\"-3\"", 0), ("-1e12", 0), ("4", 4)] {
            let imported =
                import_st_settings(&format!("{{\"auto_hide_scene_count\": {value}}}")).unwrap();
            assert_eq!(
                imported.patch.auto_hide_scene_count,
                Some(expected),
                "{value}"
            );
        }
    }

    #[test]
    fn chats_enabled_gives_each_named_chat_its_state() {
        let imported = import_st_settings(
            r#"{"chats_enabled": {
                "Seraphina - 2024-05-12@19h04m33s": true,
                "Bob - 2024-03-01@12h30m45s": "false"
            }}"#,
        )
        .unwrap();
        assert_eq!(
            imported.chats_enabled,
            BTreeMap::from([
                ("Bob - 2024-03-01@12h30m45s".to_owned(), false),
                ("Seraphina - 2024-05-12@19h04m33s".to_owned(), true),
            ])
        );
        assert!(imported.ignored_keys.is_empty());
        assert_eq!(imported.patch, SettingsPatch::default());
    }

    #[test]
    fn every_sillytavern_position_and_role_maps() {
        for (n, expected) in [
            (-1, Position::None),
            (0, Position::InPrompt),
            (1, Position::InChat),
            (2, Position::BeforePrompt),
        ] {
            let imported =
                import_st_settings(&format!("{{\"running_scene_recap_position\": {n}}}")).unwrap();
            assert_eq!(imported.patch.position, Some(expected));
        }
        for (n, expected) in [(0, Role::System), (1, Role::User), (2, Role::Assistant)] {
            let imported =
                import_st_settings(&format!("{{\"running_scene_recap_role\": {n}}}")).unwrap();
            assert_eq!(imported.patch.role, Some(expected));
        }
    }

    #[test]
    fn bad_values_are_refused_naming_the_key() {
        for (json, key) in [
            (
                r#"{"running_scene_recap_position": 3}"#,
                "json.running_scene_recap_position",
            ),
            (
                r#"{"running_scene_recap_role": -1}"#,
                "json.running_scene_recap_role",
            ),
            (
                r#"{"running_scene_recap_depth": 1001}"#,
                "json.running_scene_recap_depth",
            ),
            (
                r#"{"running_scene_recap_scan": "yes"}"#,
                "json.running_scene_recap_scan",
            ),
            (
                r#"{"running_scene_recap_scan": 1}"#,
                "json.running_scene_recap_scan",
            ),
            (
                r#"{"running_scene_recap_depth": ""}"#,
                "json.running_scene_recap_depth",
            ),
            (
                r#"{"running_scene_recap_position": "two"}"#,
                "json.running_scene_recap_position",
            ),
            (
                r#"{"running_scene_recap_role": [0]}"#,
                "json.running_scene_recap_role",
            ),
            (
                r#"{"running_scene_recap_template": 5}"#,
                "json.running_scene_recap_template",
            ),
            (
                r#"{"message_recap_context_type": 1}"#,
                "json.message_recap_context_type",
            ),
            (
                r#"{"message_length_threshold": -2}"#,
                "json.message_length_threshold",
            ),
            (
                r#"{"message_recap_context_limit": "-5"}"#,
                "json.message_recap_context_limit",
            ),
            (
                r#"{"auto_hide_scene_count": true}"#,
                "json.auto_hide_scene_count",
            ),
            (r#"{"chats_enabled": ["a"]}"#, "json.chats_enabled"),
            (
                r#"{"chats_enabled": {"a": "maybe"}}"#,
                "json.chats_enabled[\"a\"]",
            ),
            (
                r#"{"chats_enabled": {"a": null}}"#,
                "json.chats_enabled[\"a\"]",
            ),
            (
                r#"{"chats_enabled": {"": true}}"#,
                "json.chats_enabled[\"\"]",
            ),
            (r#"[1, 2]"#, "json"),
            (r#"{"unterminated": "#, "json"),
        ] {
            let err = import_st_settings(json).unwrap_err();
            assert!(
                err.to_string().starts_with(&format!("invalid {key}")),
                "{json}: {err}"
            );
        }
    }
}
