//! SillyTavern's `convertCharacterBook` (world-info.js:5498-5555 at
//! 51ad27f), member by member.

use serde_json::value::RawValue;

use crate::DomainError;

use super::super::book::json::{object_members, object_text, raw};
use super::super::book::template::TEMPLATE;
use super::js;

type Owned = Vec<(String, Box<RawValue>)>;

fn invalid(reason: impl Into<String>) -> DomainError {
    DomainError::invalid("card", reason)
}

/// The member `name` of `members`, if present (`undefined` otherwise).
fn get<'a>(members: &'a Owned, name: &str) -> Option<&'a RawValue> {
    members
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, value)| value.as_ref())
}

fn text(value: &str) -> Box<RawValue> {
    raw(value.to_owned())
}

fn boolean(b: bool) -> Box<RawValue> {
    text(if b { "true" } else { "false" })
}

/// One converted entry (its uid, its JSON text) and the entry as it stands
/// in `originalData` afterwards (with the `id` SillyTavern adds).
struct Converted {
    uid: String,
    entry: Box<RawValue>,
    original: Box<RawValue>,
}

/// Converts entry `index` of `character_book.entries`.
fn entry(index: usize, original: &RawValue) -> Result<Converted, DomainError> {
    let source = original.get();
    let (mut fields, is_object) = match source.as_bytes().first() {
        Some(b'{') => (object_members(source).unwrap_or_default(), true),
        // An array is an object to JavaScript: it has none of the members
        // read here, and keeps no `id` through JSON.
        Some(b'[') => (Vec::new(), false),
        _ => {
            // `entry.id` of null throws; setting `id` on a primitive throws
            // in a module's strict mode: the import fails.
            return Err(invalid(format!(
                "character_book.entries[{index}] is not an object"
            )));
        }
    };
    let index_text = index.to_string();
    // `if (entry.id === undefined) entry.id = index` (:5502-5504).
    let id: Box<RawValue> = match get(&fields, "id") {
        Some(id) => id.to_owned(),
        None => {
            if is_object {
                fields.push(("id".to_owned(), text(&index_text)));
            }
            text(&index_text)
        }
    };
    let uid = js::string(&id);
    let ext: Owned = get(&fields, "extensions")
        .filter(|e| e.get().starts_with('{'))
        .and_then(|e| object_members(e.get()).ok())
        .unwrap_or_default();
    // `entry.extensions?.name ?? fallback`
    let ext_or = |name: &str, fallback: &str| -> Box<RawValue> {
        match get(&ext, name) {
            Some(v) if !js::is_null(v) => v.to_owned(),
            _ => text(fallback),
        }
    };
    // `entry.name || fallback`
    let or = |value: Option<&RawValue>, fallback: &str| -> Box<RawValue> {
        match value {
            Some(v) if js::truthy(v) => v.to_owned(),
            _ => text(fallback),
        }
    };
    let truthy = |name: &str| get(&fields, name).is_some_and(js::truthy);
    let position = match get(&ext, "position") {
        Some(v) if !js::is_null(v) => v.to_owned(),
        _ => {
            let before = get(&fields, "position").is_some_and(|p| p.get() == "\"before_char\"");
            text(if before { "0" } else { "1" })
        }
    };
    // The members SillyTavern sets, by name; `None`: `undefined`, left out
    // by JSON.stringify.
    let set: Vec<(&str, Option<Box<RawValue>>)> = vec![
        ("key", get(&fields, "keys").map(ToOwned::to_owned)),
        (
            "keysecondary",
            Some(or(get(&fields, "secondary_keys"), "[]")),
        ),
        ("comment", Some(or(get(&fields, "comment"), "\"\""))),
        ("content", get(&fields, "content").map(ToOwned::to_owned)),
        ("constant", Some(or(get(&fields, "constant"), "false"))),
        ("selective", Some(or(get(&fields, "selective"), "false"))),
        (
            "order",
            get(&fields, "insertion_order").map(ToOwned::to_owned),
        ),
        ("position", Some(position)),
        (
            "excludeRecursion",
            Some(ext_or("exclude_recursion", "false")),
        ),
        (
            "preventRecursion",
            Some(ext_or("prevent_recursion", "false")),
        ),
        (
            "delayUntilRecursion",
            Some(ext_or("delay_until_recursion", "false")),
        ),
        ("disable", Some(boolean(!truthy("enabled")))),
        ("addMemo", Some(boolean(truthy("comment")))),
        ("probability", Some(ext_or("probability", "100"))),
        ("useProbability", Some(ext_or("useProbability", "true"))),
        ("depth", Some(ext_or("depth", "4"))),
        ("selectiveLogic", Some(ext_or("selectiveLogic", "0"))),
        ("outletName", Some(ext_or("outlet_name", "\"\""))),
        ("group", Some(ext_or("group", "\"\""))),
        ("groupOverride", Some(ext_or("group_override", "false"))),
        ("groupWeight", Some(ext_or("group_weight", "100"))),
        ("scanDepth", Some(ext_or("scan_depth", "null"))),
        ("caseSensitive", Some(ext_or("case_sensitive", "null"))),
        ("matchWholeWords", Some(ext_or("match_whole_words", "null"))),
        ("useGroupScoring", Some(ext_or("use_group_scoring", "null"))),
        ("automationId", Some(ext_or("automation_id", "\"\""))),
        ("role", Some(ext_or("role", "0"))),
        ("vectorized", Some(ext_or("vectorized", "false"))),
        ("sticky", Some(ext_or("sticky", "null"))),
        ("cooldown", Some(ext_or("cooldown", "null"))),
        ("delay", Some(ext_or("delay", "null"))),
        (
            "matchPersonaDescription",
            Some(ext_or("match_persona_description", "false")),
        ),
        (
            "matchCharacterDescription",
            Some(ext_or("match_character_description", "false")),
        ),
        (
            "matchCharacterPersonality",
            Some(ext_or("match_character_personality", "false")),
        ),
        (
            "matchCharacterDepthPrompt",
            Some(ext_or("match_character_depth_prompt", "false")),
        ),
        ("matchScenario", Some(ext_or("match_scenario", "false"))),
        (
            "matchCreatorNotes",
            Some(ext_or("match_creator_notes", "false")),
        ),
        ("triggers", Some(or(get(&ext, "triggers"), "[]"))),
        ("ignoreBudget", Some(ext_or("ignore_budget", "false"))),
    ];
    let mut set: Vec<(&str, Option<Box<RawValue>>)> = set;
    // `{ ...newWorldInfoEntryTemplate, uid, ... }`: the template's members
    // first, in its order, with their new values; then the members it does
    // not have, in the order written: uid, displayIndex, extensions.
    let mut out: Vec<(String, Box<RawValue>)> = Vec::with_capacity(TEMPLATE.len() + 3);
    for (name, default) in TEMPLATE {
        let value = match set.iter_mut().find(|(n, _)| *n == name) {
            Some((_, value)) => value.take(),
            None => Some(text(default)),
        };
        if let Some(value) = value {
            out.push((name.to_owned(), value));
        }
    }
    out.push(("uid".to_owned(), id));
    let display = match get(&ext, "display_index") {
        Some(v) if !js::is_null(v) => v.to_owned(),
        _ => text(&index_text),
    };
    out.push(("displayIndex".to_owned(), display));
    let extensions = match get(&fields, "extensions") {
        Some(v) if !js::is_null(v) => v.to_owned(),
        _ => text("{}"),
    };
    out.push(("extensions".to_owned(), extensions));
    let joined = |members: &Owned| {
        let size = members
            .iter()
            .map(|(n, v)| n.len() + v.get().len() + 4)
            .sum();
        raw(object_text(
            members.iter().map(|(n, v)| (n.as_str(), v.get())),
            size,
        ))
    };
    let original = if is_object {
        joined(&fields)
    } else {
        original.to_owned()
    };
    // JSON.stringify writes every object in JavaScript's property order.
    let entry = joined(&out);
    let entry = js::reordered(&entry).map_or(entry, raw);
    Ok(Converted {
        uid,
        entry,
        original,
    })
}

