//! What the engine's job machinery holds: the LLM and the embeddings
//! endpoint it was given ([`JobsConfig`]), and each lane's runner state
//! ([`JobsRuntime`], [`LaneRunner`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore};

use crate::domain::ids::ChatKey;
use crate::domain::jobs::JobLane;
use crate::llm::{EmbeddingClient, EmbeddingSetup, LlmClient, LlmSetup};
use crate::wall_clock::{SystemClock, WallClock};

use super::QueueOptions;

/// What writes recaps: the LLM client, and its options (model, attempts,
/// back-off, concurrency...).
#[derive(Clone)]
pub struct RecapWriter {
    /// The client of one request.
    pub client: LlmClient,
    /// The checked options (model, attempts, back-off, concurrency...).
    pub setup: LlmSetup,
}

/// What indexes passages for recall: the embeddings client and its options
/// (model, attempts, back-off, concurrency, batch size).
#[derive(Clone)]
pub struct Embedder {
    /// The client of one request.
    pub client: EmbeddingClient,
    /// The checked options.
    pub setup: EmbeddingSetup,
}

/// What the engine needs to run jobs: the LLM (none: no recaps are written, but
/// jobs can still be listed, watched and cancelled), the embeddings endpoint
/// (none: recall searches by keyword alone), the queue's options, and the
/// wall clock the engine reads.
#[derive(Clone)]
pub struct JobsConfig {
    /// The LLM; `None` without `--llm-url`.
    pub writer: Option<RecapWriter>,
    /// The embeddings endpoint; `None` without `--embedding-url`.
    pub embedder: Option<Embedder>,
    /// Retention, lease, per-chat limit.
    pub queue: QueueOptions,
    /// What time it is, for every instant the engine stores or compares
    /// (job times, activity, retention cut-offs): the system's by default,
    /// a [`crate::wall_clock::ManualClock`] in tests that set the time.
    pub wall_clock: Arc<dyn WallClock>,
}

impl Default for JobsConfig {
    fn default() -> JobsConfig {
        JobsConfig {
            writer: None,
            embedder: None,
            queue: QueueOptions::default(),
            wall_clock: Arc::new(SystemClock),
        }
    }
}

/// The engine's job machinery.
pub(in crate::engine) struct JobsRuntime {
    /// What writes recaps; `None` without an LLM.
    pub writer: Option<RecapWriter>,
    /// Retention, lease, per-chat limit.
    pub queue: QueueOptions,
    /// This process's lease owner name (random per start).
    pub owner: String,
    /// What indexes passages; `None` without an embeddings endpoint.
    pub embedder: Option<Embedder>,
    /// The recap lane's runner state (`--llm-concurrency`).
    pub recap: LaneRunner,
    /// The index lane's runner state (index jobs run beside recap jobs,
    /// with their own concurrency: `--embedding-concurrency`).
    pub index: LaneRunner,
}

/// One lane's runner state.
pub(in crate::engine) struct LaneRunner {
    /// Requests in flight, for the whole process.
    pub permits: Arc<Semaphore>,
    /// Wakes the lane's runner: a job was queued or became runnable.
    pub wake: Notify,
    /// Chats that had nothing to start at their latest turn (disabled, or
    /// their jobs waiting), left out of the rotation until the time given.
    pub idle: Mutex<HashMap<ChatKey, tokio::time::Instant>>,
    /// The chats running a job of the lane of this process now.
    pub busy: Mutex<HashSet<ChatKey>>,
}

impl LaneRunner {
    fn new(concurrency: usize) -> LaneRunner {
        LaneRunner {
            permits: Arc::new(Semaphore::new(concurrency)),
            wake: Notify::new(),
            idle: Mutex::new(HashMap::new()),
            busy: Mutex::new(HashSet::new()),
        }
    }
}

impl JobsRuntime {
    pub fn new(config: JobsConfig) -> JobsRuntime {
        let concurrency = config
            .writer
            .as_ref()
            .map_or(1, |g| g.setup.concurrency.max(1));
        let index_concurrency = config
            .embedder
            .as_ref()
            .map_or(1, |e| e.setup.concurrency.max(1));
        JobsRuntime {
            index: LaneRunner::new(index_concurrency),
            embedder: config.embedder,
            writer: config.writer,
            queue: config.queue,
            recap: LaneRunner::new(concurrency),
            owner: format!("{:016x}", rand::random::<u64>()),
        }
    }

    /// The runner state of `lane`.
    pub fn lane(&self, lane: JobLane) -> &LaneRunner {
        match lane {
            JobLane::Recap => &self.recap,
            JobLane::Index => &self.index,
        }
    }
}
