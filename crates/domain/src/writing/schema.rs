//! The JSON schema of each kind's answer, built from the request itself,
//! sent as the request's `response_format` so that a model that follows
//! schemas can only answer what [`super::answer::parse_answer`] accepts.
//!
//! | kind | schema name | the answer object |
//! |---|---|---|
//! | detection | `scene_break` | `scene_break_at`: one of the valid breaks the request shows (their chat indexes) or `false`; `rationale`: a string of at most [`RATIONALE_MAX_CHARS`] characters |
//! | scene recap | `scene_recap` | `scene_name`: 1 to [`SCENE_NAME_MAX_CHARS`] characters; `recap`: 1 to [`recap_max_chars`] characters |
//! | merge | `running_recap` | `recap`: 1 to [`recap_max_chars`] characters |
//! | message recap | `message_recap` | `recap`: 1 to [`recap_max_chars`] characters |
//!
//! Every property is required and no other is allowed (`strict` schemas
//! need both). The properties are in alphabetical order (the order the
//! request's JSON carries them in), which is the order a schema-following
//! server generates them in: a detection writes its rationale before it
//! names the break, a scene recap its recap before the scene's name, and
//! the default instructions show them in that order too.

use serde_json::{Value, json};

use super::candidates::Candidates;
use crate::jobs::{JobKind, RecapStep, RequestKind};
pub use crate::request::schema::{CHARS_PER_TOKEN, object, recap_max_chars};
use crate::settings::Settings;

/// The most characters a scene name may have in a schema: the default
/// instructions ask for at most six words.
pub const SCENE_NAME_MAX_CHARS: usize = 100;
/// The most characters a detection's rationale may have in a schema: the
/// default instructions ask for one sentence.
pub const RATIONALE_MAX_CHARS: usize = 400;

/// The schema of a job of `kind`'s answer, and its name. `candidates` is
/// the detection's snapshot (ignored by the other kinds; a detection
/// without one allows only `false`).
pub fn answer_schema(
    kind: JobKind,
    settings: &Settings,
    candidates: Option<&Candidates>,
) -> (&'static str, Value) {
    let recap = json!({
        "type": "string",
        "minLength": 1,
        "maxLength": recap_max_chars(settings),
    });
    match kind.request() {
        RequestKind::Recap(RecapStep::DetectSceneBreak) => {
            let breaks: Vec<usize> = candidates
                .map(|c| c.valid_breaks().map(|c| c.index).collect())
                .unwrap_or_default();
            let mut choices = Vec::new();
            if !breaks.is_empty() {
                choices.push(json!({"type": "integer", "enum": breaks}));
            }
            choices.push(json!({"type": "boolean", "enum": [false]}));
            (
                "scene_break",
                object(json!({
                    "scene_break_at": {"anyOf": choices},
                    "rationale": {"type": "string", "maxLength": RATIONALE_MAX_CHARS},
                })),
            )
        }
        RequestKind::Recap(RecapStep::SceneRecap) => (
            "scene_recap",
            object(json!({
                "scene_name": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": SCENE_NAME_MAX_CHARS,
                },
                "recap": recap,
            })),
        ),
        RequestKind::Recap(RecapStep::RunningRecap | RecapStep::RegenerateRunningRecap) => {
            ("running_recap", object(json!({ "recap": recap })))
        }
        RequestKind::Recap(RecapStep::MessageRecap) => {
            ("message_recap", object(json!({ "recap": recap })))
        }
        // A resolution's schema lists the uids its request shows; built
        // without a request, it allows only null.
        RequestKind::Lore(_) => crate::lore::schema::answer_schema(kind, settings, &[]),
        // An index job asks for vectors, with no schema.
        RequestKind::Embeddings => ("index", object(json!({}))),
    }
}

#[cfg(test)]
mod tests;
