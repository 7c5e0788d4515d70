//! The runners: one task per lane that takes the lane's runnable jobs
//! round-robin over the chats that have some, one job per chat and lane at
//! a time, with at most `--llm-concurrency` (recap lane) or
//! `--embedding-concurrency` (index lane) requests in flight, and twice as
//! many attempts under way (the others claim their job or apply their
//! answer meanwhile); and removes finished jobs past `--job-retention`.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::domain::ids::ChatKey;
use crate::domain::jobs::{JobLane, JobState};
use crate::domain::time::UnixMicros;
use crate::store::Write;
use crate::telemetry;

use super::super::Next;
use super::super::commit::Commit;
use super::JobDriver;
use super::Jobs;
use super::index::IndexLane;
use super::lane::Lane;
use super::queue;
use super::recap::RecapLane;

/// The longest the runner waits before looking at the queue again (other
/// replicas' jobs, chats enabled again, leases expiring).
const POLL: Duration = Duration::from_secs(1);

/// How long a chat that had nothing to start is left out of the rotation
/// (unless it gets new work first).
const IDLE_PAUSE: Duration = Duration::from_secs(1);

/// How often finished jobs past their retention are removed.
const PURGE_EVERY: Duration = Duration::from_secs(60);

/// How many chats one read of the queue covers.
const LOOK_AHEAD: usize = 1000;

/// Whether `lane` has what its jobs ask (the LLM, the embeddings
/// endpoint).
fn lane_runs(jobs: &Jobs, lane: JobLane) -> bool {
    match lane {
        JobLane::Recap => RecapLane.runs(jobs),
        JobLane::Index => IndexLane.runs(jobs),
    }
}

impl JobDriver {
    /// Runs the job queue until `shutdown`, one runner per lane (recap and
    /// lore jobs with the LLM; index jobs with the embeddings endpoint),
    /// then stops every attempt under way and waits for them (a stopped
    /// attempt's job is RUNNING in the store and runs again at the next
    /// start, or on another replica once its lease expires). Without an
    /// LLM the recap lane only removes old jobs; without an embeddings
    /// endpoint the index lane does nothing.
    pub async fn run_jobs(self, shutdown: CancellationToken) {
        tokio::join!(
            self.clone().run_lane(JobLane::Recap, shutdown.clone()),
            self.run_lane(JobLane::Index, shutdown),
        );
    }

    /// One lane's runner (see [`JobDriver::run_jobs`]).
    async fn run_lane(self, lane: JobLane, shutdown: CancellationToken) {
        let mut attempts = JoinSet::new();
        let mut next_purge = Instant::now();
        let runs = lane_runs(self.jobs(), lane);
        if runs && !self.chats.shared() {
            self.recover_orphans(lane).await;
        }
        if lane == JobLane::Index && runs {
            // Queues index jobs for the chats that want one, beside the
            // runner (loading a chat must not hold the runner up), after a
            // first pass over the chats the store holds.
            let engine = self.clone();
            let stop = shutdown.clone();
            attempts.spawn(async move {
                tokio::select! {
                    () = engine.queue_index_jobs() => {}
                    () = stop.cancelled() => {}
                }
            });
        }
        let mut last_served: Option<ChatKey> = None;
        loop {
            if lane == JobLane::Recap && Instant::now() >= next_purge {
                self.jobs().purge_jobs().await;
                next_purge = Instant::now() + PURGE_EVERY;
            }
            while attempts.try_join_next().is_some() {}
            let turn = if runs {
                let turns = self.jobs().lane(lane).turns.clone();
                tokio::select! {
                    turn = turns.acquire_owned() => turn.ok(),
                    () = shutdown.cancelled() => break,
                }
            } else {
                None
            };
            let picked = match &turn {
                Some(_) => self.jobs().pick_chat(lane, &mut last_served).await,
                None => None,
            };
            match (picked, turn) {
                (Some(chat), Some(turn)) => {
                    self.jobs().started(lane, &chat);
                    let engine = self.clone();
                    attempts.spawn(async move {
                        let run = match lane {
                            JobLane::Recap => engine.run_next(&RecapLane, &chat).await,
                            JobLane::Index => engine.run_next(&IndexLane, &chat).await,
                        };
                        let started = match run {
                            Ok(started) => started,
                            Err(error) => {
                                tracing::warn!(%chat, %error, "a job attempt failed; it is retried later");
                                false
                            }
                        };
                        if !started {
                            // Paused before it leaves the busy set, so the
                            // runner never picks it again at once.
                            engine
                                .jobs()
                                .lane(lane)
                                .idle
                                .lock()
                                .insert(chat.clone(), Instant::now() + IDLE_PAUSE);
                        }
                        engine.jobs().ended(lane, &chat);
                        drop(turn);
                        if started {
                            engine.jobs().wake(lane);
                        }
                    });
                }
                _ => {
                    let pause = self.jobs().until_next_due(lane).await;
                    tokio::select! {
                        () = self.jobs().lane(lane).wake.notified() => {}
                        () = tokio::time::sleep(pause) => {}
                        Some(_) = attempts.join_next() => {}
                        () = shutdown.cancelled() => break,
                    }
                }
            }
        }
        attempts.abort_all();
        while attempts.join_next().await.is_some() {}
    }

