//! Schema building shared by every request's answer schema: an object
//! schema ([`object`]) and the longest recap a schema allows
//! ([`recap_max_chars`]). Each kind's schema is
//! [`crate::writing::schema`]'s or [`crate::lore::schema`]'s.

use serde_json::{Value, json};

use crate::settings::Settings;

/// Characters per token a recap's length limit allows: English averages
/// about four characters per token, so a recap that fits `llm_max_tokens`
/// fits this many characters.
pub const CHARS_PER_TOKEN: u64 = 4;

/// The most characters a recap may have in a schema:
/// `llm_max_tokens * `[`CHARS_PER_TOKEN`], at least 1.
pub fn recap_max_chars(settings: &Settings) -> u64 {
    settings
        .writing
        .llm_max_tokens
        .saturating_mul(CHARS_PER_TOKEN)
        .max(1)
}

/// An object schema with `properties`, all of them required, no other.
pub fn object(properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
