//! The chat-completions wire format, free of I/O: the request body, the
//! answer's text and usage, the message of an error body, how a status is
//! judged, and `Retry-After`.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::{Completion, CompletionRequest};

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
/// `user` message, no streaming; `temperature` only when set and finite.
pub(crate) fn request_body(request: &CompletionRequest) -> Vec<u8> {
    let mut body = json!({
        "model": request.model,
        "messages": [{"role": "user", "content": request.prompt}],
        "max_tokens": request.max_tokens,
        "stream": false,
    });
    if let (Some(temperature), Some(object)) = (
        request.temperature.filter(|t| t.is_finite()),
        body.as_object_mut(),
    ) {
        object.insert("temperature".into(), json!(temperature));
    }
    // A `Value` of strings and numbers always serialises.
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The text and usage of a successful answer, or why it is unusable (a
/// reason worth another attempt: not JSON, no choices, empty content).
pub(crate) fn parse_answer(body: &[u8]) -> Result<Completion, String> {
    let answer: Value = serde_json::from_slice(body).map_err(|_| {
        format!(
            "the answer is not JSON: {}",
            snippet(&String::from_utf8_lossy(body))
        )
    })?;
    let usage = answer.get("usage");
    let tokens = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
    let Some(choice) = answer
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
    else {
        return Err(match answer.get("error") {
            Some(error) => format!("the answer is an error: {}", error_text(error)),
            None => "the answer has no choices".to_owned(),
        });
    };
    let text = choice
        .get("message")
        .and_then(|m| m.get("content"))
        .map(content_text)
        .unwrap_or_default();
    if text.trim().is_empty() {
        return Err(match choice.get("finish_reason").and_then(Value::as_str) {
            Some(finish) => format!("the answer is empty (finish_reason {finish})"),
            None => "the answer is empty".to_owned(),
        });
    }
    Ok(Completion {
        text,
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
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
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = at(1_445_412_480); // Wed, 21 Oct 2015 07:28:00 GMT
        assert_eq!(
            retry_after(Some("120"), None, now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(retry_after(Some(" 0 "), None, now), Some(Duration::ZERO));
        assert_eq!(
            retry_after(Some("1.5"), None, now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(Some("Wed, 21 Oct 2015 07:28:30 GMT"), None, now),
            Some(Duration::from_secs(30))
        );
        // The obsolete formats HTTP still accepts.
        assert_eq!(
            retry_after(Some("Wednesday, 21-Oct-15 07:29:00 GMT"), None, now),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            retry_after(Some("Wed, 21 Oct 2015 07:00:00 GMT"), None, now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(Some("-5"), None, now), None);
        assert_eq!(retry_after(Some("soon"), None, now), None);
        assert_eq!(retry_after(Some(""), None, now), None);
        assert_eq!(retry_after(Some("1.2.3"), None, now), None);
        assert_eq!(retry_after(None, None, now), None);
        assert_eq!(
            retry_after(Some("10"), Some("250"), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            retry_after(Some("10"), Some("junk"), now),
            Some(Duration::from_secs(10))
        );
    }

    #[test]
    fn statuses_are_judged() {
        for code in [408, 409, 429, 500, 502, 503, 504, 599] {
            assert_eq!(classify(code), StatusClass::Retryable, "{code}");
        }
        for code in [400, 401, 403, 404, 405, 413, 422, 301, 302, 100] {
            assert_eq!(classify(code), StatusClass::Fatal, "{code}");
        }
    }

    #[test]
    fn answers_give_text_and_usage() {
        let body = br#"{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"{\"recap\":\"hi\"}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;
        let answer = parse_answer(body).unwrap();
        assert_eq!(answer.text, r#"{"recap":"hi"}"#);
        assert_eq!(answer.prompt_tokens, Some(12));
        assert_eq!(answer.completion_tokens, Some(3));
    }

    #[test]
    fn usage_is_optional() {
        let body = br#"{"choices":[{"message":{"content":"text"}}]}"#;
        let answer = parse_answer(body).unwrap();
        assert_eq!(answer.text, "text");
        assert_eq!(
            (answer.prompt_tokens, answer.completion_tokens),
            (None, None)
        );
        let body =
            br#"{"choices":[{"message":{"content":"text"}}],"usage":{"prompt_tokens":null}}"#;
        assert_eq!(parse_answer(body).unwrap().prompt_tokens, None);
    }

    #[test]
    fn content_parts_are_joined() {
        let body = br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"image_url"},{"type":"text","text":"b"}]}}]}"#;
        assert_eq!(parse_answer(body).unwrap().text, "ab");
    }

    #[test]
    fn unusable_answers_say_why() {
        let empty = parse_answer(br#"{"choices":[]}"#).unwrap_err();
        assert!(empty.contains("no choices"), "{empty}");
        let missing = parse_answer(br#"{"object":"chat.completion"}"#).unwrap_err();
        assert!(missing.contains("no choices"), "{missing}");
        let blank = parse_answer(
            br#"{"choices":[{"message":{"content":"  \n"},"finish_reason":"length"}]}"#,
        )
        .unwrap_err();
        assert!(
            blank.contains("empty") && blank.contains("length"),
            "{blank}"
        );
        let null = parse_answer(br#"{"choices":[{"message":{"content":null}}]}"#).unwrap_err();
        assert!(null.contains("empty"), "{null}");
        let html = parse_answer(b"<html>\n<body>Bad   gateway</body></html>").unwrap_err();
        assert_eq!(
            html,
            "the answer is not JSON: <html> <body>Bad gateway</body></html>"
        );
        let error =
            parse_answer(br#"{"error":{"message":"upstream overloaded","code":502}}"#).unwrap_err();
        assert_eq!(error, "the answer is an error: upstream overloaded");
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            error_message(br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#),
            "Incorrect API key provided"
        );
        assert_eq!(
            error_message(br#"{"error":"model \"x\" not found"}"#),
            r#"model "x" not found"#
        );
        assert_eq!(error_message(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_message(br#"{"code":7}"#), r#"{"code":7}"#);
        assert_eq!(error_message(b"plain\ttext\n"), "plain text");
        assert_eq!(error_message(b""), "");
        let long = "x".repeat(500);
        let cut = error_message(long.as_bytes());
        assert_eq!(cut.chars().count(), REASON_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(
            status_reason(
                429,
                Some("Too Many Requests"),
                br#"{"error":{"message":"slow down"}}"#
            ),
            "HTTP 429 Too Many Requests: slow down"
        );
        assert_eq!(status_reason(599, None, b""), "HTTP 599");
    }

    #[test]
    fn request_bodies_are_standard() {
        let mut request = CompletionRequest {
            model: "m".into(),
            prompt: "say \"hi\"".into(),
            max_tokens: 64,
            temperature: None,
        };
        let body: Value = serde_json::from_slice(&request_body(&request)).unwrap();
        assert_eq!(
            body,
            json!({"model":"m","messages":[{"role":"user","content":"say \"hi\""}],"max_tokens":64,"stream":false})
        );
        request.temperature = Some(0.7);
        let body: Value = serde_json::from_slice(&request_body(&request)).unwrap();
        assert_eq!(body["temperature"], json!(0.7));
        request.temperature = Some(f64::NAN);
        let body: Value = serde_json::from_slice(&request_body(&request)).unwrap();
        assert!(body.get("temperature").is_none());
    }
}
