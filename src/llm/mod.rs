//! The client of an OpenAI-compatible chat-completions API (Ollama,
//! llama.cpp's server, vLLM, OpenRouter, OpenAI): one request per call to
//! [`LlmClient::complete`], its failure judged [`LlmError::Retryable`] or
//! [`LlmError::Fatal`]. Concurrency limits, retries and back-off belong to
//! the caller; the client only spaces requests by `--llm-requests-per-minute`.
//!
//! HTTPS trusts the system's root certificates (the Docker image installs
//! them) through rustls with the ring provider. Proxies named by the usual
//! `HTTPS_PROXY` / `NO_PROXY` variables are used. Redirects are not
//! followed: a POST must reach the API itself.
//!
//! reqwest is built without a TLS provider of its own: a client must be
//! given a preconfigured rustls configuration, as [`LlmClient::new`] does
//! (`reqwest::Client::new()` would panic, finding no provider).
//!
//! [`EmbeddingClient`] is the same for an OpenAI-compatible `/embeddings`
//! API (the vectors of recall); both share one transport (the HTTP client,
//! key, rate limit and the judging of a failure).

mod dialect;
mod embeddings;
mod fallback;
mod setup;
mod tokenize;
mod transport;
mod wire;

pub use embeddings::{EmbeddingClient, Embeddings};
pub use setup::{ApiKey, EmbeddingSetup, LlmSetup};
pub(crate) use transport::tls_config;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Url;

use crate::domain::settings::{MaxTokensField, StructuredOutput};
use crate::telemetry::{self, spans};
use tracing::Instrument as _;

use dialect::{Dialect, Learned};
use fallback::Failure;
use transport::{InFlight, Transport, TransportSetup};

/// Most bytes of a successful answer read; a longer one is a failed attempt
/// (no sensible `max_tokens` comes near it).
const MAX_ANSWER_BYTES: usize = 8 << 20;

/// One request: the prompt, sent as the single `user` message.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionRequest {
    /// The model asked (the chat's `llm_model`, or the server's); an empty
    /// one fails without a request.
    pub model: String,
    /// The whole prompt, macros already replaced.
    pub prompt: String,
    /// The answer's length limit, sent as `max_tokens` or
    /// `max_completion_tokens` (see `max_tokens_field`).
    pub max_tokens: u64,
    /// Sent as `temperature` when set (and finite); the API's default
    /// otherwise.
    pub temperature: Option<f64>,
    /// The JSON schema the answer must follow, sent as `response_format`
    /// as `structured_output` says; `None`: no `response_format`.
    pub answer_schema: Option<AnswerSchema>,
    /// How the answer is constrained (`llm_structured_output`).
    pub structured_output: StructuredOutput,
    /// Which field carries `max_tokens` (`llm_max_tokens_field`).
    pub max_tokens_field: MaxTokensField,
    /// What the request is for, as the metrics' `kind` label (a job kind's
    /// name, such as `scene_recap`).
    pub purpose: &'static str,
}

/// The schema of a JSON answer: `response_format`'s `json_schema.name`
/// and `json_schema.schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerSchema {
    /// The schema's name (letters, digits, `_` and `-`).
    pub name: String,
    /// The JSON schema itself.
    pub schema: serde_json::Value,
}

/// A successful answer: the first choice's text, never empty or blank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The assistant message's content, as the LLM wrote it.
    pub text: String,
    /// `usage.prompt_tokens`, when the API reported it.
    pub prompt_tokens: Option<u64>,
    /// `usage.completion_tokens`, when the API reported it.
    pub completion_tokens: Option<u64>,
    /// The model that answered (`model`), when the API said, cut to 200
    /// characters.
    pub model: Option<String>,
    /// The first choice's `finish_reason`, when the API said, cut to 64
    /// characters.
    pub finish_reason: Option<String>,
}

/// Which kind of failure an [`LlmError`] is: what a job's client is told
/// (a fixed sentence per kind, `engine::jobs::failure`), while the error's
/// reason, which may hold the OS's, the resolver's, TLS's or the API's own
/// words, goes to the log only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// No HTTP answer: the connection was refused or reset, the name did
    /// not resolve, TLS failed, or the answer was cut short.
    Unreachable,
    /// A status that is not a success (a redirect too): its code.
    Status(u16),
    /// No whole answer within the request's timeout.
    TimedOut,
    /// A successful status whose body is not JSON.
    NotJson,
    /// JSON that is not the API's answer: no choices, an error object,
    /// vectors missing, repeated or of the wrong shape.
    Malformed,
    /// An answer whose text is empty or blank.
    Empty,
    /// An answer over the most bytes read.
    TooLong,
    /// No model named: nothing was sent.
    NoModel,
    /// The request could not be built: nothing was sent.
    NotSent,
}

impl FailureKind {
    /// A short fixed name of the kind (a trace's `error.kind`), never the
    /// endpoint's words.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Unreachable => "unreachable",
            FailureKind::Status(_) => "http_status",
            FailureKind::TimedOut => "timeout",
            FailureKind::NotJson => "not_json",
            FailureKind::Malformed => "malformed",
            FailureKind::Empty => "empty",
            FailureKind::TooLong => "too_long",
            FailureKind::NoModel => "no_model",
            FailureKind::NotSent => "not_sent",
        }
    }
}

