//! The job rows the embedded store's job-table tests (`jobs`) write: a
//! copy of the contract tests' (`tests/it/store_jobs/fixtures.rs`), as
//! nothing in `src/` includes a file from `tests/`.

use crate::domain::ids::Tenant;
use crate::domain::jobs::{Job, JobKind, JobState, Lease};
use crate::domain::time::UnixMicros;
use crate::store::{ChatKey, ChatMeta, Write};

/// The key of `chat` in `tenant`.
pub fn key(tenant: &str, chat: &str) -> ChatKey {
    Tenant(tenant.into()).chat(chat)
}

/// A job of `chat` created at `created_us`, in `state`.
pub fn job(id: &str, chat: &ChatKey, created_us: i64, state: JobState) -> Job {
    let mut job = Job::new(
        id.into(),
        chat.clone(),
        JobKind::RunningRecap,
        format!("message of {id}"),
        UnixMicros(created_us),
        false,
    );
    job.state = state;
    job
}

/// `job` RUNNING under a lease until `until_us`, claimed with `fence`.
pub fn running(mut job: Job, until_us: i64, fence: u64) -> Job {
    job.state = JobState::Running;
    job.lease = Some(Lease {
        owner: "runner".into(),
        until_us: UnixMicros(until_us),
    });
    job.fence = fence;
    job
}

/// A write of `job` with no fence to check.
pub fn put(job: &Job) -> Write {
    Write::Job {
        job: job.clone(),
        expect_fence: None,
    }
}

/// A write of `job` that fails unless the stored job's fence is `fence`.
pub fn fenced(job: &Job, fence: u64) -> Write {
    Write::Job {
        job: job.clone(),
        expect_fence: Some(fence),
    }
}

/// A write of `chat`'s row at `revision`.
pub fn chat_row(chat: &ChatKey, revision: u64) -> Write {
    Write::Chat {
        chat: chat.clone(),
        meta: ChatMeta {
            revision,
            ..Default::default()
        },
    }
}

/// The ids of `jobs`, in their order.
pub fn ids(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|j| j.id.as_str()).collect()
}
