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

mod dialect;
mod fallback;
mod setup;
mod wire;

pub use setup::{ApiKey, LlmSetup};

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Response, Url};
use rustls::{ClientConfig, RootCertStore};

use crate::domain::settings::{MaxTokensField, StructuredOutput};
use crate::telemetry;

use crate::tls_common::with_causes;
use dialect::{Dialect, Learned};
use fallback::Failure;

/// Most bytes of a successful answer read; a longer one is a failed attempt
/// (no sensible `max_tokens` comes near it).
const MAX_ANSWER_BYTES: usize = 8 << 20;
/// Most bytes of an error body read (only its start is reported).
const MAX_ERROR_BYTES: usize = 64 << 10;

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
}

/// Why a request gave no usable answer. Reasons are short (a status, its
/// name and the first 200 characters of the API's message), meant for a
/// job's `last_error`, and never contain the API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// Worth another attempt later: 408, 409, 429, 5xx, no answer within
    /// the timeout, a connection refused or reset, or an unusable answer
    /// (not JSON, no choices, empty content, too long).
    #[error("{reason}")]
    Retryable {
        /// What went wrong.
        reason: String,
        /// How long the API asked to wait (`Retry-After`), when it said.
        retry_after: Option<Duration>,
    },
    /// Retrying cannot help: any other 4xx (400, 401, 403, 404, 422...), a
    /// redirect, or no model named.
    #[error("{reason}")]
    Fatal {
        /// What went wrong.
        reason: String,
    },
}

impl LlmError {
    /// The reason, whichever the kind.
    pub fn reason(&self) -> &str {
        match self {
            LlmError::Retryable { reason, .. } | LlmError::Fatal { reason } => reason,
        }
    }

