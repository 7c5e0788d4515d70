//! An OpenAI-compatible LLM for the tests: a real HTTP/1.1 server on a
//! loopback port that checks each chat-completions request and answers
//! from a script.
//!
//! ```ignore
//! let fake = FakeLlm::start(|seen| {
//!     if seen.prompt.contains("scene") { Reply::answer(r#"{"recap":"..."}"#) }
//!     else { Reply::status(429, "slow down").with_retry_after("1") }
//! }).await;
//! let setup = fake.setup();          // an LlmSetup pointing at it
//! // ... run recapd or an LlmClient against fake.url() ...
//! assert!(fake.rejected().is_empty()); // every request was well formed
//! ```
//!
//! `POST /v1/chat/completions` exists, and `POST /tokenize` at the root
//! as llama.cpp's server has it (`{"content": text}` answered
//! `{"tokens": [...]}`, one token per character; see
//! [`FakeLlm::tokenized`] and [`FakeLlm::refuse_tokenize`]); anything else
//! is 404. A body
//! that is not a well-formed request (a JSON object with a non-empty
//! `model`, `messages` holding exactly one `user` message with string
//! content, at most one of `max_tokens` and `max_completion_tokens`, a
//! positive integer, `temperature` a number in 0..=2 if present, `stream`
//! false if present, `response_format` if present either
//! `{"type":"json_object"}` or `{"type":"json_schema","json_schema":
//! {"name": non-empty string, "strict": bool if present, "schema": object}}`)
//! is answered 400 and its fault kept in [`FakeLlm::rejected`]; the script
//! never sees it. The fake accepts `response_format` but does not enforce
//! it: the script decides what to answer (honour it, ignore it, or refuse
//! it with [`Reply::refuse_response_format`]).

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
use recapd::config::LlmSetup;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

/// The path the fake answers, under [`FakeLlm::url`].
const PATH: &str = "/v1/chat/completions";
/// llama.cpp's tokenizer path, at the server's root.
const TOKENIZE_PATH: &str = "/tokenize";

/// A well-formed request, as the script sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenRequest {
    /// `model`.
    pub model: String,
    /// The content of the one user message: the prompt.
    pub prompt: String,
    /// `max_tokens`, when sent.
    pub max_tokens: Option<u64>,
    /// `max_completion_tokens`, when sent (never with `max_tokens`).
    pub max_completion_tokens: Option<u64>,
    /// `response_format`, the whole object as sent, when sent.
    pub response_format: Option<Value>,
    /// `temperature`, when sent.
    pub temperature: Option<f64>,
    /// The `Authorization` header, when sent (e.g. `Bearer sk-...`).
    pub authorization: Option<String>,
}

impl SeenRequest {
    /// `response_format.json_schema.schema` when the request asked for a
    /// JSON schema (`type` `json_schema`); `None` otherwise.
    pub fn schema(&self) -> Option<&Value> {
        let format = self.response_format.as_ref()?;
        if format.get("type").and_then(Value::as_str) != Some("json_schema") {
            return None;
        }
        format.get("json_schema")?.get("schema")
    }

    /// `response_format.type` (`json_schema`, `json_object`), when sent.
    pub fn response_format_type(&self) -> Option<&str> {
        self.response_format.as_ref()?.get("type")?.as_str()
    }
}

/// What the fake answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// 200 with this text as the assistant's content, and `usage`: the
    /// prompt's and the text's whitespace-separated words as tokens.
    Answer(String),
    /// This status, with `Retry-After` when set, and this body (sent as
    /// JSON when it parses as JSON, as text otherwise).
    Status {
        /// The status code.
        code: u16,
        /// The `Retry-After` header's value.
        retry_after: Option<String>,
        /// The body.
        body: String,
    },
    /// 200 with `"choices": []`.
    EmptyChoices,
    /// 200 with this body as it is.
    Raw(String),
    /// The other reply, after this pause (counted in flight meanwhile).
    Slow(Duration, Box<Reply>),
}

impl Reply {
    /// [`Reply::Answer`] of `text`.
    pub fn answer(text: impl Into<String>) -> Reply {
        Reply::Answer(text.into())
    }

    /// `code` with an OpenAI-shaped error body carrying `message`.
    pub fn status(code: u16, message: &str) -> Reply {
        Reply::Status {
            code,
            retry_after: None,
            body: json!({"error": {"message": message, "type": "fake_error", "code": code}})
                .to_string(),
        }
    }

    /// 400 as an endpoint answers a `response_format` it does not support
    /// (of type `kind`: `json_schema` or `json_object`).
    pub fn refuse_response_format(kind: &str) -> Reply {
        Reply::status(
            400,
            &format!("'response_format' of type '{kind}' is not supported"),
        )
    }

    /// 400 as OpenAI's newer models answer `max_tokens`.
    pub fn refuse_max_tokens() -> Reply {
        Reply::status(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        )
    }

