//! The LLM client against the fake LLM over a real socket: answers and
//! usage, how each failure is judged (retryable with Retry-After, or
//! fatal), timeouts, refused connections, the API key, the rate limit; and
//! the fake's own checks. `fallback` covers `response_format` and the
//! token field, and the `AUTO` fallback.

mod fallback;

use std::time::{Duration, Instant, SystemTime};

use crate::common::fake_llm::{FakeLlm, Reply};
use recapd::config::{ApiKey, LlmSetup};
use recapd::domain::settings::{MaxTokensField, StructuredOutput};
use recapd::llm::{CompletionRequest, LlmClient, LlmError};

fn request(prompt: &str) -> CompletionRequest {
    CompletionRequest {
        model: "fake-model".into(),
        prompt: prompt.into(),
        max_tokens: 64,
        temperature: None,
        answer_schema: None,
        structured_output: StructuredOutput::Auto,
        max_tokens_field: MaxTokensField::Auto,
        purpose: "test",
    }
}

async fn ask(setup: &LlmSetup) -> Result<recapd::llm::Completion, LlmError> {
    LlmClient::new(setup)
        .expect("the client builds")
        .complete(&request("recap this scene"))
        .await
}

/// The reason and Retry-After of a retryable error; panics on anything else.
fn retryable(result: Result<recapd::llm::Completion, LlmError>) -> (String, Option<Duration>) {
    match result {
        Err(LlmError::Retryable {
            reason,
            retry_after,
            ..
        }) => (reason, retry_after),
        other => panic!("expected a retryable error, got {other:?}"),
    }
}

