//! Why the store could not do what was asked ([`StoreError`]), and the
//! message of a panic caught inside a store task.

use crate::domain::ids::ClaimKey;

/// Why the store could not do what was asked. Nothing of a failed commit is
/// applied, except as [`StoreError::Database`] says for a shared store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database refused or failed (disk full, read-only, connection
    /// lost...). With PostgreSQL, a commit whose answer was lost may still
    /// have been applied.
    #[error("storage failed: {context}: {source}")]
    Database {
        /// What the store was doing.
        context: String,
        /// The database's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A stored row could not be read back, or a value could not be written
    /// as a row.
    #[error("stored data is unreadable: {context}: {source}")]
    Corrupt {
        /// Which row or value.
        context: String,
        /// Why it could not be read.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The store is closed (shutting down).
    #[error("storage is closed")]
    Closed,
    /// Another replica changed what a [`Write::Claim`](super::Write::Claim) claimed after this
    /// one read it; the caller re-reads and retries.
    #[error("{0} was changed by another replica; retry")]
    Conflict(ClaimKey),
    /// The store's own code panicked while serving the call. The batch it
    /// was in was rolled back; the store keeps serving other calls.
    #[error("internal storage error: {0}")]
    Panicked(String),
    /// A [`Write::Job`](super::Write::Job) expected a fence the job no longer has: another
    /// runner claimed it (or it was cancelled or finished) since. Nothing
    /// of the batch's group is applied; the caller drops its result.
    #[error("job {0} was taken over or changed by another runner")]
    Fenced(String),
    /// A [`Write::Lorebook`](super::Write::Lorebook) or [`Write::DeleteLorebook`](super::Write::DeleteLorebook) expected a
    /// version of the book (named here) that is no longer the stored one:
    /// another writer changed it first. Nothing of the group is applied.
    #[error("lorebook {0:?} was changed by another writer; retry")]
    LorebookChanged(String),
}

impl StoreError {
    /// The same error again, for another caller that failed with it; a
    /// database's own error is kept as its message.
    pub fn copy(&self) -> StoreError {
        let source = |source: &(dyn std::error::Error + Send + Sync)| source.to_string().into();
        match self {
            StoreError::Database { context, source: s } => StoreError::Database {
                context: context.clone(),
                source: source(s.as_ref()),
            },
            StoreError::Corrupt { context, source: s } => StoreError::Corrupt {
                context: context.clone(),
                source: source(s.as_ref()),
            },
            StoreError::Closed => StoreError::Closed,
            StoreError::Conflict(key) => StoreError::Conflict(key.clone()),
            StoreError::Panicked(message) => StoreError::Panicked(message.clone()),
            StoreError::Fenced(job) => StoreError::Fenced(job.clone()),
            StoreError::LorebookChanged(name) => StoreError::LorebookChanged(name.clone()),
        }
    }

    /// A database failure while doing `context`.
    pub fn database(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> StoreError {
        StoreError::Database {
            context: context.into(),
            source: source.into(),
        }
    }

    /// Unreadable (or unwritable) data in `context`.
    pub fn corrupt(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> StoreError {
        StoreError::Corrupt {
            context: context.into(),
            source: source.into(),
        }
    }

    /// A panic caught in the store's code, with its message when it had one.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> StoreError {
        StoreError::Panicked(panic_message(payload))
    }
}

/// The message a panic was raised with, when it had one.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a task panicked".to_owned())
}
