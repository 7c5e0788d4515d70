//! WatchJobs streams fed by publishing on the engine's job-change channel
//! directly, with jobs kept in a [`JobsStore`] for the re-reads.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::FutureExt;
use tokio_stream::StreamExt;

use super::{JobUpdates, JobsStore, RESYNC_MARGIN, SENT_PRUNE_MIN};

/// [`RESYNC_MARGIN`] in µs, for the arithmetic on bare stamps below.
const RESYNC_MARGIN_US: i64 = RESYNC_MARGIN.as_micros() as i64;

/// The system clock now in bare µs (the tests compute with stamps).
fn now_us() -> i64 {
    crate::wall_clock::now_us().0
}
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobKind, JobState};
use crate::domain::time::UnixMicros;
use crate::domain::{DomainError, Limits};
use crate::engine::{Engine, EngineError, JOB_CHANGES_BUFFER};
use crate::store::{StoreError, Stores};
use crate::wall_clock::{ManualClock, WallClock};

async fn engine(dir: &tempfile::TempDir, limits: Limits) -> (Engine, Arc<JobsStore>) {
    let store = Arc::new(JobsStore::open(dir.path()).await);
    let engine = Engine::new(
        Stores::single(store.clone()),
        crate::engine::EngineOptions {
            limits,
            ..crate::engine::EngineOptions::default()
        },
    )
    .await
    .expect("engine starts");
    (engine, store)
}

/// [`engine`] with the default limits on a wall clock the test sets.
async fn engine_on(dir: &tempfile::TempDir, clock: &ManualClock) -> (Engine, Arc<JobsStore>) {
    let store = Arc::new(JobsStore::open(dir.path()).await);
    let options = crate::engine::EngineOptions {
        wall_clock: Arc::new(clock.clone()),
        ..crate::engine::EngineOptions::default()
    };
    let engine = Engine::new(Stores::single(store.clone()), options)
        .await
        .expect("engine starts");
    (engine, store)
}

fn tenant(name: &str) -> Tenant {
    Tenant(name.to_owned())
}

/// A job of chat `chat` of the default tenant, queued at `created_us`.
fn job(chat: &str, id: &str, created_us: i64) -> Job {
    Job::new(
        id.to_owned(),
        ChatKey::untenanted(chat),
        JobKind::SceneRecap,
        "m1".to_owned(),
        UnixMicros(created_us),
        false,
    )
}

/// `job` moved to `state` at `updated_us`.
fn moved(job: &Job, state: JobState, updated_us: i64) -> Job {
    Job {
        state,
        updated_us: UnixMicros(updated_us),
        ..job.clone()
    }
}

/// Commits `job` (to the fake store) and publishes it, as the engine does.
fn change(engine: &Engine, store: &JobsStore, job: &Job) {
    store.put(job.clone());
    engine.jobs().publish_job_change(job.clone());
}

/// The next item if one is ready now; `None` when the stream would wait.
fn ready(updates: &mut JobUpdates) -> Option<Option<Result<Arc<Job>, EngineError>>> {
    updates.next().now_or_never()
}

/// Every item ready now, as (id, state, updated_us).
fn drain(updates: &mut JobUpdates) -> Vec<(String, JobState, i64)> {
    let mut seen = Vec::new();
    while let Some(Some(item)) = ready(updates) {
        let job = item.expect("no error");
        seen.push((job.id.clone(), job.state, job.updated_us.0));
    }
    seen
}

#[tokio::test]
async fn a_reader_that_keeps_up_sees_every_state_of_its_chats_only() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir, Limits::default()).await;
    let mut updates = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec!["a".into()], None)
        .unwrap();
    let t = now_us();
    let mine = job("a", "j1", t);
    let other_chat = job("b", "j2", t);
    let other_tenant = Job {
        chat: tenant("t2").chat("a"),
        ..job("a", "j3", t)
    };
    change(&engine, &store, &mine);
    change(&engine, &store, &other_chat);
    change(&engine, &store, &other_tenant);
    change(&engine, &store, &moved(&mine, JobState::Running, t + 1));
    change(
        &engine,
        &store,
        &moved(&other_chat, JobState::Running, t + 1),
    );
    change(&engine, &store, &moved(&mine, JobState::Succeeded, t + 2));
    assert_eq!(
        drain(&mut updates),
        [
            ("j1".to_owned(), JobState::Pending, t),
            ("j1".to_owned(), JobState::Running, t + 1),
            ("j1".to_owned(), JobState::Succeeded, t + 2),
        ]
    );
    assert!(ready(&mut updates).is_none(), "waits for more");
    assert!(store.queries().is_empty(), "no re-read without a lag");
}

