//! The runner's purge of finished jobs (`--job-retention`), on the
//! engine's manual clock.

use std::time::Duration;

use crate::domain::ids::Tenant;
use crate::domain::jobs::{Job, JobKind, JobState};
use crate::domain::time::UnixMicros;
use crate::engine::tests::{engine_at, key};
use crate::store::Write;
use crate::wall_clock::{ManualClock, WallClock};

/// `id` of chat "c", in `state`, last changed at `at`.
fn job(id: &str, state: JobState, at: UnixMicros) -> Job {
    let mut job = Job::new(
        id.to_owned(),
        key("c"),
        JobKind::SceneRecap,
        "m1".to_owned(),
        at,
        false,
    );
    job.state = state;
    job
}

#[tokio::test]
async fn finished_jobs_go_once_older_than_the_retention_on_the_engines_clock() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(UnixMicros(1_000_000_000_000));
    let engine = engine_at(&dir, &clock).await;
    let retention = engine.jobs().jobs().queue().retention;
    let start = clock.now();
    let writes = [
        job("done", JobState::Succeeded, start),
        job("waiting", JobState::Pending, start),
    ]
    .into_iter()
    .map(|job| Write::Job {
        job,
        expect_fence: None,
    })
    .collect();
    engine.chats().inner.store.commit(writes).await.unwrap();
    let kept = async |id: &str| {
        engine
            .chats()
            .inner
            .store
            .job(&Tenant::default(), id)
            .await
            .unwrap()
            .is_some()
    };

    // Exactly the retention later, the finished job is not yet older.
    clock.advance(retention);
    engine.jobs().jobs().purge_jobs().await;
    assert!(
        kept("done").await,
        "a job finished exactly the retention ago stays"
    );

    // One µs more and it goes; a job that never finished stays.
    clock.advance(Duration::from_micros(1));
    engine.jobs().jobs().purge_jobs().await;
    assert!(!kept("done").await, "the finished job is purged");
    assert!(
        kept("waiting").await,
        "a non-terminal job stays whatever its age"
    );
}