    /// The metric label of this outcome.
    fn outcome(&self) -> &'static str {
        match self {
            LlmError::Retryable { .. } => "retryable",
            LlmError::Fatal { .. } => "fatal",
        }
    }

    fn retryable(reason: impl Into<String>) -> LlmError {
        LlmError::Retryable {
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
    http: reqwest::Client,
    /// `{base_url}/chat/completions`.
    endpoint: Url,
    /// `Bearer <key>`, marked sensitive.
    authorization: Option<HeaderValue>,
    /// The key itself, cut out of any reason that would repeat it.
    key: Option<String>,
    /// One request every `60 s / requests_per_minute`, shared by all calls.
    limiter: Option<DefaultDirectRateLimiter>,
    timeout: Duration,
    /// The forms this endpoint refused, per model (`AUTO` settings).
    learned: Learned,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("api_key", &self.inner.key.as_ref().map(|_| "<hidden>"))
            .field("timeout", &self.inner.timeout)
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
        let endpoint = Url::parse(&format!("{}/chat/completions", setup.base_url))
            .map_err(|e| format!("--llm-url {:?}: {e}", setup.base_url))?;
        let key = setup.api_key.as_ref().map(|k| k.0.clone());
        let authorization = match &key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    "the LLM API key holds characters an HTTP header cannot carry".to_owned()
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let tls = tls_config(endpoint.scheme() == "https")?;
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(setup.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("recapd/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .build()
            .map_err(|e| format!("the LLM client: {}", with_causes(&e)))?;
        let limiter = setup
            .requests_per_minute
            .and_then(NonZeroU32::new)
            .and_then(|n| Quota::with_period(Duration::from_secs(60) / n.get()))
            .map(RateLimiter::direct);
        Ok(LlmClient {
            inner: Arc::new(Inner {
                http,
                endpoint,
                authorization,
                key,
                limiter,
                timeout: setup.timeout,
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
                reason: "no model named: set --llm-model or the chat's llm_model".into(),
            });
        }
        let mut spent = Duration::ZERO;
        let result = self.complete_adapting(request, &mut spent).await;
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
            if let Some(limiter) = &self.inner.limiter {
                limiter.until_ready().await;
            }
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
        let mut post = self
            .inner
            .http
            .post(self.inner.endpoint.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(wire::request_body(request, dialect));
        if let Some(authorization) = &self.inner.authorization {
            post = post.header(header::AUTHORIZATION, authorization.clone());
        }
        let mut response = post.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        if status.is_success() {
            let body = read_body(&mut response, MAX_ANSWER_BYTES)
                .await
                .map_err(|e| self.transport(e))?
                .ok_or_else(|| {
                    LlmError::retryable(format!("the answer is over {MAX_ANSWER_BYTES} bytes"))
                })?;
            return wire::parse_answer(&body)
                .map_err(LlmError::retryable)
                .map_err(Failure::from);
        }
        let retry_after = wire::retry_after(
            header_text(&response, header::RETRY_AFTER.as_str()),
            header_text(&response, "retry-after-ms"),
            SystemTime::now(),
        );
        let location = header_text(&response, header::LOCATION.as_str()).map(wire::snippet);
        // Only the start of an error body is reported; one that cannot be
        // read in full still has its status.
        let body = match read_body(&mut response, MAX_ERROR_BYTES).await {
            Ok(Some(body)) => body,
            Ok(None) | Err(_) => Vec::new(),
        };
        let reason = wire::status_reason(status.as_u16(), status.canonical_reason(), &body);
        if status.is_redirection() {
            let to = location.map_or_else(String::new, |l| format!(" to {l}"));
            return Err(Failure::from(LlmError::Fatal {
                reason: format!(
                    "{reason} (redirected{to}; set --llm-url to the address that answers)"
                ),
            }));
        }
        let error = match wire::classify(status.as_u16()) {
            wire::StatusClass::Retryable => LlmError::Retryable {
                reason,
                retry_after,
            },
            wire::StatusClass::Fatal => LlmError::Fatal { reason },
        };
        Err(Failure {
            error,
            named: wire::named_features(status.as_u16(), &body),
        })
    }

    /// A failure below HTTP: a timeout, a refused or broken connection, an
    /// answer cut short. Only a request that could not be built is fatal.
    fn transport(&self, error: reqwest::Error) -> LlmError {
        if error.is_timeout() {
            return LlmError::retryable(format!(
                "no answer within {}",
                seconds(self.inner.timeout)
            ));
        }
        let is_builder = error.is_builder();
        let is_connect = error.is_connect();
        let text = with_causes(&error.without_url());
        if is_builder {
            LlmError::Fatal {
                reason: format!("the request could not be built: {text}"),
            }
        } else if is_connect {
            LlmError::retryable(format!("could not connect: {text}"))
        } else {
            LlmError::retryable(text)
        }
    }

    /// `error` with the API key cut out of its reason, should the API or a
    /// proxy have echoed it.
    fn scrub(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::Retryable {
                reason,
                retry_after,
            } => LlmError::Retryable {
                reason: self.scrub_text(reason),
                retry_after,
            },
            LlmError::Fatal { reason } => LlmError::Fatal {
                reason: self.scrub_text(reason),
            },
        }
    }

    /// `text` with the API key cut out.
    fn scrub_text(&self, text: String) -> String {
        match self.inner.key.as_deref().filter(|k| !k.is_empty()) {
            Some(key) if text.contains(key) => text.replace(key, "<hidden>"),
            _ => text,
        }
    }
}

/// The rustls configuration of the client: the ring provider and the
/// system's roots, HTTP/1.1. Without any root, an `https` endpoint is an
/// error; a plain `http` one needs none.
fn tls_config(https: bool) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if https && added == 0 {
        return Err(
            "--llm-url is https but no system root certificate was found (install ca-certificates, or set SSL_CERT_FILE)"
                .into(),
        );
    }
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// Reads the body, up to `limit` bytes; `None` when it is longer.
async fn read_body(
    response: &mut Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

fn header_text<'a>(response: &'a Response, name: &str) -> Option<&'a str> {
    response.headers().get(name).and_then(|v| v.to_str().ok())
}

/// A duration for a reason: whole seconds, or milliseconds below them.
fn seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

/// Counts one request in [`telemetry::LLM_IN_FLIGHT`] while it lives, so
/// an abandoned request is counted out too.
struct InFlight;

impl InFlight {
    fn enter() -> InFlight {
        metrics::gauge!(telemetry::LLM_IN_FLIGHT).increment(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::gauge!(telemetry::LLM_IN_FLIGHT).decrement(1.0);
    }
}

#[cfg(test)]
mod tests;
