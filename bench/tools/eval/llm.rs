//! The evaluation's own client of an OpenAI-compatible chat-completions
//! API, for the questions and the judge (recapd's jobs go through recapd).
//! It sends whole message lists, asks for a JSON schema when given one and
//! drops `response_format` for good when the endpoint answers 400 to it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

/// One endpoint and model.
#[derive(Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    endpoint: String,
    model: String,
    /// `RECAPD_LLM_API_KEY`, sent as `Authorization: Bearer`.
    key: Option<String>,
    /// Set once the endpoint refused `response_format`.
    no_response_format: Arc<AtomicBool>,
}

/// One answer: its text and the tokens the endpoint reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

impl ChatClient {
    /// A client of `{base_url}/chat/completions` asking `model`; each
    /// request may take `timeout`.
    pub fn new(base_url: &str, model: &str, timeout: Duration) -> Result<ChatClient, Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(timeout)
            .build()?;
        Ok(ChatClient {
            http,
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            key: std::env::var("RECAPD_LLM_API_KEY")
                .ok()
                .filter(|k| !k.is_empty()),
            no_response_format: Arc::new(AtomicBool::new(false)),
        })
    }

    /// One completion of `messages` (OpenAI's `{role, content}` objects),
    /// temperature 0, at most `max_tokens`; with `schema`, the answer is
    /// asked to follow it (`response_format` json_schema, strict). Retries
    /// a refused connection, a timeout, 408, 429 and 5xx up to 3 times.
    pub async fn complete(
        &self,
        messages: &[Value],
        max_tokens: u64,
        schema: Option<&Value>,
    ) -> Result<Reply, Error> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let with_format = schema.filter(|_| !self.no_response_format.load(Ordering::Relaxed));
            let mut body = json!({
                "model": self.model,
                "messages": messages,
                "max_tokens": max_tokens,
                "temperature": 0,
                "stream": false,
            });
            if let Some(schema) = with_format {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "strict": true, "schema": schema},
                });
            }
            let mut request = self
                .http
                .post(&self.endpoint)
                .header("content-type", "application/json")
                .body(body.to_string());
            if let Some(key) = &self.key {
                request = request.bearer_auth(key);
            }
            let outcome = request.send().await;
            let retryable = match outcome {
                Ok(response) => {
                    let status = response.status();
                    let text = response.text().await?;
                    if status.is_success() {
                        return reply(&text);
                    }
                    if status.as_u16() == 400 && with_format.is_some() {
                        // The endpoint does not take the schema: ask without it from now on.
                        self.no_response_format.store(true, Ordering::Relaxed);
                        continue;
                    }
                    let retryable = status.as_u16() == 408
                        || status.as_u16() == 429
                        || status.is_server_error();
                    let reason = format!(
                        "{} answered {status}: {}",
                        self.endpoint,
                        text.chars().take(300).collect::<String>()
                    );
                    if !retryable {
                        return Err(reason.into());
                    }
                    reason
                }
                Err(e) => format!("{}: {e}", self.endpoint),
            };
            if attempt >= 3 {
                return Err(retryable.into());
            }
            tokio::time::sleep(Duration::from_secs(attempt)).await;
        }
    }
}

/// The first choice's text and the usage of a chat-completions answer.
fn reply(text: &str) -> Result<Reply, Error> {
    let value: Value = serde_json::from_str(text)?;
    let content = value
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or("the LLM's answer has no choices[0].message.content")?;
    let usage = |key: &str| {
        value
            .pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(Reply {
        text: content.to_owned(),
        tokens_in: usage("prompt_tokens"),
        tokens_out: usage("completion_tokens"),
    })
}
