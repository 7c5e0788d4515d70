//! The `AUTO` fallback: which refusal a request may step past, what is
//! learned, logged and counted, and the reason of a refusal that stays
//! fatal.

use crate::domain::settings::{MaxTokensField, StructuredOutput};
use crate::telemetry;

use super::dialect::{Dialect, Feature, TokenField};
use super::wire::{self, Named};
use super::{CompletionRequest, LlmClient, LlmError};

/// Most requests one `complete` call sends: the first, then one per step
/// down (two of `response_format`, one of the token field).
pub(super) const MAX_SENDS: usize = 4;

/// A failed request: the error, and which refusable features its answer
/// named (nothing unless it was a 400 or 422).
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) error: LlmError,
    pub(super) named: Named,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Failure {
        Failure {
            error,
            named: Named::default(),
        }
    }
}

impl LlmClient {
    /// The form to resend `request` in after `failure`, when it is a
    /// refusal of a feature `request` leaves `AUTO` and `sent` had a form
    /// of that feature with one below it; `None` otherwise (the failure
    /// stands). The token field is looked at first: its refusals are named
    /// precisely, while "schema" may appear in other messages.
    ///
    /// The first request to learn a step logs it at warn and counts it in
    /// `recapd_llm_fallbacks_total`; concurrent ones learning the same
    /// step only resend.
    pub(super) fn learn(
        &self,
        request: &CompletionRequest,
        sent: Dialect,
        failure: &Failure,
    ) -> Option<Dialect> {
        let feature = if refuses_max_tokens(sent, failure.named)
            && request.max_tokens_field == MaxTokensField::Auto
        {
            Feature::MaxTokens
        } else if refuses_response_format(request, sent, failure.named)
            && request.structured_output == StructuredOutput::Auto
        {
            Feature::ResponseFormat
        } else {
            return None;
        };
        let lesson = self.inner.learned.refused(&request.model, feature, sent)?;
        let next = Dialect::resolve(
            request.structured_output,
            request.max_tokens_field,
            lesson.dialect,
        );
        if lesson.first {
            let (from, to) = match feature {
                Feature::ResponseFormat => {
                    (sent.response_format.label(), next.response_format.label())
                }
                Feature::MaxTokens => (sent.token_field.label(), next.token_field.label()),
            };
            tracing::warn!(
                endpoint = %self.inner.endpoint,
                model = %request.model,
                feature = feature.label(),
                from,
                to,
                reason = %self.scrub_text(failure.error.reason().to_owned()),
                "the LLM endpoint refused {from}; using {to} for this model from now on"
            );
            metrics::counter!(
                telemetry::LLM_FALLBACKS,
                "feature" => feature.label(),
                "to" => to
            )
            .increment(1);
        }
        Some(next)
    }
}

/// The error of a failure that stands. A refusal of a form a setting
/// forces says so in its reason, since `AUTO` would have stepped past it.
pub(super) fn explain(request: &CompletionRequest, sent: Dialect, failure: Failure) -> LlmError {
    let LlmError::Fatal { kind, reason } = failure.error else {
        return failure.error;
    };
    let forced = if refuses_max_tokens(sent, failure.named)
        && request.max_tokens_field == MaxTokensField::MaxTokens
    {
        Some(
            "llm_max_tokens_field MAX_TOKENS is forced; AUTO would switch to max_completion_tokens",
        )
    } else if refuses_response_format(request, sent, failure.named) {
        match request.structured_output {
            StructuredOutput::JsonSchema => {
                Some("llm_structured_output JSON_SCHEMA is forced; AUTO would fall back")
            }
            StructuredOutput::JsonObject => {
                Some("llm_structured_output JSON_OBJECT is forced; AUTO would fall back")
            }
            StructuredOutput::Auto | StructuredOutput::Off => None,
        }
    } else {
        None
    };
    LlmError::Fatal {
        kind,
        reason: match forced {
            Some(hint) => format!("{reason} ({hint})"),
            None => reason,
        },
    }
}

/// Whether the answer names `max_tokens` as refused, and it was sent.
fn refuses_max_tokens(sent: Dialect, named: Named) -> bool {
    named.max_tokens && sent.token_field == TokenField::MaxTokens
}

/// Whether the answer names `response_format` (or the schema) as
/// refused, and one was sent.
fn refuses_response_format(request: &CompletionRequest, sent: Dialect, named: Named) -> bool {
    named.response_format && wire::sends_response_format(request, sent)
}

#[cfg(test)]
mod tests;