/// The converted book's top-level members other than `entries`
/// (`originalData`: the card's book, each entry with its `id`) and its
/// entries (uid, entry text), in the order SillyTavern saves them.
pub(super) fn convert(book: &RawValue) -> Result<(Owned, Owned), DomainError> {
    let not_array = || invalid("character_book.entries is not an array");
    let mut book_members = if book.get().starts_with('{') {
        object_members(book.get()).map_err(|_| not_array())?
    } else {
        return Err(not_array());
    };
    let at = book_members
        .iter()
        .position(|(n, _)| n == "entries")
        .ok_or_else(not_array)?;
    let list: Vec<&RawValue> =
        serde_json::from_str(book_members[at].1.get()).map_err(|_| not_array())?;
    let mut entries: Owned = Vec::with_capacity(list.len());
    let mut originals: Vec<Box<RawValue>> = Vec::with_capacity(list.len());
    for (index, item) in list.iter().enumerate() {
        let converted = entry(index, item)?;
        // `result.entries[entry.id] = ...`: a later entry with the same id
        // replaces the earlier one.
        match entries.iter_mut().find(|(uid, _)| *uid == converted.uid) {
            Some(slot) => slot.1 = converted.entry,
            None => entries.push((converted.uid, converted.entry)),
        }
        originals.push(converted.original);
    }
    js::property_order(&mut entries);
    let size = originals.iter().map(|o| o.get().len() + 1).sum::<usize>() + 2;
    let mut array = String::with_capacity(size);
    array.push('[');
    for (i, o) in originals.iter().enumerate() {
        if i > 0 {
            array.push(',');
        }
        array.push_str(o.get());
    }
    array.push(']');
    book_members[at].1 = raw(array);
    let size = book_members
        .iter()
        .map(|(n, v)| n.len() + v.get().len() + 4)
        .sum();
    let original_data = raw(object_text(
        book_members.iter().map(|(n, v)| (n.as_str(), v.get())),
        size,
    ));
    let original_data = js::reordered(&original_data).map_or(original_data, raw);
    // `{ entries: {}, originalData: characterBook }` (:5499).
    Ok((vec![("originalData".to_owned(), original_data)], entries))
}