/// Why a request gave no usable answer: its [`FailureKind`] (what a
/// client may be told) and a reason (a status, its name and the first 200
/// characters of the API's message, or the error below HTTP), meant for
/// the log; the reason never contains the API key, but may hold anything
/// else the endpoint, the OS or the network said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// Worth another attempt later: 408, 409, 429, 5xx, no answer within
    /// the timeout, a connection refused or reset, or an unusable answer
    /// (not JSON, no choices, empty content, too long).
    #[error("{reason}")]
    Retryable {
        /// What kind of failure it is.
        kind: FailureKind,
        /// What went wrong, for the log.
        reason: String,
        /// How long the API asked to wait (`Retry-After`), when it said.
        retry_after: Option<Duration>,
    },
    /// Retrying cannot help: any other 4xx (400, 401, 403, 404, 422...), a
    /// redirect, or no model named.
    #[error("{reason}")]
    Fatal {
        /// What kind of failure it is.
        kind: FailureKind,
        /// What went wrong, for the log.
        reason: String,
    },
}

impl LlmError {
    /// The reason, whichever the kind: for the log, never for a client.
    pub fn reason(&self) -> &str {
        match self {
            LlmError::Retryable { reason, .. } | LlmError::Fatal { reason, .. } => reason,
        }
    }

    /// What kind of failure it is (what a client may be told).
    pub fn kind(&self) -> FailureKind {
        match self {
            LlmError::Retryable { kind, .. } | LlmError::Fatal { kind, .. } => *kind,
        }
    }

    /// The metric label of this outcome.
    fn outcome(&self) -> &'static str {
        match self {
            LlmError::Retryable { .. } => "retryable",
            LlmError::Fatal { .. } => "fatal",
        }
    }

    fn retryable(kind: FailureKind, reason: impl Into<String>) -> LlmError {
        LlmError::Retryable {
            kind,
            reason: reason.into(),
            retry_after: None,
        }
    }
}

