//! What the chat-completions and embeddings clients share: the HTTP client
//! of one API (rustls with the system's roots, the per-request timeout, no
//! redirects, recapd's user agent), the bearer key and its scrubbing from
//! every reason, the rate limit, the requests-in-flight gauge, and how one
//! POST's outcome is judged (status, `Retry-After`, body limits, failures
//! below HTTP). What is sent and how an answer is read is each client's.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Response, Url};
use rustls::{ClientConfig, RootCertStore};

use super::{ApiKey, FailureKind, LlmError, seconds, wire};
use crate::telemetry;
use crate::tls_common::with_causes;

/// Most bytes of an error body read (only its start is reported).
const MAX_ERROR_BYTES: usize = 64 << 10;

/// What a client's transport is made from.
pub(super) struct TransportSetup<'a> {
    /// The flag that names the URL (`--llm-url`), for errors.
    pub(super) url_flag: &'static str,
    /// What the API is called in errors (`LLM`, `embeddings`).
    pub(super) api: &'static str,
    /// What the key is called in errors (`LLM API key`).
    pub(super) key_name: &'static str,
    /// Whether the endpoint is `https` (then a root certificate is needed).
    pub(super) https: bool,
    /// The API key, sent as `Authorization: Bearer` when set.
    pub(super) api_key: Option<&'a ApiKey>,
    /// Per-request time limit: connecting, sending, reading the answer.
    pub(super) timeout: Duration,
    /// Requests per minute; `None` (or zero): no limit.
    pub(super) requests_per_minute: Option<u32>,
}

/// One API's HTTP side, shared by every call of its client.
pub(super) struct Transport {
    http: reqwest::Client,
    /// `Bearer <key>`, marked sensitive.
    authorization: Option<HeaderValue>,
    /// The key itself, cut out of any reason that would repeat it.
    key: Option<String>,
    /// One request every `60 s / requests_per_minute`, shared by all calls.
    limiter: Option<DefaultDirectRateLimiter>,
    timeout: Duration,
    /// The flag to set when the API redirects.
    url_flag: &'static str,
}

/// Why one POST gave no answer: the error, and for a failing status the
/// status and the start of its body (what the completions client reads a
/// refused feature from).
pub(super) struct Refusal {
    /// The judged error, the key not yet scrubbed.
    pub(super) error: LlmError,
    /// The failing status; `None` for a failure below HTTP or an
    /// unreadable successful answer.
    pub(super) status: Option<u16>,
    /// The start of the error body (at most 64 KiB); empty without one.
    pub(super) body: Vec<u8>,
}

impl From<LlmError> for Refusal {
    fn from(error: LlmError) -> Refusal {
        Refusal {
            error,
            status: None,
            body: Vec::new(),
        }
    }
}

/// `{base_url}{path}` as a URL; an error names `url_flag`.
pub(super) fn endpoint(base_url: &str, path: &str, url_flag: &str) -> Result<Url, String> {
    Url::parse(&format!("{base_url}{path}")).map_err(|e| format!("{url_flag} {base_url:?}: {e}"))
}

