use super::*;
use crate::domain::settings::{MaxTokensField, StructuredOutput};
use crate::llm::dialect::TokenField;

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
    let empty = parse_answer(br#"{"choices":[]}"#).unwrap_err().1;
    assert!(empty.contains("no choices"), "{empty}");
    let missing = parse_answer(br#"{"object":"chat.completion"}"#)
        .unwrap_err()
        .1;
    assert!(missing.contains("no choices"), "{missing}");
    let blank =
        parse_answer(br#"{"choices":[{"message":{"content":"  \n"},"finish_reason":"length"}]}"#)
            .unwrap_err()
            .1;
    assert!(
        blank.contains("empty") && blank.contains("length"),
        "{blank}"
    );
    let null = parse_answer(br#"{"choices":[{"message":{"content":null}}]}"#)
        .unwrap_err()
        .1;
    assert!(null.contains("empty"), "{null}");
    let html = parse_answer(b"<html>\n<body>Bad   gateway</body></html>")
        .unwrap_err()
        .1;
    assert_eq!(
        html,
        "the answer is not JSON: <html> <body>Bad gateway</body></html>"
    );
    let error = parse_answer(br#"{"error":{"message":"upstream overloaded","code":502}}"#)
        .unwrap_err()
        .1;
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
    let body: Value = serde_json::from_slice(&request_body(&request, Dialect::default())).unwrap();
    assert_eq!(
        body,
        json!({"model":"m","messages":[{"role":"user","content":"say \"hi\""}],"max_tokens":64,"stream":false})
    );
    request.temperature = Some(0.7);
    let body: Value = serde_json::from_slice(&request_body(&request, Dialect::default())).unwrap();
    assert_eq!(body["temperature"], json!(0.7));
    request.temperature = Some(f64::NAN);
    let body: Value = serde_json::from_slice(&request_body(&request, Dialect::default())).unwrap();
    assert!(body.get("temperature").is_none());
}

fn with_schema() -> CompletionRequest {
    CompletionRequest {
        model: "m".into(),
        prompt: "p".into(),
        max_tokens: 64,
        temperature: None,
        answer_schema: Some(AnswerSchema {
            name: "scene_recap".into(),
            schema: json!({"type":"object","properties":{"recap":{"type":"string"}},"required":["recap"],"additionalProperties":false}),
        }),
        structured_output: StructuredOutput::Auto,
        max_tokens_field: MaxTokensField::Auto,
        purpose: "test",
    }
}

fn body(
    request: &CompletionRequest,
    response_format: ResponseFormat,
    token_field: TokenField,
) -> Value {
    let dialect = Dialect {
        response_format,
        token_field,
    };
    serde_json::from_slice(&request_body(request, dialect)).unwrap()
}

#[test]
fn a_schema_is_sent_as_strict_json_schema() {
    let request = with_schema();
    let sent = body(&request, ResponseFormat::JsonSchema, TokenField::MaxTokens);
    assert_eq!(
        sent["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {
                "name": "scene_recap",
                "strict": true,
                "schema": request.answer_schema.as_ref().unwrap().schema,
            }
        })
    );
    assert_eq!(sent["max_tokens"], json!(64));
    assert!(sent.get("max_completion_tokens").is_none());
}

#[test]
fn json_object_and_none_send_less() {
    let request = with_schema();
    let sent = body(&request, ResponseFormat::JsonObject, TokenField::MaxTokens);
    assert_eq!(sent["response_format"], json!({"type": "json_object"}));
    let sent = body(&request, ResponseFormat::Absent, TokenField::MaxTokens);
    assert!(sent.get("response_format").is_none(), "{sent}");
    assert!(sends_response_format(
        &request,
        Dialect {
            response_format: ResponseFormat::JsonObject,
            token_field: TokenField::MaxTokens,
        }
    ));
    assert!(!sends_response_format(
        &request,
        Dialect {
            response_format: ResponseFormat::Absent,
            token_field: TokenField::MaxTokens,
        }
    ));
}

#[test]
fn without_a_schema_no_response_format_is_sent() {
    let mut request = with_schema();
    request.answer_schema = None;
    for format in [
        ResponseFormat::JsonSchema,
        ResponseFormat::JsonObject,
        ResponseFormat::Absent,
    ] {
        let sent = body(&request, format, TokenField::MaxTokens);
        assert!(sent.get("response_format").is_none(), "{sent}");
        assert!(!sends_response_format(
            &request,
            Dialect {
                response_format: format,
                token_field: TokenField::MaxTokens,
            }
        ));
    }
}

#[test]
fn the_token_limit_goes_in_one_field() {
    let request = with_schema();
    let sent = body(
        &request,
        ResponseFormat::JsonSchema,
        TokenField::MaxCompletionTokens,
    );
    assert_eq!(sent["max_completion_tokens"], json!(64));
    assert!(sent.get("max_tokens").is_none(), "{sent}");
}

#[test]
fn refusals_name_their_feature() {
    let named = |status, body: &str| named_features(status, body.as_bytes());
    let openai_tokens = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}"#;
    assert_eq!(
        named(400, openai_tokens),
        Named {
            response_format: false,
            max_tokens: true
        }
    );
    let format =
        r#"{"error":{"message":"'response_format' of type 'json_schema' is not supported"}}"#;
    assert_eq!(
        named(400, format),
        Named {
            response_format: true,
            max_tokens: false
        }
    );
    assert!(named(422, "Invalid GRAMMAR").response_format);
    assert!(named(400, "JSON_OBJECT is unknown").response_format);
    assert!(named(400, "the Schema is too deep").response_format);
    assert!(named(400, "use max_completion_tokens").max_tokens);
    // max_tokens alone is not a refusal of the field (it may be too large).
    assert_eq!(
        named(400, "max_tokens is too large: 99999"),
        Named::default()
    );
    // A limit over the model's is not a refused field, whatever it names
    // (OpenAI's and vLLM's messages).
    assert!(!named(400, "max_tokens is too large: 10000. This model supports at most 4096 completion tokens, whereas you provided 10000.").max_tokens);
    assert!(!named(400, "'max_tokens' or 'max_completion_tokens' is too large: 9000. This model's maximum context length is 8192 tokens").max_tokens);
    // "schema" alone (a validation error of another field) is no refusal.
    assert_eq!(
        named(422, "request does not match the schema: messages[0].role"),
        Named::default()
    );
    assert_eq!(named(400, "no such model: m"), Named::default());
    // Only a 400 or 422 is a refusal.
    assert_eq!(named(500, format), Named::default());
    assert_eq!(named(404, openai_tokens), Named::default());
}
