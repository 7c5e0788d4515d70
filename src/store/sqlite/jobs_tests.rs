//! The job queue's table in the embedded store.

use super::*;
use crate::domain::jobs::{JobKind, JobState, Lease};

fn key(tenant: &str, chat: &str) -> ChatKey {
    Tenant(tenant.into()).chat(chat)
}

/// A job of `chat` created at `created_us`, in `state`.
fn job(id: &str, chat: &ChatKey, created_us: i64, state: JobState) -> Job {
    let mut job = Job::new(
        id.into(),
        chat.clone(),
        JobKind::SceneRecap,
        format!("message of {id}"),
        created_us,
        true,
    );
    job.state = state;
    job
}

/// `job` RUNNING under a lease until `until_us`, claimed with `fence`.
fn running(mut job: Job, until_us: i64, fence: u64) -> Job {
    job.state = JobState::Running;
    job.lease = Some(Lease {
        owner: "runner".into(),
        until_us,
    });
    job.fence = fence;
    job
}

fn put(job: &Job) -> Write {
    Write::Job {
        job: job.clone(),
        expect_fence: None,
    }
}

fn fenced(job: &Job, fence: u64) -> Write {
    Write::Job {
        job: job.clone(),
        expect_fence: Some(fence),
    }
}

fn chat_row(chat: &ChatKey, revision: u64) -> Write {
    Write::Chat {
        chat: chat.clone(),
        meta: ChatMeta {
            revision,
            ..Default::default()
        },
    }
}

fn ids(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|j| j.id.as_str()).collect()
}

async fn open(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(dir.path(), true).await.unwrap()
}

#[tokio::test]
async fn a_load_shows_the_chats_open_jobs_oldest_first_and_a_replacement_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let c = key("t", "c");
    let other = key("t", "other");
    let mut done = job("done", &c, 5, JobState::Succeeded);
    done.result = "a recap".into();
    let writes = vec![
        chat_row(&c, 1),
        put(&job("later", &c, 30, JobState::Pending)),
        put(&running(job("first", &c, 10, JobState::Pending), 99, 1)),
        // Same creation time: the id decides.
        put(&job("b-same", &c, 20, JobState::Pending)),
        put(&job("a-same", &c, 20, JobState::Pending)),
        put(&done),
        put(&job("failed", &c, 6, JobState::Failed)),
        put(&job("elsewhere", &other, 1, JobState::Pending)),
        put(&job("other-tenant", &key("u", "c"), 1, JobState::Pending)),
    ];
    store.commit(writes).await.unwrap();
    let loaded = store.load(&c).await.unwrap();
    assert_eq!(ids(&loaded.jobs), ["first", "a-same", "b-same", "later"]);
    assert!(
        loaded.jobs.iter().all(|j| j.chat == c),
        "the chat is put back"
    );
    assert_eq!(loaded.jobs[0].lease.as_ref().map(|l| l.until_us), Some(99));
    // The terminal job is still there, as the tenant's query shows.
    assert_eq!(store.job(&c.tenant, "done").await.unwrap(), Some(done));

    // Replacing the chat's messages does not touch its jobs.
    let content = std::sync::Arc::new(crate::domain::chat::Chat::default());
    store
        .commit(vec![Write::ReplaceChat {
            chat: c.clone(),
            content: crate::store::SharedChat(content),
        }])
        .await
        .unwrap();
    assert_eq!(store.load(&c).await.unwrap().jobs.len(), 4);

    // A job that moved to a terminal state leaves the load.
    let mut later = job("later", &c, 30, JobState::Pending);
    later.state = JobState::Cancelled;
    store.commit(vec![put(&later)]).await.unwrap();
    assert_eq!(
        ids(&store.load(&c).await.unwrap().jobs),
        ["first", "a-same", "b-same"]
    );
    // A chat without a row of its own still shows its jobs.
    assert_eq!(ids(&store.load(&other).await.unwrap().jobs), ["elsewhere"]);
}

#[tokio::test]
async fn a_job_write_under_a_stale_fence_fails_its_group_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
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

    // Several callers at once: the stale one fails, the others commit.
    let d = key("t", "d");
    let (stale, good, other) = tokio::join!(
        store.commit(vec![chat_row(&c, 8), fenced(&result, 1)]),
        store.commit(vec![chat_row(&d, 1), fenced(&result, 2)]),
        store.commit(vec![chat_row(&key("t", "e"), 1)]),
    );
    assert!(matches!(stale, Err(StoreError::Fenced(_))), "{stale:?}");
    good.unwrap();
    other.unwrap();
    assert!(store.load(&c).await.unwrap().chat.is_none());
    assert_eq!(store.load(&d).await.unwrap().chat.unwrap().meta.revision, 1);
    let stored = store.job(&c.tenant, "j").await.unwrap().unwrap();
    assert_eq!(stored.state, JobState::Succeeded);
}

