//! JavaScript's readings of JSON values that the conversion needs:
//! truthiness, `String(value)` and property order.

use serde_json::Value;
use serde_json::value::RawValue;

/// Whether JavaScript finds the JSON value `raw` truthy (`false`, `null`,
/// `0` and `""` are not; `undefined` is a missing member, not a value).
pub(super) fn truthy(raw: &RawValue) -> bool {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'f') | Some(b'n') => false,
        Some(b'"') => text != "\"\"",
        Some(b'-' | b'0'..=b'9') => text.parse::<f64>().map(|n| n != 0.0).unwrap_or(true),
        _ => true,
    }
}

/// Whether the value is JSON `null` (`??` treats it as missing).
pub(super) fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// The string of a JSON value `raw` as JavaScript's `String(value)` (and a
/// property name made from it) spells it.
pub(super) fn string(raw: &RawValue) -> String {
    let Ok(value) = serde_json::from_str::<Value>(raw.get()) else {
        // Nesting past serde_json's depth: an array or an object.
        return if raw.get().starts_with('[') {
            String::new()
        } else {
            "[object Object]".to_owned()
        };
    };
    value_string(&value)
}

fn value_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => number(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(items) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => value_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// A number as JavaScript's `Number.prototype.toString` spells it.
fn number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n == 0.0 {
        return "0".to_owned();
    }
    let abs = n.abs();
    if (1e-7..1e21).contains(&abs) {
        // Rust's Display is the shortest round-trip decimal, as JavaScript's.
        return format!("{n}");
    }
    // Exponent form: Rust writes `1e21` and `1e-7`, JavaScript `1e+21`.
    let text = format!("{n:e}");
    match text.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => text,
    }
}

/// Whether `name` is an array index (a canonical decimal integer below
/// 2^32 - 1): JavaScript lists such property names first, ascending.
fn array_index(name: &str) -> Option<u32> {
    let n: u32 = name.parse().ok()?;
    (n != u32::MAX && n.to_string() == name).then_some(n)
}

/// `members` in JavaScript's property order (array indexes ascending, then
/// the other names in insertion order), as `JSON.stringify` writes them.
pub(super) fn property_order<T>(members: &mut [(String, T)]) {
    // A stable sort keeps insertion order among the other names.
    members.sort_by_key(|(name, _)| match array_index(name) {
        Some(n) => (0, n),
        None => (1, 0),
    });
}

/// How deep [`reordered`] looks (as the book's duplicate resolution).
const REORDER_DEPTH: usize = 64;

/// `value` with every object's members in JavaScript's property order
/// ([`property_order`]), as `JSON.stringify` writes what `JSON.parse`
/// read; `None` when the text already is (it stays as is).
pub(super) fn reordered(value: &RawValue) -> Option<String> {
    reordered_below(value, REORDER_DEPTH)
}

fn reordered_below(value: &RawValue, depth: usize) -> Option<String> {
    let depth = depth.checked_sub(1)?;
    let text = value.get();
    match text.as_bytes().first() {
        Some(b'{') => {
            let members = super::super::book::json::members(text).ok()?;
            let mut items: Vec<(String, String)> = members
                .iter()
                .map(|(name, v)| {
                    let v = reordered_below(v, depth).unwrap_or_else(|| v.get().to_owned());
                    (name.clone(), v)
                })
                .collect();
            let before: Vec<String> = items.iter().map(|(n, _)| n.clone()).collect();
            property_order(&mut items);
            let moved = items.iter().map(|(n, _)| n).ne(before.iter());
            let changed = moved
                || items
                    .iter()
                    .zip(&members)
                    .any(|((_, new), (_, old))| new != old.get());
            changed.then(|| {
                super::super::book::json::object_text(
                    items.iter().map(|(n, v)| (n.as_str(), v.as_str())),
                    text.len(),
                )
            })
        }
        Some(b'[') => {
            let elements: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            let values: Vec<Option<String>> =
                elements.iter().map(|e| reordered_below(e, depth)).collect();
            if values.iter().all(Option::is_none) {
                return None;
            }
            let parts: Vec<&str> = elements
                .iter()
                .zip(&values)
                .map(|(old, new)| new.as_deref().unwrap_or(old.get()))
                .collect();
            Some(format!("[{}]", parts.join(",")))
        }
        _ => None,
    }
}