/// The client of one API endpoint, shared by every job: cheap to clone
/// (the clones share the connection pool and the rate limiter), `Send` and
/// `Sync`.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// The HTTP client, the key, the rate limit, the timeout.
    transport: Transport,
    /// `{base_url}/chat/completions`.
    endpoint: Url,
    /// `/tokenize` at the server's root (the LLM_ENDPOINT tokenizer).
    tokenize: Url,
    /// The forms this endpoint refused, per model (`AUTO` settings).
    learned: Learned,
    /// The endpoint's host and port, for traces' `server.address`.
    server: (String, Option<u16>),
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field(
                "api_key",
                &self.inner.transport.has_key().then_some("<hidden>"),
            )
            .field("timeout", &self.inner.transport.timeout())
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// A client of `setup.base_url`: each request limited to
    /// `setup.timeout` (connecting, sending and reading the whole answer),
    /// and, with `requests_per_minute`, requests spaced evenly (one every
    /// 60 s / n, so no minute holds more than n). Errors (an unusable URL
    /// or key, no system root certificate for an `https` URL) never repeat
    /// the key.
    pub fn new(setup: &LlmSetup) -> Result<LlmClient, String> {
        let endpoint = transport::endpoint(&setup.base_url, "/chat/completions", "--llm-url")?;
        let tokenize = tokenize::tokenize_endpoint(&setup.base_url)?;
        let transport = Transport::new(&TransportSetup {
            url_flag: "--llm-url",
            api: "LLM",
            key_name: "LLM API key",
            https: endpoint.scheme() == "https",
            api_key: setup.api_key.as_ref(),
            timeout: setup.timeout,
            requests_per_minute: setup.requests_per_minute,
        })?;
        Ok(LlmClient {
            inner: Arc::new(Inner {
                transport,
                server: transport::server_of(&endpoint),
                endpoint,
                tokenize,
                learned: Learned::default(),
            }),
        })
    }

    /// One chat-completions call: POST `{base_url}/chat/completions` with
    /// `model`, the prompt as the one `user` message, the token limit,
    /// `temperature` when set, `stream: false`, `response_format` when the
    /// request has an answer schema, and `Authorization: Bearer` when a key
    /// is set. Each request waits first for its turn under the rate limit.
    ///
    /// What is sent: the token limit as `max_tokens` or
    /// `max_completion_tokens`, and the answer schema as `response_format`
    /// `json_schema` (strict), `json_object`, or not at all, as the
    /// request's `max_tokens_field` and `structured_output` force. With
    /// `AUTO`, the richest form this client has not seen refused for the
    /// model (json_schema; `max_tokens`); when the endpoint answers 400 or
    /// 422 naming that feature, the client steps one form down (json_schema
    /// to json_object to none; `max_tokens` to `max_completion_tokens`),
    /// remembers it for this model for the process's life, logs a warning
    /// and counts `recapd_llm_fallbacks_total` once per step, and resends
    /// at once within this call (at most three resends). A forced form
    /// that is refused fails as any 400 does: [`LlmError::Fatal`].
    ///
    /// Records the call's duration by kind (`purpose`) and outcome (one
    /// observation however many resends: the requests' time, waits for the
    /// rate limit left out), the tokens `usage` reports, and the requests
    /// in flight. Dropping the future abandons the request.
    pub async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        if request.model.trim().is_empty() {
            return Err(LlmError::Fatal {
                kind: FailureKind::NoModel,
                reason: "no model named: set --llm-model or the chat's llm_model".into(),
            });
        }
        let mut spent = Duration::ZERO;
        let span = spans::llm_chat(&request.model, &self.inner.server, request.max_tokens);
        spans::content(&span, "gen_ai.input.messages", || {
            serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": request.prompt}]}])
                .to_string()
        });
        let result = self
            .complete_adapting(request, &mut spent)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(answer) => {
                spans::llm_answer(
                    &span,
                    answer.model.as_deref(),
                    answer.finish_reason.as_deref(),
                    answer.prompt_tokens,
                    answer.completion_tokens,
                );
                spans::content(&span, "gen_ai.output.messages", || {
                    serde_json::json!([{
                        "role": "assistant",
                        "parts": [{"type": "text", "content": answer.text}],
                        "finish_reason": answer.finish_reason,
                    }])
                    .to_string()
                });
            }
            Err(error) => spans::failed(&span, error.kind().label()),
        }
        let outcome = match &result {
            Ok(_) => "ok",
            Err(e) => e.outcome(),
        };
        let kind = request.purpose;
        metrics::histogram!(telemetry::LLM_REQUEST_DURATION, "kind" => kind, "outcome" => outcome)
            .record(spent.as_secs_f64());
        match &result {
            Ok(answer) => {
                if let Some(n) = answer.prompt_tokens {
                    metrics::counter!(telemetry::LLM_TOKENS, "kind" => kind, "direction" => "in")
                        .increment(n);
                }
                if let Some(n) = answer.completion_tokens {
                    metrics::counter!(telemetry::LLM_TOKENS, "kind" => kind, "direction" => "out")
                        .increment(n);
                }
                tracing::debug!(
                    prompt_tokens = ?answer.prompt_tokens,
                    completion_tokens = ?answer.completion_tokens,
                    answer = %answer.text,
                    "LLM answer"
                );
            }
            Err(e) => tracing::debug!(outcome, reason = e.reason(), "LLM request failed"),
        }
        result
    }

    /// Sends `request` in the form its settings and the learned forms
    /// give, then again one form down after each refusal `AUTO` may step
    /// past. Each resend is a step down one of three steps, so there are at
    /// most [`fallback::MAX_SENDS`] requests. `spent` gathers the requests' time, waits for the rate limit left
    /// out.
    async fn complete_adapting(
        &self,
        request: &CompletionRequest,
        spent: &mut Duration,
    ) -> Result<Completion, LlmError> {
        let learned = self.inner.learned.dialect(&request.model);
        let mut dialect =
            Dialect::resolve(request.structured_output, request.max_tokens_field, learned);
        let mut sends = 0;
        loop {
            sends += 1;
            self.inner.transport.wait_turn().await;
            let in_flight = InFlight::enter();
            let sent_at = Instant::now();
            let sent = self.send(request, dialect).await;
            *spent += sent_at.elapsed();
            drop(in_flight);
            let failure = match sent {
                Ok(answer) => return Ok(answer),
                Err(failure) => failure,
            };
            match self.learn(request, dialect, &failure) {
                Some(next) if sends < fallback::MAX_SENDS && next != dialect => dialect = next,
                _ => return Err(self.scrub(fallback::explain(request, dialect, failure))),
            }
        }
    }

    /// One request in `dialect`'s form.
    async fn send(
        &self,
        request: &CompletionRequest,
        dialect: Dialect,
    ) -> Result<Completion, Failure> {
        tracing::debug!(
            model = %request.model,
            max_tokens = request.max_tokens,
            token_field = dialect.token_field.label(),
            response_format = if wire::sends_response_format(request, dialect) {
                dialect.response_format.label()
            } else {
                "none"
            },
            temperature = ?request.temperature,
            prompt = %request.prompt,
            "LLM request"
        );
        let body = wire::request_body(request, dialect);
        let answer = self
            .inner
            .transport
            .post(&self.inner.endpoint, body, MAX_ANSWER_BYTES)
            .await
            .map_err(|refusal| Failure {
                named: refusal
                    .status
                    .map(|status| wire::named_features(status, &refusal.body))
                    .unwrap_or_default(),
                error: refusal.error,
            })?;
        wire::parse_answer(&answer)
            .map_err(|(kind, reason)| LlmError::retryable(kind, reason))
            .map_err(Failure::from)
    }

    /// `error` with the API key cut out of its reason, should the API or a
    /// proxy have echoed it.
    fn scrub(&self, error: LlmError) -> LlmError {
        self.inner.transport.scrub(error)
    }

    /// `text` with the API key cut out.
    fn scrub_text(&self, text: String) -> String {
        self.inner.transport.scrub_text(text)
    }
}

/// A duration for a reason: whole seconds, or milliseconds below them.
fn seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests;
