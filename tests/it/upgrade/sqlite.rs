//! The SQLite store's upgrade: a data directory whose database is in schema
//! version 1 (the first recapd's), and one of a newer schema.

use std::path::Path;

use super::{ACME, DEFAULT, check_both_tenants};
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

    let conn = rusqlite::Connection::open(data_dir.join(recapd::store::sqlite::DB_FILE)).unwrap();
    let version: String = conn
        .query_row(
            "SELECT value FROM kv WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, "3");
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
