//! How long the store waits for PostgreSQL before a call fails, so a dead
//! connection fails calls rather than hanging them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::store::StoreError;

/// Longest a store call may take, waiting for the database included,
/// before it fails (a commit that timed out is rolled back or, if it
/// reached the server, may still land: it is not acknowledged either way).
/// Work that may take longer as a whole (a large commit, a large chat's
/// load) is bounded per step instead.
pub(super) const OPERATION_TIMEOUT: Duration = Duration::from_secs(20);

/// `work`, failed when it takes longer than [`OPERATION_TIMEOUT`].
pub(super) async fn bounded<T>(
    work: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    tokio::time::timeout(OPERATION_TIMEOUT, work)
        .await
        .unwrap_or_else(|elapsed| {
            Err(StoreError::database(
                format!(
                    "PostgreSQL did not answer within {} s",
                    OPERATION_TIMEOUT.as_secs()
                ),
                elapsed,
            ))
        })
}

/// As [`bounded`], but the bound restarts whenever `progress` moved during
/// it: `work` fails only after a whole bound passed with no progress (so a
/// dead connection still fails it, within two bounds).
pub(super) async fn bounded_while_progressing<T>(
    progress: &AtomicU64,
    work: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    let mut work = std::pin::pin!(work);
    let mut seen = progress.load(Ordering::Relaxed);
    loop {
        match tokio::time::timeout(OPERATION_TIMEOUT, &mut work).await {
            Ok(result) => return result,
            Err(elapsed) => {
                let now = progress.load(Ordering::Relaxed);
                if now == seen {
                    return Err(StoreError::database(
                        format!(
                            "PostgreSQL sent nothing for {} s",
                            OPERATION_TIMEOUT.as_secs()
                        ),
                        elapsed,
                    ));
                }
                seen = now;
            }
        }
    }
}

#[cfg(test)]
mod tests;
