//! Optimistic concurrency's one retry.
//!
//! A chat and a lorebook are both changed the same way: read the record
//! with its **version** (a chat's counts its commits; a book's is random),
//! change it, and write naming the version read. The store refuses a write
//! whose version moved meanwhile (another replica, or another writer, got
//! there first): the change lost a race, and runs again on a fresh read,
//! a few times, pausing a little longer each time; then the caller gets
//! ABORTED. [`Retry`] is that policy as a value, and [`Retry::run`] the
//! one loop that follows it.

use std::time::Duration;

use super::EngineError;
use crate::domain::backoff::Backoff;
use crate::store::StoreError;
use crate::telemetry;

/// The pause between re-runs of a change that lost a race: from 0.5 ms
/// doubling up to 50 ms, full jitter, so two replicas racing on one chat
/// or book stop meeting at the same moment.
const CONFLICT_BACKOFF: Backoff = Backoff {
    min: Duration::from_micros(500),
    max: Duration::from_millis(50),
    jitter: 1.0,
};

/// How a change that lost a race is run again.
#[derive(Debug, Clone, Copy)]
pub(super) struct Retry {
    /// Attempts in all, the first included, before the loss is answered.
    pub attempts: u32,
    /// The pause before each re-run (by re-run, from 1).
    pub backoff: Backoff,
    /// Which errors are a lost race.
    pub lost: fn(&EngineError) -> bool,
    /// Whether a re-run is counted in `recapd_replica_conflicts_total`
    /// and logged (at debug).
    pub counted: bool,
}

impl Retry {
    /// A chat's change: re-run while another replica changed the chat
    /// first (or, for a lore job's answer applied to the chat's lorebook,
    /// a client or another replica changed the book since it was read), up
    /// to 32 times.
    pub const CHATS: Retry = Retry {
        attempts: 33,
        backoff: CONFLICT_BACKOFF,
        lost: |error| {
            matches!(
                error,
                EngineError::Store(StoreError::Conflict(_) | StoreError::LorebookChanged(_))
            )
        },
        counted: true,
    };

    /// A lorebook's change (import, deletion, entry edit): re-run while
    /// another writer changed the book since it was read, 32 attempts in
    /// all.
    pub const BOOKS: Retry = Retry {
        attempts: 32,
        backoff: CONFLICT_BACKOFF,
        lost: |error| matches!(error, EngineError::Store(StoreError::LorebookChanged(_))),
        counted: false,
    };

    /// Runs `attempt`, and again after a pause while it loses a race and
    /// attempts remain; answers with its last outcome.
    pub async fn run<T, F, Fut>(&self, mut attempt: F) -> Result<T, EngineError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, EngineError>>,
    {
        let mut made = 0;
        loop {
            made += 1;
            let outcome = attempt().await;
            let lost = match &outcome {
                Err(error) if made < self.attempts && (self.lost)(error) => error,
                _ => return outcome,
            };
            if self.counted {
                metrics::counter!(telemetry::REPLICA_CONFLICTS).increment(1);
                tracing::debug!(
                    error = %lost,
                    conflicts = made,
                    "another writer changed it first; retrying"
                );
            }
            tokio::time::sleep(self.pause(made)).await;
        }
    }

    /// The pause before re-run `rerun` (from 1).
    fn pause(&self, rerun: u32) -> Duration {
        self.backoff.delay(rerun, rand::random::<f64>())
    }
}
