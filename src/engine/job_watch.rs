//! WatchJobs: the job state changes one call receives, read from the
//! engine's job-change channel, with a re-read from the store for a reader
//! that fell too far behind it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio_stream::Stream;
use tokio_util::sync::ReusableBoxFuture;

use super::EngineError;
use super::fanout::Permit;
use super::jobs::JobDriver;
use crate::domain::ids::Tenant;
use crate::domain::jobs::{Job, JobState};
use crate::domain::time::UnixMicros;
use crate::store::JobQuery;

#[cfg(test)]
mod fake_store;

#[cfg(test)]
pub(crate) use fake_store::JobsStore;

/// How long before the moment a reader last kept up a re-read starts. A
/// change is stamped (`updated_us`) before it commits and is published
/// after, by this process or, through the store's notifications, by
/// another replica with its own clock; so a change published after that
/// moment may carry an earlier stamp. Two minutes covers a commit up to
/// the store's 20 s bound, the notification's delay and a clock skew
/// between replicas far larger than NTP leaves; a wider margin only makes
/// a re-read read more.
const RESYNC_MARGIN: Duration = Duration::from_secs(120);

/// Jobs per store read while re-reading.
const RESYNC_PAGE: usize = 1000;

/// The reader's record of what it was sent is pruned once it holds at
/// least this many jobs (and twice as many as after its last pruning).
const SENT_PRUNE_MIN: usize = 1024;

/// A receive from the channel, with the receiver handed back.
type Received = (Result<Arc<Job>, RecvError>, broadcast::Receiver<Arc<Job>>);

async fn receive(mut receiver: broadcast::Receiver<Arc<Job>>) -> Received {
    let result = receiver.recv().await;
    (result, receiver)
}

/// A re-read under way: the jobs it finds.
type Resync = Pin<Box<dyn Future<Output = Result<Vec<Arc<Job>>, EngineError>> + Send>>;

/// What a reader was last sent of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sent {
    updated_us: UnixMicros,
    state: JobState,
}

impl Sent {
    fn of(job: &Job) -> Sent {
        Sent {
            updated_us: job.updated_us,
            state: job.state,
        }
    }
}

/// The job state changes one WatchJobs call receives: the caller's
/// tenant's jobs in the named chats (every chat of the tenant when none is
/// named), in the order the engine published them, which is their order
/// per job. It counts as one subscription against `--max-subscribers` and
/// `--max-subscribers-per-connection`, together with Subscribe's.
///
/// # Lag policy
///
/// A reader that keeps up with the engine's job-change channel (it holds
/// [`super::JOB_CHANGES_BUFFER`] changes of every tenant's jobs) is sent
/// every state. One that falls further behind is not cut off; it skips to
/// each job's latest:
///
/// 1. It drops what it had not read yet and subscribes afresh at once, so
///    every change published from then on reaches it.
/// 2. It re-reads from the store every job of its chats last changed since
///    the moment it last kept up (the last time it found the channel
///    empty, or its previous fresh subscription) less
///    [`RESYNC_MARGIN`]. Every change it missed was published after
///    that moment, so stamped no earlier than that less the margin; and
///    the store, read after the fresh subscription, holds each such job's
///    latest state committed by then (or a later one). Jobs that did not
///    change in that window hold no state the reader missed, which is why
///    neither the non-terminal jobs alone (a job queued and finished
///    within the window would be lost) nor every job kept (a scan of the
///    whole retention per lag) is read.
/// 3. It sends those whose state differs from what it was last sent of
///    them (by `updated_us` and state), oldest change first.
/// 4. It goes on with the channel, where a change published after the
///    fresh subscription but already seen by the re-read is passed over:
///    one stamped before, or equal to, the state the re-read sent of its
///    job. This relies on a job's `updated_us` growing with each of its
///    changes.
///
/// A store failure during a re-read ends the stream with that error: the
/// reader could no longer be sure to end at each job's latest state, and
/// a new WatchJobs call (after a ListJobs) is how it catches up.
pub struct JobUpdates {
    _permit: Permit,
    driver: JobDriver,
    tenant: Tenant,
    /// Only these chats' jobs; empty: all the tenant's.
    chats: Arc<HashSet<String>>,
    /// The next receive from the channel.
    next: ReusableBoxFuture<'static, Received>,
    /// A re-read under way, and when its fresh subscription was made.
    resync: Option<(Resync, UnixMicros)>,
    /// Found by the last re-read and not yet sent.
    queued: VecDeque<Arc<Job>>,
    /// Every change published before this (µs, this process's clock) has
    /// been received or is covered by a re-read.
    caught_up_us: UnixMicros,
    /// What the reader was sent of each job changed recently.
    sent: HashMap<String, Sent>,
    /// `sent`'s size after its last pruning.
    sent_kept: usize,
    /// The last re-read's jobs, while the channel may still carry older
    /// changes of them.
    resynced: HashMap<String, Arc<Job>>,
    /// The stream has ended (the channel closed, or a re-read failed).
    ended: bool,
}

