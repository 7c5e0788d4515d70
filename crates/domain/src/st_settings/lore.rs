//! The extension's lorebook settings, turned into recapd's `lore_*`
//! settings (see docs/lore.md).
//!
//! The extension writes lore with every scene recap it makes; it has no
//! switch for it, so nothing here sets `auto_lore`. What it does keep, and
//! where its code reads it (ST-Auto-Summarize at 5083d00):
//!
//! - `auto_lorebooks_compaction_threshold`, in its own object
//!   (`extension_settings.auto_recap`; read by lorebookEntryMerger.js:197),
//!   is `lore_compaction_threshold`.
//! - Its entity types: in its own object, `operation_artifacts.entity_types`
//!   (a list of saved versions; entityTypes.js:262-276 reads the one marked
//!   `isDefault`, else the first, and its `types`), or, in older versions,
//!   `autoLorebooks.entity_types`. Each type is an object `{name, constant,
//!   usage, isGuidanceOnly}` or, older, a string `name(entry:constant)`. They
//!   become `lore_entity_types` lines `name[(constant)]: usage`; the
//!   guidance-only `recap` pseudo-type (which tells the extension's model
//!   what belongs in the recap, not in an entry) is left out.
//! - The book's name template and whether the book goes with its chat live
//!   in the extension's global object `extension_settings.autoLorebooks`
//!   (`nameTemplate`, `deleteOnChatDelete`; lorebookManager.js:619,
//!   eventHandlers.js:247), which SillyTavern's `settings.json` holds: they
//!   are read from that file's `extension_settings`. The keys
//!   `auto_lorebooks_name_template` and `auto_lorebooks_delete_on_chat_delete`
//!   of the extension's own object are defaults its code never reads (only
//!   defaultSettings.js:103-104 names them), so they are listed as ignored:
//!   importing them would bring back a value the user never chose.

use serde_json::{Map, Value};

use super::{ImportedSettings, boolean, checked_count, invalid};
use crate::DomainError;
use crate::settings::entity_types::EntityType;
use crate::settings::{self, EntityTypes, LORE_TOKENS_MAX, SettingsPatch};

/// The extension's compaction threshold, in its own object.
pub(super) const COMPACTION_THRESHOLD_KEY: &str = "auto_lorebooks_compaction_threshold";
/// Where the extension's object keeps its saved prompts and entity types.
const ARTIFACTS_KEY: &str = "operation_artifacts";
/// The member of [`ARTIFACTS_KEY`] holding the entity types' versions.
const ENTITY_TYPES_KEY: &str = "entity_types";
/// Where older versions of the extension's object keep the entity types
/// (under [`ENTITY_TYPES_KEY`]); in `settings.json`'s `extension_settings`,
/// the extension's global lorebook settings.
const LOREBOOKS_KEY: &str = "autoLorebooks";
/// The object of `settings.json` holding every extension's settings.
const EXTENSION_SETTINGS_KEY: &str = "extension_settings";
/// The book's name template, in the global lorebook settings.
const NAME_TEMPLATE_KEY: &str = "nameTemplate";
/// Whether the book goes with its chat, in the global lorebook settings.
const DELETE_WITH_CHAT_KEY: &str = "deleteOnChatDelete";
/// The macros of the extension's name template (utils.js:378-385), which
/// it matches with spaces inside the braces allowed.
const NAME_MACROS: [&str; 2] = ["char", "chat"];

/// Reads `auto_lorebooks_compaction_threshold` into
/// `lore_compaction_threshold` (a [`super::Reader`]). The extension
/// compacts an entry of at least that many tokens
/// (operationHandlers.js:2284), recapd one of more: `n` is `n - 1`. Its 0
/// and 1 (compact every entry) are 1, since recapd's 0 turns compaction
/// off.
pub(super) fn compaction_threshold(
    patch: &mut SettingsPatch,
    key: &str,
    value: &Value,
) -> Result<(), DomainError> {
    let check = settings::range("settings.lore_compaction_threshold", 0, LORE_TOKENS_MAX);
    let at_least = checked_count(key, value, check)?;
    patch.lore_compaction_threshold = Some(at_least.saturating_sub(1).max(1));
    Ok(())
}

/// Whether `key` is one of the objects [`read_objects`] reads (the import's
/// loop leaves them to it).
pub(super) fn is_object_key(key: &str) -> bool {
    [ARTIFACTS_KEY, LOREBOOKS_KEY, EXTENSION_SETTINGS_KEY].contains(&key)
}

