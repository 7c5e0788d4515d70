//! The job queue's table through the store itself (no server), the same
//! contract on both stores: each case runs on the embedded store (a fresh
//! data directory) and on PostgreSQL (a schema of its own, dropped when the
//! test ends): open jobs in a chat's load, fences, pages of a tenant's
//! jobs, the runnable set, the next due time and the purge. Claims by two
//! replicas at once are PostgreSQL's alone.

use std::sync::Arc;

use crate::common::*;
use recapd::config::StoreUrl;
use recapd::domain::ids::{ChatKey, Tenant};
use recapd::domain::jobs::{Job, JobKind, JobLane, JobState, Lease};
use recapd::domain::time::UnixMicros;
use recapd::store::postgres::PgOptions;
use recapd::store::{
    ChatMeta, ChatStore, JobQuery, PgStore, SharedChat, SqliteStore, StoreError, Write,
};

mod fixtures;
use fixtures::*;
mod pg_lifecycle;
mod pg_recall;

/// Each case runs twice: `$sqlite` on the embedded store, `$pg` on
/// PostgreSQL.
macro_rules! on_both_stores {
    ($($case:ident: $sqlite:ident, $pg:ident;)*) => {$(
        #[tokio::test]
        async fn $sqlite() {
            let dir = tempfile::tempdir().unwrap();
            let store = SqliteStore::open(dir.path(), true).await.unwrap();
            $case(Arc::new(store)).await;
        }

        #[tokio::test]
        async fn $pg() {
            let schema = Schema::new();
            $case(Arc::new(schema.store().await)).await;
        }
    )*};
}

on_both_stores! {
    open_jobs_in_a_load: sqlite_a_load_shows_the_chats_open_jobs_oldest_first_and_a_replacement_keeps_them,
        pg_a_load_shows_the_chats_open_jobs_oldest_first_and_a_replacement_keeps_them;
    stale_fence: sqlite_a_job_write_under_a_stale_fence_fails_its_group_only,
        pg_a_job_write_under_a_stale_fence_fails_its_group_only;
    pages: sqlite_job_pages_go_newest_first_by_state_chat_and_tenant,
        pg_job_pages_go_newest_first_by_state_chat_and_tenant;
    runnable: sqlite_runnable_jobs_skip_chats_under_a_live_lease_and_take_over_expired_ones,
        pg_runnable_jobs_skip_chats_under_a_live_lease_and_take_over_expired_ones;
    purge: sqlite_a_purge_removes_only_terminal_jobs_finished_before_its_time,
        pg_a_purge_removes_only_terminal_jobs_finished_before_its_time;
}

/// A fresh schema of the test database, dropped when the test ends (even
/// when it fails).
pub(crate) struct Schema(String);

impl Schema {
    pub(crate) fn new() -> Schema {
        // `rt_` and random hex, so the test script's clean-up finds it.
        Schema(format!("rt_{:016x}", rand::random::<u64>()))
    }

    /// A store on this schema (another call: another replica on it).
    pub(crate) async fn store(&self) -> PgStore {
        let (connection, tls) = StoreUrl(test_database_url())
            .parse()
            .expect("the test database URL");
        PgStore::open(&PgOptions {
            connection,
            tls,
            schema: self.0.clone(),
            pool_size: 4,
        })
        .await
        .expect("opens the store")
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        // The test's runtime may be gone: drop the schema from a thread
        // with a runtime of its own.
        let name = self.0.clone();
        let url = test_database_url();
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let (client, connection) =
                    tokio_postgres::connect(&url, tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                    .await
            })?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop schema {}: {dropped:?}", self.0);
        }
    }
}

