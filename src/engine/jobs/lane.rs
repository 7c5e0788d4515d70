//! The one job driver, over a [`Lane`]: a lane says how its jobs are
//! prepared, worked (asked of an endpoint) and applied; the driver does
//! what every lane does the same way. One attempt of one job:
//!
//! 1. **Claim**, under the chat's lock: the lane's next runnable job (one
//!    job per chat and lane at a time, a RUNNING one whose runner is gone
//!    taken over), prepared by the lane (which may settle it without a
//!    request), then marked RUNNING under a lease and a new fence, with
//!    what it read recorded, in one commit.
//! 2. **Work**, with the lock released: once one of the lane's places for
//!    requests in flight is free, the lane asks its endpoint while the
//!    driver renews the lease every third of `--job-lease`.
//! 3. **Apply**, under the lock again, only if the job is still this
//!    runner's (its fence): a failed attempt is recorded here (retried
//!    after a pause, or the job fails); an answer goes to the lane, which
//!    applies it in the commit that moves the job on. An index job with
//!    passages left claims its next batch in that same commit and goes
//!    back to 2, up to [`REQUESTS_IN_A_ROW`] requests before it gives the
//!    other chats their turn: a batch costs one commit, not two.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobLane, JobState, Lease, ReadSet};
use crate::domain::settings::Settings;
use crate::domain::time::UnixMicros;
use crate::llm::LlmError;
use crate::store::{StoreError, Write};
use crate::telemetry::{self, spans};
use tracing::Instrument as _;

use super::super::commit::Commit;
use super::super::slot::{ChatSlot, LoadedChat, Resident};
use super::super::{EngineError, Next};
use super::apply::{Retries, fail, job_commit, record_retry};
use super::failure::{Endpoint, JobFailure};
use super::queue;
use super::{JobDriver, Jobs};

/// How many requests of one job an attempt asks in a row, each answer's
/// commit claiming the next (see [`Lane::apply`]), before the job goes
/// back to the queue for the other chats' turn.
const REQUESTS_IN_A_ROW: u32 = 8;

/// One lane of jobs (recap and lore jobs with the LLM; index jobs with the
/// embeddings endpoint): what the driver needs of it.
pub(super) trait Lane: Sync {
    /// What a claimed job asks its endpoint.
    type Ask: Send + Sync;
    /// A usable answer.
    type Answer: Send + Sync;

    /// The lane's jobs.
    const LANE: JobLane;
    /// Logged when a job's answer comes back after the job was cancelled
    /// or taken over.
    const DROPPED: &'static str;
    /// The result of a job whose endpoint refused it for good.
    const REFUSED: &'static str;

    /// Whether the lane has what its jobs ask (the LLM, the embeddings
    /// endpoint).
    fn runs(&self, jobs: &Jobs) -> bool;

    /// Whether due job `job` (of this lane) may start now, beside the
    /// chat's `jobs`.
    fn may_start(&self, job: &Job, jobs: &[Job], chat: &Chat) -> bool;

    /// Under the chat's lock: what the due job at `at` asks, or the commit
    /// that settles it (or makes it wait) without a request.
    fn prepare(
        &self,
        engine: &JobDriver,
        preparing: Preparing<'_>,
    ) -> impl Future<Output = Result<Prepared<Self::Ask>, EngineError>> + Send;

    /// Asks the endpoint (the driver renews the lease meanwhile).
    fn work(
        &self,
        engine: &JobDriver,
        chat: &ChatKey,
        claimed: &Claimed<Self::Ask>,
    ) -> impl Future<Output = Outcome<Self::Answer>> + Send;

    /// The lane's attempts and back-off.
    fn retries(&self, jobs: &Jobs) -> Retries;

    /// The job at `at` gave up (FAILED after a failed attempt): what the
    /// chat keeps of that.
    fn gave_up(&self, _resident: &mut Resident) {}

    /// Under the chat's lock again, the job still this runner's: applies
    /// `answer` and commits. With `go_on`, a lane whose job has more to
    /// ask (an index job's next batch) may claim that in the same commit
    /// and return it: the driver asks it at once, one commit per request
    /// instead of two.
    fn apply(
        &self,
        engine: &JobDriver,
        applying: Applying<'_>,
        claimed: &Claimed<Self::Ask>,
        answer: &Self::Answer,
        go_on: bool,
    ) -> impl Future<Output = Result<Option<Claimed<Self::Ask>>, EngineError>> + Send;
}