#[tokio::test]
async fn no_chat_named_means_every_chat_of_the_callers_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir, Limits::default()).await;
    let mut updates = engine
        .jobs()
        .watch_jobs(&tenant("t2"), vec![], None)
        .unwrap();
    let t = now_us();
    change(&engine, &store, &job("a", "default-tenant", t));
    for (chat, id) in [("a", "x"), ("b", "y")] {
        let job = Job {
            chat: tenant("t2").chat(chat),
            ..job(chat, id, t)
        };
        change(&engine, &store, &job);
    }
    let ids: Vec<String> = drain(&mut updates).into_iter().map(|s| s.0).collect();
    assert_eq!(ids, ["x", "y"]);
}

#[tokio::test]
async fn a_reader_far_behind_ends_at_each_jobs_latest_state() {
    let dir = tempfile::tempdir().unwrap();
    // The engine's clock stands still: the reader keeps up at `opened`.
    let clock = ManualClock::new(UnixMicros(1_700_000_000_000_000));
    let (engine, store) = engine_on(&dir, &clock).await;
    let opened = clock.now();
    let mut updates = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec![], None)
        .unwrap();
    let t = opened.0;
    // Read before the lag: one job that changes on, one that does not.
    let changing = job("a", "changing", t);
    let still = job("a", "still", t);
    change(&engine, &store, &changing);
    change(&engine, &store, &moved(&still, JobState::Running, t + 1));
    assert_eq!(drain(&mut updates).len(), 2);
    // Then far more changes than the channel holds, none read.
    change(&engine, &store, &moved(&changing, JobState::Running, t + 2));
    let born = job("b", "born", t + 3);
    change(&engine, &store, &born);
    change(&engine, &store, &moved(&born, JobState::Running, t + 4));
    change(&engine, &store, &moved(&born, JobState::Failed, t + 5));
    let busy = job("c", "busy", t + 6);
    for i in 0..JOB_CHANGES_BUFFER as i64 {
        let state = if i % 2 == 0 {
            JobState::Running
        } else {
            JobState::Pending
        };
        let next = Job {
            attempts: u32::try_from(i).unwrap(),
            ..moved(&busy, state, t + 10 + i)
        };
        change(&engine, &store, &next);
    }
    let last_busy = t + 10 + JOB_CHANGES_BUFFER as i64 - 1;
    change(
        &engine,
        &store,
        &moved(&changing, JobState::Succeeded, last_busy + 1),
    );
    // Another tenant's job changed meanwhile too.
    let foreign = Job {
        chat: tenant("t2").chat("a"),
        ..job("a", "foreign", t + 7)
    };
    store.put(foreign);
    // A job of the reader's that last changed long before it fell behind.
    let ancient = t - 3 * RESYNC_MARGIN_US;
    store.put(moved(
        &job("a", "ancient", ancient),
        JobState::Succeeded,
        ancient,
    ));

    // Each job the reader missed, at its latest, oldest change first; the
    // job whose latest it has is not sent again; nothing after the re-read
    // repeats what it covered.
    assert_eq!(
        drain(&mut updates),
        [
            ("born".to_owned(), JobState::Failed, t + 5),
            ("busy".to_owned(), JobState::Pending, last_busy),
            ("changing".to_owned(), JobState::Succeeded, last_busy + 1),
        ]
    );
    let queries = store.queries();
    assert_eq!(queries.len(), 1, "one page was enough");
    let since = queries[0]
        .changed_since_us
        .expect("only recent changes are read");
    assert_eq!(
        since,
        opened.saturating_sub(RESYNC_MARGIN),
        "from the moment the reader last kept up, less the margin"
    );
    assert_eq!(queries[0].chat_id, None);
    assert_eq!(queries[0].tenant, Tenant::default());

    // It goes on with the channel.
    change(
        &engine,
        &store,
        &moved(&still, JobState::Succeeded, last_busy + 2),
    );
    assert_eq!(
        drain(&mut updates),
        [("still".to_owned(), JobState::Succeeded, last_busy + 2)]
    );
}

