//! ST-Auto-Recap's own settings object (from its `extension_settings`), in
//! its own vocabulary, turned into a recapd settings change
//! (`ImportSettings`). Keys recapd has no use for are reported, never
//! silently dropped.

use serde_json::{Map, Value};

use super::DomainError;
use super::settings::{self, ContextType, Position, Role, SettingsPatch};

/// The result of an import: the change to apply and the keys left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedSettings {
    /// The settings the object sets.
    pub patch: SettingsPatch,
    /// Keys of the object that recapd does not use, sorted.
    pub ignored_keys: Vec<String>,
}

fn invalid(key: &str, reason: impl Into<String>) -> DomainError {
    DomainError::invalid(format!("json.{key}"), reason)
}

fn boolean(key: &str, value: &Value) -> Result<bool, DomainError> {
    value
        .as_bool()
        .ok_or_else(|| invalid(key, "must be true or false"))
}

fn integer(key: &str, value: &Value) -> Result<i64, DomainError> {
    match value {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.floor() as i64)
            })
            .ok_or_else(|| invalid(key, "must be a number")),
        // The extension's settings UI stores some numbers as strings.
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| invalid(key, "must be a number")),
        _ => Err(invalid(key, "must be a number")),
    }
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

/// Reads ST-Auto-Recap's settings object (JSON text).
pub fn import_st_settings(json: &str) -> Result<ImportedSettings, DomainError> {
    let object: Map<String, Value> = match serde_json::from_str(json) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return Err(DomainError::invalid("json", "must be a JSON object")),
        Err(e) => return Err(DomainError::invalid("json", format!("does not parse: {e}"))),
    };
    let mut patch = SettingsPatch::default();
    let mut ignored_keys = Vec::new();
    for (key, value) in &object {
        let k = key.as_str();
        match k {
            "running_scene_recap_position" => patch.position = Some(position(k, value)?),
            "running_scene_recap_depth" => {
                let depth = i32::try_from(integer(k, value)?).unwrap_or(i32::MAX);
                patch.depth =
                    Some(settings::check_depth(depth).map_err(|_| invalid(k, "must be 0..=1000"))?);
            }
            "running_scene_recap_role" => patch.role = Some(role(k, value)?),
            "running_scene_recap_scan" => patch.scan = Some(boolean(k, value)?),
            "running_scene_recap_template" => {
                patch.template = Some(
                    value
                        .as_str()
                        .ok_or_else(|| invalid(k, "must be a string"))?
                        .to_owned(),
                );
            }
            "include_user_messages" => patch.include_user_messages = Some(boolean(k, value)?),
            "include_system_messages" => patch.include_system_messages = Some(boolean(k, value)?),
            "include_narrator_messages" => {
                patch.include_narrator_messages = Some(boolean(k, value)?)
            }
            "message_length_threshold" => {
                patch.message_length_threshold = Some(non_negative(k, value)?)
            }
            "message_recap_context_limit" => {
                patch.message_recap_context_limit = Some(non_negative(k, value)?)
            }
            "message_recap_context_type" => {
                patch.message_recap_context_type = Some(match value.as_str() {
                    Some("percent") => ContextType::Percent,
                    Some("absolute") => ContextType::Absolute,
                    _ => return Err(invalid(k, "must be \"percent\" or \"absolute\"")),
                });
            }
            "auto_hide_scene_count" => {
                let n = integer(k, value)?;
                // The extension's -1 is "off", recapd's 0.
                let count = if n == -1 { 0 } else { n };
                let count = i32::try_from(count).unwrap_or(i32::MAX);
                patch.auto_hide_scene_count = Some(
                    settings::check_scene_count(count)
                        .map_err(|_| invalid(k, "must be -1 or more"))?,
                );
            }
            "show_prefill" => patch.show_prefill = Some(boolean(k, value)?),
            "default_chat_enabled" => patch.default_chat_enabled = Some(boolean(k, value)?),
            "use_global_toggle_state" => patch.use_global_toggle_state = Some(boolean(k, value)?),
            "global_toggle_state" => patch.global_toggle_state = Some(boolean(k, value)?),
            _ => ignored_keys.push(key.clone()),
        }
    }
    ignored_keys.sort();
    Ok(ImportedSettings {
        patch,
        ignored_keys,
    })
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
                "chats_enabled",
                "running_scene_recap_prompt"
            ]
        );
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
                r#"{"message_recap_context_type": "tokens"}"#,
                "json.message_recap_context_type",
            ),
            (
                r#"{"message_length_threshold": -2}"#,
                "json.message_length_threshold",
            ),
            (
                r#"{"auto_hide_scene_count": -2}"#,
                "json.auto_hide_scene_count",
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