/// What a lane's [`Lane::prepare`] found.
pub(super) enum Prepared<A> {
    /// Settled (or made to wait) without a request: this commit.
    Settled(Commit),
    /// A request to make.
    Ask {
        /// What the job reads (recorded on the claim; an answer lands only
        /// while it is unchanged).
        read: ReadSet,
        /// The message the job is now about, when the claim picks it.
        message_id: Option<String>,
        /// What to ask.
        ask: A,
    },
}

/// The locked chat whose due job at `at` a lane prepares.
pub(super) struct Preparing<'a> {
    /// The chat.
    pub chat_id: &'a ChatKey,
    /// The chat's state, locked.
    pub resident: &'a mut Resident,
    /// The job's index in `resident.jobs`.
    pub at: usize,
    /// The chat's effective settings.
    pub settings: &'a Settings,
    /// The wall clock's now, for the rows this writes.
    pub now: UnixMicros,
}

/// A job this runner claimed (under its new fence), with what to ask.
pub(super) struct Claimed<A> {
    /// The job as claimed (RUNNING, its new fence and lease).
    pub job: Job,
    /// What the lane asks its endpoint.
    pub ask: A,
}

/// What became of a request. A failure's text is what the job's client
/// reads (a category and an error id, [`JobFailure::report`]), its cause
/// already logged.
pub(super) enum Outcome<T> {
    /// A usable answer.
    Answer(T),
    /// An answer that did not parse or failed its checks: retried like
    /// [`Outcome::Retry`], counted apart.
    Unusable(String),
    /// A failed attempt worth another later (after at least `retry_after`).
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// A failure retrying cannot fix.
    Fatal(String),
}

impl<T> Outcome<T> {
    /// A request `endpoint` failed with `error`: retried or fatal, its
    /// client text reported (see [`JobFailure::report`]).
    pub fn failed(endpoint: Endpoint, chat: &ChatKey, job: &Job, error: LlmError) -> Outcome<T> {
        let shown = JobFailure::of(endpoint, &error).report(chat, job, error.reason());
        match error {
            LlmError::Retryable { retry_after, .. } => Outcome::Retry {
                reason: shown,
                retry_after,
            },
            LlmError::Fatal { .. } => Outcome::Fatal(shown),
        }
    }

    /// The `outcome` label of `recapd_llm_attempts_total`.
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Answer(_) => "ok",
            Outcome::Unusable(_) => "unusable",
            Outcome::Retry { .. } => "retryable",
            Outcome::Fatal(_) => "fatal",
        }
    }
}

/// The locked chat an answer is applied to, its job at `at` still this
/// runner's.
pub(super) struct Applying<'a> {
    /// The chat.
    pub chat_id: &'a ChatKey,
    /// Its slot, for the commit.
    pub slot: Arc<ChatSlot>,
    /// The chat, locked and loaded.
    pub chat: LoadedChat,
    /// The job's index in the chat's jobs.
    pub at: usize,
    /// The wall clock's now, for the rows this writes.
    pub now: UnixMicros,
}

/// What claiming found.
enum Step<A> {
    /// Nothing of the chat could start now.
    Idle,
    /// A job was settled without a request.
    Settled,
    /// A job is claimed: ask.
    Claimed(Box<Claimed<A>>),
}