impl Transport {
    /// The transport `setup` describes. Errors (a key no header can carry,
    /// no system root certificate for an `https` URL) never repeat the key.
    pub(super) fn new(setup: &TransportSetup<'_>) -> Result<Transport, String> {
        let key = setup.api_key.map(|k| k.0.clone());
        let authorization = match &key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    format!(
                        "the {} holds characters an HTTP header cannot carry",
                        setup.key_name
                    )
                })?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let tls = tls_config(setup.https, setup.url_flag)?;
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(setup.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("recapd/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .build()
            .map_err(|e| format!("the {} client: {}", setup.api, with_causes(&e)))?;
        let limiter = setup
            .requests_per_minute
            .and_then(NonZeroU32::new)
            .and_then(|n| Quota::with_period(Duration::from_secs(60) / n.get()))
            .map(RateLimiter::direct);
        Ok(Transport {
            http,
            authorization,
            key,
            limiter,
            timeout: setup.timeout,
            url_flag: setup.url_flag,
        })
    }

    /// Whether a key is sent.
    pub(super) fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The per-request time limit.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Waits for this request's turn under the rate limit (at once
    /// without one).
    pub(super) async fn wait_turn(&self) {
        if let Some(limiter) = &self.limiter {
            limiter.until_ready().await;
        }
    }

    /// POSTs `body` as JSON to `endpoint`, with the key when set, and
    /// returns the successful answer's body, read up to `max_answer_bytes`
    /// (a longer one is retryable). A failing status is judged as
    /// [`wire::classify`] says, with `Retry-After`; a redirect is fatal.
    /// Reasons are not yet scrubbed of the key: see [`Transport::scrub`].
    pub(super) async fn post(
        &self,
        endpoint: &Url,
        body: Vec<u8>,
        max_answer_bytes: usize,
    ) -> Result<Vec<u8>, Refusal> {
        let mut post = self
            .http
            .post(endpoint.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(authorization) = &self.authorization {
            post = post.header(header::AUTHORIZATION, authorization.clone());
        }
        let mut response = post.send().await.map_err(|e| self.below_http(e))?;
        let status = response.status();
        if status.is_success() {
            return read_body(&mut response, max_answer_bytes)
                .await
                .map_err(|e| self.below_http(e))?
                .ok_or_else(|| {
                    Refusal::from(LlmError::retryable(
                        FailureKind::TooLong,
                        format!("the answer is over {max_answer_bytes} bytes"),
                    ))
                });
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
            return Err(Refusal::from(LlmError::Fatal {
                kind: FailureKind::Status(status.as_u16()),
                reason: format!(
                    "{reason} (redirected{to}; set {} to the address that answers)",
                    self.url_flag
                ),
            }));
        }
        let error = match wire::classify(status.as_u16()) {
            wire::StatusClass::Retryable => LlmError::Retryable {
                kind: FailureKind::Status(status.as_u16()),
                reason,
                retry_after,
            },
            wire::StatusClass::Fatal => LlmError::Fatal {
                kind: FailureKind::Status(status.as_u16()),
                reason,
            },
        };
        Err(Refusal {
            error,
            status: Some(status.as_u16()),
            body,
        })
    }

    /// A failure below HTTP: a timeout, a refused or broken connection, an
    /// answer cut short. Only a request that could not be built is fatal.
    fn below_http(&self, error: reqwest::Error) -> Refusal {
        if error.is_timeout() {
            return Refusal::from(LlmError::retryable(
                FailureKind::TimedOut,
                format!("no answer within {}", seconds(self.timeout)),
            ));
        }
        let is_builder = error.is_builder();
        let is_connect = error.is_connect();
        let text = with_causes(&error.without_url());
        Refusal::from(if is_builder {
            LlmError::Fatal {
                kind: FailureKind::NotSent,
                reason: format!("the request could not be built: {text}"),
            }
        } else if is_connect {
            LlmError::retryable(
                FailureKind::Unreachable,
                format!("could not connect: {text}"),
            )
        } else {
            LlmError::retryable(FailureKind::Unreachable, text)
        })
    }

    /// `error` with the API key cut out of its reason, should the API or a
    /// proxy have echoed it.
    pub(super) fn scrub(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::Retryable {
                kind,
                reason,
                retry_after,
            } => LlmError::Retryable {
                kind,
                reason: self.scrub_text(reason),
                retry_after,
            },
            LlmError::Fatal { kind, reason } => LlmError::Fatal {
                kind,
                reason: self.scrub_text(reason),
            },
        }
    }

    /// `text` with the API key cut out.
    pub(super) fn scrub_text(&self, text: String) -> String {
        match self.key.as_deref().filter(|k| !k.is_empty()) {
            Some(key) if text.contains(key) => text.replace(key, "<hidden>"),
            _ => text,
        }
    }
}

/// `url`'s host and port (the scheme's default when it names none), as
/// traces' `server.address` and `server.port` give them.
pub(super) fn server_of(url: &Url) -> (String, Option<u16>) {
    (
        url.host_str().unwrap_or_default().to_owned(),
        url.port_or_known_default(),
    )
}

/// The rustls configuration of a client: the ring provider and the
/// system's roots, HTTP/1.1. Without any root, an `https` endpoint is an
/// error naming `url_flag`; a plain `http` one needs none.
pub(crate) fn tls_config(https: bool, url_flag: &str) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if https && added == 0 {
        return Err(format!(
            "{url_flag} is https but no system root certificate was found (install ca-certificates, or set SSL_CERT_FILE)"
        ));
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

/// Counts one request in [`telemetry::LLM_IN_FLIGHT`] while it lives, so
/// an abandoned request is counted out too.
pub(super) struct InFlight;

impl InFlight {
    pub(super) fn enter() -> InFlight {
        metrics::gauge!(telemetry::LLM_IN_FLIGHT).increment(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::gauge!(telemetry::LLM_IN_FLIGHT).decrement(1.0);
    }
}