fn fatal(result: Result<recapd::llm::Completion, LlmError>) -> String {
    match result {
        Err(LlmError::Fatal { reason, .. }) => reason,
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_answer_gives_its_text_and_usage() {
    let fake = FakeLlm::answering(r#"{"recap": "They met at the inn."}"#).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let mut asked = request("recap the scene at the inn");
    asked.temperature = Some(0.25);
    let answer = client.complete(&asked).await.unwrap();
    assert_eq!(answer.text, r#"{"recap": "They met at the inn."}"#);
    assert_eq!(answer.prompt_tokens, Some(6));
    assert_eq!(answer.completion_tokens, Some(6));

    let seen = fake.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].model, "fake-model");
    assert_eq!(seen[0].prompt, "recap the scene at the inn");
    assert_eq!(seen[0].max_tokens, Some(64));
    assert_eq!(seen[0].temperature, Some(0.25));
    assert_eq!(seen[0].authorization, None);
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
}

#[tokio::test]
async fn an_answer_without_usage_still_counts() {
    let fake = FakeLlm::start(|_| {
        Reply::Raw(r#"{"choices":[{"message":{"role":"assistant","content":"fine"}}]}"#.into())
    })
    .await;
    let answer = ask(&fake.setup()).await.unwrap();
    assert_eq!(answer.text, "fine");
    assert_eq!(
        (answer.prompt_tokens, answer.completion_tokens),
        (None, None)
    );
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token_and_never_repeated() {
    // The "API" echoes the Authorization header in its error, as a careless
    // proxy might.
    let fake = FakeLlm::start(|seen| {
        Reply::status(
            401,
            &format!(
                "bad credentials {}",
                seen.authorization.clone().unwrap_or_default()
            ),
        )
    })
    .await;
    let mut setup = fake.setup();
    setup.api_key = Some(ApiKey("sk-test-123".into()));
    let reason = fatal(ask(&setup).await);
    assert_eq!(
        fake.requests()[0].authorization.as_deref(),
        Some("Bearer sk-test-123")
    );
    assert!(
        reason.starts_with("HTTP 401 Unauthorized: bad credentials"),
        "{reason}"
    );
    assert!(!reason.contains("sk-test-123"), "{reason}");
}

#[tokio::test]
async fn too_many_requests_is_retried_after_the_seconds_given() {
    let fake =
        FakeLlm::start(|_| Reply::status(429, "Rate limit reached").with_retry_after("7")).await;
    let (reason, retry_after) = retryable(ask(&fake.setup()).await);
    assert_eq!(reason, "HTTP 429 Too Many Requests: Rate limit reached");
    assert_eq!(retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn too_many_requests_is_retried_after_the_date_given() {
    let at = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
    let fake =
        FakeLlm::start(move |_| Reply::status(429, "later").with_retry_after(at.clone())).await;
    let (_, retry_after) = retryable(ask(&fake.setup()).await);
    let wait = retry_after.expect("the date is read");
    // The date has whole seconds; the request takes a moment.
    assert!(
        wait > Duration::from_secs(27) && wait <= Duration::from_secs(30),
        "{wait:?}"
    );
}

#[tokio::test]
async fn server_errors_and_conflicts_are_retryable() {
    for code in [500, 502, 503, 408, 409] {
        let fake = FakeLlm::start(move |_| Reply::status(code, "try again")).await;
        let (reason, retry_after) = retryable(ask(&fake.setup()).await);
        assert!(reason.starts_with(&format!("HTTP {code} ")), "{reason}");
        assert!(reason.ends_with(": try again"), "{reason}");
        assert_eq!(retry_after, None);
    }
    let fake = FakeLlm::start(|_| Reply::status(503, "loading model").with_retry_after("2")).await;
    let (_, retry_after) = retryable(ask(&fake.setup()).await);
    assert_eq!(retry_after, Some(Duration::from_secs(2)));
}

#[tokio::test]
async fn client_errors_are_fatal() {
    for code in [400, 401, 403, 404, 422] {
        let fake = FakeLlm::start(move |_| Reply::status(code, "no such model: fake-model")).await;
        let reason = fatal(ask(&fake.setup()).await);
        assert!(reason.starts_with(&format!("HTTP {code} ")), "{reason}");
        assert!(reason.ends_with(": no such model: fake-model"), "{reason}");
    }
    // Ollama's error shape, and a plain-text body.
    let fake = FakeLlm::start(|_| Reply::Status {
        code: 404,
        retry_after: None,
        body: r#"{"error":"model \"tiny\" not found, try pulling it first"}"#.into(),
    })
    .await;
    let reason = fatal(ask(&fake.setup()).await);
    assert_eq!(
        reason,
        r#"HTTP 404 Not Found: model "tiny" not found, try pulling it first"#
    );
    let fake = FakeLlm::start(|_| Reply::Status {
        code: 403,
        retry_after: None,
        body: "forbidden\n".into(),
    })
    .await;
    assert_eq!(
        fatal(ask(&fake.setup()).await),
        "HTTP 403 Forbidden: forbidden"
    );
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_is_fatal() {
    let fake = FakeLlm::start(|_| Reply::status(307, "moved")).await;
    let reason = fatal(ask(&fake.setup()).await);
    assert!(
        reason.contains("307") && reason.contains("--llm-url"),
        "{reason}"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn unusable_answers_are_retryable() {
    let cases = [
        (Reply::EmptyChoices, "no choices"),
        (Reply::Raw("<html>Bad gateway</html>".into()), "not JSON"),
        (
            Reply::Raw(
                r#"{"choices":[{"message":{"content":""},"finish_reason":"length"}]}"#.into(),
            ),
            "empty",
        ),
        (Reply::answer("   "), "empty"),
        (
            Reply::Raw(r#"{"error":{"message":"upstream timed out"}}"#.into()),
            "upstream timed out",
        ),
    ];
    for (reply, expected) in cases {
        let fake = FakeLlm::start(move |_| reply.clone()).await;
        let (reason, _) = retryable(ask(&fake.setup()).await);
        assert!(
            reason.contains(expected),
            "{reason} (expected {expected:?})"
        );
    }
}

#[tokio::test]
async fn an_answer_slower_than_the_timeout_is_retryable() {
    let fake = FakeLlm::start(|_| Reply::answer("late").after(Duration::from_secs(5))).await;
    let mut setup = fake.setup();
    setup.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let (reason, _) = retryable(ask(&setup).await);
    assert_eq!(reason, "no answer within 300 ms");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_stopped_llm_refuses_and_that_is_retryable() {
    let fake = FakeLlm::answering("up").await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    // A first answer leaves a kept-alive connection in the client's pool.
    assert_eq!(client.complete(&request("one")).await.unwrap().text, "up");
    fake.stop().await;
    // The pooled connection was closed under it, or a new one is refused:
    // retryable either way, and a second try is refused.
    retryable(client.complete(&request("two")).await);
    let (reason, _) = retryable(client.complete(&request("three")).await);
    assert!(reason.starts_with("could not connect"), "{reason}");
}

#[tokio::test]
async fn the_rate_limit_spaces_requests() {
    let fake = FakeLlm::answering("ok").await;
    let mut setup = fake.setup();
    // One request every 100 ms.
    setup.requests_per_minute = Some(600);
    let client = LlmClient::new(&setup).unwrap();
    let started = Instant::now();
    // Clones share the limit; the first goes at once.
    let calls = (0..5).map(|i| {
        let client = client.clone();
        async move { client.complete(&request(&format!("call {i}"))).await }
    });
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer.unwrap().text, "ok");
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(380),
        "5 requests took {took:?}"
    );
    assert!(took < Duration::from_secs(5), "5 requests took {took:?}");
    assert_eq!(fake.requests().len(), 5);
}

#[tokio::test]
async fn an_empty_model_sends_nothing() {
    let fake = FakeLlm::answering("ok").await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let mut asked = request("p");
    asked.model = String::new();
    let reason = fatal(client.complete(&asked).await);
    assert!(reason.contains("--llm-model"), "{reason}");
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn the_fake_counts_requests_in_flight() {
    let fake = FakeLlm::start(|_| Reply::answer("ok").after(Duration::from_millis(300))).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let calls = (0..3).map(|_| {
        let client = client.clone();
        async move { client.complete(&request("p")).await }
    });
    for answer in futures_util::future::join_all(calls).await {
        answer.unwrap();
    }
    assert_eq!(fake.max_in_flight(), 3);
}

/// Posts `body` to the fake over a bare HTTP/1.1 connection; the status.
async fn post_raw(fake: &FakeLlm, method: &str, body: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = fake.url();
    let addr = addr.trim_start_matches("http://").trim_end_matches("/v1");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.split(' ').nth(1).unwrap_or_default();
    status
        .parse()
        .unwrap_or_else(|_| panic!("no status in {answer:?}"))
}

#[tokio::test]
async fn the_fake_rejects_malformed_requests() {
    let fake = FakeLlm::answering("ok").await;
    let good = r#"{"model":"m","messages":[{"role":"user","content":"p"}],"max_tokens":5}"#;
    assert_eq!(post_raw(&fake, "POST", good).await, 200);
    let structured = r#"{"model":"m","messages":[{"role":"user","content":"p"}],"max_completion_tokens":5,"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":true,"schema":{"type":"object"}}}}"#;
    assert_eq!(post_raw(&fake, "POST", structured).await, 200);
    let object = r#"{"model":"m","messages":[{"role":"user","content":"p"}],"response_format":{"type":"json_object"}}"#;
    assert_eq!(post_raw(&fake, "POST", object).await, 200);
    let bad = [
        r#"{"messages":[{"role":"user","content":"p"}]}"#,
        r#"{"model":"","messages":[{"role":"user","content":"p"}]}"#,
        r#"{"model":"m","messages":[]}"#,
        r#"{"model":"m","messages":[{"role":"system","content":"p"}]}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"},{"role":"user","content":"q"}]}"#,
        r#"{"model":"m","messages":[{"role":"user","content":7}]}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"max_tokens":0}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"temperature":3}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"stream":true}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"max_tokens":5,"max_completion_tokens":5}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"max_completion_tokens":-1}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"response_format":{"type":"text"}}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"response_format":{"type":"json_schema","json_schema":{"name":"r"}}}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"response_format":{"type":"json_schema","json_schema":{"name":"","schema":{}}}}"#,
        r#"{"model":"m","messages":[{"role":"user","content":"p"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","strict":"yes","schema":{}}}}"#,
        "not json",
    ];
    for body in bad {
        assert_eq!(post_raw(&fake, "POST", body).await, 400, "{body}");
    }
    assert_eq!(post_raw(&fake, "GET", "").await, 404);
    assert_eq!(fake.rejected().len(), bad.len() + 1);
    let seen = fake.requests();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[1].max_completion_tokens, Some(5));
    assert_eq!(
        seen[1].schema(),
        Some(&serde_json::json!({"type": "object"}))
    );
    assert_eq!(seen[2].response_format_type(), Some("json_object"));
    assert_eq!(seen[2].schema(), None);
}

#[tokio::test]
async fn an_answer_too_long_to_read_is_retryable() {
    let huge = format!(
        r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#,
        "x".repeat(9 << 20)
    );
    let fake = FakeLlm::start(move |_| Reply::Raw(huge.clone())).await;
    let (reason, _) = retryable(ask(&fake.setup()).await);
    assert_eq!(reason, "the answer is over 8388608 bytes");
}
