//! The embeddings client against a small embeddings API on a loopback
//! port (the pattern of `tests/it/common/fake_llm.rs`, which `src/` may
//! not include): answers in any order, the request sent, how each failure
//! is judged, batches, and the key kept out of every reason.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::*;
use crate::llm::ApiKey;

/// One request as the fake saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    authorization: Option<String>,
    body: Value,
}

/// What the fake answers: a status, extra headers, a body.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

impl Reply {
    /// 200 with `body`.
    fn ok(body: Value) -> Reply {
        Reply {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }

    /// `status` with an OpenAI-shaped error carrying `message`.
    fn status(status: u16, message: &str) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: json!({"error": {"message": message}}).to_string(),
        }
    }
}

type Script = Box<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// An embeddings API on `127.0.0.1:0` answering each request as its script
/// says, and keeping what it was sent. It stops with the test's runtime.
struct Fake {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    async fn start(script: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(Box::new(script));
        let kept = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (script, kept) = (script.clone(), kept.clone());
                tokio::spawn(async move {
                    let service =
                        service_fn(move |request| answer(script.clone(), kept.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Fake { url, seen }
    }

    /// The fake answering `data` to every request.
    async fn answering(data: Value) -> Fake {
        Fake::start(move |_| Reply::ok(data.clone())).await
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().clone()
    }

    fn client(&self) -> EmbeddingClient {
        EmbeddingClient::new(&setup(&self.url)).unwrap()
    }
}

async fn answer(
    script: Arc<Script>,
    kept: Arc<Mutex<Vec<Seen>>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path().to_owned();
    let authorization = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let seen = Seen {
        path,
        authorization,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    };
    let reply = script(&seen);
    kept.lock().push(seen);
    let mut response = Response::builder()
        .status(reply.status)
        .header("content-type", "application/json");
    for (name, value) in reply.headers {
        response = response.header(name, value);
    }
    Ok(response.body(Full::new(Bytes::from(reply.body))).unwrap())
}

fn setup(base_url: &str) -> EmbeddingSetup {
    EmbeddingSetup {
        base_url: base_url.into(),
        model: "embedder".into(),
        api_key: Some(ApiKey("sk-secret".into())),
        concurrency: 2,
        timeout: Duration::from_secs(5),
        max_attempts: 1,
        backoff_base: Duration::from_millis(10),
        requests_per_minute: None,
        batch_size: 32,
    }
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("text {i}")).collect()
}

/// An answer giving input `i` the vector `[i, i + 0.5]`, in `order`.
fn data(order: &[usize], prompt_tokens: u64) -> Value {
    let data: Vec<Value> = order
        .iter()
        .map(|&i| json!({"object": "embedding", "index": i, "embedding": [i as f32, i as f32 + 0.5]}))
        .collect();
    json!({"object": "list", "data": data, "model": "embedder",
           "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens}})
}

fn retryable(result: Result<Embeddings, LlmError>) -> (String, Option<Duration>) {
    match result {
        Err(LlmError::Retryable {
            reason,
            retry_after,
            ..
        }) => (reason, retry_after),
        other => panic!("not retryable: {other:?}"),
    }
}

fn fatal(result: Result<Embeddings, LlmError>) -> String {
    match result {
        Err(LlmError::Fatal { reason, .. }) => reason,
        other => panic!("not fatal: {other:?}"),
    }
}

#[tokio::test]
async fn vectors_come_back_in_the_inputs_order_whatever_the_answers_order() {
    let fake = Fake::answering(data(&[2, 0, 1], 9)).await;
    let got = fake.client().embed(&texts(3)).await.unwrap();
    assert_eq!(
        got,
        Embeddings {
            vectors: vec![vec![0.0, 0.5], vec![1.0, 1.5], vec![2.0, 2.5]],
            prompt_tokens: Some(9),
        }
    );
    let seen = fake.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(
        seen[0].body,
        json!({"model": "embedder", "input": ["text 0", "text 1", "text 2"], "encoding_format": "float"})
    );
}

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token_and_nothing_without_one() {
    let fake = Fake::answering(data(&[0], 1)).await;
    fake.client().embed(&texts(1)).await.unwrap();
    let mut keyless = setup(&fake.url);
    keyless.api_key = None;
    EmbeddingClient::new(&keyless)
        .unwrap()
        .embed(&texts(1))
        .await
        .unwrap();
    let sent: Vec<_> = fake.seen().into_iter().map(|s| s.authorization).collect();
    assert_eq!(sent, [Some("Bearer sk-secret".to_owned()), None]);
}

#[tokio::test]
async fn a_429_is_retryable_after_the_wait_it_asks() {
    let fake = Fake::start(|_| Reply {
        headers: vec![("retry-after", "7".into())],
        ..Reply::status(429, "slow down")
    })
    .await;
    let (reason, retry_after) = retryable(fake.client().embed(&texts(2)).await);
    assert_eq!(reason, "HTTP 429 Too Many Requests: slow down");
    assert_eq!(retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn a_5xx_is_retryable_and_a_400_or_a_redirect_fatal() {
    let fake = Fake::start(|_| Reply::status(503, "loading model")).await;
    let (reason, _) = retryable(fake.client().embed(&texts(1)).await);
    assert!(reason.starts_with("HTTP 503"), "{reason}");

    let fake = Fake::start(|_| Reply::status(400, "input too long")).await;
    let reason = fatal(fake.client().embed(&texts(1)).await);
    assert_eq!(reason, "HTTP 400 Bad Request: input too long");

    let fake = Fake::start(|_| Reply {
        headers: vec![("location", "http://elsewhere/v1/embeddings".into())],
        ..Reply::status(308, "moved")
    })
    .await;
    let reason = fatal(fake.client().embed(&texts(1)).await);
    assert!(reason.contains("set --embedding-url"), "{reason}");
}

#[tokio::test]
async fn a_vector_of_another_length_is_an_unusable_answer() {
    let fake = Fake::answering(json!({"data": [
        {"index": 0, "embedding": [0.1, 0.2]},
        {"index": 1, "embedding": [0.1, 0.2, 0.3]},
    ]}))
    .await;
    let (reason, retry_after) = retryable(fake.client().embed(&texts(2)).await);
    assert!(reason.starts_with("unusable answer:"), "{reason}");
    assert!(reason.contains("3 dimensions"), "{reason}");
    assert_eq!(retry_after, None);
}

#[tokio::test]
async fn a_missing_repeated_or_foreign_index_is_an_unusable_answer() {
    for (answer, expected) in [
        (data(&[0, 2], 1), "unusable answer: no vector for input 1"),
        (data(&[0, 1, 1], 1), "unusable answer: index 1 given twice"),
        (
            data(&[0, 1, 2, 3], 1),
            "unusable answer: index 3 for 3 inputs",
        ),
    ] {
        let fake = Fake::answering(answer).await;
        let (reason, _) = retryable(fake.client().embed(&texts(3)).await);
        assert_eq!(reason, expected);
    }
}

#[tokio::test]
async fn other_unusable_answers_are_retryable_with_a_reason() {
    for (answer, expected) in [
        (
            json!({"data": [{"index": 0, "embedding": []}]}),
            "an empty vector",
        ),
        (
            json!({"data": [{"index": 0, "embedding": [1e39]}]}),
            "not finite",
        ),
        (
            json!({"data": [{"index": 0, "embedding": "AAAA"}]}),
            "invalid type",
        ),
        (
            json!({"data": [{"embedding": [1.0]}]}),
            "missing field `index`",
        ),
        (
            json!({"error": {"message": "model not loaded"}}),
            "an error: model not loaded",
        ),
        (json!({"object": "list"}), "missing field `data`"),
    ] {
        let fake = Fake::answering(answer.clone()).await;
        let (reason, _) = retryable(fake.client().embed(&texts(1)).await);
        assert!(reason.contains(expected), "{answer}: {reason}");
    }
    let fake = Fake::start(|_| Reply {
        status: 200,
        headers: Vec::new(),
        body: "<html>gateway</html>".into(),
    })
    .await;
    let (reason, _) = retryable(fake.client().embed(&texts(1)).await);
    assert_eq!(reason, "the answer is not JSON: <html>gateway</html>");
}

#[tokio::test]
async fn the_key_never_appears_in_a_reason() {
    for status in [401, 500] {
        let fake =
            Fake::start(move |_| Reply::status(status, "Incorrect API key provided: sk-secret"))
                .await;
        let error = fake.client().embed(&texts(1)).await.unwrap_err();
        assert!(!error.reason().contains("sk-secret"), "{error:?}");
        assert!(error.reason().contains("<hidden>"), "{error:?}");
    }
    let fake = Fake::answering(json!({"error": "bad key sk-secret"})).await;
    let error = fake.client().embed(&texts(1)).await.unwrap_err();
    assert!(!error.reason().contains("sk-secret"), "{error:?}");

    let mut bad = setup("http://127.0.0.1:9/v1");
    bad.api_key = Some(ApiKey("sk-\nsecret".into()));
    let error = EmbeddingClient::new(&bad).unwrap_err();
    assert!(!error.contains("secret"), "{error}");
    assert!(error.contains("--embedding-api-key-file"), "{error}");
    let shown = format!("{:?}", Fake::answering(json!({})).await.client());
    assert!(
        !shown.contains("sk-secret") && shown.contains("/v1/embeddings"),
        "{shown}"
    );
}

#[tokio::test]
async fn no_input_makes_no_request_and_no_model_fails_without_one() {
    let fake = Fake::answering(data(&[0], 1)).await;
    let got = fake.client().embed(&[]).await.unwrap();
    assert_eq!(
        got,
        Embeddings {
            vectors: Vec::new(),
            prompt_tokens: None
        }
    );
    let mut nameless = setup(&fake.url);
    nameless.model = " ".into();
    let reason = fatal(
        EmbeddingClient::new(&nameless)
            .unwrap()
            .embed(&texts(1))
            .await,
    );
    assert_eq!(reason, "no model named: set --embedding-model");
    assert!(fake.seen().is_empty());
}

#[tokio::test]
async fn a_long_call_is_sent_in_batches_and_put_back_in_order() {
    let fake = Fake::start(|seen| {
        let n = seen.body["input"].as_array().map_or(0, Vec::len);
        let order: Vec<usize> = (0..n).rev().collect();
        Reply::ok(data(&order, 10))
    })
    .await;
    let mut batched = setup(&fake.url);
    batched.batch_size = 2;
    let got = EmbeddingClient::new(&batched)
        .unwrap()
        .embed(&texts(5))
        .await
        .unwrap();
    let inputs: Vec<Value> = fake
        .seen()
        .into_iter()
        .map(|s| s.body["input"].clone())
        .collect();
    assert_eq!(
        inputs,
        [
            json!(["text 0", "text 1"]),
            json!(["text 2", "text 3"]),
            json!(["text 4"])
        ]
    );
    // Each batch's vectors are its own indices': [0, 0.5], [1, 1.5], [0, 0.5]...
    let firsts: Vec<f32> = got.vectors.iter().map(|v| v[0]).collect();
    assert_eq!(firsts, [0.0, 1.0, 0.0, 1.0, 0.0]);
    assert_eq!(got.prompt_tokens, Some(30));
}

#[tokio::test]
async fn a_refused_connection_is_retryable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let client = EmbeddingClient::new(&setup(&url)).unwrap();
    let (reason, _) = retryable(client.embed(&texts(1)).await);
    assert!(reason.starts_with("could not connect"), "{reason}");
}

/// Every histogram registered and counter increment, as
/// `name{label=value,...}` (`+= n` for a counter).
#[derive(Default)]
struct Recorded(Arc<Mutex<Vec<String>>>);

struct CounterInto {
    key: String,
    into: Arc<Mutex<Vec<String>>>,
}

impl metrics::CounterFn for CounterInto {
    fn increment(&self, value: u64) {
        self.into.lock().push(format!("{} += {value}", self.key));
    }
    fn absolute(&self, _: u64) {}
}

fn shown(key: &metrics::Key) -> String {
    let labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl metrics::Recorder for Recorded {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn register_counter(&self, key: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::from_arc(Arc::new(CounterInto {
            key: shown(key),
            into: self.0.clone(),
        }))
    }
    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(
        &self,
        key: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        self.0.lock().push(shown(key));
        metrics::Histogram::noop()
    }
}

#[test]
fn each_request_is_measured_as_an_embedding_and_its_tokens_counted_in() {
    let recorder = Recorded::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let fake = Fake::answering(data(&[0], 4)).await;
            fake.client().embed(&texts(1)).await.unwrap();
            let fake = Fake::start(|_| Reply::status(400, "no")).await;
            fake.client().embed(&texts(1)).await.unwrap_err();
        });
    });
    assert_eq!(
        *recorder.0.lock(),
        [
            "recapd_llm_request_duration_seconds{kind=embedding,outcome=ok}",
            "recapd_llm_tokens_total{kind=embedding,direction=in} += 4",
            "recapd_llm_request_duration_seconds{kind=embedding,outcome=fatal}",
        ]
    );
}