impl JobDriver {
    /// Opens a WatchJobs stream of `tenant`'s jobs in `chat_ids` (ids
    /// already checked; empty: every chat of the tenant). Changes published
    /// from this call on are sent. `connection` identifies the client
    /// connection, for the per-connection subscription limit.
    pub fn watch_jobs(
        &self,
        tenant: &Tenant,
        chat_ids: Vec<String>,
        connection: Option<SocketAddr>,
    ) -> Result<JobUpdates, EngineError> {
        let permit = self
            .chats
            .inner
            .subscribers
            .admit(self.chats.limits(), connection)?;
        let caught_up_us = self.chats.now();
        let receiver = self.jobs().subscribe();
        Ok(JobUpdates {
            _permit: permit,
            driver: self.clone(),
            tenant: tenant.clone(),
            chats: Arc::new(chat_ids.into_iter().collect()),
            next: ReusableBoxFuture::new(receive(receiver)),
            resync: None,
            queued: VecDeque::new(),
            caught_up_us,
            sent: HashMap::new(),
            sent_kept: 0,
            resynced: HashMap::new(),
            ended: false,
        })
    }

    /// Every job of `tenant` in `chats` (all when empty) last changed at or
    /// after `since_us`, oldest change first.
    async fn jobs_changed_since(
        &self,
        tenant: &Tenant,
        chats: &HashSet<String>,
        since_us: UnixMicros,
    ) -> Result<Vec<Arc<Job>>, EngineError> {
        // One chat is asked of the store by name; several are read as the
        // tenant's recent changes and picked here.
        let only = match chats.len() {
            1 => chats.iter().next().cloned(),
            _ => None,
        };
        let mut query = JobQuery {
            tenant: tenant.clone(),
            chat_id: only,
            states: Vec::new(),
            limit: RESYNC_PAGE,
            after: None,
            changed_since_us: Some(since_us),
        };
        let mut found = Vec::new();
        loop {
            let page = self.chats.store().list_jobs(&query).await?;
            let last_page = page.len() < RESYNC_PAGE;
            query.after = page.last().map(|job| (job.created_us, job.id.clone()));
            found.extend(
                page.into_iter()
                    .filter(|job| {
                        job.updated_us >= since_us
                            && job.chat.tenant == *tenant
                            && (chats.is_empty() || chats.contains(&job.chat.id))
                    })
                    .map(Arc::new),
            );
            if last_page || query.after.is_none() {
                break;
            }
        }
        found.sort_by(|a, b| (a.updated_us, &a.id).cmp(&(b.updated_us, &b.id)));
        Ok(found)
    }

    /// Publishes a job change to the WatchJobs readers, as the engine does
    /// after committing it.
    #[cfg(test)]
    pub(crate) fn publish_job_change(&self, job: Job) {
        self.jobs().tell(job);
    }
}

