//! The chat-completions wire format, free of I/O: the request body, the
//! answer's text and usage, the message of an error body, how a status is
//! judged, which refused feature an error names, and `Retry-After`.

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use super::dialect::{Dialect, ResponseFormat};
use super::{AnswerSchema, Completion, CompletionRequest, FailureKind};

/// How many characters of a message from the LLM a reason keeps.
const REASON_CHARS: usize = 200;

/// What a failing status says about trying again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusClass {
    /// Worth another attempt later (408, 409, 429, 5xx).
    Retryable,
    /// Will fail the same way again (other 4xx, and anything else that is
    /// not a success: a redirect, an informational status).
    Fatal,
}

/// Judges a status that is not a success.
pub(crate) fn classify(status: u16) -> StatusClass {
    match status {
        408 | 409 | 429 | 500..=599 => StatusClass::Retryable,
        _ => StatusClass::Fatal,
    }
}

/// The JSON body of one chat-completions request: the prompt as the one
/// `user` message, no streaming; the token limit in `dialect`'s field;
/// `temperature` only when set and finite; `response_format` only with an
/// answer schema and a `dialect` that constrains the answer (json_schema
/// strict, with the schema's name and the schema, or json_object).
pub(crate) fn request_body(request: &CompletionRequest, dialect: Dialect) -> Vec<u8> {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        json!([{"role": "user", "content": request.prompt}]),
    );
    body.insert(
        dialect.token_field.label().into(),
        json!(request.max_tokens),
    );
    body.insert("stream".into(), json!(false));
    if let Some(temperature) = request.temperature.filter(|t| t.is_finite()) {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(format) = response_format(request.answer_schema.as_ref(), dialect.response_format) {
        body.insert("response_format".into(), format);
    }
    // A `Value` of strings, numbers and JSON values always serialises.
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The `response_format` member, when one is sent.
fn response_format(schema: Option<&AnswerSchema>, format: ResponseFormat) -> Option<Value> {
    let schema = schema?;
    match format {
        ResponseFormat::JsonSchema => Some(json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "strict": true, "schema": schema.schema},
        })),
        ResponseFormat::JsonObject => Some(json!({"type": "json_object"})),
        ResponseFormat::Absent => None,
    }
}

/// Whether `request` sent in `dialect` carries a `response_format`.
pub(crate) fn sends_response_format(request: &CompletionRequest, dialect: Dialect) -> bool {
    response_format(request.answer_schema.as_ref(), dialect.response_format).is_some()
}

/// Which refusable features an error answer names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Named {
    /// The body mentions `response_format`, `json_schema`, `json_object`
    /// or `grammar`, or "schema" together with words of refusal
    /// ("unsupported", "not supported", "invalid", "not permitted", "not
    /// allowed", "too deep", "too complex").
    pub(crate) response_format: bool,
    /// The body does not say "too large" (a limit over the model's, not a
    /// refused field) and mentions `max_completion_tokens`, or
    /// `max_tokens` with "unsupported" or "not supported" (OpenAI:
    /// "Unsupported parameter: 'max_tokens' is not supported with this
    /// model. Use 'max_completion_tokens' instead.").
    pub(crate) max_tokens: bool,
}

/// What a refusal (a 400 or 422) names, case-insensitively; nothing for
/// any other status.
pub(crate) fn named_features(status: u16, body: &[u8]) -> Named {
    if !matches!(status, 400 | 422) {
        return Named::default();
    }
    let text = String::from_utf8_lossy(body).to_lowercase();
    let mentions = |words: &[&str]| words.iter().any(|word| text.contains(word));
    let refusal = [
        "unsupported",
        "not supported",
        "invalid",
        "not permitted",
        "not allowed",
        "too deep",
        "too complex",
    ];
    Named {
        response_format: mentions(&["response_format", "json_schema", "json_object", "grammar"])
            || (mentions(&["schema"]) && mentions(&refusal)),
        max_tokens: !mentions(&["too large"])
            && (mentions(&["max_completion_tokens"])
                || (mentions(&["max_tokens"]) && mentions(&["unsupported", "not supported"]))),
    }
}

