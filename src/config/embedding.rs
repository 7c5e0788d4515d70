//! The options of recall's vectors: where the embeddings API is, and how
//! hard to use it. Without `--embedding-url` recall searches by keyword
//! alone.

use std::path::PathBuf;
use std::time::Duration;

use super::duration::{BareUnit, parse_duration_in, seconds};
use super::llm::{api_key, base_url};

pub use crate::llm::EmbeddingSetup;

/// Options of the embeddings API, flattened into [`super::Config`].
/// `--embedding-url` unset: recall uses keyword search alone.
#[derive(Debug, Clone, clap::Args)]
pub struct EmbeddingOptions {
    /// Base URL of an OpenAI-compatible API serving embeddings (e.g.
    /// http://127.0.0.1:8080/v1 for llama.cpp's server, or
    /// http://127.0.0.1:11434/v1 for Ollama); recapd posts to its
    /// `/embeddings`. Unset: recall searches by keyword alone.
    #[arg(long, env = "RECAPD_EMBEDDING_URL")]
    pub embedding_url: Option<String>,

    /// The embedding model asked (required with --embedding-url: every
    /// request fails without one).
    #[arg(long, env = "RECAPD_EMBEDDING_MODEL", default_value = "")]
    pub embedding_model: String,

    /// File holding the embeddings API key (sent as `Authorization:
    /// Bearer`); the environment variable RECAPD_EMBEDDING_API_KEY may hold
    /// the key itself instead. Never logged.
    #[arg(long, env = "RECAPD_EMBEDDING_API_KEY_FILE")]
    pub embedding_api_key_file: Option<PathBuf>,

    /// Requests to the embeddings API in flight at once, for the whole
    /// server.
    #[arg(long, env = "RECAPD_EMBEDDING_CONCURRENCY", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub embedding_concurrency: u64,

    /// How long a request to the embeddings API may take before it counts
    /// as a failed attempt: a duration from 1s to 1h such as 30s or 2m; a
    /// bare number is seconds.
    #[arg(long, env = "RECAPD_EMBEDDING_TIMEOUT", value_name = "DURATION",
          default_value = "30s", value_parser = parse_embedding_timeout)]
    pub embedding_timeout: Duration,

    /// Attempts to embed a text before giving up on it.
    #[arg(long, env = "RECAPD_EMBEDDING_MAX_ATTEMPTS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub embedding_max_attempts: u64,

    /// First pause after a failed embeddings request: a duration from 1ms
    /// to 60s such as 250ms or 2s; a bare number is milliseconds. It
    /// doubles per attempt, as --llm-backoff-base-ms does.
    #[arg(long, env = "RECAPD_EMBEDDING_BACKOFF_BASE", value_name = "DURATION",
          default_value = "1000ms", value_parser = parse_embedding_backoff_base)]
    pub embedding_backoff_base: Duration,

    /// Most requests to the embeddings API per minute, for the whole
    /// server; 0 (the default): no limit.
    #[arg(
        long,
        env = "RECAPD_EMBEDDING_REQUESTS_PER_MINUTE",
        default_value_t = 0
    )]
    pub embedding_requests_per_minute: u64,

    /// Most texts in one request to the embeddings API.
    #[arg(long, env = "RECAPD_EMBEDDING_BATCH_SIZE", default_value_t = 32,
          value_parser = clap::value_parser!(u64).range(1..=2048))]
    pub embedding_batch_size: u64,
}

/// Parses `--embedding-timeout`: 1 s to 1 h, a bare number in seconds.
fn parse_embedding_timeout(text: &str) -> Result<Duration, String> {
    parse_duration_in(text, BareUnit::Seconds, seconds(1)..=seconds(3600))
}

/// Parses `--embedding-backoff-base`: 1 ms to 60 s, a bare number in
/// milliseconds (as `--llm-backoff-base-ms`).
fn parse_embedding_backoff_base(text: &str) -> Result<Duration, String> {
    parse_duration_in(
        text,
        BareUnit::Milliseconds,
        Duration::from_millis(1)..=seconds(60),
    )
}

impl EmbeddingOptions {
    /// Checks the URL and reads the API key (from
    /// `--embedding-api-key-file`, or `env_key`: the value of
    /// RECAPD_EMBEDDING_API_KEY). `None` without `--embedding-url`. Errors
    /// name the option and never repeat the key.
    pub fn setup(&self, env_key: Option<String>) -> Result<Option<EmbeddingSetup>, String> {
        let Some(url) = &self.embedding_url else {
            return Ok(None);
        };
        let base_url = base_url("--embedding-url", url)?;
        let api_key = api_key(
            "--embedding-api-key-file",
            self.embedding_api_key_file.as_deref(),
            env_key,
        )?;
        Ok(Some(EmbeddingSetup {
            base_url,
            model: self.embedding_model.clone(),
            api_key,
            concurrency: usize::try_from(self.embedding_concurrency).unwrap_or(2),
            timeout: self.embedding_timeout,
            max_attempts: u32::try_from(self.embedding_max_attempts).unwrap_or(u32::MAX),
            backoff_base: self.embedding_backoff_base,
            requests_per_minute: u32::try_from(self.embedding_requests_per_minute)
                .ok()
                .filter(|n| *n > 0),
            batch_size: usize::try_from(self.embedding_batch_size).unwrap_or(32),
        }))
    }
}