/// Reads the objects [`is_object_key`] names: the entity types, and
/// `settings.json`'s `extension_settings.autoLorebooks`. Members recapd has
/// no use for are listed as ignored (`operation_artifacts.scene_recap`).
pub(super) fn read_objects(
    imported: &mut ImportedSettings,
    object: &Map<String, Value>,
) -> Result<(), DomainError> {
    let artifacts = members(object, ARTIFACTS_KEY)?;
    let legacy = members(object, LOREBOOKS_KEY)?;
    for (name, members) in [(ARTIFACTS_KEY, artifacts), (LOREBOOKS_KEY, legacy)] {
        ignore_all_but(imported, name, members, &[ENTITY_TYPES_KEY]);
    }
    read_entity_types(imported, artifacts, legacy)?;
    let Some(extensions) = members(object, EXTENSION_SETTINGS_KEY)? else {
        return Ok(());
    };
    ignore_all_but(
        imported,
        EXTENSION_SETTINGS_KEY,
        Some(extensions),
        &[LOREBOOKS_KEY],
    );
    let path = format!("{EXTENSION_SETTINGS_KEY}.{LOREBOOKS_KEY}");
    let Some(lorebooks) = members_at(extensions, LOREBOOKS_KEY, &path)? else {
        return Ok(());
    };
    ignore_all_but(
        imported,
        &path,
        Some(lorebooks),
        &[NAME_TEMPLATE_KEY, DELETE_WITH_CHAT_KEY],
    );
    match lorebooks.get(NAME_TEMPLATE_KEY) {
        None => {}
        // The extension names books by its default template whenever this
        // one is empty (`nameTemplate || default`).
        Some(Value::Null) => imported.clear.push("lore_book_name_template".into()),
        Some(Value::String(template)) if template.trim().is_empty() => {
            imported.clear.push("lore_book_name_template".into())
        }
        Some(Value::String(template)) => {
            imported.patch.lore_book_name_template = Some(name_template(template))
        }
        Some(_) => {
            return Err(invalid(
                &format!("{path}.{NAME_TEMPLATE_KEY}"),
                "must be a string",
            ));
        }
    }
    match lorebooks.get(DELETE_WITH_CHAT_KEY) {
        None => {}
        Some(Value::Null) => imported.clear.push("lore_delete_book_with_chat".into()),
        Some(value) => {
            let key = format!("{path}.{DELETE_WITH_CHAT_KEY}");
            imported.patch.lore_delete_book_with_chat = Some(boolean(&key, value)?);
        }
    }
    Ok(())
}

/// The members of the object `object[key]`; `None` when it is absent or
/// `null` (the extension reads both as missing).
fn members<'a>(
    object: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, DomainError> {
    members_at(object, key, key)
}

/// [`members`], naming the member `path` in its error.
fn members_at<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<&'a Map<String, Value>>, DomainError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(members)) => Ok(Some(members)),
        Some(_) => Err(invalid(path, "must be an object")),
    }
}

/// Lists every member of `members` but `kept` as ignored, as `path.member`.
fn ignore_all_but(
    imported: &mut ImportedSettings,
    path: &str,
    members: Option<&Map<String, Value>>,
    kept: &[&str],
) {
    let ignored = members
        .into_iter()
        .flat_map(|m| m.keys())
        .filter(|member| !kept.contains(&member.as_str()))
        .map(|member| format!("{path}.{member}"));
    imported.ignored_keys.extend(ignored);
}