async fn open_jobs_in_a_load(store: Arc<dyn ChatStore>) {
    let c = key("t", "c");
    let other = key("t", "other");
    let mut done = job("done", &c, 5, JobState::Succeeded);
    done.result = "a recap".into();
    store
        .commit(vec![
            chat_row(&c, 1),
            put(&job("later", &c, 30, JobState::Pending)),
            put(&running(job("first", &c, 10, JobState::Pending), 99, 1)),
            // Same creation time: the id decides.
            put(&job("b-same", &c, 20, JobState::Pending)),
            put(&job("a-same", &c, 20, JobState::Pending)),
            put(&done),
            put(&job("failed", &c, 6, JobState::Failed)),
            put(&job("discarded", &c, 7, JobState::Discarded)),
            put(&job("elsewhere", &other, 1, JobState::Pending)),
            put(&job("other-tenant", &key("u", "c"), 1, JobState::Pending)),
        ])
        .await
        .unwrap();
    let loaded = store.load(&c).await.unwrap();
    assert_eq!(ids(&loaded.jobs), ["first", "a-same", "b-same", "later"]);
    assert!(
        loaded.jobs.iter().all(|j| j.chat == c),
        "the chat is put back"
    );
    assert_eq!(loaded.jobs[0].fence, 1);
    assert_eq!(
        loaded.jobs[0].lease.as_ref().map(|l| l.until_us),
        Some(UnixMicros(99))
    );
    // The terminal job is still there, as the tenant's query shows.
    assert_eq!(store.job(&c.tenant, "done").await.unwrap(), Some(done));

    // Replacing the chat's messages does not touch its jobs.
    let content = Arc::new(recapd::domain::chat::Chat::default());
    store
        .commit(vec![Write::ReplaceChat {
            chat: c.clone(),
            content: SharedChat(content),
        }])
        .await
        .unwrap();
    assert_eq!(store.load(&c).await.unwrap().jobs.len(), 4);

    // A job that moved to a terminal state leaves the load.
    store
        .commit(vec![put(&job("later", &c, 30, JobState::Cancelled))])
        .await
        .unwrap();
    assert_eq!(
        ids(&store.load(&c).await.unwrap().jobs),
        ["first", "a-same", "b-same"]
    );
    // A chat without a row of its own still shows its jobs.
    assert_eq!(ids(&store.load(&other).await.unwrap().jobs), ["elsewhere"]);
    store.close().await;
}

async fn stale_fence(store: Arc<dyn ChatStore>) {
    let c = key("t", "c");
    let claimed = running(job("j", &c, 1, JobState::Pending), 100, 2);
    store.commit(vec![put(&claimed)]).await.unwrap();

    // A runner that claimed fence 1 is too late: nothing of its group lands.
    let mut result = claimed.clone();
    result.state = JobState::Succeeded;
    let error = store
        .commit(vec![chat_row(&c, 7), fenced(&result, 1)])
        .await
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::Fenced(id) if id == "j"),
        "{error:?}"
    );
    assert!(store.load(&c).await.unwrap().chat.is_none());
    // An expected fence on a job that does not exist fails too.
    let ghost = job("ghost", &c, 1, JobState::Pending);
    assert!(matches!(
        store.commit(vec![fenced(&ghost, 0)]).await,
        Err(StoreError::Fenced(id)) if id == "ghost"
    ));
    assert_eq!(store.job(&c.tenant, "ghost").await.unwrap(), None);

    // Several callers at once (queued while the store is busy with the
    // first, so the others share a batch): the stale one fails alone.
    let d = key("t", "d");
    let mut callers = Vec::new();
    for writes in [
        vec![chat_row(&key("t", "first"), 1)],
        vec![chat_row(&c, 8), fenced(&result, 1)],
        vec![chat_row(&d, 1), fenced(&result, 2)],
        vec![chat_row(&key("t", "e"), 1)],
    ] {
        let store = store.clone();
        callers.push(tokio::spawn(async move { store.commit(writes).await }));
    }
    let mut outcomes = Vec::new();
    for caller in callers {
        outcomes.push(caller.await.unwrap());
    }
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(
        matches!(outcomes[1], Err(StoreError::Fenced(_))),
        "{:?}",
        outcomes[1]
    );
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    assert!(outcomes[3].is_ok(), "{:?}", outcomes[3]);
    assert!(store.load(&c).await.unwrap().chat.is_none());
    assert_eq!(store.load(&d).await.unwrap().chat.unwrap().meta.revision, 1);
    let stored = store.job(&c.tenant, "j").await.unwrap().unwrap();
    assert_eq!((stored.state, stored.fence), (JobState::Succeeded, 2));
    store.close().await;
}

