//! Which optional request fields an endpoint accepts, per model: how the
//! answer is constrained (`response_format`) and which field carries the
//! token limit. A request's settings choose, or, when `AUTO`, what the
//! client has learned: the richest form first, one step down each time the
//! endpoint refuses a form by name, remembered for the process's life.
//!
//! Learning only ever steps down (json_schema, then json_object, then no
//! `response_format`; `max_tokens`, then `max_completion_tokens`), so a
//! single `complete` call resends at most three times, and each step of a
//! model is learned (logged, counted) once however many requests race.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::domain::settings::{MaxTokensField, StructuredOutput};

/// How a request constrains its answer: the `response_format` it sends
/// when it has an answer schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ResponseFormat {
    /// `{"type": "json_schema", "json_schema": {name, strict, schema}}`.
    #[default]
    JsonSchema,
    /// `{"type": "json_object"}`.
    JsonObject,
    /// No `response_format` at all.
    Absent,
}

impl ResponseFormat {
    /// The next form down after a refusal; `None` when nothing is left.
    pub(crate) fn fallback(self) -> Option<ResponseFormat> {
        match self {
            ResponseFormat::JsonSchema => Some(ResponseFormat::JsonObject),
            ResponseFormat::JsonObject => Some(ResponseFormat::Absent),
            ResponseFormat::Absent => None,
        }
    }

    /// The metrics' and logs' name of the form.
    pub(crate) fn label(self) -> &'static str {
        match self {
            ResponseFormat::JsonSchema => "json_schema",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::Absent => "none",
        }
    }
}

/// Which field carries the answer's token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TokenField {
    /// `max_tokens`.
    #[default]
    MaxTokens,
    /// `max_completion_tokens`.
    MaxCompletionTokens,
}

impl TokenField {
    /// The next field after a refusal; `None` when nothing is left.
    pub(crate) fn fallback(self) -> Option<TokenField> {
        match self {
            TokenField::MaxTokens => Some(TokenField::MaxCompletionTokens),
            TokenField::MaxCompletionTokens => None,
        }
    }

    /// The field's name in the body (also its metrics label).
    pub(crate) fn label(self) -> &'static str {
        match self {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// The form of one request's optional fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Dialect {
    /// The `response_format` sent (only with an answer schema).
    pub(crate) response_format: ResponseFormat,
    /// The token limit's field.
    pub(crate) token_field: TokenField,
}

impl Dialect {
    /// The form a request is sent in: each forced setting as it says, each
    /// `AUTO` one as `learned` (this endpoint's and model's).
    pub(crate) fn resolve(
        structured_output: StructuredOutput,
        max_tokens_field: MaxTokensField,
        learned: Dialect,
    ) -> Dialect {
        Dialect {
            response_format: match structured_output {
                StructuredOutput::Auto => learned.response_format,
                StructuredOutput::JsonSchema => ResponseFormat::JsonSchema,
                StructuredOutput::JsonObject => ResponseFormat::JsonObject,
                StructuredOutput::Off => ResponseFormat::Absent,
            },
            token_field: match max_tokens_field {
                MaxTokensField::Auto => learned.token_field,
                MaxTokensField::MaxTokens => TokenField::MaxTokens,
                MaxTokensField::MaxCompletionTokens => TokenField::MaxCompletionTokens,
            },
        }
    }
}

/// A request field an endpoint may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Feature {
    /// `response_format`.
    ResponseFormat,
    /// `max_tokens`.
    MaxTokens,
}

impl Feature {
    /// The metrics' and logs' name of the feature.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Feature::ResponseFormat => "response_format",
            Feature::MaxTokens => "max_tokens",
        }
    }
}

/// What one refusal taught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lesson {
    /// The model's form from now on (the form to resend in, for the
    /// learned features).
    pub(crate) dialect: Dialect,
    /// Whether this refusal changed what was known (it is then logged and
    /// counted); `false` when a concurrent request learned it first.
    pub(crate) first: bool,
}

/// What one client (one endpoint) learned, per model. Only models whose
/// endpoint refused something have an entry; the others use
/// [`Dialect::default`].
#[derive(Debug, Default)]
pub(crate) struct Learned {
    by_model: Mutex<HashMap<String, Dialect>>,
}

impl Learned {
    /// What is known of `model`: the default form until a refusal.
    pub(crate) fn dialect(&self, model: &str) -> Dialect {
        self.by_model.lock().get(model).copied().unwrap_or_default()
    }

    /// Records that the endpoint refused `feature` of a request sent in
    /// `sent`: the feature steps one form down from `sent`'s, unless a
    /// concurrent request already moved it (then its form is kept, which
    /// is already lower). `None` when `sent`'s form of the feature has no
    /// fallback.
    pub(crate) fn refused(&self, model: &str, feature: Feature, sent: Dialect) -> Option<Lesson> {
        let mut by_model = self.by_model.lock();
        let known = by_model.entry(model.to_owned()).or_default();
        let first = match feature {
            Feature::ResponseFormat => step(
                &mut known.response_format,
                sent.response_format,
                ResponseFormat::fallback,
            ),
            Feature::MaxTokens => step(
                &mut known.token_field,
                sent.token_field,
                TokenField::fallback,
            ),
        }?;
        Some(Lesson {
            dialect: *known,
            first,
        })
    }
}

/// Compare-and-set of one learned form: `known` becomes `sent`'s fallback
/// if it still is `sent` (`Some(true)`), and is kept if another request
/// moved it (`Some(false)`). `None` when `sent` has no fallback.
fn step<T: Copy + PartialEq>(known: &mut T, sent: T, fallback: fn(T) -> Option<T>) -> Option<bool> {
    let next = fallback(sent)?;
    if *known == sent {
        *known = next;
        Some(true)
    } else {
        Some(false)
    }
}

#[cfg(test)]
mod tests;
