//! The LLM clients' options: where the API is, how to authenticate, how
//! hard to use it, for chat completions ([`LlmSetup`]) and for embeddings
//! ([`EmbeddingSetup`]). `config` builds them from the command line; the
//! clients and the engine's job runner read them.

use std::time::Duration;

/// The API key, kept out of `Debug` output and logs.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(pub String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<hidden>)")
    }
}

/// The LLM client's checked options, as the server runs with them
/// (`config` makes them from the command line; `None` there when
/// `--llm-url` is unset).
#[derive(Debug, Clone)]
pub struct LlmSetup {
    /// The base URL, without a trailing `/`.
    pub base_url: String,
    /// The server's default model.
    pub model: String,
    /// The API key, from the file or the environment.
    pub api_key: Option<ApiKey>,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Per-request time limit.
    pub timeout: Duration,
    /// Attempts per job.
    pub max_attempts: u32,
    /// First back-off pause.
    pub backoff_base: Duration,
    /// Requests per minute; `None`: no limit.
    pub requests_per_minute: Option<u32>,
}

/// The embeddings client's checked options, as the server runs with them
/// (`config` makes them from the command line; `None` there when
/// `--embedding-url` is unset, and recall then searches by keyword alone).
#[derive(Debug, Clone)]
pub struct EmbeddingSetup {
    /// The base URL, without a trailing `/`; the client posts to its
    /// `/embeddings`.
    pub base_url: String,
    /// The embedding model asked; an empty one fails every request
    /// without sending it.
    pub model: String,
    /// The API key, from the file or the environment.
    pub api_key: Option<ApiKey>,
    /// Requests in flight at once, for the whole server (the client
    /// holds to it; at least 1).
    pub concurrency: usize,
    /// Per-request time limit.
    pub timeout: Duration,
    /// Attempts per embedding job (the caller's queue retries, not the
    /// client).
    pub max_attempts: u32,
    /// First back-off pause of the caller's retries.
    pub backoff_base: Duration,
    /// Requests per minute; `None`: no limit.
    pub requests_per_minute: Option<u32>,
    /// Most texts in one request (at least 1); a longer call is sent as
    /// several requests.
    pub batch_size: usize,
}
