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

use serde_json::{Map, Value};

use super::candidates::{Candidate, Candidates};
use crate::jobs::{JobKind, RecapStep, RequestKind};
pub use crate::request::answer::{EXCERPT_CHARS, excerpt, holds_json_object};
use crate::request::answer::{find_object, value_excerpt};

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
    match kind.request() {
        RequestKind::Recap(RecapStep::DetectSceneBreak) => {
            let object = find_object(text, &[BREAK_KEY, BREAK_KEY_EXTENSION])?;
            detection(&object, candidates)
        }
        RequestKind::Recap(RecapStep::SceneRecap) => {
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
        RequestKind::Recap(
            RecapStep::RunningRecap | RecapStep::RegenerateRunningRecap | RecapStep::MessageRecap,
        ) => {
            let object = find_object(text, &[RECAP_KEY])?;
            recap(&object).map(Answer::Recap)
        }
        RequestKind::Lore(_) => crate::lore::answer::parse_answer(kind, text).map(Answer::Lore),
        RequestKind::Embeddings => Err("an index job's answer is vectors, not text".to_owned()),
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

#[cfg(test)]
mod tests;
