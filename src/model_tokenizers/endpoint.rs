//! The LLM_ENDPOINT tokenizer: counts asked of the LLM endpoint's
//! `/tokenize` ([`LlmClient::count_tokens`]), once per model and text, and
//! remembered.
//!
//! Counting is synchronous (a refresh counts under the chat's lock), the
//! endpoint is not: a text whose count is not known yet is *estimated* with
//! o200k_base and queued, and the chat whose refresh estimated is noted. A
//! background task ([`EndpointCounts::run`]) asks the endpoint for the
//! queued texts and then hands the noted chats to the engine, which
//! refreshes them (trigger `tokens_counted`): their counts are then exact.
//! An estimate is never kept as a text's count (see
//! [`CountTokens::count_final`]).
//!
//! Bounds: at most [`EndpointCounts::new`]'s `max_cached` counts are kept
//! (the least recently used goes first); at most [`MAX_QUEUED_TEXTS`]
//! texts of at most [`MAX_QUEUED_BYTES`] in all wait for the endpoint (a
//! text past that is estimated, and queued again by a later count); a
//! text over [`MAX_TEXT_BYTES`] is never sent (always estimated). After a
//! failed request nothing is asked for [`super::RETRY_AFTER`] (texts are
//! estimated meanwhile): an endpoint that is down or has no `/tokenize`
//! costs nothing but estimates, a warning and
//! `recapd_tokenizer_fallbacks_total{reason="endpoint"}`.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use futures_util::StreamExt;
use hashlink::LruCache;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::domain::ids::ChatKey;
use crate::domain::settings::TokenizerKind;
use crate::domain::tokens::{self, CountTokens};
use crate::llm::{LlmClient, LlmError};
use crate::telemetry;

/// Most texts waiting for the endpoint at once.
pub const MAX_QUEUED_TEXTS: usize = 4096;
/// Most bytes of text waiting for the endpoint at once.
pub const MAX_QUEUED_BYTES: usize = 16 << 20;
/// The longest text sent to the endpoint; a longer one is estimated.
pub const MAX_TEXT_BYTES: usize = 1 << 20;
/// Requests to `/tokenize` in flight at once.
const CONCURRENCY: usize = 4;

/// A text's key in the cache: a keyed hash of the model and the text (the
/// key is random per process, so texts cannot be made to collide), and the
/// text's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct TextKey {
    hash: u64,
    len: usize,
}

/// The endpoint's counts: a cheap handle (clones share the cache, the
/// queue and the client).
#[derive(Clone)]
pub struct EndpointCounts {
    inner: Arc<Inner>,
}

struct Inner {
    client: LlmClient,
    /// The model asked when a chat names none (`--llm-model`).
    default_model: Arc<str>,
    hasher: RandomState,
    counts: Mutex<LruCache<TextKey, u32>>,
    queue: Mutex<Queue>,
    wake: tokio::sync::Notify,
    /// When the endpoint failed last: nothing is asked before
    /// [`super::RETRY_AFTER`] has passed.
    failed_at: Mutex<Option<Instant>>,
}

/// Texts waiting for the endpoint, and the chats to refresh once counted.
#[derive(Default)]
struct Queue {
    texts: HashMap<TextKey, (Arc<str>, String)>,
    bytes: usize,
    waiters: HashSet<ChatKey>,
}

impl std::fmt::Debug for EndpointCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointCounts")
            .field("client", &self.inner.client)
            .finish_non_exhaustive()
    }
}

impl EndpointCounts {
    /// Counts asked of `client`'s endpoint, `default_model` for chats that
    /// name no model, at most `max_cached` of them kept (at least one).
    pub fn new(client: LlmClient, default_model: &str, max_cached: usize) -> EndpointCounts {
        EndpointCounts {
            inner: Arc::new(Inner {
                client,
                default_model: Arc::from(default_model),
                hasher: RandomState::new(),
                counts: Mutex::new(LruCache::new(max_cached.max(1))),
                queue: Mutex::new(Queue::default()),
                wake: tokio::sync::Notify::new(),
                failed_at: Mutex::new(None),
            }),
        }
    }

    /// A counter for one use (a refresh, a scan): `model` (empty: the
    /// default), and the chat to refresh once its estimates are counted.
    pub fn counter(&self, model: &str, waiter: Option<&ChatKey>) -> Arc<dyn CountTokens> {
        let model = if model.is_empty() {
            self.inner.default_model.clone()
        } else {
            Arc::from(model)
        };
        Arc::new(EndpointCounter {
            counts: self.clone(),
            model,
            waiter: waiter.cloned(),
            estimated: AtomicBool::new(false),
        })
    }