#[test]
fn a_batch_checks_fences_in_the_order_of_its_groups_and_fails_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = open_writer(&dir.path().join(DB_FILE), true).unwrap();
    let c = key("t", "c");
    let first = running(job("j", &c, 1, JobState::Pending), 100, 1);
    commit(&mut conn, &[vec![put(&first)]]).unwrap();
    // A re-claim (fence 1 -> 2) then the new runner's result under fence 2,
    // in one batch: each group sees the ones before it.
    let reclaimed = running(first.clone(), 200, 2);
    let mut result = reclaimed.clone();
    result.state = JobState::Succeeded;
    commit(
        &mut conn,
        &[vec![fenced(&reclaimed, 1)], vec![fenced(&result, 2)]],
    )
    .unwrap();
    // The old runner's result after the re-claim: the batch fails whole,
    // the group before it included (group commit then retries each group
    // alone, so only the fenced one fails).
    let mut late = first.clone();
    late.state = JobState::Failed;
    let error = commit(&mut conn, &[vec![chat_row(&c, 1)], vec![fenced(&late, 1)]]).unwrap_err();
    assert!(matches!(error, StoreError::Fenced(_)), "{error:?}");
    let chats: i64 = conn
        .query_row("SELECT count(*) FROM chats", [], |r| r.get(0))
        .unwrap();
    assert_eq!(chats, 0);
    let state: i64 = conn
        .query_row("SELECT state FROM jobs WHERE job_id = 'j'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(JobState::from_code(state), Some(JobState::Succeeded));
}

#[tokio::test]
async fn job_pages_go_newest_first_by_state_chat_and_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
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
    // Same time as j5: the greater id comes first.
    writes.push(put(&job("j5b", &c, 50, JobState::Succeeded)));
    writes.push(put(&job("theirs", &key("u", "c"), 1000, JobState::Pending)));
    store.commit(writes).await.unwrap();
    let tenant = Tenant("t".into());
    let page = async |limit, after: Option<(i64, String)>, chat: Option<&str>, states| {
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
    assert_eq!(ids(&first), ["j5b", "j5", "j4"]);
    let last = first.last().unwrap();
    let after = Some((last.created_us, last.id.clone()));
    assert_eq!(ids(&page(3, after, None, vec![]).await), ["j3", "j2", "j1"]);
    let after = Some((10, "j1".to_owned()));
    assert_eq!(ids(&page(3, after, None, vec![]).await), ["j0"]);
    // Between j5b and j5, which share their time.
    let after = Some((50, "j5b".to_owned()));
    assert_eq!(ids(&page(1, after, None, vec![]).await), ["j5"]);
    assert!(page(0, None, None, vec![]).await.is_empty());

    let failed = page(10, None, None, vec![JobState::Failed]).await;
    assert_eq!(ids(&failed), ["j5", "j3", "j1"]);
    let done = vec![JobState::Failed, JobState::Succeeded];
    assert_eq!(ids(&page(10, None, Some("c"), done).await), ["j5b"]);
    assert_eq!(
        ids(&page(2, Some((40, "j4".into())), Some("c"), vec![]).await),
        ["j2", "j0"]
    );
    assert!(page(10, None, Some("nothing"), vec![]).await.is_empty());
    // Only the jobs changed at or after a time (a WatchJobs catch-up).
    let recent = store
        .list_jobs(&JobQuery {
            tenant: tenant.clone(),
            limit: 10,
            changed_since_us: Some(50),
            ..JobQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&recent), ["j5b", "j5"]);

    // Another tenant's job is out of reach, by list and by id.
    let theirs = page(100, None, None, vec![]).await;
    assert_eq!(theirs.len(), 7);
    assert!(theirs.iter().all(|j| j.chat.tenant == tenant));
    assert_eq!(store.job(&tenant, "theirs").await.unwrap(), None);
    let found = store.job(&Tenant("u".into()), "theirs").await.unwrap();
    assert_eq!(found.map(|j| j.chat), Some(key("u", "c")));
}

