//! The PostgreSQL store's upgrade: a schema as migrations 1 and 2 (the
//! first recapd's) left it, upgraded by migration 3, one as migration 4
//! left it, upgraded by migration 5 (chat activity), and one a newer
//! recapd migrated.

use std::path::Path;

use super::{ACME, CHAT, DEFAULT, OLD_CHAT_CLOCK, OLD_REVISION, check_both_tenants};
use crate::common::*;
use recapd::config::{Config, StoreUrl};
use recapd::domain::ids::Tenant;
use recapd::domain::time::UnixMicros;
use recapd::store::postgres::PgOptions;
use recapd::store::{ChatStore, PgStore};

/// PostgreSQL migrations 1 and 2, as the first recapd applied them, and
/// the table recapd records them in.
const POSTGRES_V1_SCHEMA: &str = "
CREATE TABLE schema_migrations (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE kv (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE chat_clock (
    chat_id text PRIMARY KEY,
    generation bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE chats (
    chat_id text PRIMARY KEY,
    needs_refresh boolean NOT NULL,
    body text NOT NULL
);
CREATE INDEX chats_owing_refresh ON chats (chat_id) WHERE needs_refresh;
CREATE TABLE messages (
    chat_id text NOT NULL,
    message_id text NOT NULL,
    seq bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX messages_by_seq ON messages (chat_id, seq);
CREATE TABLE recaps (
    chat_id text NOT NULL,
    version bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (chat_id, version)
);
CREATE TABLE chat_settings (chat_id text PRIMARY KEY, body text NOT NULL);
CREATE INDEX chat_clock_by_change ON chat_clock (changed_at);
INSERT INTO schema_migrations (version) VALUES (1), (2);
";

/// A fresh schema of the test database, dropped when the test ends (even
/// when it fails), and a connection whose `search_path` is it.
struct TestSchema {
    name: String,
    client: tokio_postgres::Client,
}

impl TestSchema {
    async fn create() -> TestSchema {
        let (client, connection) =
            tokio_postgres::connect(&test_database_url(), tokio_postgres::NoTls)
                .await
                .expect("connects to the test database");
        tokio::spawn(connection);
        // `rt_` and random hex, so the test script's clean-up finds it.
        let name = format!("rt_{:016x}", rand::random::<u64>());
        client
            .batch_execute(&format!(
                "CREATE SCHEMA \"{name}\"; SET search_path TO \"{name}\";"
            ))
            .await
            .expect("creates the schema");
        TestSchema { name, client }
    }

    /// A config of recapd on this schema (data directory `data_dir`).
    fn config(&self, data_dir: &Path) -> Config {
        let mut config = test_config(data_dir);
        config.store = Some(StoreUrl(test_database_url()));
        config.store_schema = self.name.clone();
        config.resync_interval = std::time::Duration::from_secs(1);
        config
    }

    async fn latest_migration(&self) -> i32 {
        self.client
            .query_one("SELECT max(version) FROM schema_migrations", &[])
            .await
            .expect("reads schema_migrations")
            .get(0)
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        // The client's connection task may be gone with the test's runtime:
        // drop the schema over a connection of its own.
        let name = self.name.clone();
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
            eprintln!("could not drop schema {}: {dropped:?}", self.name);
        }
    }
}

/// Writes both tenants' rows in the old PostgreSQL layout into `schema`,
/// with the claim clocks the old recapd kept: one per chat, one per
/// tenant's global settings.
async fn write_postgres_v1(schema: &TestSchema) {
    let client = &schema.client;
    client
        .batch_execute(POSTGRES_V1_SCHEMA)
        .await
        .expect("migrations 1 and 2");
    for tenant in [&DEFAULT, &ACME] {
        let rows = tenant.rows();
        let execute = async |sql: &str, values: &[&(dyn tokio_postgres::types::ToSql + Sync)]| {
            client.execute(sql, values).await.expect(sql);
        };
        execute(
            "INSERT INTO chats VALUES ($1, false, $2)",
            &[&rows.chat.0, &rows.chat.1],
        )
        .await;
        execute(
            "INSERT INTO chat_clock (chat_id, generation) VALUES ($1, $2)",
            &[&rows.chat.0, &OLD_CHAT_CLOCK],
        )
        .await;
        for (chat, id, seq, body) in &rows.messages {
            execute(
                "INSERT INTO messages VALUES ($1, $2, $3, $4)",
                &[chat, id, seq, body],
            )
            .await;
        }
        execute(
            "INSERT INTO recaps VALUES ($1, 0, $2)",
            &[&rows.recap.0, &rows.recap.1],
        )
        .await;
        if let Some((chat, body)) = &rows.chat_settings {
            execute("INSERT INTO chat_settings VALUES ($1, $2)", &[chat, body]).await;
        }
        let (key, value) = &rows.global_settings;
        execute("INSERT INTO kv VALUES ($1, $2)", &[key, value]).await;
        execute(
            "INSERT INTO chat_clock (chat_id, generation) VALUES ($1, $2)",
            &[&tenant.settings_claim_key(), &tenant.settings_clock],
        )
        .await;
    }
}

#[tokio::test]
async fn a_schema_of_migration_2_is_upgraded_for_every_tenant() {
    if !on_postgres() {
        eprintln!("skipped: needs RECAPD_TEST_STORE=postgres");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let schema = TestSchema::create().await;
    write_postgres_v1(&schema).await;
    check_both_tenants(dir.path(), &schema.config(&dir.path().join("data"))).await;

    assert_eq!(schema.latest_migration().await, 9);
    // Each tenant's chat got its activity: its messages, counted.
    let activity: Vec<(String, String, i64)> = schema
        .client
        .query(
            "SELECT tenant, chat_id, message_count FROM chat_activity ORDER BY tenant",
            &[],
        )
        .await
        .expect("the upgrade made the chat_activity table")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    assert_eq!(
        activity,
        [
            (DEFAULT.name.to_owned(), CHAT.to_owned(), 2),
            (ACME.name.to_owned(), CHAT.to_owned(), 1),
        ]
    );
    let jobs: i64 = schema
        .client
        .query_one("SELECT count(*) FROM jobs", &[])
        .await
        .expect("the upgrade made the jobs table")
        .get(0);
    assert_eq!(jobs, 0);
    // Each tenant's settings change claimed the clock carried over from the
    // old layout, one on, and no old claim key is left behind.
    let clocks: Vec<(String, i64)> = schema
        .client
        .query(
            "SELECT tenant, generation FROM settings_clock ORDER BY tenant",
            &[],
        )
        .await
        .expect("reads settings_clock")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        clocks,
        [
            (DEFAULT.name.to_owned(), DEFAULT.settings_clock + 1),
            (ACME.name.to_owned(), ACME.settings_clock + 1),
        ]
    );
    let leftovers: i64 = schema
        .client
        .query_one(
            "SELECT count(*) FROM chat_clock WHERE strpos(chat_id, chr(30)) > 0
                                                OR strpos(chat_id, chr(31)) > 0",
            &[],
        )
        .await
        .expect("reads chat_clock")
        .get(0);
    assert_eq!(leftovers, 0, "no joined keys left in chat_clock");
}

impl TestSchema {
    /// The store itself on this schema (migrating it to the latest).
    async fn store(&self) -> PgStore {
        let (connection, tls) = StoreUrl(test_database_url())
            .parse()
            .expect("the test database URL");
        PgStore::open(&PgOptions {
            connection,
            tls,
            schema: self.name.clone(),
            pool_size: 2,
        })
        .await
        .expect("opens the store")
    }
}

/// What migrations 9, 8, 7, 6 and 5 add, undone: a schema of the latest
/// migrations, taken back to where migration 4 left it.
const UNDO_MIGRATION_5: &str = "
DROP TABLE profiles;
DELETE FROM schema_migrations WHERE version = 9;
DROP TABLE lorebook_edits;
DELETE FROM schema_migrations WHERE version = 8;
DROP TABLE recall_vectors;
DELETE FROM schema_migrations WHERE version = 7;
DROP TABLE lorebooks;
DELETE FROM schema_migrations WHERE version = 6;
DROP TABLE chat_activity;
DROP TABLE chat_tombstones;
DROP INDEX chats_by_id_bytes;
DELETE FROM schema_migrations WHERE version = 5;
";

#[tokio::test]
async fn a_schema_of_migration_4_gets_every_chats_activity() {
    if !on_postgres() {
        eprintln!("skipped: needs RECAPD_TEST_STORE=postgres");
        return;
    }
    let schema = TestSchema::create().await;
    schema.store().await.close().await;
    assert_eq!(schema.latest_migration().await, 9);
    schema
        .client
        .batch_execute(UNDO_MIGRATION_5)
        .await
        .expect("back to 4");
    assert_eq!(schema.latest_migration().await, 4);
    // Rows as recapd at migration 4 wrote them: a chat with messages, one
    // without, another tenant's, and messages of no chat (only rows make
    // chats).
    let body = format!(r#"{{"revision":{OLD_REVISION}}}"#);
    for (tenant, chat, messages) in [
        ("t", "talkative", 3_i64),
        ("t", "empty", 0),
        ("u", "talkative", 1),
    ] {
        schema
            .client
            .execute(
                "INSERT INTO chats (tenant, chat_id, needs_refresh, body) VALUES ($1, $2, false, $3)",
                &[&tenant, &chat, &body],
            )
            .await
            .expect("a chat row");
        for seq in 0..messages {
            schema
                .client
                .execute(
                    "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
                     VALUES ($1, $2, $3, $4, '{}')",
                    &[&tenant, &chat, &format!("m{seq}"), &seq],
                )
                .await
                .expect("a message row");
        }
    }
    schema
        .client
        .execute(
            "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
             VALUES ('t', 'no-row', 'm', 0, '{}')",
            &[],
        )
        .await
        .expect("a stray message");
    let before_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    let store = schema.store().await;
    let after_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    assert_eq!(schema.latest_migration().await, 9);

    let t = store
        .list_chats(&Tenant("t".into()), None, 10)
        .await
        .unwrap();
    let listed: Vec<(&str, u64, u64)> = t
        .iter()
        .map(|c| (c.chat_id.as_str(), c.message_count, c.revision))
        .collect();
    assert_eq!(
        listed,
        [("empty", 0, OLD_REVISION), ("talkative", 3, OLD_REVISION)]
    );
    // The migration's time is each chat's last change (the clocks of the
    // test and the database differ by little: a second either way).
    for chat in &t {
        assert!(
            (before_us - 1_000_000..=after_us + 1_000_000).contains(&chat.updated_us.0),
            "{chat:?} changed at the migration"
        );
    }
    let u = store
        .list_chats(&Tenant("u".into()), None, 10)
        .await
        .unwrap();
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].message_count, 1);
    let rows: i64 = schema
        .client
        .query_one("SELECT count(*) FROM chat_activity", &[])
        .await
        .expect("reads chat_activity")
        .get(0);
    assert_eq!(rows, 3, "one per chat row, none for stray messages");
    // None is quiet yet; all of them are, a day on.
    assert!(
        store
            .quiet_chats(UnixMicros(before_us - 1_000_000), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .quiet_chats(UnixMicros(after_us + 86_400_000_000), 10)
            .await
            .unwrap()
            .len(),
        3
    );
    store.close().await;
}

#[tokio::test]
async fn recapd_refuses_a_schema_a_newer_recapd_migrated() {
    if !on_postgres() {
        eprintln!("skipped: needs RECAPD_TEST_STORE=postgres");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let schema = TestSchema::create().await;
    schema
        .client
        .batch_execute(
            "CREATE TABLE schema_migrations (
                 version integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );
             INSERT INTO schema_migrations (version) VALUES (99);",
        )
        .await
        .expect("a schema at version 99");
    let error = match recapd::app::App::build(schema.config(dir.path())).await {
        Ok(app) => {
            app.shutdown().await;
            panic!("recapd started on a schema at version 99");
        }
        Err(error) => error.to_string(),
    };
    assert!(error.contains("version 99"), "{error}");
    assert!(error.contains(&schema.name), "{error}");
    // Nothing was migrated.
    assert_eq!(schema.latest_migration().await, 99);
    let tables: i64 = schema
        .client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&schema.name],
        )
        .await
        .expect("reads the catalogue")
        .get(0);
    assert_eq!(tables, 1, "only schema_migrations");
}

#[tokio::test]
async fn replicas_migrating_one_schema_at_once_apply_each_migration_once() {
    if !on_postgres() {
        eprintln!("skipped: needs RECAPD_TEST_STORE=postgres");
        return;
    }
    let schema = TestSchema::create().await;
    // Four replicas start together on an empty schema: the advisory lock
    // lets one migrate; the others then find nothing left to apply.
    let stores = futures_util::future::join_all((0..4).map(|_| schema.store())).await;
    let versions: Vec<i32> = schema
        .client
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .expect("reads schema_migrations")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A later start finds the schema complete and changes nothing.
    let again = schema.store().await;
    assert_eq!(schema.latest_migration().await, 9);
    for store in stores.iter().chain([&again]) {
        store.close().await;
    }
}