    /// This reply with a `Retry-After` header (a [`Reply::Status`] only;
    /// other replies are returned as they are).
    pub fn with_retry_after(self, value: impl Into<String>) -> Reply {
        match self {
            Reply::Status { code, body, .. } => Reply::Status {
                code,
                retry_after: Some(value.into()),
                body,
            },
            other => other,
        }
    }

    /// This reply after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Slow(delay, Box::new(self))
    }
}

type Script = dyn Fn(&SeenRequest) -> Reply + Send + Sync;

struct Shared {
    script: Box<Script>,
    requests: Mutex<Vec<SeenRequest>>,
    rejected: Mutex<Vec<String>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// The texts `/tokenize` was asked to count, in order.
    tokenized: Mutex<Vec<String>>,
    /// `/tokenize` answers 404 (as an endpoint without it).
    tokenize_refused: std::sync::atomic::AtomicBool,
    /// `/tokenize` answers only after this many milliseconds.
    tokenize_delay_ms: std::sync::atomic::AtomicU64,
}

/// The running fake. Dropping it stops it too (without waiting).
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    server: Mutex<Option<JoinHandle<()>>>,
}

impl FakeLlm {
    /// Starts the fake on `127.0.0.1:0`; `script` chooses each reply.
    pub async fn start(script: impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the fake LLM binds a loopback port");
        let addr = listener
            .local_addr()
            .expect("a bound socket has an address");
        let shared = Arc::new(Shared {
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
            rejected: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            tokenized: Mutex::new(Vec::new()),
            tokenize_refused: std::sync::atomic::AtomicBool::new(false),
            tokenize_delay_ms: std::sync::atomic::AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(listener, shared.clone(), stop.clone()));
        FakeLlm {
            addr,
            shared,
            stop,
            server: Mutex::new(Some(server)),
        }
    }

    /// A fake that answers every request with `text`.
    pub async fn answering(text: impl Into<String>) -> FakeLlm {
        let text = text.into();
        FakeLlm::start(move |_| Reply::Answer(text.clone())).await
    }

    /// The base URL to give recapd: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// A setup pointing at the fake: model `fake-model`, no key, 4 in
    /// flight, 5 s timeout, 3 attempts, 10 ms back-off, no rate limit.
    pub fn setup(&self) -> LlmSetup {
        LlmSetup {
            base_url: self.url(),
            model: "fake-model".into(),
            api_key: None,
            concurrency: 4,
            timeout: Duration::from_secs(5),
            max_attempts: 3,
            backoff_base: Duration::from_millis(10),
            requests_per_minute: None,
        }
    }

    /// Every well-formed request so far, in arrival order.
    pub fn requests(&self) -> Vec<SeenRequest> {
        self.shared.requests.lock().clone()
    }

    /// Why each malformed request was answered 400 (or 404), in order.
    pub fn rejected(&self) -> Vec<String> {
        self.shared.rejected.lock().clone()
    }

    /// The texts `POST /tokenize` counted so far, in arrival order.
    pub fn tokenized(&self) -> Vec<String> {
        self.shared.tokenized.lock().clone()
    }

    /// From now on `/tokenize` answers 404, as an endpoint without it.
    pub fn refuse_tokenize(&self) {
        self.shared.tokenize_refused.store(true, Ordering::SeqCst);
    }

    /// From now on `/tokenize` answers only after `delay` (a slow or
    /// stuck endpoint).
    pub fn delay_tokenize(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.shared.tokenize_delay_ms.store(ms, Ordering::SeqCst);
    }

    /// The count the fake's `/tokenize` gives `text`: its characters.
    pub fn token_count(text: &str) -> u32 {
        u32::try_from(text.chars().count()).expect("test texts are short")
    }

    /// The most requests being answered at once so far.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Stops the fake: its port closed and every connection dropped (a
    /// request being answered gets no answer). Afterwards connections are
    /// refused.
    pub async fn stop(&self) {
        self.stop.cancel();
        let server = self.server.lock().take();
        if let Some(server) = server {
            let _ = server.await;
        }
    }
}

impl Drop for FakeLlm {
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

/// Counts one request in flight while it lives.
struct Counted(Arc<Shared>);

impl Counted {
    fn enter(shared: &Arc<Shared>) -> Counted {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Counted(shared.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let _counted = Counted::enter(&shared);
    if request.method() == Method::POST && request.uri().path() == TOKENIZE_PATH {
        return Ok(tokenize(&shared, request).await);
    }
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
    shared.requests.lock().push(seen.clone());
    let mut reply = (shared.script)(&seen);
    while let Reply::Slow(delay, next) = reply {
        tokio::time::sleep(delay).await;
        reply = *next;
    }
    Ok(render(reply, &seen))
}

/// llama.cpp's `/tokenize`: `content` counted one token per character
/// (`add_special` must be false: recapd counts without special tokens).
async fn tokenize(shared: &Shared, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let delay = shared.tokenize_delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    if shared.tokenize_refused.load(Ordering::SeqCst) {
        return error(StatusCode::NOT_FOUND, "File Not Found");
    }
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("unreadable body: {e}")),
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("not JSON: {e}")),
    };
    let (Some(text), Some(false)) = (
        value.get("content").and_then(Value::as_str),
        value.get("add_special").and_then(Value::as_bool),
    ) else {
        let fault = format!("/tokenize: no string `content` or `add_special` not false: {value}");
        shared.rejected.lock().push(fault.clone());
        return error(StatusCode::BAD_REQUEST, &fault);
    };
    shared.tokenized.lock().push(text.to_owned());
    let tokens: Vec<u32> = text.chars().map(u32::from).collect();
    respond(
        StatusCode::OK,
        json!({ "tokens": tokens }).to_string(),
        None,
    )
}

/// The request, if it is a well-formed chat-completions request.
fn check(body: &[u8], authorization: Option<String>) -> Result<SeenRequest, String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?;
    let object = value.as_object().ok_or("the body is not a JSON object")?;
    let model = match object.get("model") {
        Some(Value::String(model)) if !model.is_empty() => model.clone(),
        _ => return Err("`model` is missing or not a non-empty string".into()),
    };
    let messages = object
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("`messages` is missing or not an array")?;
    let [message] = messages.as_slice() else {
        return Err(format!(
            "`messages` holds {} messages, not one",
            messages.len()
        ));
    };
    if message.get("role").and_then(Value::as_str) != Some("user") {
        return Err("the message's `role` is not \"user\"".into());
    }
    let prompt = message
        .get("content")
        .and_then(Value::as_str)
        .ok_or("the message's `content` is not a string")?
        .to_owned();
    let max_tokens = token_limit(object, "max_tokens")?;
    let max_completion_tokens = token_limit(object, "max_completion_tokens")?;
    if max_tokens.is_some() && max_completion_tokens.is_some() {
        return Err("both `max_tokens` and `max_completion_tokens` are sent".into());
    }
    let response_format = match object.get("response_format") {
        None => None,
        Some(format) => Some(check_response_format(format)?),
    };
    let temperature = match object.get("temperature") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(t) if (0.0..=2.0).contains(&t) => Some(t),
            _ => return Err(format!("`temperature` {v} is not a number in 0..=2")),
        },
    };
    match object.get("stream") {
        None | Some(Value::Bool(false)) => {}
        Some(v) => return Err(format!("`stream` is {v}; the fake does not stream")),
    }
    Ok(SeenRequest {
        model,
        prompt,
        max_tokens,
        max_completion_tokens,
        response_format,
        temperature,
        authorization,
    })
}