    /// At start with a store only this process writes: every RUNNING job
    /// was claimed by an earlier run that stopped, so it goes back to
    /// PENDING now (its answer, if it ever comes, cannot be applied: its
    /// fence moves).
    async fn recover_orphans(&self, lane: JobLane) {
        let jobs = match self
            .chats
            .store()
            .runnable_jobs(UnixMicros(i64::MAX), usize::MAX >> 1, None, lane)
            .await
        {
            Ok(jobs) => jobs,
            Err(error) => {
                tracing::warn!(%error, "could not read the job queue at start");
                return;
            }
        };
        // Every chat with open jobs: the store gives each chat's oldest, which
        // need not be the one left RUNNING.
        let chats: BTreeSet<ChatKey> = jobs.into_iter().map(|job| job.chat).collect();
        for chat in chats {
            if let Err(error) = self
                .chats
                .retrying(|| self.requeue_running(&chat, lane))
                .await
            {
                tracing::warn!(%chat, %error, "could not put an interrupted job back in the queue");
            }
        }
    }

    async fn requeue_running(
        &self,
        chat_id: &ChatKey,
        lane: JobLane,
    ) -> Result<(), super::super::EngineError> {
        let slot = self.chats.slot(chat_id);
        let mut guard = self.chats.lock(&slot).await?;
        let resident = &mut *guard;
        let now = self.chats.now();
        let mut changed = Vec::new();
        for job in &mut resident.jobs {
            if job.state == JobState::Running && JobLane::of(job.kind) == lane {
                let fence = job.fence;
                job.state = JobState::Pending;
                job.lease = None;
                job.fence += 1;
                job.not_before_us = now;
                queue::touch(job, now);
                changed.push((job.clone(), fence));
            }
        }
        if changed.is_empty() {
            return Ok(());
        }
        let writes = queue::job_writes(&changed);
        let announce = changed.into_iter().map(|(job, _)| job).collect();
        self.chats
            .commit(
                &slot,
                guard,
                Commit::one(writes, Next::Nothing).with_jobs(announce),
            )
            .await
            .map(|_| ())
    }
}

impl Jobs {
    /// The next chat to serve: the first, in chat order after the one
    /// served last (round-robin, wrapping around), that has a runnable job
    /// and is neither being served now nor paused after having nothing to
    /// start. The store is read a page of chats at a time from there, so
    /// chats that cannot start (disabled ones, say), however many, never
    /// hide the others.
    async fn pick_chat(&self, lane: JobLane, last_served: &mut Option<ChatKey>) -> Option<ChatKey> {
        let now = Instant::now();
        let idle = {
            let mut idle = self.lane(lane).idle.lock();
            idle.retain(|_, until| *until > now);
            idle.clone()
        };
        let busy = self.busy(lane);
        let mut from = last_served.clone();
        let mut wrapped = from.is_none();
        let mut seen = 0;
        loop {
            let page = match self
                .store()
                .runnable_jobs(self.clock_now(), LOOK_AHEAD, from.as_ref(), lane)
                .await
            {
                Ok(page) => page,
                Err(error) => {
                    tracing::warn!(%error, "could not read the job queue; retrying");
                    return None;
                }
            };
            seen += page.len();
            let full = page.len() == LOOK_AHEAD;
            let last = page.last().map(|job| job.chat.clone());
            if let Some(job) = page
                .into_iter()
                .find(|job| !busy.contains(&job.chat) && !idle.contains_key(&job.chat))
            {
                metrics::gauge!(telemetry::JOBS_QUEUED).set(seen as f64);
                *last_served = Some(job.chat.clone());
                return Some(job.chat);
            }
            match (full, wrapped) {
                // More chats after this page.
                (true, _) => from = last,
                // The end: start again from the first chat, once.
                (false, false) => {
                    from = None;
                    wrapped = true;
                }
                (false, true) => {
                    metrics::gauge!(telemetry::JOBS_QUEUED).set(seen as f64);
                    return None;
                }
            }
        }
    }

    /// How long to wait before looking at the queue again: until the next
    /// job falls due (times already past belong to chats being served or
    /// paused, whose end wakes the runner), at most [`POLL`].
    async fn until_next_due(&self, lane: JobLane) -> Duration {
        let now = self.clock_now();
        match self.store().next_job_due(now, lane).await {
            Ok(Some(due_us)) => POLL.min(due_us.since(now)).max(Duration::from_millis(1)),
            _ => POLL,
        }
    }

    /// Removes finished jobs older than `--job-retention`.
    async fn purge_jobs(&self) {
        let write = Write::PurgeJobs {
            finished_before_us: self.clock_now().saturating_sub(self.queue().retention),
        };
        if let Err(error) = self.store().commit(vec![write]).await {
            tracing::warn!(%error, "could not remove old finished jobs");
        }
    }
}

#[cfg(test)]
mod tests;