/// The text and usage of a successful answer, or why it is unusable (a
/// reason worth another attempt, with its kind: not JSON, no choices or an
/// error object, empty content).
pub(crate) fn parse_answer(body: &[u8]) -> Result<Completion, (FailureKind, String)> {
    let answer: Value = serde_json::from_slice(body).map_err(|_| {
        (
            FailureKind::NotJson,
            format!(
                "the answer is not JSON: {}",
                snippet(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    let usage = answer.get("usage");
    let tokens = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
    let Some(choice) = answer
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
    else {
        let reason = match answer.get("error") {
            Some(error) => format!("the answer is an error: {}", error_text(error)),
            None => "the answer has no choices".to_owned(),
        };
        return Err((FailureKind::Malformed, reason));
    };
    let text = choice
        .get("message")
        .and_then(|m| m.get("content"))
        .map(content_text)
        .unwrap_or_default();
    if text.trim().is_empty() {
        let reason = match choice.get("finish_reason").and_then(Value::as_str) {
            Some(finish) => format!("the answer is empty (finish_reason {})", snippet(finish)),
            None => "the answer is empty".to_owned(),
        };
        return Err((FailureKind::Empty, reason));
    }
    let bounded = |value: Option<&Value>, chars: usize| {
        value
            .and_then(Value::as_str)
            .map(|text| text.chars().take(chars).collect::<String>())
    };
    Ok(Completion {
        text,
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
        model: bounded(answer.get("model"), 200),
        finish_reason: bounded(choice.get("finish_reason"), 64),
    })
}

/// A message's content: a string, or the text parts of a list of parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// The reason for a failing status: the code, its name, and the first
/// characters of the body's error message.
pub(crate) fn status_reason(status: u16, canonical: Option<&str>, body: &[u8]) -> String {
    let mut reason = format!("HTTP {status}");
    if let Some(name) = canonical {
        reason.push(' ');
        reason.push_str(name);
    }
    let message = error_message(body);
    if !message.is_empty() {
        reason.push_str(": ");
        reason.push_str(&message);
    }
    reason
}

/// The message of an error body, shortened: OpenAI's `error.message`,
/// Ollama's `error` string, a `message` or `detail`, or the body's text.
pub(crate) fn error_message(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            let found = value
                .get("error")
                .map(error_text)
                .or_else(|| value.get("message").and_then(Value::as_str).map(snippet))
                .or_else(|| value.get("detail").and_then(Value::as_str).map(snippet));
            found.unwrap_or_else(|| snippet(&value.to_string()))
        }
        Err(_) => snippet(&String::from_utf8_lossy(body)),
    }
}

/// An `error` member's message: a string, or an object's `message`.
fn error_text(error: &Value) -> String {
    match error {
        Value::String(text) => snippet(text),
        other => match other.get("message").and_then(Value::as_str) {
            Some(text) => snippet(text),
            None => snippet(&other.to_string()),
        },
    }
}

/// `text` on one line (whitespace runs made one space), cut after
/// [`REASON_CHARS`] characters with an ellipsis.
pub(crate) fn snippet(text: &str) -> String {
    let mut out = String::new();
    let mut taken = 0;
    for word in text.split_whitespace() {
        if taken > 0 {
            out.push(' ');
            taken += 1;
        }
        for c in word.chars() {
            if taken >= REASON_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            taken += 1;
        }
    }
    out
}

/// How long the LLM asks to wait: `retry-after-ms` (milliseconds, sent by
/// some hosted APIs) when readable, else `Retry-After` as seconds (whole
/// or decimal) or an HTTP date (a date already past: zero). `None` when
/// neither is present and readable.
pub(crate) fn retry_after(
    retry_after: Option<&str>,
    retry_after_ms: Option<&str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| seconds(v.trim())) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = retry_after?.trim();
    if let Some(secs) = seconds(value) {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A non-negative number written with digits and at most one point.
fn seconds(value: &str) -> Option<f64> {
    let plain = !value.is_empty()
        && value.chars().all(|c| c.is_ascii_digit() || c == '.')
        && value.chars().filter(|c| *c == '.').count() <= 1;
    if !plain {
        return None;
    }
    value.parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests;
