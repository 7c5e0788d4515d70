//! The job queue's options, which hold with or without an LLM (`config`
//! builds them from the command line).

use std::time::Duration;

/// Options of the job queue that hold with or without an LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueOptions {
    /// How long finished jobs are kept.
    pub retention: Duration,
    /// How long a running job's lease lasts.
    pub lease: Duration,
    /// Most non-terminal jobs per chat.
    pub max_jobs_per_chat: usize,
}

impl Default for QueueOptions {
    fn default() -> QueueOptions {
        QueueOptions {
            retention: Duration::from_secs(7 * 86_400),
            lease: Duration::from_secs(60),
            max_jobs_per_chat: 1000,
        }
    }
}