impl JobUpdates {
    /// Whether the reader watches `job`'s chat.
    fn watches(&self, job: &Job) -> bool {
        job.chat.tenant == self.tenant
            && (self.chats.is_empty() || self.chats.contains(&job.chat.id))
    }

    /// Whether a change from the channel is one the last re-read already
    /// covered (an older state of its job, or the same one).
    fn covered_by_resync(&mut self, job: &Job) -> bool {
        let Some(resynced) = self.resynced.get(&job.id) else {
            return false;
        };
        let same = **resynced == *job;
        let older = job.updated_us < resynced.updated_us;
        if !older {
            // From here on the channel is ahead of the re-read for this job.
            self.resynced.remove(&job.id);
        }
        same || older
    }

    /// Records `job` as sent, pruning the record of jobs no re-read can
    /// return any more when it has grown.
    fn record(&mut self, job: &Job) {
        self.sent.insert(job.id.clone(), Sent::of(job));
        if self.sent.len() >= SENT_PRUNE_MIN.max(self.sent_kept.saturating_mul(2)) {
            let since = self.caught_up_us.saturating_sub(RESYNC_MARGIN);
            self.sent.retain(|_, sent| sent.updated_us >= since);
            self.sent_kept = self.sent.len();
        }
    }

    /// Starts a re-read after the channel dropped changes this reader had
    /// not read. `fresh_at_us` is a moment no later than the fresh
    /// subscription.
    fn start_resync(&mut self, fresh_at_us: UnixMicros) {
        let since_us = self.caught_up_us.saturating_sub(RESYNC_MARGIN);
        let driver = self.driver.clone();
        let tenant = self.tenant.clone();
        let chats = self.chats.clone();
        let read = async move { driver.jobs_changed_since(&tenant, &chats, since_us).await };
        self.resync = Some((Box::pin(read), fresh_at_us));
    }

    /// Takes a finished re-read's jobs: queues those the reader has not
    /// been sent, and keeps them all to pass over their older changes.
    fn resynced(&mut self, jobs: Vec<Arc<Job>>, fresh_at_us: UnixMicros) {
        self.resynced.clear();
        for job in jobs {
            if self.sent.get(&job.id) != Some(&Sent::of(&job)) {
                self.queued.push_back(job.clone());
            }
            self.resynced.insert(job.id.clone(), job);
        }
        self.caught_up_us = fresh_at_us;
    }
}

impl Stream for JobUpdates {
    type Item = Result<Arc<Job>, EngineError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            if let Some((read, fresh_at_us)) = this.resync.as_mut() {
                let fresh_at_us = *fresh_at_us;
                let found = std::task::ready!(read.as_mut().poll(cx));
                this.resync = None;
                match found {
                    Ok(jobs) => this.resynced(jobs, fresh_at_us),
                    Err(error) => {
                        this.ended = true;
                        return Poll::Ready(Some(Err(error)));
                    }
                }
            }
            if let Some(job) = this.queued.pop_front() {
                this.record(&job);
                return Poll::Ready(Some(Ok(job)));
            }
            let polled_at_us = this.driver.chats.now();
            let Poll::Ready((received, receiver)) = this.next.poll(cx) else {
                // Everything published before the poll has been received.
                this.caught_up_us = polled_at_us;
                return Poll::Pending;
            };
            match received {
                Ok(job) => {
                    this.next.set(receive(receiver));
                    if this.watches(&job) && !this.covered_by_resync(&job) {
                        this.record(&job);
                        return Poll::Ready(Some(Ok(job)));
                    }
                }
                Err(RecvError::Lagged(skipped)) => {
                    let fresh_at_us = this.driver.chats.now();
                    this.next.set(receive(receiver.resubscribe()));
                    tracing::debug!(skipped, "WatchJobs reader fell behind; re-reading its jobs");
                    this.start_resync(fresh_at_us);
                }
                Err(RecvError::Closed) => {
                    this.ended = true;
                    return Poll::Ready(None);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
