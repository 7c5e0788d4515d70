//! The job queue's table in the embedded store: what only it does (fences
//! checked in the order of a batch's groups, the upgrade of a version 2
//! database, the state codes its SQL names). The contract both stores
//! share is tested on both in `tests/it/store_jobs.rs`; the job rows here
//! (`job_rows`) are a copy of its.

use super::job_rows::*;
use crate::domain::jobs::JobState;
use crate::domain::time::UnixMicros;
use crate::store::sqlite::schema::SCHEMA_VERSION;
use crate::store::sqlite::*;

async fn open(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(dir.path(), true).await.unwrap()
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
    // The chained upgrade to version 4 gave the chat its activity.
    assert!(
        loaded.updated_us.is_some_and(|at| at > UnixMicros(0)),
        "{:?}",
        loaded.updated_us
    );
    assert_eq!(
        store.quiet_chats(UnixMicros(i64::MAX), 10).await.unwrap(),
        std::slice::from_ref(&c)
    );
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

/// The commit thread keeps its prepared statements for its whole life: a
/// group that fails (here on a moved fence, after its chat row was
/// written in the same transaction) rolls back alone, and the groups after
/// it, or batched with it, are written with the same statements.
#[tokio::test]
async fn the_commit_thread_writes_on_after_a_failed_group() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir).await;
    let c = key("t", "c");
    let d = key("t", "d");
    let first = running(job("j", &c, 1, JobState::Pending), 100, 1);
    store.commit(vec![put(&first)]).await.unwrap();
    let mut late = first.clone();
    late.state = JobState::Failed;
    // Alone, then side by side with a good group (which may share its
    // batch: the batch then fails and each group is committed alone).
    let error = store
        .commit(vec![chat_row(&c, 7), fenced(&late, 2)])
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Fenced(_)), "{error:?}");
    assert!(store.load(&c).await.unwrap().chat.is_none());
    let (bad, good) = tokio::join!(
        store.commit(vec![chat_row(&c, 8), fenced(&late, 3)]),
        store.commit(vec![chat_row(&d, 4)]),
    );
    assert!(matches!(bad, Err(StoreError::Fenced(_))), "{bad:?}");
    good.unwrap();
    assert!(store.load(&c).await.unwrap().chat.is_none());
    let mut done = first.clone();
    done.state = JobState::Succeeded;
    store
        .commit(vec![chat_row(&c, 9), fenced(&done, 1)])
        .await
        .unwrap();
    let loaded = store.load(&c).await.unwrap();
    assert_eq!(loaded.chat.map(|chat| chat.meta.revision), Some(9));
    let stored = store.job(&c.tenant, "j").await.unwrap();
    assert_eq!(stored.map(|job| job.state), Some(JobState::Succeeded));
    let other = store.load(&d).await.unwrap();
    assert_eq!(other.chat.map(|chat| chat.meta.revision), Some(4));
    store.close().await;
}
