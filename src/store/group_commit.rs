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
//!   [`StoreError::Panicked`], and the loop goes on serving;
//! - each group goes back to its caller with the answer, so what it holds
//!   is freed on the caller's thread, not on the loop's.
//!
//! The loop is the one place every write passes through in turn, so a
//! store gives it groups already made ready by their callers (the group
//! type [`Group`]: the embedded store's are encoded rows, see
//! `sqlite::writes`) and keeps in it only what must be serial.

use std::panic::AssertUnwindSafe;
use std::time::Instant;

use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot};

use tracing::Instrument as _;

use super::{StoreError, Write};
use crate::telemetry::{self, spans};

/// Most groups put into one transaction.
const MAX_GROUPS_PER_COMMIT: usize = 4096;

/// One caller's all-or-nothing group of writes, as a store's loop takes it.
pub trait Group: Send + 'static {
    /// Whether the group holds no write (it commits nothing).
    fn is_empty(&self) -> bool;

    /// Whether the group is committed in a transaction of its own (see
    /// `Batch::gather`).
    fn goes_alone(&self) -> bool;
}

/// Whether `writes` replace a whole chat (a possibly large import, which
/// is committed alone).
pub fn replaces_a_chat<'a>(writes: impl IntoIterator<Item = &'a Write>) -> bool {
    writes
        .into_iter()
        .any(|write| matches!(write, Write::ReplaceChat { .. }))
}

impl Group for Vec<Write> {
    fn is_empty(&self) -> bool {
        <[Write]>::is_empty(self)
    }

    fn goes_alone(&self) -> bool {
        replaces_a_chat(self)
    }
}

/// Where one caller's answer goes, with its group given back.
type Answer<G> = oneshot::Sender<(Result<(), StoreError>, G)>;

/// One caller's group, and where its answer goes.
pub struct Request<G> {
    group: G,
    done: Answer<G>,
    /// The caller's span, when traced: the commit's span is its child (the
    /// first caller's) or links to it (the others').
    traced_by: Option<opentelemetry::trace::SpanContext>,
}

/// The sending side of a store's commit loop. Closing it (see
/// [`CommitQueue::close`]) lets the loop drain what it has and end.
pub struct CommitQueue<G = Vec<Write>> {
    sender: parking_lot::RwLock<Option<mpsc::UnboundedSender<Request<G>>>>,
    /// Completes (its sender dropped) when the loop has ended.
    finished: tokio::sync::Mutex<Option<oneshot::Receiver<()>>>,
}

/// The receiving side, for the store's loop, and the signal it drops when
/// it ends.
pub struct CommitRequests<G = Vec<Write>> {
    requests: mpsc::UnboundedReceiver<Request<G>>,
    _finished: oneshot::Sender<()>,
}

/// A new queue and the requests its loop serves.
pub fn queue<G>() -> (CommitQueue<G>, CommitRequests<G>) {
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

impl<G: Group> CommitQueue<G> {
    /// Queues one group; resolves once the transaction holding it is
    /// durable, or failed. An empty group commits nothing and succeeds.
    /// The group comes back with the answer and is dropped here, on the
    /// caller's thread.
    pub async fn commit(&self, group: G) -> Result<(), StoreError> {
        if group.is_empty() {
            return Ok(());
        }
        let (done, answer) = oneshot::channel();
        {
            let sender = self.sender.read();
            let sender = sender.as_ref().ok_or(StoreError::Closed)?;
            sender
                .send(Request {
                    group,
                    done,
                    traced_by: spans::current(),
                })
                .map_err(|_| StoreError::Closed)?;
        }
        match answer.await {
            Ok((outcome, group)) => {
                drop(group);
                outcome
            }
            Err(_) => Err(StoreError::Closed),
        }
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
struct Batch<G> {
    callers: Vec<Answer<G>>,
    groups: Vec<G>,
    started: Instant,
    /// The traced callers' spans, in the order they came.
    traced_by: Vec<opentelemetry::trace::SpanContext>,
}

impl<G: Group> Batch<G> {
    /// `first` and every request already waiting behind it, except that a
    /// group replacing a whole chat ([`Write::ReplaceChat`], a possibly
    /// large import) is committed alone: the groups waiting behind it do
    /// not share its long transaction, nor its failure. A request taken
    /// from the queue that must go alone is handed back for the next batch.
    fn gather(
        first: Request<G>,
        requests: &mut mpsc::UnboundedReceiver<Request<G>>,
    ) -> (Batch<G>, Option<Request<G>>) {
        let mut batch = Batch {
            callers: Vec::new(),
            groups: Vec::new(),
            started: Instant::now(),
            traced_by: Vec::new(),
        };
        let alone = first.group.goes_alone();
        batch.push(first);
        if alone {
            return (batch, None);
        }
        while batch.groups.len() < MAX_GROUPS_PER_COMMIT {
            match requests.try_recv() {
                Ok(next) if next.group.goes_alone() => return (batch, Some(next)),
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        (batch, None)
    }

    fn push(&mut self, request: Request<G>) {
        self.callers.push(request.done);
        self.groups.push(request.group);
        if let Some(traced_by) = request.traced_by
            && self.traced_by.len() <= spans::MAX_LINKS
        {
            self.traced_by.push(traced_by);
        }
    }

    /// The span of this batch's transaction (see [`spans::commit`]).
    fn span(&self) -> tracing::Span {
        spans::commit(self.groups.len(), &self.traced_by)
    }

    /// Answers every caller with the transaction's outcome, or, when it
    /// failed and held several groups, hands them back to be retried one
    /// at a time.
    fn settle(self, outcome: Result<(), StoreError>) -> Option<Vec<(G, Answer<G>)>> {
        metrics::histogram!(telemetry::COMMIT_DURATION)
            .record(self.started.elapsed().as_secs_f64());
        metrics::histogram!(telemetry::COMMIT_BATCH).record(self.groups.len() as f64);
        match outcome {
            Ok(()) => {
                // Each group goes back with its answer: the caller frees it
                // (a caller that shared a chat with its writes,
                // `Write::ReplaceChat`, holds it alone again once answered).
                for (group, caller) in self.groups.into_iter().zip(self.callers) {
                    let _ = caller.send((Ok(()), group));
                }
                None
            }
            Err(error) if self.callers.len() == 1 => {
                let mut groups = self.groups.into_iter();
                if let (Some(group), Some(caller)) =
                    (groups.next(), self.callers.into_iter().next())
                {
                    let _ = caller.send((Err(error), group));
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
pub fn run_blocking<G: Group>(
    mut requests: CommitRequests<G>,
    mut commit: impl FnMut(&[G]) -> Result<(), StoreError>,
) {
    let mut guarded = |groups: &[G]| {
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
        let outcome = batch.span().in_scope(|| guarded(&batch.groups));
        for (group, caller) in batch.settle(outcome).into_iter().flatten() {
            let outcome = guarded(std::slice::from_ref(&group));
            let _ = caller.send((outcome, group));
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
pub async fn run_async(mut requests: CommitRequests<Vec<Write>>, committer: impl BatchCommit) {
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
        let outcome = guarded(&batch.groups).instrument(batch.span()).await;
        for (group, caller) in batch.settle(outcome).into_iter().flatten() {
            let outcome = guarded(std::slice::from_ref(&group)).await;
            let _ = caller.send((outcome, group));
        }
    }
}

#[cfg(test)]
mod tests;
