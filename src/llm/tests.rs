use super::*;
use crate::domain::settings::{MaxTokensField, StructuredOutput};

fn setup(base_url: &str) -> LlmSetup {
    LlmSetup {
        base_url: base_url.into(),
        model: "m".into(),
        api_key: Some(ApiKey("sk-secret".into())),
        concurrency: 1,
        timeout: Duration::from_secs(5),
        max_attempts: 1,
        backoff_base: Duration::from_millis(10),
        requests_per_minute: None,
    }
}

#[test]
fn debug_hides_the_key() {
    let client = LlmClient::new(&setup("http://127.0.0.1:9/v1")).unwrap();
    let shown = format!("{client:?}");
    assert!(!shown.contains("sk-secret"), "{shown}");
    assert!(
        shown.contains("http://127.0.0.1:9/v1/chat/completions"),
        "{shown}"
    );
}

#[test]
fn a_key_no_header_can_carry_is_refused_without_showing_it() {
    let mut bad = setup("http://127.0.0.1:9/v1");
    bad.api_key = Some(ApiKey("sk-\nsecret".into()));
    let error = LlmClient::new(&bad).unwrap_err();
    assert!(!error.contains("secret"), "{error}");
}

#[test]
fn reasons_never_repeat_the_key() {
    let client = LlmClient::new(&setup("http://127.0.0.1:9/v1")).unwrap();
    let scrubbed = client.scrub(LlmError::Fatal {
        kind: FailureKind::Status(401),
        reason: "HTTP 401: key sk-secret is invalid".into(),
    });
    assert_eq!(scrubbed.reason(), "HTTP 401: key <hidden> is invalid");
}

#[tokio::test]
async fn an_empty_model_fails_without_a_request() {
    let client = LlmClient::new(&setup("http://127.0.0.1:9/v1")).unwrap();
    let request = CompletionRequest {
        model: " ".into(),
        prompt: "p".into(),
        max_tokens: 1,
        temperature: None,
        answer_schema: None,
        structured_output: StructuredOutput::Auto,
        max_tokens_field: MaxTokensField::Auto,
        purpose: "test",
    };
    assert!(matches!(
        client.complete(&request).await,
        Err(LlmError::Fatal { .. })
    ));
}

#[test]
fn durations_read_well() {
    assert_eq!(seconds(Duration::from_secs(120)), "120 s");
    assert_eq!(seconds(Duration::from_millis(300)), "300 ms");
}