/// The extension's name template with its macros as recapd writes them:
/// `{{ char }}` is `{{char}}`, `{{ chat }}` `{{chat}}` (the extension allows
/// spaces inside the braces). Other text is kept.
fn name_template(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let macro_name = after
            .find("}}")
            .map(|close| (after[..close].trim(), close))
            .filter(|(inner, _)| NAME_MACROS.contains(inner));
        match macro_name {
            Some((inner, close)) => {
                out.push_str("{{");
                out.push_str(inner);
                out.push_str("}}");
                rest = &after[close + 2..];
            }
            None => {
                out.push('{');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Sets `lore_entity_types` from the list the extension reads: the
/// `isDefault` (else the first) version of `operation_artifacts
/// .entity_types`, or else `autoLorebooks.entity_types`. An empty list is
/// the extension's defaults: the setting is cleared. Neither given: nothing
/// changes.
fn read_entity_types(
    imported: &mut ImportedSettings,
    artifacts: Option<&Map<String, Value>>,
    legacy: Option<&Map<String, Value>>,
) -> Result<(), DomainError> {
    let from_artifacts = match artifacts.and_then(|a| a.get(ENTITY_TYPES_KEY)) {
        None | Some(Value::Null) => None,
        Some(Value::Array(versions)) if versions.is_empty() => None,
        Some(Value::Array(versions)) => {
            let is_default = |v: &Value| v.get("isDefault").and_then(Value::as_bool) == Some(true);
            let index = versions.iter().position(is_default).unwrap_or(0);
            let path = format!("{ARTIFACTS_KEY}.{ENTITY_TYPES_KEY}[{index}].types");
            Some((versions[index].get("types"), path))
        }
        Some(_) => {
            let path = format!("{ARTIFACTS_KEY}.{ENTITY_TYPES_KEY}");
            return Err(invalid(&path, "must be a list of entity type versions"));
        }
    };
    let (types, path) = match from_artifacts {
        Some(found) => found,
        None => match legacy.and_then(|l| l.get(ENTITY_TYPES_KEY)) {
            None => return Ok(()),
            types => (types, format!("{LOREBOOKS_KEY}.{ENTITY_TYPES_KEY}")),
        },
    };
    match types {
        None | Some(Value::Null) => imported.clear.push("lore_entity_types".into()),
        Some(Value::Array(list)) if list.is_empty() => {
            imported.clear.push("lore_entity_types".into())
        }
        Some(Value::Array(list)) => {
            imported.patch.lore_entity_types = Some(entity_types(&path, list)?)
        }
        Some(_) => return Err(invalid(&path, "must be a list of entity types")),
    }
    Ok(())
}

/// The extension's types as recapd's: guidance-only ones left out, names
/// as the extension cleans them (lowercase, spaces `_`, other characters
/// but letters, digits, `_` and `-` dropped) with `-` made `_` (recapd's
/// names are the prefix of `<type>-<name>` comments), the first of two
/// types with one name kept (as the extension keeps it), a usage made one
/// line.
fn entity_types(path: &str, list: &[Value]) -> Result<EntityTypes, DomainError> {
    let mut types: Vec<EntityType> = Vec::new();
    for (i, value) in list.iter().enumerate() {
        let key = format!("{path}[{i}]");
        let (raw_name, constant, usage) = match value {
            Value::Object(def) => {
                if def.get("isGuidanceOnly").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                let name = def.get("name").and_then(Value::as_str).unwrap_or("");
                let constant = def.get("constant").and_then(Value::as_bool) == Some(true);
                let usage = def.get("usage").and_then(Value::as_str).unwrap_or("");
                (name.to_owned(), constant, usage.to_owned())
            }
            Value::String(definition) => {
                let (name, flags) = legacy_definition(definition);
                (name, flags, String::new())
            }
            _ => return Err(invalid(&key, "must be an entity type object or a name")),
        };
        let name = type_name(&raw_name);
        if name.is_empty() || types.iter().any(|t| t.name == name) {
            continue;
        }
        let description = usage.split_whitespace().collect::<Vec<_>>().join(" ");
        let mark = if constant { "(constant)" } else { "" };
        let line = format!("{name}{mark}: {description}");
        types.push(EntityType::parse_line(&line).map_err(|reason| invalid(&key, reason))?);
    }
    EntityTypes::new(types).map_err(|reason| invalid(path, reason))
}

/// An older definition `name(entry:constant)`: its name and whether it is
/// constant (entityTypes.js `parseEntityTypeDefinition`).
fn legacy_definition(definition: &str) -> (String, bool) {
    let lower = definition.trim().to_lowercase();
    match (lower.find('('), lower.rfind(')')) {
        (Some(open), Some(close)) if close > open => {
            let constant = lower[open + 1..close]
                .split(',')
                .any(|flag| flag.trim().strip_prefix("entry:").map(str::trim) == Some("constant"));
            (lower[..open].to_owned(), constant)
        }
        _ => (lower, false),
    }
}

/// A type name as the extension cleans it, with `-` made `_`.
fn type_name(raw: &str) -> String {
    raw.trim()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' | '_' => Some(c),
            '-' => Some('_'),
            _ => None,
        })
        .collect()
}