    /// Asks the endpoint to count a short text with `model` (empty: the
    /// default): the settings check that names this tokenizer.
    pub async fn probe(&self, model: &str) -> Result<u32, LlmError> {
        let model = if model.is_empty() {
            &self.inner.default_model
        } else {
            model
        };
        self.inner.client.count_tokens(model, "recapd").await
    }

    fn key(&self, model: &str, text: &str) -> TextKey {
        TextKey {
            hash: self.inner.hasher.hash_one((model, text)),
            len: text.len(),
        }
    }

    /// The count of `text` with `model`, when known.
    fn cached(&self, key: &TextKey) -> Option<u32> {
        self.inner.counts.lock().get(key).copied()
    }

    /// Queues `text` (unless the queue is full, the text too long or the
    /// endpoint resting) and notes `waiter` to refresh once it is counted.
    fn ask(&self, key: TextKey, model: &Arc<str>, text: &str, waiter: Option<&ChatKey>) {
        if text.len() > MAX_TEXT_BYTES || self.resting() {
            return;
        }
        let mut queue = self.inner.queue.lock();
        if !queue.texts.contains_key(&key) {
            if queue.texts.len() >= MAX_QUEUED_TEXTS
                || queue.bytes.saturating_add(text.len()) > MAX_QUEUED_BYTES
            {
                metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => "queue_full")
                    .increment(1);
                return;
            }
            queue.bytes += text.len();
            queue.texts.insert(key, (model.clone(), text.to_owned()));
        }
        if let Some(waiter) = waiter {
            queue.waiters.insert(waiter.clone());
        }
        drop(queue);
        self.inner.wake.notify_one();
    }

    fn resting(&self) -> bool {
        self.inner
            .failed_at
            .lock()
            .is_some_and(|at| at.elapsed() < super::RETRY_AFTER)
    }

    /// Asks the endpoint for the queued texts, batch after batch, until
    /// `stop`; after each batch that counted something, `on_counted` gets
    /// the chats whose refreshes estimated them (and is awaited).
    pub async fn run<F, Done>(self, on_counted: F, stop: CancellationToken)
    where
        F: Fn(Vec<ChatKey>) -> Done,
        Done: std::future::Future<Output = ()>,
    {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = self.inner.wake.notified() => {}
            }
            loop {
                let Queue { texts, waiters, .. } = std::mem::take(&mut *self.inner.queue.lock());
                if texts.is_empty() {
                    break;
                }
                let counted = tokio::select! {
                    () = stop.cancelled() => return,
                    counted = self.count_all(texts) => counted,
                };
                if counted > 0 && !waiters.is_empty() {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = on_counted(waiters.into_iter().collect()) => {}
                    }
                }
            }
        }
    }

    /// Asks for every text's count; returns how many were counted. The
    /// first failure sets the endpoint resting (the rest of the batch is
    /// still tried: they were queued before it).
    async fn count_all(&self, texts: HashMap<TextKey, (Arc<str>, String)>) -> usize {
        let client = &self.inner.client;
        let mut answers =
            futures_util::stream::iter(texts)
                .map(|(key, (model, text))| async move {
                    (key, client.count_tokens(&model, &text).await)
                })
                .buffer_unordered(CONCURRENCY);
        let mut counted = 0;
        while let Some((key, answer)) = answers.next().await {
            match answer {
                Ok(count) => {
                    self.inner.counts.lock().insert(key, count);
                    counted += 1;
                }
                Err(error) => {
                    let mut failed_at = self.inner.failed_at.lock();
                    if !failed_at.is_some_and(|at| at.elapsed() < super::RETRY_AFTER) {
                        tracing::warn!(
                            reason = error.reason(),
                            "the LLM endpoint did not count tokens; counting with o200k_base estimates for a while"
                        );
                    }
                    *failed_at = Some(Instant::now());
                    metrics::counter!(telemetry::TOKENIZER_FALLBACKS, "reason" => "endpoint")
                        .increment(1);
                }
            }
        }
        counted
    }
}

/// One use's counter: exact counts from the cache, estimates (queued)
/// otherwise.
struct EndpointCounter {
    counts: EndpointCounts,
    model: Arc<str>,
    waiter: Option<ChatKey>,
    estimated: AtomicBool,
}

impl CountTokens for EndpointCounter {
    fn count_final(&self, text: &str) -> (u32, bool) {
        let key = self.counts.key(&self.model, text);
        if let Some(count) = self.counts.cached(&key) {
            return (count, true);
        }
        self.estimated.store(true, Ordering::Relaxed);
        self.counts
            .ask(key, &self.model, text, self.waiter.as_ref());
        (tokens::count(TokenizerKind::O200kBase, text), false)
    }

    fn estimated(&self) -> bool {
        self.estimated.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests;
