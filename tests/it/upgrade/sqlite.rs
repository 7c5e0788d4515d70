//! The SQLite store's upgrades: a data directory whose database is in
//! schema version 1 (the first recapd's) or 3 (before chat activity and
//! tombstones), and one of a newer schema.

use std::path::Path;

use super::{ACME, CHAT, DEFAULT, check_both_tenants};
use crate::common::*;

/// SQLite schema version 1, as the first recapd created it.
const SQLITE_V1_SCHEMA: &str = "
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE chats (chat_id TEXT PRIMARY KEY, needs_refresh INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE messages (chat_id TEXT NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (chat_id, message_id));
CREATE INDEX messages_by_seq ON messages (chat_id, seq);
CREATE TABLE recaps (chat_id TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (chat_id, version));
CREATE TABLE chat_settings (chat_id TEXT PRIMARY KEY, body TEXT NOT NULL);
INSERT INTO kv VALUES ('schema_version', '1');
";

/// A data directory's database in SQLite schema version 1, with both
/// tenants' rows.
fn write_sqlite_v1(data_dir: &Path) {
    use rusqlite::params;
    std::fs::create_dir_all(data_dir).expect("creates the data directory");
    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE))
        .expect("creates the database");
    conn.execute_batch(SQLITE_V1_SCHEMA)
        .expect("the version-1 schema");
    for tenant in [&DEFAULT, &ACME] {
        let rows = tenant.rows();
        let execute = |sql: &str, values: &[&dyn rusqlite::ToSql]| {
            conn.execute(sql, values).expect(sql);
        };
        execute(
            "INSERT INTO chats VALUES (?1, 0, ?2)",
            params![rows.chat.0, rows.chat.1],
        );
        for (chat, id, seq, body) in &rows.messages {
            execute(
                "INSERT INTO messages VALUES (?1, ?2, ?3, ?4)",
                params![chat, id, seq, body],
            );
        }
        execute(
            "INSERT INTO recaps VALUES (?1, 0, ?2)",
            params![rows.recap.0, rows.recap.1],
        );
        if let Some((chat, body)) = &rows.chat_settings {
            execute(
                "INSERT INTO chat_settings VALUES (?1, ?2)",
                params![chat, body],
            );
        }
        let (key, value) = &rows.global_settings;
        execute("INSERT INTO kv VALUES (?1, ?2)", params![key, value]);
    }
}

/// SQLite schema version 3 (tenants in their own column, the job queue; no
/// chat activity nor tombstones), as recapd created it.
const SQLITE_V3_SCHEMA: &str = include_str!("../../../src/store/sqlite/tests/sqlite-schema-v3.sql");

/// A data directory's database in SQLite schema version 3, with both
/// tenants' rows (the old rows, their keys split into tenant and chat).
fn write_sqlite_v3(data_dir: &Path) {
    use rusqlite::params;
    std::fs::create_dir_all(data_dir).expect("creates the data directory");
    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE))
        .expect("creates the database");
    conn.execute_batch(SQLITE_V3_SCHEMA)
        .expect("the version-3 schema");
    for tenant in [&DEFAULT, &ACME] {
        let rows = tenant.rows();
        let execute = |sql: &str, values: &[&dyn rusqlite::ToSql]| {
            conn.execute(sql, values).expect(sql);
        };
        let name = tenant.name;
        execute(
            "INSERT INTO chats VALUES (?1, ?2, 0, ?3)",
            params![name, CHAT, rows.chat.1],
        );
        for (_, id, seq, body) in &rows.messages {
            execute(
                "INSERT INTO messages VALUES (?1, ?2, ?3, ?4, ?5)",
                params![name, CHAT, id, seq, body],
            );
        }
        execute(
            "INSERT INTO recaps VALUES (?1, ?2, 0, ?3)",
            params![name, CHAT, rows.recap.1],
        );
        if let Some((_, body)) = &rows.chat_settings {
            execute(
                "INSERT INTO chat_settings VALUES (?1, ?2, ?3)",
                params![name, CHAT, body],
            );
        }
        execute(
            "INSERT INTO global_settings VALUES (?1, ?2)",
            params![name, rows.global_settings.1],
        );
    }
}

/// The schema version recorded in the data directory's database, and each
/// tenant's chat activity rows: (tenant, chat id, message count).
fn version_and_activity(data_dir: &Path) -> (String, Vec<(String, String, i64)>) {
    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE)).unwrap();
    let version = conn
        .query_row(
            "SELECT value FROM kv WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT tenant, chat_id, message_count FROM chat_activity ORDER BY tenant, chat_id",
        )
        .expect("the upgrade made the chat_activity table");
    let activity = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (version, activity)
}

/// What both tenants' chats show in `chat_activity` after an upgrade.
fn backfilled_activity() -> Vec<(String, String, i64)> {
    [&DEFAULT, &ACME]
        .into_iter()
        .map(|tenant| {
            (
                tenant.name.to_owned(),
                CHAT.to_owned(),
                i64::try_from(tenant.messages.len()).unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_database_of_schema_version_3_gets_chat_activity_for_every_tenant() {
    if on_postgres() {
        eprintln!("skipped: RECAPD_TEST_STORE=postgres; this test is about the SQLite store");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    write_sqlite_v3(&data_dir);
    check_both_tenants(dir.path(), &test_config(&data_dir)).await;
    let (version, activity) = version_and_activity(&data_dir);
    assert_eq!(version, "8");
    assert_eq!(activity, backfilled_activity());
    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE)).unwrap();
    let tombstones: i64 = conn
        .query_row("SELECT count(*) FROM chat_tombstones", [], |r| r.get(0))
        .expect("the upgrade made the chat_tombstones table");
    assert_eq!(tombstones, 0);
}

#[tokio::test]
async fn a_database_of_schema_version_1_is_upgraded_for_every_tenant() {
    if on_postgres() {
        eprintln!("skipped: RECAPD_TEST_STORE=postgres; this test is about the SQLite store");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    write_sqlite_v1(&data_dir);
    check_both_tenants(dir.path(), &test_config(&data_dir)).await;

    // Upgraded through version 3 to 4: chat activity was backfilled too.
    let (version, activity) = version_and_activity(&data_dir);
    assert_eq!(version, "8");
    assert_eq!(activity, backfilled_activity());
    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE)).unwrap();
    let jobs: i64 = conn
        .query_row("SELECT count(*) FROM jobs", [], |r| r.get(0))
        .expect("the upgrade made the jobs table");
    assert_eq!(jobs, 0);
}

#[tokio::test]
async fn recapd_refuses_a_database_of_a_newer_schema() {
    if on_postgres() {
        eprintln!("skipped: RECAPD_TEST_STORE=postgres; this test is about the SQLite store");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join(recapd::store::sqlite::DB_FILE)).unwrap();
    conn.execute_batch(
        "CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO kv VALUES ('schema_version', '99');",
    )
    .unwrap();
    drop(conn);
    let error = match recapd::app::App::build(test_config(dir.path())).await {
        Ok(app) => {
            app.shutdown().await;
            panic!("recapd started on a database of schema version 99");
        }
        Err(error) => error.to_string(),
    };
    assert!(error.contains("schema version 99"), "{error}");
}
