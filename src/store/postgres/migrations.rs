//! The PostgreSQL schema, as versioned migrations that recapd applies at
//! start-up. A migration is never edited once released: a change of schema
//! is a new entry at the end.

use deadpool_postgres::Pool;

use super::{pg_err, pool_err};
use crate::store::StoreError;

/// The version-1 separator of joined tenant and chat keys, as SQL: only
/// migration 3, which splits them, still knows it.
const V1_SEPARATOR: &str = "chr(31)";

/// Migration 3: the tenant in a column of its own in every chat table, the
/// global settings and their clock in tables of their own. Existing rows
/// move in place (a chat of tenant T was stored under one key, T, the
/// separator, then the chat id; a settings claim under a key that began
/// with U+001E).
fn tenant_columns() -> String {
    let sep = V1_SEPARATOR;
    let mut sql = format!(
        "
CREATE TABLE global_settings (tenant text PRIMARY KEY, body text NOT NULL);
INSERT INTO global_settings (tenant, body)
    SELECT CASE WHEN key = 'global_settings' THEN ''
                ELSE substr(key, length('global_settings:') + 1) END, value
    FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
DELETE FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
CREATE TABLE settings_clock (
    tenant text PRIMARY KEY,
    generation bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO settings_clock (tenant, generation, changed_at)
    SELECT substr(chat_id, strpos(chat_id, {sep}) + 1), generation, changed_at
    FROM chat_clock WHERE starts_with(chat_id, chr(30));
DELETE FROM chat_clock WHERE starts_with(chat_id, chr(30));
"
    );
    for (table, key) in [
        ("chat_clock", "tenant, chat_id"),
        ("chats", "tenant, chat_id"),
        ("messages", "tenant, chat_id, message_id"),
        ("recaps", "tenant, chat_id, version"),
        ("chat_settings", "tenant, chat_id"),
    ] {
        sql.push_str(&format!(
            "
ALTER TABLE {table} ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE {table} DROP CONSTRAINT {table}_pkey;
UPDATE {table} SET tenant = split_part(chat_id, {sep}, 1),
                   chat_id = substr(chat_id, strpos(chat_id, {sep}) + 1)
    WHERE strpos(chat_id, {sep}) > 0;
ALTER TABLE {table} ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE {table} ADD PRIMARY KEY ({key});
"
        ));
    }
    sql.push_str(
        "
DROP INDEX chats_owing_refresh;
CREATE INDEX chats_owing_refresh ON chats (tenant, chat_id) WHERE needs_refresh;
DROP INDEX messages_by_seq;
CREATE INDEX messages_by_seq ON messages (tenant, chat_id, seq);
",
    );
    sql
}

/// The migrations, in order: (version, SQL). Tables are created in the
/// store's own schema (the connections' `search_path`).
pub(super) fn migrations() -> Vec<(i32, String)> {
    vec![
        (1, V1_TABLES.to_owned()),
        // For the resync of all-chats subscribers: chats changed lately.
        (
            2,
            "CREATE INDEX chat_clock_by_change ON chat_clock (changed_at);".to_owned(),
        ),
        (3, tenant_columns()),
        (4, JOBS.to_owned()),
        (5, LIFECYCLE.to_owned()),
    ]
}

/// Migration 5: chat lifecycle (issue 16). `chat_activity` says when each
/// chat last changed and how many messages it has (ListChats,
/// `--chat-retention`); `chat_tombstones` keeps the last revisions of a
/// deleted chat, so that one re-created under its id continues above them.
/// ListChats pages by chat id byte by byte (collation "C", as the embedded
/// store's BINARY), which the new index of `chats` serves whatever the
/// database's locale; retention reads the quiet chats oldest first from
/// `chat_activity_by_change`, in its order, without a sort. Every existing
/// chat gets its activity now: its
/// message count, and the migration's time as its last change.
const LIFECYCLE: &str = "
CREATE TABLE chat_activity (
    tenant text NOT NULL,
    chat_id text NOT NULL,
    updated_us bigint NOT NULL,
    message_count bigint NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE INDEX chat_activity_by_change ON chat_activity (updated_us, tenant, chat_id);
CREATE TABLE chat_tombstones (
    tenant text NOT NULL,
    chat_id text NOT NULL,
    revision bigint NOT NULL,
    message_revision bigint NOT NULL,
    deleted_us bigint NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE INDEX chats_by_id_bytes ON chats (tenant, chat_id COLLATE \"C\");
INSERT INTO chat_activity (tenant, chat_id, updated_us, message_count)
    SELECT c.tenant, c.chat_id, (extract(epoch FROM now()) * 1000000)::bigint, count(m.message_id)
    FROM chats c LEFT JOIN messages m USING (tenant, chat_id)
    GROUP BY c.tenant, c.chat_id;
";

/// Migration 4: the job queue. Job ids compare byte by byte (collation
/// "C"), as in the embedded store, so pages of jobs come in the same order
/// on both; states 1 and 2 are PENDING and RUNNING (`JobState::code`).
const JOBS: &str = "
CREATE TABLE jobs (
    job_id text COLLATE \"C\" PRIMARY KEY,
    tenant text NOT NULL,
    chat_id text NOT NULL,
    state bigint NOT NULL,
    kind bigint NOT NULL,
    created_us bigint NOT NULL,
    updated_us bigint NOT NULL,
    not_before_us bigint NOT NULL,
    lease_until_us bigint,
    fence bigint NOT NULL,
    body text NOT NULL
);
CREATE INDEX jobs_by_tenant ON jobs (tenant, created_us DESC, job_id DESC);
CREATE INDEX jobs_by_chat ON jobs (tenant, chat_id, created_us DESC, job_id DESC);
CREATE INDEX jobs_open_by_chat ON jobs (tenant, chat_id, created_us, job_id)
    WHERE state IN (1, 2);
CREATE INDEX jobs_due ON jobs (state, not_before_us);
CREATE INDEX jobs_leases ON jobs (state, lease_until_us);
";

/// Migration 1: the first schema.
const V1_TABLES: &str = "
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
";

/// The newest schema version this recapd knows.
pub(super) fn latest() -> i32 {
    migrations().last().map_or(0, |(version, _)| *version)
}

/// Creates the schema when missing and applies the migrations it lacks, in
/// one transaction under an advisory lock, so replicas starting together
/// migrate once.
pub(super) async fn migrate(pool: &Pool, schema: &str) -> Result<(), StoreError> {
    let migrating = pg_err("migrating the schema");
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = client.transaction().await.map_err(&migrating)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('recapd migrations ' || $1::text))",
        &[&schema],
    )
    .await
    .map_err(&migrating)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS \"{schema}\";
         CREATE TABLE IF NOT EXISTS \"{schema}\".schema_migrations (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         );"
    ))
    .await
    .map_err(&migrating)?;
    let applied: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(&migrating)?
        .get(0);
    if applied > latest() {
        return Err(StoreError::corrupt(
            format!("schema {schema}"),
            format!(
                "at version {applied}; this recapd knows up to {} (a newer recapd migrated it)",
                latest()
            ),
        ));
    }
    for (version, sql) in migrations() {
        if version <= applied {
            continue;
        }
        tracing::info!(
            schema,
            version,
            "applying a PostgreSQL migration (on a large database this can take minutes)"
        );
        tx.batch_execute(&sql).await.map_err(&migrating)?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(&migrating)?;
        tracing::info!(schema, version, "applied a PostgreSQL migration");
    }
    tx.commit().await.map_err(&migrating)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for (index, (version, _)) in migrations().iter().enumerate() {
            assert_eq!(usize::try_from(*version).unwrap(), index + 1);
        }
        assert_eq!(latest(), migrations().len() as i32);
    }
}
