//! An OpenAI-compatible embeddings API for the tests: a real HTTP/1.1
//! server on a loopback port that checks each `/v1/embeddings` request and
//! answers with deterministic vectors, built as [`super::fake_llm`] is.
//!
//! ```ignore
//! let fake = FakeEmbeddings::start().await;
//! fake.hold();                        // requests wait at the gate
//! // ... start recapd with --embedding-url fake.url() ...
//! fake.wait_for_waiting(1).await;     // a batch is in flight
//! fake.release();
//! assert!(fake.rejected().is_empty()); // every request was well formed
//! ```
//!
//! Only `POST /v1/embeddings` exists (anything else is 404). A body that
//! is not a well-formed request (a JSON object with a non-empty `model`
//! string, `input` a non-empty array of strings, `encoding_format`
//! `"float"` if present) is answered 400 and its fault kept in
//! [`FakeEmbeddings::rejected`].
//!
//! Vectors ([`vector_of`]) have [`DIMS`] dimensions: each word of the text
//! (a run of letters and digits, lowercased, of at least [`MIN_WORD`]
//! characters, so "the" and "a" do not make unrelated texts alike) adds 1
//! to the dimension its FNV-1a hash names. Texts sharing words point the
//! same way; texts sharing none are orthogonal (unless two words collide).
//!
//! Controls: a fixed latency ([`FakeEmbeddings::set_latency`]), a gate a
//! test can hold so requests wait until it is released
//! ([`FakeEmbeddings::hold`], [`FakeEmbeddings::release`]; a request's
//! inputs are recorded when it arrives, before the gate), a count of
//! requests and the inputs seen, the largest batch seen, and a status to
//! answer instead for the next N requests ([`FakeEmbeddings::fail_next`]).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

/// The path the fake answers, under [`FakeEmbeddings::url`].
const PATH: &str = "/v1/embeddings";

/// The vectors' dimension.
pub const DIMS: usize = 64;

/// The shortest word that counts in a vector.
pub const MIN_WORD: usize = 4;

/// The deterministic vector of `text` (see the module documentation).
pub fn vector_of(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; DIMS];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= MIN_WORD)
    {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in word.to_lowercase().bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        vector[(hash % DIMS as u64) as usize] += 1.0;
    }
    vector
}

/// A well-formed request, as the fake saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenEmbedding {
    /// `model`.
    pub model: String,
    /// `input`, in order.
    pub input: Vec<String>,
    /// The `Authorization` header, when sent.
    pub authorization: Option<String>,
}

/// A status answered instead of vectors, for a number of requests.
#[derive(Debug, Clone, Copy)]
struct Failing {
    code: u16,
    left: usize,
}

struct Shared {
    requests: Mutex<Vec<SeenEmbedding>>,
    rejected: Mutex<Vec<String>>,
    failing: Mutex<Option<Failing>>,
    latency: Mutex<Duration>,
    /// `true` while the gate is held.
    gate: watch::Sender<bool>,
    waiting: AtomicUsize,
    max_batch: AtomicUsize,
}

/// The running fake. Dropping it stops it too (without waiting).
pub struct FakeEmbeddings {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    server: Mutex<Option<JoinHandle<()>>>,
}