/// Stops the lease renewal of an attempt when the attempt ends, however it
/// ends (an answer, or the runner stopping it at shutdown).
struct StopOnDrop(tokio::task::JoinHandle<()>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl JobDriver {
    /// Starts the next runnable job of `lane` in `chat`, if any, and sees
    /// it through. Returns whether a job was started or settled (false:
    /// the chat had nothing to do now). The request waits for one of the
    /// lane's places for requests in flight, held until it is answered
    /// (the job's lease is renewed meanwhile).
    pub(super) async fn run_next<L: Lane>(
        &self,
        lane: &L,
        chat: &ChatKey,
    ) -> Result<bool, EngineError> {
        let mut claimed = match self.chats.retrying(|| self.claim_next(lane, chat)).await {
            Ok(Step::Idle) => return Ok(false),
            Ok(Step::Settled) => return Ok(true),
            Ok(Step::Claimed(claimed)) => *claimed,
            // Another runner took it first: it is theirs.
            Err(EngineError::Store(StoreError::Fenced(_))) => return Ok(true),
            Err(error) => return Err(error),
        };
        let mut in_a_row = 1;
        loop {
            let renewal = self.renew_lease_meanwhile(chat, &claimed.job);
            let permits = self.jobs().lane(L::LANE).permits.clone();
            let Ok(permit) = permits.acquire_owned().await else {
                // Closed: never (the lane's semaphore lives as long as the
                // engine); the job stays RUNNING and is taken over later.
                return Ok(true);
            };
            let attempt = spans::job_attempt(
                claimed.job.kind.name(),
                claimed.job.attempts,
                &claimed.job.traced_by,
            );
            spans::chat_id(&attempt, &chat.id);
            let outcome = lane
                .work(self, chat, &claimed)
                .instrument(attempt.clone())
                .await;
            attempt.record("recapd.job.outcome", outcome.label());
            drop(renewal);
            metrics::counter!(
                telemetry::LLM_ATTEMPTS,
                "kind" => claimed.job.kind.name(),
                "outcome" => outcome.label()
            )
            .increment(1);
            drop(permit);
            let go_on = in_a_row < REQUESTS_IN_A_ROW;
            match self
                .chats
                .retrying(|| self.apply_outcome(lane, chat, &claimed, &outcome, go_on))
                .instrument(attempt)
                .await
            {
                Ok(Some(next)) => {
                    claimed = next;
                    in_a_row += 1;
                }
                Ok(None) => return Ok(true),
                Err(EngineError::Store(StoreError::Fenced(job))) => {
                    tracing::info!(%chat, %job, "{}", L::DROPPED);
                    return Ok(true);
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Under the chat's lock: picks the lane's next runnable job, has the
    /// lane prepare it, and claims it (or settles it when no request is
    /// needed).
    async fn claim_next<L: Lane>(
        &self,
        lane: &L,
        chat_id: &ChatKey,
    ) -> Result<Step<L::Ask>, EngineError> {
        if !lane.runs(self.jobs()) {
            return Ok(Step::Idle);
        }
        let slot = self.chats.slot(chat_id);
        let mut guard = self.chats.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&self.chats.global(&chat_id.tenant), &chat_id.id);
        let Some(chat) = resident.chat.clone() else {
            return Ok(Step::Idle);
        };
        if !settings.chat_enabled(resident.settings().enabled) {
            return Ok(Step::Idle);
        }
        let now = self.chats.now();
        let Some(at) = self.jobs().next_runnable(lane, resident, &chat, now) else {
            return Ok(Step::Idle);
        };
        let preparing = Preparing {
            chat_id,
            resident: &mut *resident,
            at,
            settings: &settings,
            now,
        };
        let (read, message_id, ask) = match lane.prepare(self, preparing).await? {
            Prepared::Settled(commit) => {
                self.chats.commit(&slot, guard, commit).await?;
                return Ok(Step::Settled);
            }
            Prepared::Ask {
                read,
                message_id,
                ask,
            } => (read, message_id, ask),
        };
        let lease = self.jobs().queue().lease;
        let job = &mut resident.jobs[at];
        let fence = job.fence;
        job.state = JobState::Running;
        job.attempts += 1;
        job.fence += 1;
        job.lease = Some(Lease {
            owner: self.jobs().owner().to_owned(),
            until_us: now.saturating_add(lease),
        });
        job.read = read;
        if let Some(message_id) = message_id {
            job.message_id = message_id;
        }
        queue::touch(job, now);
        let claimed = job.clone();
        let commit = job_commit(
            Vec::new(),
            Next::Nothing,
            vec![(claimed.clone(), fence)],
            Vec::new(),
        );
        self.chats.commit(&slot, guard, commit).await?;
        Ok(Step::Claimed(Box::new(Claimed { job: claimed, ask })))
    }

    /// Under the chat's lock again: records a failed attempt, or has the
    /// lane apply the answer, if the job is still this runner's.
    async fn apply_outcome<L: Lane>(
        &self,
        lane: &L,
        chat_id: &ChatKey,
        claimed: &Claimed<L::Ask>,
        outcome: &Outcome<L::Answer>,
        go_on: bool,
    ) -> Result<Option<Claimed<L::Ask>>, EngineError> {
        let slot = self.chats.slot(chat_id);
        let mut chat = self.chats.lock(&slot).await?;
        let Some(at) = chat
            .jobs
            .iter()
            .position(|j| j.id == claimed.job.id && j.fence == claimed.job.fence)
        else {
            return Err(StoreError::Fenced(claimed.job.id.clone()).into());
        };
        let now = self.chats.now();
        let commit = match outcome {
            Outcome::Answer(answer) => {
                let applying = Applying {
                    chat_id,
                    slot,
                    chat,
                    at,
                    now,
                };
                return lane.apply(self, applying, claimed, answer, go_on).await;
            }
            Outcome::Retry {
                reason,
                retry_after,
            } => self
                .jobs()
                .record_failure(lane, &mut chat, at, reason, *retry_after, now),
            Outcome::Unusable(reason) => self
                .jobs()
                .record_failure(lane, &mut chat, at, reason, None, now),
            Outcome::Fatal(reason) => {
                chat.jobs[at].last_error = queue::short(reason);
                lane.gave_up(&mut chat);
                fail(&mut chat, at, L::REFUSED, now)
            }
        };
        self.chats.commit(&slot, chat, commit).await.map(|_| None)
    }

    /// Renews `job`'s lease every third of `--job-lease` until the
    /// returned guard is dropped (the attempt's request is answered, or the
    /// attempt is stopped).
    fn renew_lease_meanwhile(&self, chat: &ChatKey, job: &Job) -> StopOnDrop {
        let engine = self.clone();
        let chat = chat.clone();
        let id = job.id.clone();
        let fence = job.fence;
        let every = self.jobs().queue().lease / 3;
        StopOnDrop(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if let Err(error) = engine
                    .chats
                    .retrying(|| engine.renew_lease(&chat, &id, fence))
                    .await
                {
                    tracing::warn!(%chat, job = %id, %error, "could not renew a job's lease");
                }
            }
        }))
    }

    /// Moves a running job's lease on, if the job is still this runner's.
    async fn renew_lease(
        &self,
        chat_id: &ChatKey,
        job_id: &str,
        fence: u64,
    ) -> Result<(), EngineError> {
        let slot = self.chats.slot(chat_id);
        let mut guard = self.chats.lock(&slot).await?;
        let resident = &mut *guard;
        let lasts = self.jobs().queue().lease;
        let Some(job) = resident
            .jobs
            .iter_mut()
            .find(|j| j.id == job_id && j.fence == fence && j.state == JobState::Running)
        else {
            return Ok(());
        };
        if let Some(lease) = &mut job.lease {
            lease.until_us = self.chats.now().saturating_add(lasts);
        }
        let write = Write::Job {
            job: job.clone(),
            expect_fence: Some(fence),
        };
        self.chats
            .commit(&slot, guard, Commit::one(vec![write], Next::Nothing))
            .await?;
        Ok(())
    }
}

impl Jobs {
    /// The index of the chat's next job of `lane` to start now, oldest
    /// first: a PENDING job that is due, or a RUNNING one whose runner is
    /// gone (see [`Jobs::lease_lapsed`]), that the lane lets start. None
    /// while a job of the lane runs under a live lease (the other lane's
    /// jobs run beside it).
    fn next_runnable<L: Lane>(
        &self,
        lane: &L,
        resident: &Resident,
        chat: &Chat,
        now: UnixMicros,
    ) -> Option<usize> {
        let orphaned = |job: &Job| self.lease_lapsed(job, now);
        let ours = |job: &Job| JobLane::of(job.kind) == L::LANE;
        let jobs = &resident.jobs;
        if jobs
            .iter()
            .any(|j| ours(j) && j.state == JobState::Running && !orphaned(j))
        {
            return None;
        }
        jobs.iter().position(|job| {
            if !ours(job) {
                return false;
            }
            let due = match job.state {
                JobState::Pending => job.not_before_us <= now,
                JobState::Running => orphaned(job),
                _ => false,
            };
            due && lane.may_start(job, jobs, chat)
        })
    }

    /// A failed attempt that may be tried again, under the lane's attempts
    /// and back-off (see [`record_retry`]).
    fn record_failure<L: Lane>(
        &self,
        lane: &L,
        resident: &mut Resident,
        at: usize,
        reason: &str,
        retry_after: Option<Duration>,
        now: UnixMicros,
    ) -> Commit {
        let retries = lane.retries(self);
        let (commit, gave_up) = record_retry(resident, at, reason, retry_after, now, retries);
        if gave_up {
            lane.gave_up(resident);
        }
        commit
    }

    /// Whether a RUNNING `job`'s runner is gone at `now`: its lease expired
    /// (or it has none), or, with a store only this process writes, an
    /// earlier run of this process claimed it.
    fn lease_lapsed(&self, job: &Job, now: UnixMicros) -> bool {
        let own = self.owner();
        let single = !self.replicated();
        job.lease
            .as_ref()
            .is_none_or(|lease| lease.until_us < now || (single && lease.owner != own))
    }
}
