//! SillyTavern's own World Info settings, as its `settings.json` holds
//! them, turned into recapd's `world_info_*` settings.
//!
//! SillyTavern saves them under `world_info_settings` (script.js:8021 at
//! 51ad27f, the object of world-info.js:795-812 `getWorldInfoSettings`)
//! and, loading, reads that object or, when it is missing, the settings
//! object itself (script.js:7954): so the same keys are read at the top
//! level unless a `world_info_settings` object is present, which then wins
//! and the top-level ones are reported as ignored. The global books are
//! `world_info.globalSelect` (world-info.js:85, read at :998), or, in
//! SillyTavern's older form, `world_info` itself as a list of names or one
//! name (:955-962). The persona's book is
//! `power_user.persona_description_lorebook` (power-user.js:294).
//!
//! Values are read as SillyTavern's loader reads them (world-info.js:917-
//! 949): numbers through `Number`, a `world_info_budget` over 100 becomes
//! 25 (its migration, :945-948). recapd's own conventions hold as for the
//! extension's keys: `null` clears the setting, numbers and booleans may
//! be written as strings, and a value outside the setting's range (the
//! ranges of SillyTavern's own settings panel) is refused naming the key.

use serde_json::{Map, Value};

use super::{ImportedSettings, Reader, boolean, checked_count, integer, invalid};
use crate::DomainError;
use crate::settings::{
    self, BookNames, CharacterStrategy, MAX_BOOKS_PER_LIST, WI_BUDGET_CAP_MAX, WI_BUDGET_MAX,
    WI_BUDGET_MIN, WI_DEPTH_MAX, WI_MAX_RECURSION_STEPS_MAX, WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX,
    WI_MIN_ACTIVATIONS_MAX,
};

/// The object SillyTavern saves its World Info settings in.
pub(super) const SETTINGS_KEY: &str = "world_info_settings";
/// The member (of that object) holding the global books.
const BOOKS_KEY: &str = "world_info";
/// The object holding SillyTavern's user settings, the persona's book among
/// them.
pub(super) const POWER_USER_KEY: &str = "power_user";
/// The persona's book, in `power_user`.
const PERSONA_BOOK_KEY: &str = "persona_description_lorebook";

/// SillyTavern's World Info keys recapd reads; each sets (and a `null`
/// clears) the recapd setting of the same name.
const KEYS: [(&str, Reader); 12] = [
    ("world_info_depth", |p, k, v| {
        let check = settings::range("settings.world_info_depth", 0, WI_DEPTH_MAX);
        p.world_info_depth = Some(checked_count(k, v, check)?);
        Ok(())
    }),
    ("world_info_min_activations", |p, k, v| {
        let check = settings::range(
            "settings.world_info_min_activations",
            0,
            WI_MIN_ACTIVATIONS_MAX,
        );
        p.world_info_min_activations = Some(checked_count(k, v, check)?);
        Ok(())
    }),
    ("world_info_min_activations_depth_max", |p, k, v| {
        let check = settings::range(
            "settings.world_info_min_activations_depth_max",
            0,
            WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX,
        );
        p.world_info_min_activations_depth_max = Some(checked_count(k, v, check)?);
        Ok(())
    }),
    ("world_info_budget", |p, k, v| {
        let check = settings::range("settings.world_info_budget", WI_BUDGET_MIN, WI_BUDGET_MAX);
        // SillyTavern's own migration of budgets from before they were
        // percentages (world-info.js:945-948).
        let budget = if integer(k, v)? > 100 {
            Value::from(25)
        } else {
            v.clone()
        };
        p.world_info_budget = Some(checked_count(k, &budget, check)?);
        Ok(())
    }),
    ("world_info_budget_cap", |p, k, v| {
        let check = settings::range("settings.world_info_budget_cap", 0, WI_BUDGET_CAP_MAX);
        p.world_info_budget_cap = Some(checked_count(k, v, check)?);
        Ok(())
    }),
    ("world_info_include_names", |p, k, v| {
        p.world_info_include_names = Some(boolean(k, v)?);
        Ok(())
    }),
    ("world_info_recursive", |p, k, v| {
        p.world_info_recursive = Some(boolean(k, v)?);
        Ok(())
    }),
    ("world_info_case_sensitive", |p, k, v| {
        p.world_info_case_sensitive = Some(boolean(k, v)?);
        Ok(())
    }),
    ("world_info_match_whole_words", |p, k, v| {
        p.world_info_match_whole_words = Some(boolean(k, v)?);
        Ok(())
    }),
    ("world_info_use_group_scoring", |p, k, v| {
        p.world_info_use_group_scoring = Some(boolean(k, v)?);
        Ok(())
    }),
    ("world_info_character_strategy", |p, k, v| {
        let number = integer(k, v)?;
        p.world_info_character_strategy =
            Some(CharacterStrategy::from_st_number(number).ok_or_else(|| {
                invalid(
                    k,
                    format!("{number} is not a SillyTavern strategy (0, 1 or 2)"),
                )
            })?);
        Ok(())
    }),
    ("world_info_max_recursion_steps", |p, k, v| {
        let check = settings::range(
            "settings.world_info_max_recursion_steps",
            0,
            WI_MAX_RECURSION_STEPS_MAX,
        );
        p.world_info_max_recursion_steps = Some(checked_count(k, v, check)?);
        Ok(())
    }),
];

