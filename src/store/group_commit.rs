//! Group commit, shared by both stores: every write group waiting when the
//! database becomes free goes into the same transaction, and all of them
//! are answered together. One fsync (or one PostgreSQL round of commits)
//! then covers many callers instead of one.
//!
//! A store owns the loop that drains its [`CommitQueue`]: the embedded store
//! on a thread of its own ([`run_blocking`], since its database calls
//! block), the PostgreSQL store as a task ([`run_async`]). Either way:
//!
//! - a failing batch of several groups is retried one group at a time, so a
//!   bad group fails alone;
//! - a panic in the store's code is caught: its transaction rolls back (the
//!   database handles roll back when dropped), its callers get
//!   [`StoreError::Panicked`], and the loop goes on serving.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot};

use super::{StoreError, Write};
use crate::telemetry;

/// Most groups put into one transaction.
const MAX_GROUPS_PER_COMMIT: usize = 4096;

/// Where one caller's answer goes.
type Answer = oneshot::Sender<Result<(), StoreError>>;

/// One caller's group, and where its answer goes.
pub struct Request {
    writes: Vec<Write>,
    done: Answer,
}

impl Request {
    /// Whether the group is committed in a transaction of its own (see
    /// `Batch::gather`).
    fn goes_alone(&self) -> bool {
        self.writes
            .iter()
            .any(|write| matches!(write, Write::ReplaceChat { .. }))
    }
}

/// The sending side of a store's commit loop. Closing it (see
/// [`CommitQueue::close`]) lets the loop drain what it has and end.
pub struct CommitQueue {
    sender: parking_lot::RwLock<Option<mpsc::UnboundedSender<Request>>>,
    /// Completes (its sender dropped) when the loop has ended.
    finished: tokio::sync::Mutex<Option<oneshot::Receiver<()>>>,
}

/// The receiving side, for the store's loop, and the signal it drops when
/// it ends.
pub struct CommitRequests {
    requests: mpsc::UnboundedReceiver<Request>,
    _finished: oneshot::Sender<()>,
}

/// A new queue and the requests its loop serves.
pub fn queue() -> (CommitQueue, CommitRequests) {
    let (sender, requests) = mpsc::unbounded_channel();
    let (finished_tx, finished_rx) = oneshot::channel();
    (
        CommitQueue {
            sender: parking_lot::RwLock::new(Some(sender)),
            finished: tokio::sync::Mutex::new(Some(finished_rx)),
        },
        CommitRequests {
            requests,
            _finished: finished_tx,
        },
    )
}

impl CommitQueue {
    /// Queues one group; resolves once the transaction holding it is
    /// durable, or failed. An empty group commits nothing and succeeds.
    pub async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let (done, answer) = oneshot::channel();
        {
            let sender = self.sender.read();
            let sender = sender.as_ref().ok_or(StoreError::Closed)?;
            sender
                .send(Request { writes, done })
                .map_err(|_| StoreError::Closed)?;
        }
        answer.await.unwrap_or(Err(StoreError::Closed))
    }

    /// Takes no more groups and waits until the loop has answered every
    /// group it took.
    pub async fn close(&self) {
        self.sender.write().take();
        let finished = self.finished.lock().await.take();
        if let Some(finished) = finished {
            let _ = finished.await;
        }
    }
}

/// The groups of one transaction, with their callers.
struct Batch {
    callers: Vec<Answer>,
    groups: Vec<Vec<Write>>,
    started: Instant,
}