/// A token limit field: absent, or a positive integer.
fn token_limit(object: &serde_json::Map<String, Value>, name: &str) -> Result<Option<u64>, String> {
    match object.get(name) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("`{name}` {v} is not a positive integer")),
        },
    }
}

/// A well-formed `response_format`, as it was sent.
fn check_response_format(format: &Value) -> Result<Value, String> {
    match format.get("type").and_then(Value::as_str) {
        Some("json_object") => Ok(format.clone()),
        Some("json_schema") => {
            let spec = format
                .get("json_schema")
                .and_then(Value::as_object)
                .ok_or("`response_format.json_schema` is missing or not an object")?;
            match spec.get("name").and_then(Value::as_str) {
                Some(name) if !name.is_empty() => {}
                _ => return Err("`json_schema.name` is missing or not a non-empty string".into()),
            }
            if spec.get("strict").is_some_and(|s| !s.is_boolean()) {
                return Err("`json_schema.strict` is not a boolean".into());
            }
            if !spec.get("schema").is_some_and(Value::is_object) {
                return Err("`json_schema.schema` is missing or not an object".into());
            }
            Ok(format.clone())
        }
        _ => Err(format!(
            "`response_format` {format} is neither json_object nor json_schema"
        )),
    }
}

fn render(reply: Reply, seen: &SeenRequest) -> Response<Full<Bytes>> {
    match reply {
        Reply::Answer(text) => {
            let prompt_tokens = seen.prompt.split_whitespace().count();
            let completion_tokens = text.split_whitespace().count();
            let body = json!({
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": seen.model,
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            });
            respond(StatusCode::OK, body.to_string(), None)
        }
        Reply::EmptyChoices => {
            let body = json!({"id": "chatcmpl-fake", "object": "chat.completion", "choices": []});
            respond(StatusCode::OK, body.to_string(), None)
        }
        Reply::Raw(body) => respond(StatusCode::OK, body, None),
        Reply::Status {
            code,
            retry_after,
            body,
        } => {
            let status = StatusCode::from_u16(code).expect("the script gives a valid status code");
            respond(status, body, retry_after)
        }
        Reply::Slow(_, next) => render(*next, seen),
    }
}

fn error(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    respond(status, body.to_string(), None)
}

fn respond(status: StatusCode, body: String, retry_after: Option<String>) -> Response<Full<Bytes>> {
    let kind = if serde_json::from_str::<Value>(&body).is_ok() {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Some(value) = retry_after {
        headers.insert(
            header::RETRY_AFTER,
            HeaderValue::from_str(&value).expect("the script gives a valid Retry-After value"),
        );
    }
    response
}
