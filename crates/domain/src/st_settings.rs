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
//!
//! Of the extension's recap generation, the switches and counts whose
//! meaning recapd shares are read; its prompts never are: they ask for
//! answers in the extension's own shapes, which recapd does not parse, so
//! they are listed with the other ignored keys.
//!
//! Of its lorebook settings, the compaction threshold, the entity types,
//! and (from `settings.json`'s `extension_settings`) the book's name
//! template and whether it goes with its chat are read ([`lore`]).
//!
//! The extension's profiles, their bindings and its groups' disabled
//! characters are read into [`ImportedProfiles`] ([`profiles`]), for the
//! caller to store.
//!
//! SillyTavern's own World Info settings are read too ([`world_info`]):
//! its `settings.json` whole (`world_info_settings`, `power_user`; every
//! other key of the file is reported as ignored), or its
//! `world_info_settings` object alone.

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
    /// Keys of the object that recapd does not use, sorted; members of
    /// SillyTavern's objects recapd reads part of as `object.member`
    /// (`power_user.persona_description`), and a profile's as
    /// `profiles.<name>.<key>`.
    pub ignored_keys: Vec<String>,
    /// The extension's profiles, bindings and group settings
    /// ([`profiles`]).
    pub profiles: ImportedProfiles,
}

/// Sets one field of a patch from an extension key's value (never `null`).
type Reader = fn(&mut SettingsPatch, &str, &Value) -> Result<(), DomainError>;

/// The extension's keys recapd reads: each with the recapd settings field
/// it sets (and that a `null` clears) and how its value is read.
const KEYS: [(&str, &str, Reader); 23] = [
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
    // Recaps written by recapd. The extension's settings panel keeps the
    // offset in 0..=10 and the minimum scene length in 1..=50, inside
    // recapd's ranges; a value edited by hand outside them is refused.
    (
        "auto_scene_break_on_new_message",
        "auto_scene_break_detection",
        |p, k, v| {
            p.auto_scene_break_detection = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "auto_scene_break_message_offset",
        "scene_break_offset",
        |p, k, v| {
            let check = settings::depth_in_range("settings.scene_break_offset");
            p.scene_break_offset = Some(checked_count(k, v, check)?);
            Ok(())
        },
    ),
    (
        "auto_scene_break_minimum_scene_length",
        "scene_break_min_messages",
        |p, k, v| {
            p.scene_break_min_messages = Some(checked_count(k, v, settings::check_min_messages)?);
            Ok(())
        },
    ),
    (
        "auto_scene_break_generate_recap",
        "auto_scene_recap",
        |p, k, v| {
            p.auto_scene_recap = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "running_scene_recap_auto_generate",
        "auto_running_recap",
        |p, k, v| {
            p.auto_running_recap = Some(boolean(k, v)?);
            Ok(())
        },
    ),
    (
        "running_scene_recap_exclude_latest",
        "running_recap_exclude_latest",
        |p, k, v| {
            p.running_recap_exclude_latest =
                Some(checked_count(k, v, settings::check_exclude_latest)?);
            Ok(())
        },
    ),
    // Lore writing (the rest of the extension's lorebook settings: [`lore`]).
    (
        lore::COMPACTION_THRESHOLD_KEY,
        "lore_compaction_threshold",
        lore::compaction_threshold,
    ),
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

/// A count read as [`integer`] reads it, then checked by `check`, the
/// recapd setting's own check (so the ranges are the setting's); a value
/// it refuses is an error naming the extension's key, with the check's
/// reason.
fn checked_count(
    key: &str,
    value: &Value,
    check: impl Fn(i32) -> Result<u32, DomainError>,
) -> Result<u32, DomainError> {
    let n = integer(key, value)?;
    // Past i32 the check refuses the saturated value; its reason then
    // names that value, so it is given back as written.
    let wire = i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX });
    check(wire).map_err(|e| match e {
        DomainError::Invalid { reason, .. } => {
            invalid(key, reason.replacen(&wire.to_string(), &n.to_string(), 1))
        }
        other => other,
    })
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
    read_flat(&object, true)
}

/// Reads a flat settings object: the top level (`top_level`), or one of
/// its profiles (whose `chats_enabled` and profile keys are ignored).
fn read_flat(
    object: &Map<String, Value>,
    top_level: bool,
) -> Result<ImportedSettings, DomainError> {
    let mut imported = ImportedSettings {
        patch: SettingsPatch::default(),
        clear: Vec::new(),
        chats_enabled: BTreeMap::new(),
        ignored_keys: Vec::new(),
        profiles: ImportedProfiles::default(),
    };
    // SillyTavern reads its World Info settings from `world_info_settings`
    // when present, else from the top level (script.js:7954 at 51ad27f).
    let nested_world_info = world_info::has_settings_object(object);
    for (key, value) in object {
        let k = key.as_str();
        if !top_level && (k == "chats_enabled" || profiles::KEYS.contains(&k)) {
            imported.ignored_keys.push(key.clone());
            continue;
        }
        if profiles::KEYS.contains(&k) {
            profiles::read_key(&mut imported, k, value)?;
            continue;
        }
        if k == "chats_enabled" {
            // `null` has no entries: no chat's state changes.
            if !value.is_null() {
                imported.chats_enabled = chats_enabled(k, value)?;
            }
            continue;
        }
        if k == world_info::SETTINGS_KEY {
            world_info::read_settings_object(&mut imported, value)?;
            continue;
        }
        if k == world_info::POWER_USER_KEY {
            world_info::read_power_user(&mut imported, value)?;
            continue;
        }
        if lore::is_object_key(k) {
            // Read after the loop: which of them wins does not follow the
            // keys' order.
            continue;
        }
        if world_info::is_world_info_key(k) {
            if nested_world_info {
                imported.ignored_keys.push(key.clone());
            } else {
                world_info::read_key(&mut imported, k, k, value)?;
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
    lore::read_objects(&mut imported, object)?;
    imported.ignored_keys.sort();
    imported
        .clear
        .sort_by_key(|field| settings::FIELD_NAMES.iter().position(|name| name == field));
    Ok(imported)
}

mod lore;
pub mod profiles;
mod world_info;

pub use profiles::ImportedProfiles;

#[cfg(test)]
mod tests;