async fn pages(store: Arc<dyn ChatStore>) {
    let (c, d) = (key("t", "c"), key("t", "d"));
    let mut writes = Vec::new();
    for (i, chat) in [&c, &d, &c, &d, &c, &d].into_iter().enumerate() {
        let state = if i % 2 == 0 {
            JobState::Pending
        } else {
            JobState::Failed
        };
        writes.push(put(&job(&format!("j{i}"), chat, 10 * i as i64, state)));
    }
    // Same time as j5: ids compare byte by byte, whatever the database's
    // collation ("J" sorts before "j" in bytes, not in most locales).
    writes.push(put(&job("j5b", &c, 50, JobState::Succeeded)));
    writes.push(put(&job("J5", &c, 50, JobState::Succeeded)));
    writes.push(put(&job("theirs", &key("u", "c"), 1000, JobState::Pending)));
    store.commit(writes).await.unwrap();
    let tenant = Tenant("t".into());
    let page = async |limit, after: Option<(UnixMicros, String)>, chat: Option<&str>, states| {
        let query = JobQuery {
            tenant: tenant.clone(),
            chat_id: chat.map(str::to_owned),
            states,
            limit,
            after,
            changed_since_us: None,
        };
        store.list_jobs(&query).await.unwrap()
    };
    let first = page(3, None, None, vec![]).await;
    assert_eq!(ids(&first), ["j5b", "j5", "J5"]);
    let last = first.last().unwrap();
    let after = Some((last.created_us, last.id.clone()));
    assert_eq!(ids(&page(3, after, None, vec![]).await), ["j4", "j3", "j2"]);
    let after = Some((UnixMicros(20), "j2".to_owned()));
    assert_eq!(ids(&page(3, after, None, vec![]).await), ["j1", "j0"]);
    // Between j5b and j5, which share their time.
    let after = Some((UnixMicros(50), "j5b".to_owned()));
    assert_eq!(ids(&page(1, after, None, vec![]).await), ["j5"]);
    assert!(page(0, None, None, vec![]).await.is_empty());

    let failed = page(10, None, None, vec![JobState::Failed]).await;
    assert_eq!(ids(&failed), ["j5", "j3", "j1"]);
    let done = vec![JobState::Failed, JobState::Succeeded];
    assert_eq!(ids(&page(10, None, Some("c"), done).await), ["j5b", "J5"]);
    assert_eq!(
        ids(&page(2, Some((UnixMicros(40), "j4".into())), Some("c"), vec![]).await),
        ["j2", "j0"]
    );
    assert!(page(10, None, Some("nothing"), vec![]).await.is_empty());
    // Only the jobs changed at or after a time (a WatchJobs catch-up).
    let recent = store
        .list_jobs(&JobQuery {
            tenant: tenant.clone(),
            limit: 10,
            changed_since_us: Some(UnixMicros(50)),
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&recent), ["j5b", "j5", "J5"]);

    // Another tenant's job is out of reach, by list and by id.
    let all = page(100, None, None, vec![]).await;
    assert_eq!(all.len(), 8);
    assert!(all.iter().all(|j| j.chat.tenant == tenant));
    assert_eq!(store.job(&tenant, "theirs").await.unwrap(), None);
    let found = store.job(&Tenant("u".into()), "theirs").await.unwrap();
    assert_eq!(found.map(|j| j.chat), Some(key("u", "c")));
    store.close().await;
}

async fn runnable(store: Arc<dyn ChatStore>) {
    assert_eq!(
        store
            .next_job_due(UnixMicros(0), JobLane::Recap)
            .await
            .unwrap(),
        None
    );
    let now = 1_000;
    let (busy, stalled, idle) = (key("t", "busy"), key("u", "stalled"), key("t", "idle"));
    let mut later = job("later", &idle, 4, JobState::Pending);
    later.not_before_us = UnixMicros(now + 500);
    store
        .commit(vec![
            put(&running(
                job("busy-run", &busy, 1, JobState::Pending),
                now,
                1,
            )),
            put(&job("busy-next", &busy, 2, JobState::Pending)),
            put(&running(
                job("stalled-run", &stalled, 3, JobState::Pending),
                now - 1,
                1,
            )),
            put(&job("stalled-next", &stalled, 5, JobState::Pending)),
            put(&later),
            put(&job("due", &idle, 6, JobState::Pending)),
            put(&job("over", &idle, 0, JobState::Succeeded)),
        ])
        .await
        .unwrap();
    let runnable = store
        .runnable_jobs(UnixMicros(now), 10, None, JobLane::Recap)
        .await
        .unwrap();
    // One job per chat (the oldest that can start), in chat order:
    // t/idle before u/stalled.
    assert_eq!(ids(&runnable), ["due", "stalled-run"]);
    assert_eq!(runnable[1].chat, stalled);
    // A page from the chat after t/idle.
    assert_eq!(
        ids(&store
            .runnable_jobs(UnixMicros(now), 10, Some(&idle), JobLane::Recap)
            .await
            .unwrap()),
        ["stalled-run"]
    );
    assert_eq!(
        ids(&store
            .runnable_jobs(UnixMicros(now), 1, None, JobLane::Recap)
            .await
            .unwrap()),
        ["due"]
    );
    assert_eq!(
        ids(&store
            .runnable_jobs(UnixMicros(now + 500), 10, None, JobLane::Recap)
            .await
            .unwrap()),
        ["busy-run", "later", "stalled-run"]
    );
    assert_eq!(
        store
            .next_job_due(UnixMicros(0), JobLane::Recap)
            .await
            .unwrap(),
        Some(UnixMicros(2))
    );
    // Only times still to come: the pending job due later.
    assert_eq!(
        store
            .next_job_due(UnixMicros(now), JobLane::Recap)
            .await
            .unwrap(),
        Some(UnixMicros(now + 500))
    );
    store
        .commit(vec![
            put(&job("busy-next", &busy, 2, JobState::Cancelled)),
            put(&job("stalled-next", &stalled, 5, JobState::Cancelled)),
            put(&job("due", &idle, 6, JobState::Cancelled)),
        ])
        .await
        .unwrap();
    assert_eq!(
        store
            .next_job_due(UnixMicros(0), JobLane::Recap)
            .await
            .unwrap(),
        Some(UnixMicros(now - 1))
    );
    store.close().await;
}

