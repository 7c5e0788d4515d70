//! The client of an OpenAI-compatible embeddings API (llama.cpp's server,
//! Ollama, vLLM, OpenAI): the vectors recall searches by. One call to
//! [`EmbeddingClient::embed`] sends its texts in requests of at most
//! `--embedding-batch-size` texts, one after the other, and gives one
//! vector per text in their order, or an [`LlmError`] judged as the
//! completions client judges its own: retryable (408, 409, 429, 5xx, no
//! answer within the timeout, a failed connection, an unusable answer) or
//! fatal (any other 4xx, a redirect, no model named).
//!
//! The HTTP side is the completions client's ([`super::transport`]): the
//! same TLS roots, timeout, refusal of redirects, user agent, rate limiter,
//! key scrubbing and in-flight gauge. The client holds to
//! `--embedding-concurrency` requests in flight across all its clones;
//! retries and back-off belong to the caller (`max_attempts`,
//! `backoff_base`).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use reqwest::Url;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use super::transport::{self, InFlight, Transport, TransportSetup};
use super::{EmbeddingSetup, FailureKind, LlmError, MAX_ANSWER_BYTES, wire};
use crate::telemetry::{self, spans};
use tracing::Instrument as _;

/// The metrics' `kind` label of embedding requests.
const KIND: &str = "embedding";

/// Answer bytes allowed per text of a request, on top of the completions'
/// [`MAX_ANSWER_BYTES`]: a 4096-dimension vector written with every digit
/// of an `f32` is about 90 KB of JSON.
const ANSWER_BYTES_PER_TEXT: usize = 128 << 10;

/// The vectors of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Embeddings {
    /// One vector per input, in the inputs' order; all of one non-zero
    /// length, every value finite. Empty for no input.
    pub vectors: Vec<Vec<f32>>,
    /// `usage.prompt_tokens`, summed over the call's requests that
    /// reported it; `None` when none did.
    pub prompt_tokens: Option<u64>,
}

/// The client of one embeddings endpoint, shared by every caller: cheap to
/// clone (the clones share the connection pool, the rate limiter and the
/// concurrency limit), `Send` and `Sync`.
#[derive(Clone)]
pub struct EmbeddingClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// The HTTP client, the key, the rate limit, the timeout.
    transport: Transport,
    /// `{base_url}/embeddings`.
    endpoint: Url,
    /// The model asked.
    model: String,
    /// Most texts per request, at least 1.
    batch_size: usize,
    /// One permit per request in flight (`concurrency`).
    slots: Semaphore,
    /// The endpoint's host and port, for traces' `server.address`.
    server: (String, Option<u16>),
}

impl fmt::Debug for EmbeddingClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmbeddingClient")
            .field("endpoint", &self.inner.endpoint.as_str())
            .field("model", &self.inner.model)
            .field(
                "api_key",
                &self.inner.transport.has_key().then_some("<hidden>"),
            )
            .field("timeout", &self.inner.transport.timeout())
            .field("batch_size", &self.inner.batch_size)
            .finish_non_exhaustive()
    }
}

impl EmbeddingClient {
    /// A client of `setup.base_url`: each request limited to
    /// `setup.timeout` (connecting, sending and reading the whole answer),
    /// at most `setup.concurrency` in flight at once (at least 1), and,
    /// with `requests_per_minute`, requests spaced evenly (one every
    /// 60 s / n). A `batch_size` of 0 is taken as 1. Errors (an unusable
    /// URL or key, no system root certificate for an `https` URL) name the
    /// option and never repeat the key.
    pub fn new(setup: &EmbeddingSetup) -> Result<EmbeddingClient, String> {
        let endpoint = transport::endpoint(&setup.base_url, "/embeddings", "--embedding-url")?;
        let transport = Transport::new(&TransportSetup {
            url_flag: "--embedding-url",
            api: "embeddings",
            key_name: "embeddings API key (--embedding-api-key-file or RECAPD_EMBEDDING_API_KEY)",
            https: endpoint.scheme() == "https",
            api_key: setup.api_key.as_ref(),
            timeout: setup.timeout,
            requests_per_minute: setup.requests_per_minute,
        })?;
        Ok(EmbeddingClient {
            inner: Arc::new(Inner {
                transport,
                server: transport::server_of(&endpoint),
                endpoint,
                model: setup.model.clone(),
                batch_size: setup.batch_size.max(1),
                slots: Semaphore::new(setup.concurrency.clamp(1, Semaphore::MAX_PERMITS)),
            }),
        })
    }