#[tokio::test]
async fn runnable_jobs_skip_chats_under_a_live_lease_and_take_over_expired_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    assert_eq!(store.next_job_due(0).await.unwrap(), None);
    let now = 1_000;
    let (busy, stalled, idle) = (key("t", "busy"), key("u", "stalled"), key("t", "idle"));
    let mut later = job("later", &idle, 4, JobState::Pending);
    later.not_before_us = now + 500;
    let writes = vec![
        // A chat whose runner holds a valid lease: none of its jobs run.
        put(&running(
            job("busy-run", &busy, 1, JobState::Pending),
            now,
            1,
        )),
        put(&job("busy-next", &busy, 2, JobState::Pending)),
        // A chat whose runner's lease expired: its job and the next run.
        put(&running(
            job("stalled-run", &stalled, 3, JobState::Pending),
            now - 1,
            1,
        )),
        put(&job("stalled-next", &stalled, 5, JobState::Pending)),
        put(&later),
        put(&job("due", &idle, 6, JobState::Pending)),
        put(&job("over", &idle, 0, JobState::Succeeded)),
    ];
    store.commit(writes).await.unwrap();
    let runnable = store.runnable_jobs(now, 10, None).await.unwrap();
    // One job per chat (the oldest that can start), in chat order:
    // t/idle before u/stalled.
    assert_eq!(ids(&runnable), ["due", "stalled-run"]);
    assert_eq!(runnable[1].chat, stalled);
    // A page from the chat after t/idle.
    assert_eq!(
        ids(&store.runnable_jobs(now, 10, Some(&idle)).await.unwrap()),
        ["stalled-run"]
    );
    assert_eq!(
        ids(&store.runnable_jobs(now, 1, None).await.unwrap()),
        ["due"]
    );
    assert!(store.runnable_jobs(now, 0, None).await.unwrap().is_empty());
    // Once the busy lease has expired too, its chat runs again.
    let later_on = store.runnable_jobs(now + 500, 10, None).await.unwrap();
    assert_eq!(ids(&later_on), ["busy-run", "later", "stalled-run"]);
    // The earliest of the pending times and the lease expiries.
    assert_eq!(store.next_job_due(0).await.unwrap(), Some(2));
    // Only times still to come: the pending job due later.
    assert_eq!(store.next_job_due(now).await.unwrap(), Some(now + 500));
    store
        .commit(vec![
            put(&job("busy-next", &busy, 2, JobState::Cancelled)),
            put(&job("stalled-next", &stalled, 5, JobState::Cancelled)),
            put(&job("due", &idle, 6, JobState::Cancelled)),
        ])
        .await
        .unwrap();
    assert_eq!(store.next_job_due(0).await.unwrap(), Some(now - 1));
}

#[tokio::test]
async fn a_purge_removes_only_terminal_jobs_finished_before_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let c = key("t", "c");
    let aged = |id: &str, state, updated_us| {
        let mut job = job(id, &c, 0, state);
        job.updated_us = updated_us;
        put(&job)
    };
    let mut writes = Vec::new();
    for state in JobState::ALL {
        writes.push(aged(&format!("old-{}", state.name()), state, 10));
        writes.push(aged(&format!("new-{}", state.name()), state, 100));
    }
    writes.push(aged("edge", JobState::Failed, 50));
    store.commit(writes).await.unwrap();
    store
        .commit(vec![Write::PurgeJobs {
            finished_before_us: 50,
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
}

/// Schema version 2 as recapd wrote it, before the job queue.
const V2_DATABASE: &str = "
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE global_settings (tenant TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE chats (tenant TEXT NOT NULL, chat_id TEXT NOT NULL, needs_refresh INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (tenant, chat_id));
CREATE TABLE messages (tenant TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
    seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tenant, chat_id, message_id));
CREATE INDEX messages_by_seq ON messages (tenant, chat_id, seq);
CREATE TABLE recaps (tenant TEXT NOT NULL, chat_id TEXT NOT NULL, version INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (tenant, chat_id, version));
CREATE TABLE chat_settings (tenant TEXT NOT NULL, chat_id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id));
INSERT INTO kv VALUES ('schema_version', '2');
INSERT INTO chats VALUES ('acme', 'c', 1, '{\"revision\":6}');
";

#[tokio::test]
async fn a_version_2_database_gets_the_job_queue() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute_batch(V2_DATABASE).unwrap();
    }
    let c = key("acme", "c");
    let store = open(&dir).await;
    let loaded = store.load(&c).await.unwrap();
    let chat = loaded.chat.unwrap();
    assert_eq!((chat.meta.revision, chat.meta.needs_refresh), (6, true));
    assert!(loaded.jobs.is_empty());
    store
        .commit(vec![put(&job("j", &c, 1, JobState::Pending))])
        .await
        .unwrap();
    assert_eq!(ids(&store.load(&c).await.unwrap().jobs), ["j"]);
    store.close().await;
    drop(store);
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    let version: String = conn
        .query_row(
            "SELECT value FROM kv WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION.to_string());
    let indexes: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'jobs'
             AND name LIKE 'jobs_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 5);
    drop(conn);
    // Opening again finds the new version and keeps the job.
    let store = open(&dir).await;
    assert_eq!(store.load(&c).await.unwrap().jobs.len(), 1);
}

#[test]
fn the_state_codes_written_into_the_sql_are_the_domains() {
    // The statements and the partial index name PENDING as 1, RUNNING as 2.
    assert_eq!(JobState::Pending.code(), 1);
    assert_eq!(JobState::Running.code(), 2);
    assert_eq!(jobs::terminal_codes(), "3, 4, 5, 6");
}
