//! The job queue's state and rules, below the chats: what the engine's
//! job machinery holds (the LLM and the embeddings endpoint it was given,
//! [`JobsSetup`]), the [`Jobs`] handle over each lane's runner state
//! ([`LaneRunner`]), the WatchJobs channel and the chats that want an
//! index job; the queue's rules ([`queue`]: how a job is queued, ended
//! and retried in a chat's state) and what chat events do to jobs
//! ([`triggers`]). A chat's commit writes its jobs through these; the
//! driver that claims and works them ([`super::jobs`]) is above the chats.

mod options;
pub(in crate::engine) mod queue;
mod triggers;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore, broadcast};

use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobLane};
use crate::llm::{EmbeddingClient, EmbeddingSetup, LlmClient, LlmSetup};
use crate::telemetry;
use crate::wall_clock::WallClock;

use crate::domain::time::UnixMicros;
use crate::engine::EngineError;
use crate::engine::cache::ChatCache;
use crate::store::ChatStore;
pub use options::QueueOptions;
pub(in crate::engine) use queue::finish;

/// A fresh job id: its creation time then randomness, in hex, so ids sort
/// roughly by age and never collide.
pub(in crate::engine) fn new_job_id(now_us: UnixMicros) -> String {
    format!("{:013x}{:016x}", now_us.0.max(0), rand::random::<u64>())
}

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

/// What [`Jobs::new`] builds the job machinery from.
pub(in crate::engine) struct JobsSetup {
    /// What writes recaps; `None` without an LLM.
    pub writer: Option<RecapWriter>,
    /// What indexes passages; `None` without an embeddings endpoint.
    pub embedder: Option<Embedder>,
    /// Retention, lease, per-chat limit.
    pub queue: QueueOptions,
    /// The engine's wall clock.
    pub wall_clock: Arc<dyn WallClock>,
    /// How many changes the WatchJobs channel holds for a slow reader.
    pub changes_buffer: usize,
    /// The store, for the queue's reads.
    pub store: Arc<dyn ChatStore>,
    /// Whether other replicas write the store too.
    pub replicated: bool,
    /// The chat cache (keeps a chat running a job in memory).
    pub cache: ChatCache,
}

/// The job machinery: what writes recaps and indexes passages, the queue's
/// options, this process's lease owner, each lane's runner state, the
/// WatchJobs channel and the chats that want an index job.
///
/// A handle, cheap to clone (one `Arc` inside, like mini-redis's `Db`):
/// every clone shares one state. [`super::Chats`] holds it (a commit
/// announces the jobs it wrote through it), and the job driver reaches it
/// through the chats. It knows only parts below the chats: the store (the
/// queue's reads), the wall clock and the chat cache (to keep a chat that
/// runs a job in memory). It takes no chat's lock; some methods are handed
/// a locked chat's state by their caller and run under that caller's
/// lock. What it is told (a committed job, a chat that wants indexing) it
/// passes on to the runners and the WatchJobs readers. What locks and
/// commits a chat is the chats' update path and the job driver
/// ([`super::JobDriver`]).
#[derive(Clone)]
pub(in crate::engine) struct Jobs {
    shared: Arc<Shared>,
}

/// What every clone of a [`Jobs`] handle shares.
struct Shared {
    /// The store, for the queue's reads (runnable jobs, the next due).
    store: Arc<dyn ChatStore>,
    /// The engine's wall clock.
    wall_clock: Arc<dyn WallClock>,
    /// The chat cache, which keeps a chat running a job in memory.
    cache: ChatCache,
    /// Whether other replicas write the store too (then a RUNNING job
    /// another run of this process claimed may still be running there).
    replicated: bool,
    /// What writes recaps; `None` without an LLM.
    writer: Option<RecapWriter>,
    /// Retention, lease, per-chat limit.
    queue: QueueOptions,
    /// This process's lease owner name (random per start).
    owner: String,
    /// What indexes passages; `None` without an embeddings endpoint.
    embedder: Option<Embedder>,
    /// The recap lane's runner state (`--llm-concurrency`).
    recap: LaneRunner,
    /// The index lane's runner state (index jobs run beside recap jobs,
    /// with their own concurrency: `--embedding-concurrency`).
    index: LaneRunner,
    /// Every job state change this process made or heard of, in order per
    /// job, for WatchJobs.
    changes: broadcast::Sender<Arc<Job>>,
    /// Chats whose recall index lacks vectors and that have no index job:
    /// the index runner queues one for each (see `jobs::index`).
    index_wanted: Mutex<HashSet<ChatKey>>,
    /// Wakes the index runner: a chat was added to `index_wanted`.
    index_wake: Notify,
}

/// How many attempts of a lane may be under way for each request it may
/// have in flight: the others claim their job or apply an answer (each a
/// commit) while a request is out, so that the endpoint is never left
/// waiting on recapd's commits.
pub(in crate::engine) const TURNS_PER_REQUEST: usize = 3;

/// One lane's runner state.
pub(in crate::engine) struct LaneRunner {
    /// Requests in flight, for the whole process.
    pub permits: Arc<Semaphore>,
    /// Attempts under way (claimed, asking, or applying), for the whole
    /// process: [`TURNS_PER_REQUEST`] per request in flight.
    pub turns: Arc<Semaphore>,
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
            turns: Arc::new(Semaphore::new(concurrency * TURNS_PER_REQUEST)),
            wake: Notify::new(),
            idle: Mutex::new(HashMap::new()),
            busy: Mutex::new(HashSet::new()),
        }
    }
}