#[tokio::test]
async fn after_a_re_read_the_channels_older_changes_are_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir, Limits::default()).await;
    let mut updates = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec!["a".into()], None)
        .unwrap();
    let t = now_us();
    let busy = job("a", "busy", t);
    for i in 0..=JOB_CHANGES_BUFFER as i64 {
        change(&engine, &store, &moved(&busy, JobState::Pending, t + i));
    }
    // Committed by another task that has not published it yet.
    let late = job("a", "late", t);
    store.put(moved(&late, JobState::Succeeded, t + 500));
    assert_eq!(
        drain(&mut updates),
        [
            (
                "busy".to_owned(),
                JobState::Pending,
                t + JOB_CHANGES_BUFFER as i64
            ),
            ("late".to_owned(), JobState::Succeeded, t + 500),
        ]
    );
    assert_eq!(store.queries()[0].chat_id.as_deref(), Some("a"));
    // Its changes arrive now: the older one and the one the re-read sent
    // are passed over, a newer one is sent.
    engine
        .jobs()
        .publish_job_change(moved(&late, JobState::Running, t + 400));
    engine
        .jobs()
        .publish_job_change(moved(&late, JobState::Succeeded, t + 500));
    assert!(ready(&mut updates).is_none());
    change(&engine, &store, &moved(&late, JobState::Pending, t + 600));
    assert_eq!(
        drain(&mut updates),
        [("late".to_owned(), JobState::Pending, t + 600)]
    );
}

#[tokio::test]
async fn a_failed_re_read_ends_the_stream_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir, Limits::default()).await;
    let mut updates = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec![], None)
        .unwrap();
    store.fail_reads.store(true, Ordering::SeqCst);
    let busy = job("a", "busy", now_us());
    for i in 0..=JOB_CHANGES_BUFFER as i64 {
        change(
            &engine,
            &store,
            &moved(&busy, JobState::Pending, busy.created_us.0 + i),
        );
    }
    match ready(&mut updates) {
        Some(Some(Err(EngineError::Store(StoreError::Database { .. })))) => {}
        other => panic!("expected the store's error, got {other:?}"),
    }
    assert!(matches!(ready(&mut updates), Some(None)), "then it ends");
}

#[tokio::test]
async fn watch_jobs_and_subscribe_share_the_subscriber_limits() {
    let dir = tempfile::tempdir().unwrap();
    let limits = Limits {
        max_subscribers: 2,
        max_subscribers_per_connection: 1,
        ..Limits::default()
    };
    let (engine, _store) = engine(&dir, limits).await;
    let a: SocketAddr = "127.0.0.1:1001".parse().unwrap();
    let b: SocketAddr = "127.0.0.1:1002".parse().unwrap();
    let c: SocketAddr = "127.0.0.1:1003".parse().unwrap();
    let first = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec![], Some(a))
        .unwrap();
    let refused = |result: Result<JobUpdates, EngineError>| {
        matches!(
            result,
            Err(EngineError::Domain(DomainError::ResourceExhausted(_)))
        )
    };
    assert!(refused(engine.jobs().watch_jobs(
        &Tenant::default(),
        vec![],
        Some(a)
    )));
    let _subscribed = engine
        .chats()
        .subscribe(&Tenant::default(), &[], Some(b))
        .await
        .unwrap();
    assert!(refused(engine.jobs().watch_jobs(
        &Tenant::default(),
        vec![],
        Some(c)
    )));
    drop(first);
    assert!(
        engine
            .jobs()
            .watch_jobs(&Tenant::default(), vec![], Some(c))
            .is_ok()
    );
}

#[tokio::test]
async fn the_record_of_what_was_sent_forgets_what_no_re_read_can_return() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir, Limits::default()).await;
    let mut updates = engine
        .jobs()
        .watch_jobs(&Tenant::default(), vec![], None)
        .unwrap();
    let recent = moved(&job("a", "recent", now_us()), JobState::Running, now_us());
    updates.record(&recent);
    let old_us = now_us() - 2 * RESYNC_MARGIN_US;
    for i in 0..SENT_PRUNE_MIN {
        updates.record(&job("a", &format!("old{i}"), old_us));
    }
    assert!(updates.sent.len() < SENT_PRUNE_MIN, "pruned when it grew");
    assert!(updates.sent.contains_key("recent"));
}