impl FakeEmbeddings {
    /// Starts the fake on `127.0.0.1:0`: no latency, the gate open.
    pub async fn start() -> FakeEmbeddings {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the fake embeddings API binds a loopback port");
        let addr = listener
            .local_addr()
            .expect("a bound socket has an address");
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            rejected: Mutex::new(Vec::new()),
            failing: Mutex::new(None),
            latency: Mutex::new(Duration::ZERO),
            gate: watch::channel(false).0,
            waiting: AtomicUsize::new(0),
            max_batch: AtomicUsize::new(0),
        });
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(listener, shared.clone(), stop.clone()));
        FakeEmbeddings {
            addr,
            shared,
            stop,
            server: Mutex::new(Some(server)),
        }
    }

    /// The base URL to give recapd: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every answer waits `latency` first (after the gate).
    pub fn set_latency(&self, latency: Duration) {
        *self.shared.latency.lock() = latency;
    }

    /// Holds the gate: requests arriving from now on (and those waiting)
    /// wait until [`FakeEmbeddings::release`].
    pub fn hold(&self) {
        self.shared.gate.send_replace(true);
    }

    /// Opens the gate: every waiting request goes on.
    pub fn release(&self) {
        self.shared.gate.send_replace(false);
    }

    /// The next `count` well-formed requests are answered `code` (a JSON
    /// error body) instead of vectors; they are still counted and their
    /// inputs recorded.
    pub fn fail_next(&self, count: usize, code: u16) {
        *self.shared.failing.lock() = Some(Failing { code, left: count });
    }

    /// Every well-formed request so far, in arrival order.
    pub fn requests(&self) -> Vec<SeenEmbedding> {
        self.shared.requests.lock().clone()
    }

    /// How many well-formed requests arrived.
    pub fn request_count(&self) -> usize {
        self.shared.requests.lock().len()
    }

    /// Every input of every well-formed request, in arrival order.
    pub fn inputs(&self) -> Vec<String> {
        self.shared
            .requests
            .lock()
            .iter()
            .flat_map(|r| r.input.iter().cloned())
            .collect()
    }

    /// How many times `text` was asked.
    pub fn times_asked(&self, text: &str) -> usize {
        self.inputs().iter().filter(|i| *i == text).count()
    }

    /// The largest `input` seen.
    pub fn max_batch(&self) -> usize {
        self.shared.max_batch.load(Ordering::SeqCst)
    }

    /// Requests waiting at the held gate now.
    pub fn waiting(&self) -> usize {
        self.shared.waiting.load(Ordering::SeqCst)
    }

    /// Why each malformed request was answered 400 (or 404), in order.
    pub fn rejected(&self) -> Vec<String> {
        self.shared.rejected.lock().clone()
    }

    /// Waits (up to 20 s) until at least `count` requests wait at the gate.
    pub async fn wait_for_waiting(&self, count: usize) {
        self.wait_until(&format!("{count} requests at the gate"), || {
            self.waiting() >= count
        })
        .await;
    }

    async fn wait_until(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the fake embeddings API never saw {what}; requests: {:#?}",
                self.requests()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Stops the fake: its port closed and every connection dropped.
    pub async fn stop(&self) {
        self.stop.cancel();
        let server = self.server.lock().take();
        if let Some(server) = server {
            let _ = server.await;
        }
    }
}

impl Drop for FakeEmbeddings {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Accepts connections until `stop`, then drops the listener and aborts
/// every connection.
async fn serve(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = service_fn(move |request| handle(shared.clone(), request));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}

/// Counts one unit in `counter` while it lives.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn enter(counter: &'a AtomicUsize) -> Counted<'a> {
        counter.fetch_add(1, Ordering::SeqCst);
        Counted(counter)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::POST || request.uri().path() != PATH {
        let fault = format!("{} {}: no such endpoint", request.method(), request.uri());
        shared.rejected.lock().push(fault.clone());
        return Ok(error(StatusCode::NOT_FOUND, &fault));
    }
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => {
            return Ok(error(
                StatusCode::BAD_REQUEST,
                &format!("unreadable body: {e}"),
            ));
        }
    };
    let seen = match check(&body, authorization) {
        Ok(seen) => seen,
        Err(fault) => {
            shared.rejected.lock().push(fault.clone());
            return Ok(error(StatusCode::BAD_REQUEST, &fault));
        }
    };
    shared
        .max_batch
        .fetch_max(seen.input.len(), Ordering::SeqCst);
    shared.requests.lock().push(seen.clone());
    {
        let _waiting = Counted::enter(&shared.waiting);
        let mut gate = shared.gate.subscribe();
        // The sender lives in `shared`, so the channel never closes.
        let _ = gate.wait_for(|held| !*held).await;
    }
    let latency = *shared.latency.lock();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let failure = {
        let mut failing = shared.failing.lock();
        match failing.as_mut() {
            Some(f) if f.left > 0 => {
                f.left -= 1;
                Some(f.code)
            }
            _ => None,
        }
    };
    if let Some(code) = failure {
        let status = StatusCode::from_u16(code).expect("the test gives a valid status code");
        return Ok(error(
            status,
            &format!("the fake was told to answer {code}"),
        ));
    }
    let data: Vec<Value> = seen
        .input
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": vector_of(text)}))
        .collect();
    let tokens: usize = seen
        .input
        .iter()
        .map(|t| t.split_whitespace().count())
        .sum();
    let body = json!({
        "object": "list",
        "data": data,
        "model": seen.model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    });
    Ok(respond(StatusCode::OK, body.to_string()))
}

/// The request, if it is a well-formed embeddings request.
fn check(body: &[u8], authorization: Option<String>) -> Result<SeenEmbedding, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let object = value.as_object().ok_or("the body is not a JSON object")?;
    let model = match object.get("model") {
        Some(Value::String(model)) if !model.is_empty() => model.clone(),
        _ => return Err("`model` is missing or not a non-empty string".into()),
    };
    let input = object
        .get("input")
        .and_then(Value::as_array)
        .ok_or("`input` is missing or not an array")?;
    if input.is_empty() {
        return Err("`input` is empty".into());
    }
    let input = input
        .iter()
        .map(|i| i.as_str().map(str::to_owned))
        .collect::<Option<Vec<String>>>()
        .ok_or("`input` holds something other than strings")?;
    match object.get("encoding_format") {
        None => {}
        Some(Value::String(format)) if format == "float" => {}
        Some(other) => return Err(format!("`encoding_format` {other} is not \"float\"")),
    }
    Ok(SeenEmbedding {
        model,
        input,
        authorization,
    })
}

fn error(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    respond(status, body.to_string())
}

fn respond(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
