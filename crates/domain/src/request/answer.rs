//! Answer reading shared by every kind: a model's answer is one JSON
//! object, wrapped in many ways, so it is looked for rather than
//! expected: reasoning between `<think>` and `</think>` (or `<thinking>`
//! tags) is set aside first; then the objects of the answer are collected
//! in order, a fenced block (```` ``` ```` or ```` ```json ````) that is
//! one object first, then every JSON object starting at a `{` of the text
//! (a `{` inside a string of such an object does not start another); the
//! first that has one of the kind's keys is the answer ([`find_object`]).
//! Reasons quote at most [`EXCERPT_CHARS`] characters of it. What each
//! kind's object must hold is [`crate::writing::answer`]'s and
//! [`crate::lore::answer`]'s.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::macros::one_line;
use crate::jobs::clip;

/// The most characters of an answer a reason quotes.
pub const EXCERPT_CHARS: usize = 200;

/// The answer's object: the first (see the module documentation) that has
/// one of `keys`.
pub(crate) fn find_object(text: &str, keys: &[&str]) -> Result<Map<String, Value>, String> {
    let text = without_reasoning(text);
    if text.trim().is_empty() {
        return Err("the answer is empty".to_owned());
    }
    let mut any = false;
    for object in fenced_objects(&text).chain(embedded_objects(&text)) {
        if keys.iter().any(|key| object.contains_key(*key)) {
            return Ok(object);
        }
        any = true;
    }
    Err(if any {
        format!(
            "the answer's JSON has no {}: {}",
            keys.first().copied().unwrap_or_default(),
            excerpt(&text)
        )
    } else {
        format!("no JSON object in the answer: {}", excerpt(&text))
    })
}

/// Whether an answer holds a JSON object at all (fenced or embedded, its
/// reasoning left out, found as [`crate::writing::parse_answer`] looks
/// for one): what
/// tells an answer that is not JSON from one that does not follow its
/// schema, when it does not parse.
pub fn holds_json_object(text: &str) -> bool {
    let text = without_reasoning(text);
    fenced_objects(&text)
        .chain(embedded_objects(&text))
        .next()
        .is_some()
}

/// `text` without its `<think>…</think>` and `<thinking>…</thinking>`
/// sections (an opening tag never closed is left as it is).
fn without_reasoning(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    for (open, close) in [("<think>", "</think>"), ("<thinking>", "</thinking>")] {
        while let Some(start) = out.find(open) {
            let Some(length) = out[start..].find(close) else {
                break;
            };
            let end = start + length + close.len();
            out.to_mut().replace_range(start..end, "");
        }
    }
    out
}

/// The fenced blocks of `text` whose content is one JSON object.
fn fenced_objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || {
        loop {
            let open = rest.find("```")?;
            let after = &rest[open + 3..];
            // The info string (`json`, ...) runs to the end of the line.
            let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
            let body = &after[body_start..];
            let close = body.find("```")?;
            rest = &body[close + 3..];
            if let Ok(object) = serde_json::from_str::<Map<String, Value>>(body[..close].trim()) {
                return Some(object);
            }
        }
    })
}

/// How much of an answer the search for objects may read, in multiples
/// of its length (plus [`SEARCH_SLACK`]): every `{` that does not start an
/// object costs the bytes read before that showed. Prose braces cost a
/// byte or two each, so only a pathological answer (thousands of nested,
/// never closed objects) runs out, and then the search stops there, so it
/// takes linear time on any answer.
const SEARCH_FACTOR: usize = 8;
/// See [`SEARCH_FACTOR`].
const SEARCH_SLACK: usize = 1 << 16;

/// Every JSON object that starts at a `{` of `text`, in order; the text
/// of one found is not searched again for objects inside it. Stops early
/// on a pathological answer (see [`SEARCH_FACTOR`]).
fn embedded_objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    let mut from = 0;
    let mut budget = text
        .len()
        .saturating_mul(SEARCH_FACTOR)
        .saturating_add(SEARCH_SLACK);
    std::iter::from_fn(move || {
        while let Some(offset) = text.get(from..)?.find('{') {
            let start = from + offset;
            let rest = &text[start..];
            // Where a JSON value starting here ends, found without
            // building it.
            let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
            let cost = match stream.next() {
                Some(Ok(_)) => {
                    let end = start + stream.byte_offset();
                    match serde_json::from_str::<Map<String, Value>>(&text[start..end]) {
                        Ok(object) => {
                            from = end;
                            return Some(object);
                        }
                        // Deeper than serde_json builds.
                        Err(_) => end - start,
                    }
                }
                Some(Err(error)) => error_offset(rest, &error),
                None => rest.len(),
            };
            budget = budget.saturating_sub(cost.max(1));
            if budget == 0 {
                return None;
            }
            from = start + 1;
        }
        None
    })
}

/// The byte offset in `text` of a parse error's position.
fn error_offset(text: &str, error: &serde_json::Error) -> usize {
    let line_start = match error.line() {
        0 | 1 => 0,
        line => text
            .match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(at, _)| at + 1),
    };
    line_start.saturating_add(error.column())
}

/// At most [`EXCERPT_CHARS`] characters of `text` on one line, with `…`
/// when cut.
pub fn excerpt(text: &str) -> String {
    clip(&one_line(text.trim()), EXCERPT_CHARS)
}

/// [`excerpt`] of a JSON value's text.
pub(crate) fn value_excerpt(value: &Value) -> String {
    excerpt(&value.to_string())
}