async fn purge(store: Arc<dyn ChatStore>) {
    let c = key("t", "c");
    let aged = |id: &str, state, updated_us| {
        let mut job = job(id, &c, 0, state);
        job.updated_us = updated_us;
        put(&job)
    };
    let mut writes = Vec::new();
    for state in JobState::ALL {
        writes.push(aged(
            &format!("old-{}", state.name()),
            state,
            UnixMicros(10),
        ));
        writes.push(aged(
            &format!("new-{}", state.name()),
            state,
            UnixMicros(100),
        ));
    }
    writes.push(aged("edge", JobState::Failed, UnixMicros(50)));
    store.commit(writes).await.unwrap();
    store
        .commit(vec![Write::PurgeJobs {
            finished_before_us: UnixMicros(50),
        }])
        .await
        .unwrap();
    let query = JobQuery {
        tenant: c.tenant.clone(),
        limit: 100,
        ..Default::default()
    };
    let mut left: Vec<String> = store
        .list_jobs(&query)
        .await
        .unwrap()
        .into_iter()
        .map(|j| j.id)
        .collect();
    left.sort();
    let mut expected: Vec<String> = JobState::ALL
        .into_iter()
        .map(|s| format!("new-{}", s.name()))
        .chain(["old-pending".into(), "old-running".into(), "edge".into()])
        .collect();
    expected.sort();
    assert_eq!(left, expected);
    store.close().await;
}

#[tokio::test]
async fn pg_replicas_claiming_one_job_at_once_get_it_once() {
    let schema = Schema::new();
    let (a, b) = (
        Arc::new(schema.store().await),
        Arc::new(schema.store().await),
    );
    let c = key("t", "c");
    let queued = job("j", &c, 1, JobState::Pending);
    a.commit(vec![put(&queued)]).await.unwrap();
    // Another transaction holds the row while every runner claims it, so
    // all of them are under way at once; each read fence 0 and claims
    // fence 1. The fence check's row lock makes them wait for each other,
    // and only the first to get it still finds fence 0.
    let (holder, connection) = tokio_postgres::connect(&test_database_url(), tokio_postgres::NoTls)
        .await
        .expect("connects to the test database");
    tokio::spawn(connection);
    holder
        .batch_execute(&format!(
            "SET search_path TO \"{}\"; BEGIN; SELECT * FROM jobs FOR UPDATE;",
            schema.0
        ))
        .await
        .unwrap();
    let mut claims = Vec::new();
    // One runner per replica, so that each claim is a batch of its own.
    for (runner, store) in [a.clone(), b.clone()].into_iter().enumerate() {
        let mut claim = running(queued.clone(), 1_000, 1);
        claim.lease = Some(Lease {
            owner: format!("runner {runner}"),
            until_us: UnixMicros(1_000),
        });
        claims.push(tokio::spawn(async move {
            store.commit(vec![fenced(&claim, 0)]).await
        }));
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    holder.batch_execute("COMMIT").await.unwrap();
    let mut won = Vec::new();
    for (runner, claim) in claims.into_iter().enumerate() {
        match claim.await.unwrap() {
            Ok(()) => won.push(runner),
            Err(StoreError::Fenced(id)) => assert_eq!(id, "j"),
            Err(other) => panic!("runner {runner}: {other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "winners: {won:?}");
    let stored = b.job(&c.tenant, "j").await.unwrap().unwrap();
    assert_eq!(
        stored.lease.map(|l| l.owner),
        Some(format!("runner {}", won[0]))
    );
    // A loser's later result is refused on either replica.
    let mut late = queued.clone();
    late.state = JobState::Succeeded;
    for store in [&a, &b] {
        assert!(matches!(
            store.commit(vec![fenced(&late, 0)]).await,
            Err(StoreError::Fenced(_))
        ));
    }
    a.close().await;
    b.close().await;
}
