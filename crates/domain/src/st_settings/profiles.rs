//! The extension's profiles and group settings in its settings object:
//! `profiles` (name to a flat settings object, read as the top level's
//! keys are), `character_profiles` (avatar file name to profile name),
//! `chat_profiles` (chat id, or group id for a group chat, to profile name)
//! and `disabled_group_characters` (group id to avatar file names).
//! Which `chat_profiles` keys are groups is the caller's to decide (it
//! knows the tenant's groups).

use serde_json::{Map, Value};

use super::{ImportedSettings, invalid};
use crate::DomainError;
use crate::profiles::{self, MAX_GROUP_MEMBERS, MAX_PROFILES};
use crate::settings::SettingsPatch;

/// The keys read here.
pub(super) const KEYS: [&str; 4] = [
    "profiles",
    "character_profiles",
    "chat_profiles",
    "disabled_group_characters",
];

/// The extension's profiles, bindings and group settings, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportedProfiles {
    /// Each profile's name and the settings its flat object sets (its
    /// keys read as the top level's are; a `null` value is left out: a
    /// profile has nothing to clear).
    pub profiles: Vec<(String, SettingsPatch)>,
    /// Character key (avatar file name) to profile name.
    pub character_profiles: Vec<(String, String)>,
    /// Chat id or group id to profile name.
    pub chat_profiles: Vec<(String, String)>,
    /// Group id to the characters (avatar file names) disabled in it.
    pub disabled_group_characters: Vec<(String, Vec<String>)>,
}

/// An object's entries, or an error naming `key`.
fn object<'a>(
    key: &str,
    value: &'a Value,
    what: &str,
) -> Result<&'a Map<String, Value>, DomainError> {
    value
        .as_object()
        .ok_or_else(|| invalid(key, format!("must be an object of {what}")))
}

/// A map of names to names (`character_profiles`, `chat_profiles`): both
/// sides follow the id rules; a `null` value is left out.
fn names(key: &str, value: &Value) -> Result<Vec<(String, String)>, DomainError> {
    let mut out = Vec::new();
    for (name, target) in object(key, value, "names to profile names")? {
        let entry = format!("json.{key}[{name:?}]");
        profiles::check_name(&entry, name)?;
        match target {
            Value::Null => {}
            Value::String(profile) => {
                profiles::check_name(&entry, profile)?;
                out.push((name.clone(), profile.clone()));
            }
            _ => return Err(DomainError::invalid(entry, "must be a profile name")),
        }
    }
    Ok(out)
}

/// Reads one of [`KEYS`] into `imported.profiles`; profiles' own keys
/// recapd does not use are added to `ignored_keys` as
/// `profiles.<name>.<key>`.
pub(super) fn read_key(
    imported: &mut ImportedSettings,
    key: &str,
    value: &Value,
) -> Result<(), DomainError> {
    if value.is_null() {
        return Ok(());
    }
    match key {
        "profiles" => {
            let all = object(key, value, "profile names to settings objects")?;
            if all.len() > MAX_PROFILES {
                return Err(invalid(
                    key,
                    format!("has {} profiles; at most {MAX_PROFILES}", all.len()),
                ));
            }
            for (name, settings) in all {
                let entry = format!("json.profiles[{name:?}]");
                profiles::check_name(&entry, name)?;
                let Value::Object(flat) = settings else {
                    return Err(DomainError::invalid(entry, "must be a settings object"));
                };
                let read = super::read_flat(flat, false).map_err(|e| match e {
                    DomainError::Invalid { field, reason } => DomainError::invalid(
                        field.replacen("json.", &format!("json.profiles[{name:?}]."), 1),
                        reason,
                    ),
                    other => other,
                })?;
                imported.ignored_keys.extend(
                    read.ignored_keys
                        .iter()
                        .map(|ignored| format!("profiles.{name}.{ignored}")),
                );
                imported.profiles.profiles.push((name.clone(), read.patch));
            }
        }
        "character_profiles" => imported.profiles.character_profiles = names(key, value)?,
        "chat_profiles" => imported.profiles.chat_profiles = names(key, value)?,
        _ => {
            for (group, members) in object(key, value, "group ids to avatar file names")? {
                let entry = format!("json.{key}[{group:?}]");
                profiles::check_name(&entry, group)?;
                let Value::Array(members) = members else {
                    return Err(DomainError::invalid(entry, "must be an array of strings"));
                };
                if members.len() > MAX_GROUP_MEMBERS {
                    return Err(DomainError::invalid(
                        entry,
                        format!("has {} entries; at most {MAX_GROUP_MEMBERS}", members.len()),
                    ));
                }
                let mut keys = Vec::with_capacity(members.len());
                for (i, member) in members.iter().enumerate() {
                    let Value::String(member) = member else {
                        return Err(DomainError::invalid(
                            format!("{entry}[{i}]"),
                            "must be a string",
                        ));
                    };
                    profiles::check_name(&format!("{entry}[{i}]"), member)?;
                    keys.push(member.clone());
                }
                imported
                    .profiles
                    .disabled_group_characters
                    .push((group.clone(), keys));
            }
        }
    }
    Ok(())
}
