//! What recapd makes of a model's answer.
//!
//! Every kind answers one JSON object. Models wrap it in many ways, so it
//! is looked for rather than expected: reasoning between `<think>` and
//! `</think>` (or `<thinking>` tags) is set aside first; then the
//! objects of the answer are collected in order, a fenced block
//! (```` ``` ```` or ```` ```json ````) that is one object first, then every
//! JSON object starting at a `{` of the text (a `{` inside a string of
//! such an object does not start another); the first that has one of the
//! kind's keys is the answer.
//!
//! - Detection: `{"scene_break_at": false | n, "rationale": "..."}`, with
//!   the extension's `sceneBreakAt` accepted in place of `scene_break_at`.
//!   `n` is a chat index given as a whole number or as a string of digits
//!   (`"12"`, or `"#12"` as the prompt writes numbers); `"false"` in a
//!   string counts as `false`. It must be a valid
//!   break of the candidates the prompt showed. `rationale` is optional.
//! - Scene recap: `{"scene_name": "...", "recap": "..."}`: the name may be
//!   empty or missing, the recap must not be blank.
//! - Running recap (merge) and message recap: `{"recap": "..."}`, not
//!   blank.
//!
//! Texts are trimmed. Anything else is an error whose text is the reason
//! (for a job's `last_error`): short, and quoting at most
//! [`EXCERPT_CHARS`] characters of the answer.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use super::candidates::{Candidate, Candidates};
use super::macros::one_line;
use crate::jobs::JobKind;

/// The most characters of an answer a reason quotes.
pub const EXCERPT_CHARS: usize = 200;

/// What an answer says, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Detection: the scene ends at this candidate (resolved against the
    /// snapshot the prompt showed).
    Break(Candidate),
    /// Detection: no scene ends among the candidates.
    NoBreak {
        /// The model's reason; empty when it gave none.
        rationale: String,
    },
    /// A scene's name (possibly empty) and recap (not empty).
    SceneRecap {
        /// The scene's name.
        name: String,
        /// The scene's recap.
        recap: String,
    },
    /// A merge's new running recap, or a message's recap (not empty).
    Recap(String),
    /// A lore job's answer.
    Lore(crate::lore::LoreAnswer),
}

/// Reads the answer `text` to a job of `kind`; `candidates` is the
/// detection's snapshot ([`super::prepare::Prepared::candidates`]) and is
/// ignored by the other kinds. The error is the reason the attempt failed.
pub fn parse_answer(
    kind: JobKind,
    text: &str,
    candidates: Option<&Candidates>,
) -> Result<Answer, String> {
    match kind {
        JobKind::DetectSceneBreak => {
            let object = find_object(text, &[BREAK_KEY, BREAK_KEY_EXTENSION])?;
            detection(&object, candidates)
        }
        JobKind::SceneRecap => {
            let object = find_object(text, &[RECAP_KEY, NAME_KEY])?;
            let recap = recap(&object)?;
            let name = match object.get(NAME_KEY) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(name)) => name.trim().to_owned(),
                Some(other) => {
                    return Err(format!(
                        "{NAME_KEY} must be a string, not {}",
                        value_excerpt(other)
                    ));
                }
            };
            Ok(Answer::SceneRecap { name, recap })
        }
        JobKind::RunningRecap | JobKind::MessageRecap => {
            let object = find_object(text, &[RECAP_KEY])?;
            recap(&object).map(Answer::Recap)
        }
        JobKind::LoreExtract | JobKind::LoreResolve | JobKind::LoreMerge | JobKind::LoreCompact => {
            crate::lore::answer::parse_answer(kind, text).map(Answer::Lore)
        }
        JobKind::Index => Err("an index job's answer is vectors, not text".to_owned()),
    }
}

const BREAK_KEY: &str = "scene_break_at";
const BREAK_KEY_EXTENSION: &str = "sceneBreakAt";
const RECAP_KEY: &str = "recap";
const NAME_KEY: &str = "scene_name";

