use super::*;
use crate::domain::settings::{MaxTokensField, StructuredOutput};

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
    let body = br#"{"choices":[{"message":{"content":"text"}}],"usage":{"prompt_tokens":null}}"#;
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
    let blank =
        parse_answer(br#"{"choices":[{"message":{"content":"  \n"},"finish_reason":"length"}]}"#)
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
        error_message(
            br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#
        ),
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
        answer_schema: None,
        structured_output: StructuredOutput::Auto,
        max_tokens_field: MaxTokensField::Auto,
        purpose: "test",
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
