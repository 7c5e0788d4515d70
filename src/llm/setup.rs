//! The LLM client's options: where the API is, how to authenticate, how
//! hard to use it. `config` builds them from the command line; the client
//! and the engine's job runner read them.

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
