//! The PostgreSQL schema, as versioned migrations that recapd applies at
//! start-up. A migration is never edited once released: a change of schema
//! is a new entry at the end.

use deadpool_postgres::Pool;

use super::{pg_err, pool_err};
use crate::store::StoreError;

/// The migrations, in order: (version, SQL). Tables are created in the
/// store's own schema (the connections' `search_path`).
pub(super) const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "
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
",
    ),
    (
        2,
        // For the resync of all-chats subscribers: chats changed lately.
        "CREATE INDEX chat_clock_by_change ON chat_clock (changed_at);",
    ),
];

/// The newest schema version this recapd knows.
pub(super) fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |(version, _)| *version)
}

/// Creates the schema when missing and applies the migrations it lacks, in
/// one transaction under an advisory lock, so replicas starting together
/// migrate once.
pub(super) async fn migrate(pool: &Pool, schema: &str) -> Result<(), StoreError> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = client.transaction().await.map_err(pg_err)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('recapd migrations ' || $1::text))",
        &[&schema],
    )
    .await
    .map_err(pg_err)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS \"{schema}\";
         CREATE TABLE IF NOT EXISTS \"{schema}\".schema_migrations (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         );"
    ))
    .await
    .map_err(pg_err)?;
    let applied: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(pg_err)?
        .get(0);
    if applied > latest() {
        return Err(StoreError::Corrupt(format!(
            "schema {schema} is at version {applied}; this recapd knows up to {}",
            latest()
        )));
    }
    for (version, sql) in MIGRATIONS {
        if *version <= applied {
            continue;
        }
        tx.batch_execute(sql).await.map_err(pg_err)?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[version],
        )
        .await
        .map_err(pg_err)?;
        tracing::info!(schema, version, "applied a PostgreSQL migration");
    }
    tx.commit().await.map_err(pg_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for (index, (version, _)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(*version).unwrap(), index + 1);
        }
        assert_eq!(latest(), MIGRATIONS.len() as i32);
    }
}