fn detection(
    object: &Map<String, Value>,
    candidates: Option<&Candidates>,
) -> Result<Answer, String> {
    let value = object
        .get(BREAK_KEY)
        .or_else(|| object.get(BREAK_KEY_EXTENSION))
        .ok_or_else(|| format!("the answer has no {BREAK_KEY}"))?;
    let rationale = object
        .get("rationale")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    let n = match value {
        Value::Bool(false) => return Ok(Answer::NoBreak { rationale }),
        Value::String(s) if s.trim() == "false" => return Ok(Answer::NoBreak { rationale }),
        Value::Number(number) => whole_number(number)?,
        Value::String(s) => {
            let digits = s.trim();
            let digits = digits.strip_prefix('#').unwrap_or(digits);
            digits.parse::<usize>().map_err(|_| not_a_break(value))?
        }
        other => return Err(not_a_break(other)),
    };
    let candidates = candidates
        .ok_or_else(|| "no candidates to resolve the answer's message number against".to_owned())?;
    match candidates.valid_break(n) {
        Some(candidate) => Ok(Answer::Break(candidate.clone())),
        None => Err(invalid_break(n, candidates)),
    }
}

fn whole_number(number: &serde_json::Number) -> Result<usize, String> {
    if let Some(n) = number.as_u64() {
        return usize::try_from(n).map_err(|_| format!("{BREAK_KEY} {n} is too large"));
    }
    let negative =
        number.as_i64().is_some_and(|n| n < 0) || number.as_f64().is_some_and(|f| f < 0.0);
    if negative {
        return Err(format!("{BREAK_KEY} {number} is negative"));
    }
    // A whole number written with a fraction (12.0) is still a number.
    match number.as_f64() {
        Some(f) if f.fract() != 0.0 => Err(format!("{BREAK_KEY} {number} is not a whole number")),
        // Below 2^53 every whole f64 converts exactly.
        Some(f) if f < 9_007_199_254_740_992.0 => Ok(f as usize),
        _ => Err(format!("{BREAK_KEY} {number} is too large")),
    }
}

fn not_a_break(value: &Value) -> String {
    format!(
        "{BREAK_KEY} must be false or a message number, not {}",
        value_excerpt(value)
    )
}

fn invalid_break(n: usize, candidates: &Candidates) -> String {
    let why = match (
        candidates.list.iter().find(|c| c.index == n),
        candidates.earliest_allowed_break,
    ) {
        (None, _) => format!("#{n} is not one of the messages shown"),
        (Some(c), _) if !c.eligible => format!("#{n} is marked not eligible"),
        (Some(_), Some(earliest)) if n < earliest => {
            format!("#{n} is before the earliest allowed break #{earliest}")
        }
        (Some(_), _) => format!("#{n} cannot be a break"),
    };
    let mut valid = candidates.valid_breaks();
    let range = match (valid.next(), valid.last()) {
        (Some(first), Some(last)) => format!(
            "an eligible message from #{} to #{}",
            first.index, last.index
        ),
        (Some(only), None) => format!("#{}", only.index),
        (None, _) => "no message can be a break".to_owned(),
    };
    format!("{BREAK_KEY} {n} is not a valid break: {why}; valid: {range}")
}

fn recap(object: &Map<String, Value>) -> Result<String, String> {
    match object.get(RECAP_KEY) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text.trim().to_owned()),
        Some(Value::String(_)) => Err(format!("the answer's {RECAP_KEY} is empty")),
        None | Some(Value::Null) => Err(format!("the answer has no {RECAP_KEY}")),
        Some(other) => Err(format!(
            "{RECAP_KEY} must be a string, not {}",
            value_excerpt(other)
        )),
    }
}

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
/// reasoning left out, found as [`parse_answer`] looks for one): what
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
    crate::jobs::clip(&one_line(text.trim()), EXCERPT_CHARS)
}

pub(crate) fn value_excerpt(value: &Value) -> String {
    excerpt(&value.to_string())
}

#[cfg(test)]
mod tests;
