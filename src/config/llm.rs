//! The options of recaps written by recapd (RecapService): where the LLM
//! is, how hard to use it, and how long jobs are kept.

use std::path::PathBuf;
use std::time::Duration;

use super::duration::{BareUnit, parse_duration, parse_duration_in, seconds};

/// Options of the LLM and the job queue, flattened into
/// [`super::Config`]. `--llm-url` unset turns recap writing off.
#[derive(Debug, Clone, clap::Args)]
pub struct LlmOptions {
    /// Base URL of an OpenAI-compatible API (e.g. http://127.0.0.1:11434/v1
    /// for Ollama); recapd posts to its `/chat/completions`. Unset: recapd
    /// writes no recaps (RecapService's Generate*, DetectSceneBreaks and
    /// RetryJob answer FAILED_PRECONDITION).
    #[arg(long, env = "RECAPD_LLM_URL")]
    pub llm_url: Option<String>,

    /// The model asked when the chat's `llm_model` setting is empty.
    #[arg(long, env = "RECAPD_LLM_MODEL", default_value = "")]
    pub llm_model: String,

    /// File holding the API key (sent as `Authorization: Bearer`); the
    /// environment variable RECAPD_LLM_API_KEY may hold the key itself
    /// instead. Never logged.
    #[arg(long, env = "RECAPD_LLM_API_KEY_FILE")]
    pub llm_api_key_file: Option<PathBuf>,

    /// Requests to the LLM in flight at once, for the whole server.
    #[arg(long, env = "RECAPD_LLM_CONCURRENCY", default_value_t = 4,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub llm_concurrency: u64,

    /// How long a request to the LLM may take before it counts as a failed
    /// attempt: a duration from 1s to 1h such as 120s or 5m; a bare number
    /// is seconds.
    #[arg(long, env = "RECAPD_LLM_TIMEOUT", value_name = "DURATION",
          default_value = "120s", value_parser = parse_llm_timeout)]
    pub llm_timeout: Duration,

    /// Attempts per job before it is FAILED.
    #[arg(long, env = "RECAPD_LLM_MAX_ATTEMPTS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub llm_max_attempts: u64,

    /// First pause after a failed attempt: a duration from 1ms to 60s such
    /// as 250ms or 2s; a bare number is milliseconds. It doubles per
    /// attempt (full jitter), up to 60 s, and is never shorter than the
    /// LLM's Retry-After.
    #[arg(long = "llm-backoff-base-ms", env = "RECAPD_LLM_BACKOFF_BASE_MS",
          value_name = "DURATION", default_value = "1000ms",
          value_parser = parse_llm_backoff_base)]
    pub llm_backoff_base: Duration,

    /// Most requests to the LLM per minute, for the whole server; 0 (the
    /// default): no limit.
    #[arg(long, env = "RECAPD_LLM_REQUESTS_PER_MINUTE", default_value_t = 0)]
    pub llm_requests_per_minute: u64,

    /// How long finished jobs are kept for ListJobs: a duration such as 7d
    /// or 12h; a bare number is seconds.
    #[arg(long, env = "RECAPD_JOB_RETENTION", value_name = "DURATION",
          default_value = "7d", value_parser = parse_job_retention)]
    pub job_retention: Duration,

    /// How long a running job's lease lasts without renewal: a duration
    /// from 3s to 1h such as 60s or 2m; a bare number is seconds. It is
    /// renewed every third of it while the request runs; a replica that
    /// stops loses its jobs to another after it.
    #[arg(long, env = "RECAPD_JOB_LEASE", value_name = "DURATION",
          default_value = "60s", value_parser = parse_job_lease)]
    pub job_lease: Duration,

    /// Most non-terminal jobs per chat: past it an explicit request is
    /// RESOURCE_EXHAUSTED and an automatic job is dropped (and counted).
    #[arg(long, env = "RECAPD_MAX_JOBS_PER_CHAT", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_jobs_per_chat: u64,
}

/// Parses `--llm-timeout`: 1 s to 1 h, a bare number in seconds.
fn parse_llm_timeout(text: &str) -> Result<Duration, String> {
    parse_duration_in(text, BareUnit::Seconds, seconds(1)..=seconds(3600))
}

/// Parses `--llm-backoff-base-ms`: 1 ms to 60 s, a bare number in
/// milliseconds (the flag's unit since it was added).
fn parse_llm_backoff_base(text: &str) -> Result<Duration, String> {
    parse_duration_in(
        text,
        BareUnit::Milliseconds,
        Duration::from_millis(1)..=seconds(60),
    )
}

/// Parses `--job-retention`: any duration, a bare number in seconds.
fn parse_job_retention(text: &str) -> Result<Duration, String> {
    parse_duration(text, BareUnit::Seconds)
}

/// Parses `--job-lease`: 3 s to 1 h, a bare number in seconds.
fn parse_job_lease(text: &str) -> Result<Duration, String> {
    parse_duration_in(text, BareUnit::Seconds, seconds(3)..=seconds(3600))
}

pub use crate::engine::QueueOptions;
pub use crate::llm::{ApiKey, LlmSetup};

impl LlmOptions {
    /// The queue's options.
    pub fn queue(&self) -> QueueOptions {
        QueueOptions {
            retention: self.job_retention,
            lease: self.job_lease,
            max_jobs_per_chat: usize::try_from(self.max_jobs_per_chat).unwrap_or(usize::MAX),
        }
    }

    /// Checks the URL and reads the API key (from `--llm-api-key-file`, or
    /// `env_key`: the value of RECAPD_LLM_API_KEY). `None` without
    /// `--llm-url`. Errors name the option and never repeat the key.
    pub fn setup(&self, env_key: Option<String>) -> Result<Option<LlmSetup>, String> {
        let Some(url) = &self.llm_url else {
            return Ok(None);
        };
        let base_url = base_url("--llm-url", url)?;
        let api_key = api_key(
            "--llm-api-key-file",
            self.llm_api_key_file.as_deref(),
            env_key,
        )?;
        Ok(Some(LlmSetup {
            base_url,
            model: self.llm_model.clone(),
            api_key,
            concurrency: usize::try_from(self.llm_concurrency).unwrap_or(4),
            timeout: self.llm_timeout,
            max_attempts: u32::try_from(self.llm_max_attempts).unwrap_or(u32::MAX),
            backoff_base: self.llm_backoff_base,
            requests_per_minute: u32::try_from(self.llm_requests_per_minute)
                .ok()
                .filter(|n| *n > 0),
        }))
    }
}

/// `url` without surrounding spaces or trailing `/`s, once checked to be an
/// `http://` or `https://` URL; an error names `flag`.
pub(super) fn base_url(flag: &str, url: &str) -> Result<String, String> {
    let base_url = url.trim().trim_end_matches('/').to_owned();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(format!(
            "{flag} {url:?}: expected an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1"
        ));
    }
    Ok(base_url)
}

/// The API key: the trimmed content of `file` (`flag`'s value), which
/// must not be empty, or else `env_key` trimmed, when not empty. Errors
/// name `flag` and the file, never the key.
pub(super) fn api_key(
    flag: &str,
    file: Option<&std::path::Path>,
    env_key: Option<String>,
) -> Result<Option<ApiKey>, String> {
    match file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
            let key = text.trim();
            if key.is_empty() {
                return Err(format!("{flag} {}: the file is empty", path.display()));
            }
            Ok(Some(ApiKey(key.to_owned())))
        }
        None => Ok(env_key
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty())
            .map(ApiKey)),
    }
}
