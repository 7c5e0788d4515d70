//! The options of recaps written by recapd (RecapService): where the LLM
//! is, how hard to use it, and how long jobs are kept.

use std::path::PathBuf;
use std::time::Duration;

/// Options of the LLM and the job queue, flattened into
/// [`super::Config`]. `--llm-url` unset turns generation off.
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

    /// Seconds a request to the LLM may take before it counts as a failed
    /// attempt.
    #[arg(long, env = "RECAPD_LLM_TIMEOUT", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub llm_timeout: u64,

    /// Attempts per job before it is FAILED.
    #[arg(long, env = "RECAPD_LLM_MAX_ATTEMPTS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub llm_max_attempts: u64,

    /// First pause after a failed attempt, in ms; it doubles per attempt
    /// (full jitter), up to 60 s, and is never shorter than the LLM's
    /// Retry-After.
    #[arg(long, env = "RECAPD_LLM_BACKOFF_BASE_MS", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub llm_backoff_base_ms: u64,

    /// Most requests to the LLM per minute, for the whole server; 0 (the
    /// default): no limit.
    #[arg(long, env = "RECAPD_LLM_REQUESTS_PER_MINUTE", default_value_t = 0)]
    pub llm_requests_per_minute: u64,

    /// How long finished jobs are kept for ListJobs: a number with a unit
    /// (s, m, h, d), e.g. 7d or 12h.
    #[arg(long, env = "RECAPD_JOB_RETENTION", default_value = "7d", value_parser = parse_duration)]
    pub job_retention: Duration,

    /// Seconds a running job's lease lasts without renewal (renewed every
    /// third of it while the request runs); a replica that stops loses its
    /// jobs to another after it.
    #[arg(long, env = "RECAPD_JOB_LEASE", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(3..=3600))]
    pub job_lease: u64,

    /// Most non-terminal jobs per chat: past it an explicit request is
    /// RESOURCE_EXHAUSTED and an automatic job is dropped (and counted).
    #[arg(long, env = "RECAPD_MAX_JOBS_PER_CHAT", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_jobs_per_chat: u64,
}

/// A duration written as a number and a unit: `s`, `m`, `h` or `d` (a
/// bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: expected a number and a unit (s, m, h, d), e.g. 7d"))?;
    let seconds_per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => return Err(format!("{other:?}: expected a unit s, m, h or d")),
    };
    value
        .checked_mul(seconds_per)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("{text:?} is too long"))
}

pub use crate::engine::QueueOptions;
pub use crate::llm::{ApiKey, LlmSetup};

impl LlmOptions {
    /// The queue's options.
    pub fn queue(&self) -> QueueOptions {
        QueueOptions {
            retention: self.job_retention,
            lease: Duration::from_secs(self.job_lease),
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
        let base_url = url.trim().trim_end_matches('/').to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!(
                "--llm-url {url:?}: expected an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1"
            ));
        }
        let api_key = match &self.llm_api_key_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--llm-api-key-file {}: {e}", path.display()))?;
                let key = text.trim();
                if key.is_empty() {
                    return Err(format!(
                        "--llm-api-key-file {}: the file is empty",
                        path.display()
                    ));
                }
                Some(ApiKey(key.to_owned()))
            }
            None => env_key
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .map(ApiKey),
        };
        Ok(Some(LlmSetup {
            base_url,
            model: self.llm_model.clone(),
            api_key,
            concurrency: usize::try_from(self.llm_concurrency).unwrap_or(4),
            timeout: Duration::from_secs(self.llm_timeout),
            max_attempts: u32::try_from(self.llm_max_attempts).unwrap_or(u32::MAX),
            backoff_base: Duration::from_millis(self.llm_backoff_base_ms),
            requests_per_minute: u32::try_from(self.llm_requests_per_minute)
                .ok()
                .filter(|n| *n > 0),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(43_200)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("7w").is_err());
        assert!(parse_duration("d").is_err());
    }
}
