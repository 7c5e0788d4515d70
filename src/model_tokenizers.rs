//! The model tokenizers a chat can count with besides tiktoken's
//! vocabularies: Hugging Face `tokenizer.json` files in the operator's
//! directory (`--tokenizers-dir`), named by the setting `tokenizer_name`
//! (a file stem the domain checked: `llama-3` is `<dir>/llama-3.json`).
//!
//! Each file is read once and kept, per name, in a small cache (at most
//! [`TokenizerSetup::max_cached`] tokenizers; the least recently used one
//! goes first), so a count costs no file access. A file larger than
//! [`TokenizerSetup::max_file_bytes`] is refused before it is parsed. A
//! file replaced on disk is read again only once its tokenizer has left
//! the cache (or after a restart).
//!
//! [`Tokenizers::counter`] never fails: a chat whose tokenizer cannot be
//! loaded (no directory, a file gone since its settings were accepted)
//! counts with o200k_base, with a warning and
//! `recapd_tokenizer_fallbacks_total`; a failed name is not read again for
//! [`RETRY_AFTER`]. [`Tokenizers::check`] is the strict form, for the
//! settings update that names a tokenizer: its error tells the caller.
//!
//! Counting is `encode(text, false)` (no special tokens), with the file's
//! truncation and padding turned off (a file made for an embedding model
//! truncates at its context length, which would cap every count).
//!
//! The LLM_ENDPOINT tokenizer asks the LLM endpoint instead
//! ([`EndpointCounts`], in `endpoint`).

mod endpoint;

pub use endpoint::{EndpointCounts, MAX_QUEUED_BYTES, MAX_QUEUED_TEXTS, MAX_TEXT_BYTES};

use std::collections::HashMap;
use std::io::Read;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::domain::ids::ChatKey;
use crate::domain::settings::{InclusionSettings, TokenizerKind, check_tokenizer_name};
use crate::domain::tokens::{self, CountTokens, Counter};
use crate::telemetry;

/// How long a tokenizer that failed to load is not tried again by
/// [`Tokenizers::counter`] (each try would read the directory, and log),
/// and how long the LLM endpoint is not asked to count after a failure.
pub const RETRY_AFTER: Duration = Duration::from_secs(60);

/// The start of the name the LLM endpoint's counters are known by, the
/// model following (counts are told apart by the name; no file stem holds
/// a NUL).
const ENDPOINT_COUNTER: &str = "\u{0}llm-endpoint:";

/// Where the tokenizers are and how many the server keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenizerSetup {
    /// The directory of `tokenizer.json` files; `None`: HUGGING_FACE is
    /// refused (FAILED_PRECONDITION) and chats set to it count with
    /// o200k_base.
    pub dir: Option<PathBuf>,
    /// The largest file read, in bytes (Llama 3's tokenizer.json is about
    /// 9 MB).
    pub max_file_bytes: u64,
    /// The most tokenizers kept loaded at once (a large one takes tens of
    /// MB in memory).
    pub max_cached: usize,
    /// The most token counts of the LLM_ENDPOINT tokenizer kept (about 40
    /// bytes each).
    pub max_cached_counts: usize,
}

impl Default for TokenizerSetup {
    fn default() -> TokenizerSetup {
        TokenizerSetup {
            dir: None,
            max_file_bytes: 64 * 1024 * 1024,
            max_cached: 8,
            max_cached_counts: 100_000,
        }
    }
}

/// Why a tokenizer cannot be used. The messages name the tokenizer, never
/// the server's paths (the server's log has them).
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    /// The server was started without `--tokenizers-dir`.
    #[error("recapd has no tokenizers directory (start it with --tokenizers-dir)")]
    NoDirectory,
    /// The name is not a file stem (the settings check refuses it first).
    #[error("{0:?} is not a tokenizer name")]
    BadName(String),
    /// No `<name>.json` in the directory.
    #[error("no tokenizer {0:?} in the server's tokenizers directory")]
    NotFound(String),
    /// The file could not be read.
    #[error("the tokenizer {name:?} could not be read: {reason}")]
    Unreadable {
        /// The tokenizer's name.
        name: String,
        /// The I/O error's kind.
        reason: String,
    },
    /// The file is larger than the server reads.
    #[error("the tokenizer {name:?} is over the server's limit of {limit} bytes")]
    TooLarge {
        /// The tokenizer's name.
        name: String,
        /// [`TokenizerSetup::max_file_bytes`].
        limit: u64,
    },
    /// LLM_ENDPOINT on a server started without `--llm-url`.
    #[error("recapd has no LLM endpoint to count tokens with (start it with --llm-url)")]
    NoEndpoint,
    /// The LLM endpoint refused to count (it has no `/tokenize`).
    #[error("the LLM endpoint cannot count tokens: {0}")]
    EndpointCannotCount(String),
    /// The file is not a tokenizer.json this server can run.
    #[error("{name:?} is not a tokenizer.json recapd can load: {reason}")]
    Invalid {
        /// The tokenizer's name.
        name: String,
        /// What the parser said.
        reason: String,
    },
}