impl Jobs {
    /// The job machinery `setup` describes.
    pub fn new(setup: JobsSetup) -> Jobs {
        let JobsSetup {
            writer,
            embedder,
            queue,
            wall_clock,
            changes_buffer,
            store,
            replicated,
            cache,
        } = setup;
        let concurrency = writer.as_ref().map_or(1, |g| g.setup.concurrency.max(1));
        let index_concurrency = embedder.as_ref().map_or(1, |e| e.setup.concurrency.max(1));
        let (changes, _) = broadcast::channel(changes_buffer);
        Jobs {
            shared: Arc::new(Shared {
                store,
                wall_clock,
                cache,
                replicated,
                index: LaneRunner::new(index_concurrency),
                embedder,
                writer,
                queue,
                recap: LaneRunner::new(concurrency),
                owner: format!("{:016x}", rand::random::<u64>()),
                changes,
                index_wanted: Mutex::new(HashSet::new()),
                index_wake: Notify::new(),
            }),
        }
    }

    /// The embeddings model whose vectors recall uses; empty without an
    /// embeddings endpoint.
    pub fn recall_model(&self) -> &str {
        self.embedder().map_or("", |e| e.setup.model.as_str())
    }

    /// What writes recaps; `None` without an LLM.
    pub fn writer(&self) -> Option<&RecapWriter> {
        self.shared.writer.as_ref()
    }

    /// What writes recaps, or the error of a request that needs one
    /// without an LLM.
    pub fn require_writer(&self) -> Result<&RecapWriter, EngineError> {
        self.writer().ok_or_else(EngineError::no_llm)
    }

    /// What indexes passages; `None` without an embeddings endpoint.
    pub fn embedder(&self) -> Option<&Embedder> {
        self.shared.embedder.as_ref()
    }

    /// The store the queue is read from.
    pub fn store(&self) -> &Arc<dyn ChatStore> {
        &self.shared.store
    }

    /// Whether other replicas write the store too.
    pub fn replicated(&self) -> bool {
        self.shared.replicated
    }

    /// Now on the engine's wall clock.
    pub fn clock_now(&self) -> UnixMicros {
        self.shared.wall_clock.now()
    }

    /// Marks `chat` as running a job of `lane` here; the chat stays in
    /// memory meanwhile (an index job's batch must not find it evicted
    /// and cut again from the store).
    pub fn started(&self, lane: JobLane, chat: &ChatKey) {
        self.shared.cache.job_started(chat);
        self.lane(lane).busy.lock().insert(chat.clone());
    }

    /// The end of [`Jobs::started`].
    pub fn ended(&self, lane: JobLane, chat: &ChatKey) {
        self.lane(lane).busy.lock().remove(chat);
        self.shared.cache.job_ended(chat);
    }

    /// Retention, lease, per-chat limit.
    pub fn queue(&self) -> &QueueOptions {
        &self.shared.queue
    }

    /// This process's lease owner name.
    pub fn owner(&self) -> &str {
        &self.shared.owner
    }

    /// The runner state of `lane`.
    pub fn lane(&self, lane: JobLane) -> &LaneRunner {
        match lane {
            JobLane::Recap => &self.shared.recap,
            JobLane::Index => &self.shared.index,
        }
    }

    /// Wakes `lane`'s runner: a job was queued or became runnable.
    pub fn wake(&self, lane: JobLane) {
        self.lane(lane).wake.notify_one();
    }

    /// The chats running a job of `lane` here now.
    pub fn busy(&self, lane: JobLane) -> HashSet<ChatKey> {
        self.lane(lane).busy.lock().clone()
    }

    /// Logs, counts and tells WatchJobs readers one job change (committed),
    /// and wakes its lane's runner when the job may still run.
    pub fn announce(&self, job: Job) {
        metrics::counter!(
            telemetry::JOB_TRANSITIONS,
            "kind" => job.kind.name(),
            "state" => job.state.name()
        )
        .increment(1);
        tracing::info!(
            chat = %job.chat,
            job = %job.id,
            kind = job.kind.name(),
            state = job.state.name(),
            message = %job.message_id,
            attempts = job.attempts,
            last_error = %job.last_error,
            result = %job.result,
            "job"
        );
        if !job.state.is_terminal() {
            self.wake(JobLane::of(job.kind));
        }
        self.tell(job);
    }

    /// Tells WatchJobs readers one job change, as it is (a change another
    /// replica made, which this one neither logs nor counts).
    pub fn tell(&self, job: Job) {
        let _ = self.shared.changes.send(Arc::new(job));
    }

    /// A new WatchJobs reader's end of the channel.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Job>> {
        self.shared.changes.subscribe()
    }

    /// Whether any WatchJobs reader listens now.
    pub fn watched(&self) -> bool {
        self.shared.changes.receiver_count() > 0
    }

    /// Asks the index runner to queue an index job for `chat` (it checks
    /// again under the chat's lock).
    pub fn want_index(&self, chat: &ChatKey) {
        if self.shared.index_wanted.lock().insert(chat.clone()) {
            self.shared.index_wake.notify_one();
        }
    }

    /// Names `chat` to the index runner without waking it (it is about to
    /// look).
    pub fn want_index_quietly(&self, chat: ChatKey) {
        self.shared.index_wanted.lock().insert(chat);
    }

    /// The chats that want an index job, taken; when none do, waits until
    /// one is named and answers empty.
    pub async fn take_wanted_index(&self) -> Vec<ChatKey> {
        let wanted: Vec<ChatKey> = std::mem::take(&mut *self.shared.index_wanted.lock())
            .into_iter()
            .collect();
        if wanted.is_empty() {
            self.shared.index_wake.notified().await;
        }
        wanted
    }
}