    /// The vectors of `inputs`, in their order: POST
    /// `{base_url}/embeddings` with `model`, the texts as `input` (at most
    /// `batch_size` per request; a longer call sends its requests one after
    /// the other) and `encoding_format: "float"`, and `Authorization:
    /// Bearer` when a key is set. Texts are sent as they are (some APIs
    /// refuse an empty one with a 400, which is fatal: leave them out).
    ///
    /// No input: no request, no vector. No model named: [`LlmError::Fatal`]
    /// without a request. An answer is usable when its `data` holds every
    /// index of the request's texts exactly once (in any order), each
    /// `embedding` a list of finite numbers, all of the call of one
    /// non-zero length; otherwise the call fails [`LlmError::Retryable`]
    /// ("unusable answer: ..."). The first failing request fails the call;
    /// the caller retries it whole.
    ///
    /// Each request waits for a concurrency slot, then for its turn under
    /// the rate limit, and records its duration (the waits left out) in
    /// `recapd_llm_request_duration_seconds` with `kind` `embedding` and its
    /// outcome, the tokens `usage` reports as `direction` `in`, and itself
    /// in the requests in flight. Dropping the future abandons the call.
    pub async fn embed(&self, inputs: &[String]) -> Result<Embeddings, LlmError> {
        let mut all = Embeddings {
            vectors: Vec::with_capacity(inputs.len()),
            prompt_tokens: None,
        };
        if inputs.is_empty() {
            return Ok(all);
        }
        if self.inner.model.trim().is_empty() {
            return Err(LlmError::Fatal {
                kind: FailureKind::NoModel,
                reason: "no model named: set --embedding-model".into(),
            });
        }
        for batch in inputs.chunks(self.inner.batch_size) {
            let part = self.embed_batch(batch).await?;
            if let (Some(before), Some(now)) = (all.vectors.first(), part.vectors.first())
                && before.len() != now.len()
            {
                return Err(LlmError::retryable(
                    FailureKind::Malformed,
                    format!(
                        "unusable answer: vectors of {} dimensions, then of {}",
                        before.len(),
                        now.len()
                    ),
                ));
            }
            all.vectors.extend(part.vectors);
            all.prompt_tokens = match (all.prompt_tokens, part.prompt_tokens) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(all)
    }

    /// One request of at most `batch_size` texts, with its slot, its turn,
    /// its metrics and the key scrubbed from its error.
    async fn embed_batch(&self, batch: &[String]) -> Result<Embeddings, LlmError> {
        // The semaphore is never closed, so the permit is always given;
        // were it not, the request would only go unlimited.
        let _slot = self.inner.slots.acquire().await.ok();
        self.inner.transport.wait_turn().await;
        let span = spans::llm_embeddings(&self.inner.model, &self.inner.server, batch.len());
        let in_flight = InFlight::enter();
        let sent_at = Instant::now();
        let result = self.send(batch).instrument(span.clone()).await;
        let spent = sent_at.elapsed();
        match &result {
            Ok(answer) => spans::llm_answer(&span, None, None, answer.prompt_tokens, None),
            Err(error) => spans::failed(&span, error.kind().label()),
        }
        drop(in_flight);
        let result = result.map_err(|e| self.inner.transport.scrub(e));
        let outcome = match &result {
            Ok(_) => "ok",
            Err(e) => e.outcome(),
        };
        metrics::histogram!(telemetry::LLM_REQUEST_DURATION, "kind" => KIND, "outcome" => outcome)
            .record(spent.as_secs_f64());
        match &result {
            Ok(answer) => {
                if let Some(n) = answer.prompt_tokens {
                    metrics::counter!(telemetry::LLM_TOKENS, "kind" => KIND, "direction" => "in")
                        .increment(n);
                }
                tracing::debug!(
                    texts = batch.len(),
                    dimensions = answer.vectors.first().map_or(0, Vec::len),
                    prompt_tokens = ?answer.prompt_tokens,
                    "embeddings answer"
                );
            }
            Err(e) => tracing::debug!(outcome, reason = e.reason(), "embeddings request failed"),
        }
        result
    }

    /// The request itself, and the reading of its answer.
    async fn send(&self, batch: &[String]) -> Result<Embeddings, LlmError> {
        tracing::debug!(model = %self.inner.model, texts = batch.len(), "embeddings request");
        let limit =
            MAX_ANSWER_BYTES.saturating_add(batch.len().saturating_mul(ANSWER_BYTES_PER_TEXT));
        let answer = self
            .inner
            .transport
            .post(
                &self.inner.endpoint,
                request_body(&self.inner.model, batch),
                limit,
            )
            .await
            .map_err(|refusal| refusal.error)?;
        parse_answer(&answer, batch.len())
            .map_err(|(kind, reason)| LlmError::retryable(kind, reason))
    }
}

/// The JSON body of one request.
fn request_body(model: &str, batch: &[String]) -> Vec<u8> {
    let body = json!({"model": model, "input": batch, "encoding_format": "float"});
    // A `Value` of strings always serialises.
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A successful answer, as far as its shape goes.
#[derive(Deserialize)]
struct Answer {
    data: Vec<Datum>,
    #[serde(default)]
    usage: Option<Value>,
}

/// One vector of an answer.
#[derive(Deserialize)]
struct Datum {
    index: usize,
    embedding: Vec<f32>,
}

/// The vectors of an answer to `count` texts, in the texts' order, or why
/// the answer is unusable (and which kind of failure that is).
fn parse_answer(body: &[u8], count: usize) -> Result<Embeddings, (FailureKind, String)> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| unreadable(body, &e))?;
    read_vectors(answer, count).map_err(|reason| (FailureKind::Malformed, reason))
}