/// One loaded `tokenizer.json`, counting without special tokens.
struct HuggingFace {
    tokenizer: ::tokenizers::Tokenizer,
}

impl CountTokens for HuggingFace {
    fn count_final(&self, text: &str) -> (u32, bool) {
        // The library returns errors for what it cannot encode; a panic in
        // it is caught too, so that no text can take a request down. Both
        // fall back to o200k_base rather than count nothing.
        let encoded =
            std::panic::catch_unwind(AssertUnwindSafe(|| self.tokenizer.encode(text, false)));
        match encoded {
            Ok(Ok(encoding)) => (u32::try_from(encoding.len()).unwrap_or(u32::MAX), true),
            Ok(Err(_)) | Err(_) => {
                metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => "encode")
                    .increment(1);
                // Final: the same text fails the same way again.
                (tokens::count(TokenizerKind::O200kBase, text), true)
            }
        }
    }
}

/// The server's model tokenizers: a cheap handle to one cache.
#[derive(Clone, Default)]
pub struct Tokenizers {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    setup: TokenizerSetup,
    cache: Mutex<Cache>,
    /// The LLM endpoint's counts; `None` without `--llm-url`.
    endpoint: Option<EndpointCounts>,
}

#[derive(Default)]
struct Cache {
    /// Loaded tokenizers, with the tick of their latest use.
    loaded: HashMap<String, (Arc<HuggingFace>, u64)>,
    /// Names that failed to load, and when (at most `max_cached`).
    failed: HashMap<String, Instant>,
    tick: u64,
}

impl std::fmt::Debug for Tokenizers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizers")
            .field("setup", &self.inner.setup)
            .finish_non_exhaustive()
    }
}

impl Tokenizers {
    /// The tokenizers of `setup`'s directory (none loaded yet), without an
    /// LLM endpoint.
    pub fn new(setup: TokenizerSetup) -> Tokenizers {
        Tokenizers::with_endpoint(setup, None)
    }

    /// The tokenizers of `setup`'s directory, and `endpoint`'s for
    /// LLM_ENDPOINT.
    pub fn with_endpoint(setup: TokenizerSetup, endpoint: Option<EndpointCounts>) -> Tokenizers {
        Tokenizers {
            inner: Arc::new(Inner {
                setup,
                cache: Mutex::new(Cache::default()),
                endpoint,
            }),
        }
    }

    /// The LLM endpoint's counts, when the server has an LLM endpoint.
    pub fn endpoint(&self) -> Option<&EndpointCounts> {
        self.inner.endpoint.as_ref()
    }

    /// [`Tokenizers::counter_for`] with the default model and no chat to
    /// refresh.
    pub fn counter(&self, inclusion: &InclusionSettings) -> Counter {
        self.counter_for(inclusion, "", None)
    }