/// Whether `key` is one of SillyTavern's World Info settings keys (the
/// twelve of [`KEYS`] and the books' `world_info`), which it reads at the
/// top level of its settings when `world_info_settings` is missing.
pub(super) fn is_world_info_key(key: &str) -> bool {
    key == BOOKS_KEY || KEYS.iter().any(|(name, _)| *name == key)
}

/// Reads one World Info key (see [`is_world_info_key`]) named `path` in
/// errors and ignored keys (`world_info_depth`, or
/// `world_info_settings.world_info_depth`).
pub(super) fn read_key(
    imported: &mut ImportedSettings,
    key: &str,
    path: &str,
    value: &Value,
) -> Result<(), DomainError> {
    if key == BOOKS_KEY {
        return global_books(imported, path, value);
    }
    let Some((_, read)) = KEYS.iter().find(|(name, _)| *name == key) else {
        imported.ignored_keys.push(path.to_owned());
        return Ok(());
    };
    if value.is_null() {
        imported.clear.push(key.to_owned());
        Ok(())
    } else {
        read(&mut imported.patch, path, value)
    }
}

/// Reads SillyTavern's `world_info_settings` object (`null`: as if
/// missing, as SillyTavern's loader takes it).
pub(super) fn read_settings_object(
    imported: &mut ImportedSettings,
    value: &Value,
) -> Result<(), DomainError> {
    let object = match value {
        Value::Null => return Ok(()),
        Value::Object(object) => object,
        _ => return Err(invalid(SETTINGS_KEY, "must be an object")),
    };
    for (key, value) in object {
        let path = format!("{SETTINGS_KEY}.{key}");
        if is_world_info_key(key) {
            read_key(imported, key, &path, value)?;
        } else {
            imported.ignored_keys.push(path);
        }
    }
    Ok(())
}

/// Whether the settings object has a `world_info_settings` SillyTavern
/// reads (an object; `null` counts as missing).
pub(super) fn has_settings_object(object: &Map<String, Value>) -> bool {
    object.get(SETTINGS_KEY).is_some_and(|v| !v.is_null())
}

/// The global books: `world_info` as an object with `globalSelect`, or in
/// SillyTavern's older form a list of names or one name.
fn global_books(
    imported: &mut ImportedSettings,
    path: &str,
    value: &Value,
) -> Result<(), DomainError> {
    const FIELD: &str = "world_info_global_books";
    match value {
        Value::Null => imported.clear.push(FIELD.to_owned()),
        Value::String(name) => {
            imported.patch.world_info_global_books =
                Some(books(path, &[Value::from(name.as_str())])?)
        }
        Value::Array(names) => imported.patch.world_info_global_books = Some(books(path, names)?),
        Value::Object(members) => {
            for (key, value) in members {
                let member = format!("{path}.{key}");
                if key != "globalSelect" {
                    // `charLore` (extra books per character file) and others.
                    imported.ignored_keys.push(member);
                    continue;
                }
                match value {
                    Value::Null => imported.clear.push(FIELD.to_owned()),
                    Value::Array(names) => {
                        imported.patch.world_info_global_books = Some(books(&member, names)?)
                    }
                    _ => return Err(invalid(&member, "must be a list of book names")),
                }
            }
        }
        _ => {
            return Err(invalid(
                path,
                "must be an object with globalSelect, a list of book names or a book name",
            ));
        }
    }
    Ok(())
}

/// A list of book names, each checked as recapd checks book names; errors
/// name `path[i]`.
fn books(path: &str, names: &[Value]) -> Result<BookNames, DomainError> {
    if names.len() > MAX_BOOKS_PER_LIST {
        return Err(invalid(
            path,
            format!(
                "{} books is over the maximum of {MAX_BOOKS_PER_LIST}",
                names.len()
            ),
        ));
    }
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let entry = format!("{path}[{i}]");
            let name = name
                .as_str()
                .ok_or_else(|| invalid(&entry, "must be a book name (a string)"))?;
            settings::check_book_name(&format!("json.{entry}"), name)?;
            Ok(name.to_owned())
        })
        .collect::<Result<Vec<_>, _>>()
        .map(BookNames)
}

/// Reads `power_user`: its `persona_description_lorebook` sets
/// `world_info_persona_book` (empty: none); every other member is reported
/// as ignored. A `power_user` that is not an object holds no setting and
/// is reported as ignored.
pub(super) fn read_power_user(
    imported: &mut ImportedSettings,
    value: &Value,
) -> Result<(), DomainError> {
    const FIELD: &str = "world_info_persona_book";
    let object = match value {
        Value::Null => return Ok(()),
        Value::Object(object) => object,
        _ => {
            imported.ignored_keys.push(POWER_USER_KEY.to_owned());
            return Ok(());
        }
    };
    for (key, value) in object {
        let path = format!("{POWER_USER_KEY}.{key}");
        if key != PERSONA_BOOK_KEY {
            imported.ignored_keys.push(path);
            continue;
        }
        match value {
            Value::Null => imported.clear.push(FIELD.to_owned()),
            Value::String(name) => {
                if !name.is_empty() {
                    settings::check_book_name(&format!("json.{path}"), name)?;
                }
                imported.patch.world_info_persona_book = Some(name.clone());
            }
            _ => return Err(invalid(&path, "must be a book name (a string)")),
        }
    }
    Ok(())
}