/// The vectors of an answer's `data`, in the texts' order, or why they
/// are unusable.
fn read_vectors(answer: Answer, count: usize) -> Result<Embeddings, String> {
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; count];
    for datum in answer.data {
        let Some(slot) = slots.get_mut(datum.index) else {
            return Err(format!(
                "unusable answer: index {} for {count} inputs",
                datum.index
            ));
        };
        if slot.replace(datum.embedding).is_some() {
            return Err(format!(
                "unusable answer: index {} given twice",
                datum.index
            ));
        }
    }
    let mut vectors = Vec::with_capacity(count);
    for (index, slot) in slots.into_iter().enumerate() {
        match slot {
            Some(vector) => vectors.push(vector),
            None => return Err(format!("unusable answer: no vector for input {index}")),
        }
    }
    check_vectors(&vectors)?;
    Ok(Embeddings {
        vectors,
        prompt_tokens: answer
            .usage
            .as_ref()
            .and_then(|usage| usage.get("prompt_tokens"))
            .and_then(Value::as_u64),
    })
}

/// Why a successful answer could not be read as vectors: not JSON, an
/// error object, or the wrong shape.
fn unreadable(body: &[u8], error: &serde_json::Error) -> (FailureKind, String) {
    match serde_json::from_slice::<Value>(body) {
        Err(_) => (
            FailureKind::NotJson,
            format!(
                "the answer is not JSON: {}",
                wire::snippet(&String::from_utf8_lossy(body))
            ),
        ),
        Ok(value) if value.get("error").is_some() => (
            FailureKind::Malformed,
            format!("the answer is an error: {}", wire::error_message(body)),
        ),
        Ok(_) => (
            FailureKind::Malformed,
            format!("unusable answer: {}", wire::snippet(&error.to_string())),
        ),
    }
}

/// Every vector of one non-zero length, every value finite (a number past
/// `f32`'s range reads as infinite).
fn check_vectors(vectors: &[Vec<f32>]) -> Result<(), String> {
    let Some(dimensions) = vectors.first().map(Vec::len) else {
        return Ok(());
    };
    if dimensions == 0 {
        return Err("unusable answer: an empty vector".into());
    }
    for (index, vector) in vectors.iter().enumerate() {
        if vector.len() != dimensions {
            return Err(format!(
                "unusable answer: the vector of input {index} has {} dimensions, that of input 0 {dimensions}",
                vector.len()
            ));
        }
        if !vector.iter().all(|v| v.is_finite()) {
            return Err(format!(
                "unusable answer: the vector of input {index} holds a value that is not finite"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