    /// What counts the tokens of a chat with `inclusion`'s settings: its
    /// tiktoken vocabulary; its HUGGING_FACE tokenizer, loaded (once) from
    /// the directory; or the LLM endpoint's, for `model` (empty: the
    /// server's), which refreshes `waiter` once the texts it had to
    /// estimate are counted. o200k_base when the tokenizer cannot be used
    /// (logged, counted in `recapd_tokenizer_fallbacks_total`). May read a
    /// file: the first use of a tokenizer after a start.
    pub fn counter_for(
        &self,
        inclusion: &InclusionSettings,
        model: &str,
        waiter: Option<&ChatKey>,
    ) -> Counter {
        match inclusion.tokenizer {
            TokenizerKind::LlmEndpoint => match &self.inner.endpoint {
                Some(endpoint) => Counter::loaded(
                    &format!("{ENDPOINT_COUNTER}{model}"),
                    endpoint.counter(model, waiter),
                ),
                None => {
                    metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => "no_endpoint")
                        .increment(1);
                    Counter::default()
                }
            },
            TokenizerKind::HuggingFace => {
                let name = &inclusion.tokenizer_name;
                match self.cached_or_load(name, false) {
                    Ok(Some(loaded)) => Counter::loaded(name, loaded),
                    Ok(None) => Counter::default(),
                    Err(error) => {
                        tracing::warn!(tokenizer = %name, %error, "a chat's tokenizer cannot be loaded; counting with o200k_base");
                        metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => "load")
                            .increment(1);
                        Counter::default()
                    }
                }
            }
            kind => Counter::tiktoken(kind),
        }
    }

    /// Checks that `inclusion`'s tokenizer can be used, loading it now if
    /// it is a HUGGING_FACE one (so its first count does not wait); an
    /// LLM_ENDPOINT one needs an endpoint (whether it counts is
    /// [`EndpointCounts::probe`]'s to tell).
    pub fn check(&self, inclusion: &InclusionSettings) -> Result<(), TokenizerError> {
        match inclusion.tokenizer {
            TokenizerKind::HuggingFace => {
                self.cached_or_load(&inclusion.tokenizer_name, true)?;
            }
            TokenizerKind::LlmEndpoint if self.inner.endpoint.is_none() => {
                return Err(TokenizerError::NoEndpoint);
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether HUGGING_FACE tokenizers can be loaded (`--tokenizers-dir`),
    /// and how many are kept loaded at most.
    pub fn loadable(&self) -> Option<usize> {
        self.inner
            .setup
            .dir
            .as_ref()
            .map(|_| self.inner.setup.max_cached.max(1))
    }

    /// Loads the tokenizer named `name` into the cache if it is not there
    /// (errors are left to [`Tokenizers::check`]). Reads a file: call it
    /// where blocking is allowed.
    pub fn preload(&self, name: &str) {
        if self.inner.setup.dir.is_some() {
            let _ = self.cached_or_load(name, true);
        }
    }

    /// The tokenizer named `name`, from the cache or read now. `Ok(None)`:
    /// a recent failure not retried yet (`strict` retries at once).
    fn cached_or_load(
        &self,
        name: &str,
        strict: bool,
    ) -> Result<Option<Arc<HuggingFace>>, TokenizerError> {
        {
            let mut cache = self.inner.cache.lock();
            cache.tick += 1;
            let tick = cache.tick;
            if let Some((loaded, used)) = cache.loaded.get_mut(name) {
                *used = tick;
                return Ok(Some(loaded.clone()));
            }
            if !strict
                && cache
                    .failed
                    .get(name)
                    .is_some_and(|at| at.elapsed() < RETRY_AFTER)
            {
                return Ok(None);
            }
        }
        // Read outside the lock: another chat's counts do not wait for it
        // (two first uses at once may both read the file; one is kept).
        let loaded = self.load(name);
        let mut cache = self.inner.cache.lock();
        let max = self.inner.setup.max_cached.max(1);
        match loaded {
            Ok(loaded) => {
                cache.failed.remove(name);
                while cache.loaded.len() >= max {
                    let oldest = cache
                        .loaded
                        .iter()
                        .min_by_key(|(_, (_, used))| *used)
                        .map(|(name, _)| name.clone());
                    match oldest {
                        Some(oldest) => cache.loaded.remove(&oldest),
                        None => break,
                    };
                }
                let tick = cache.tick;
                cache.loaded.insert(name.to_owned(), (loaded.clone(), tick));
                Ok(Some(loaded))
            }
            Err(error) => {
                if cache.failed.len() >= max {
                    cache.failed.retain(|_, at| at.elapsed() < RETRY_AFTER);
                }
                if cache.failed.len() < max {
                    cache.failed.insert(name.to_owned(), Instant::now());
                }
                Err(error)
            }
        }
    }

    /// Reads and parses `<dir>/<name>.json`.
    fn load(&self, name: &str) -> Result<Arc<HuggingFace>, TokenizerError> {
        let setup = &self.inner.setup;
        let Some(dir) = &setup.dir else {
            return Err(TokenizerError::NoDirectory);
        };
        if name.is_empty() || check_tokenizer_name("tokenizer_name", name).is_err() {
            return Err(TokenizerError::BadName(name.to_owned()));
        }
        let path = dir.join(format!("{name}.json"));
        let unreadable = |error: std::io::Error| {
            tracing::warn!(path = %path.display(), %error, "a tokenizer file cannot be read");
            match error.kind() {
                std::io::ErrorKind::NotFound => TokenizerError::NotFound(name.to_owned()),
                kind => TokenizerError::Unreadable {
                    name: name.to_owned(),
                    reason: kind.to_string(),
                },
            }
        };
        let file = std::fs::File::open(&path).map_err(unreadable)?;
        let too_large = || TokenizerError::TooLarge {
            name: name.to_owned(),
            limit: setup.max_file_bytes,
        };
        let size = file.metadata().map_err(unreadable)?.len();
        if size > setup.max_file_bytes {
            return Err(too_large());
        }
        // Bounded again while reading: the file may grow in between.
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
        file.take(setup.max_file_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        if bytes.len() as u64 > setup.max_file_bytes {
            return Err(too_large());
        }
        let invalid = |reason: String| TokenizerError::Invalid {
            name: name.to_owned(),
            reason,
        };
        let parsed = std::panic::catch_unwind(|| ::tokenizers::Tokenizer::from_bytes(&bytes))
            .map_err(|_| invalid("the parser failed".to_owned()))?;
        let mut tokenizer = parsed.map_err(|e| invalid(e.to_string()))?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| invalid(e.to_string()))?;
        tokenizer.with_padding(None);
        tracing::info!(tokenizer = %name, path = %path.display(), "loaded a tokenizer");
        Ok(Arc::new(HuggingFace { tokenizer }))
    }
}

#[cfg(test)]
mod tests;