impl Batch {
    /// `first` and every request already waiting behind it, except that a
    /// group replacing a whole chat ([`Write::ReplaceChat`], a possibly
    /// large import) is committed alone: the groups waiting behind it do
    /// not share its long transaction, nor its failure. A request taken
    /// from the queue that must go alone is handed back for the next batch.
    fn gather(
        first: Request,
        requests: &mut mpsc::UnboundedReceiver<Request>,
    ) -> (Batch, Option<Request>) {
        let mut batch = Batch {
            callers: Vec::new(),
            groups: Vec::new(),
            started: Instant::now(),
        };
        let alone = first.goes_alone();
        batch.push(first);
        if alone {
            return (batch, None);
        }
        while batch.groups.len() < MAX_GROUPS_PER_COMMIT {
            match requests.try_recv() {
                Ok(next) if next.goes_alone() => return (batch, Some(next)),
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        (batch, None)
    }

    fn push(&mut self, request: Request) {
        self.callers.push(request.done);
        self.groups.push(request.writes);
    }

    /// Answers every caller with the transaction's outcome, or, when it
    /// failed and held several groups, hands them back to be retried one
    /// at a time.
    fn settle(self, outcome: Result<(), StoreError>) -> Option<Vec<(Vec<Write>, Answer)>> {
        metrics::histogram!(telemetry::COMMIT_DURATION)
            .record(self.started.elapsed().as_secs_f64());
        metrics::histogram!(telemetry::COMMIT_BATCH).record(self.groups.len() as f64);
        match outcome {
            Ok(()) => {
                // The writes go before the answers: a caller that shared a
                // chat with its writes (`Write::ReplaceChat`) holds it
                // alone again once answered.
                drop(self.groups);
                for caller in self.callers {
                    let _ = caller.send(Ok(()));
                }
                None
            }
            Err(error) if self.callers.len() == 1 => {
                // As on success, the writes go before the answer.
                drop(self.groups);
                if let Some(caller) = self.callers.into_iter().next() {
                    let _ = caller.send(Err(error));
                }
                None
            }
            Err(error) => {
                tracing::debug!(%error, groups = self.groups.len(), "batch failed; committing its groups one by one");
                Some(self.groups.into_iter().zip(self.callers).collect())
            }
        }
    }
}

fn log_panic(error: &StoreError) {
    if let StoreError::Panicked(message) = error {
        tracing::error!(
            panic = message,
            "a commit panicked; its batch was rolled back and the store goes on"
        );
    }
}

/// Serves `requests` on the calling thread until every [`CommitQueue`]
/// handle is closed or dropped, committing each batch with `commit` (which
/// blocks until the transaction is durable).
pub fn run_blocking(
    mut requests: CommitRequests,
    mut commit: impl FnMut(&[Vec<Write>]) -> Result<(), StoreError>,
) {
    let mut guarded = |groups: &[Vec<Write>]| {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| commit(groups)))
            .unwrap_or_else(|panic| Err(StoreError::from_panic(&*panic)));
        if let Err(error) = &outcome {
            log_panic(error);
        }
        outcome
    };
    let mut held = None;
    while let Some(first) = held.take().or_else(|| requests.requests.blocking_recv()) {
        let (batch, next) = Batch::gather(first, &mut requests.requests);
        held = next;
        let outcome = guarded(&batch.groups);
        for (group, caller) in batch.settle(outcome).into_iter().flatten() {
            let outcome = guarded(std::slice::from_ref(&group));
            drop(group);
            let _ = caller.send(outcome);
        }
    }
}

/// A store's transaction over one batch of groups, for [`run_async`].
#[async_trait::async_trait]
pub trait BatchCommit: Send + Sync {
    /// Commits every group of `groups` in one transaction; returns once it
    /// is durable.
    async fn commit_batch(&self, groups: &[Vec<Write>]) -> Result<(), StoreError>;
}

/// Serves `requests` as a task until every [`CommitQueue`] handle is closed
/// or dropped, committing each batch with `committer`.
pub async fn run_async(mut requests: CommitRequests, committer: impl BatchCommit) {
    let guarded = async |groups: &[Vec<Write>]| {
        let outcome = AssertUnwindSafe(committer.commit_batch(groups))
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| Err(StoreError::from_panic(&*panic)));
        if let Err(error) = &outcome {
            log_panic(error);
        }
        outcome
    };
    let mut held = None;
    loop {
        let first = match held.take() {
            Some(first) => first,
            None => match requests.requests.recv().await {
                Some(first) => first,
                None => break,
            },
        };
        let (batch, next) = Batch::gather(first, &mut requests.requests);
        held = next;
        let outcome = guarded(&batch.groups).await;
        for (group, caller) in batch.settle(outcome).into_iter().flatten() {
            let outcome = guarded(std::slice::from_ref(&group)).await;
            drop(group);
            let _ = caller.send(outcome);
        }
    }
}

#[cfg(test)]
mod tests;
