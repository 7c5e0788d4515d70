//! The database file's schema: the numbered migrations in `migrations/`,
//! applied by the shared runner (`store::migrations`) from the version the
//! database records in `kv` under `schema_version`, each in one
//! transaction that also records the version it reaches: a crash between
//! two leaves a database the next start-up goes on upgrading.
//!
//! Version 1 (the first recapd's: tenant and chat joined in one key),
//! version 2 (before the job queue) and version 3 (before chat activity and
//! tombstones) are upgraded in place at start-up; a new database runs them
//! all.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::db_err;
use super::lifecycle::{self, Checkpointed};
use crate::store::StoreError;
use crate::store::migrations::{Migration, Migrations, migration};

/// The embedded store's migrations, in order.
pub(super) const MIGRATIONS: Migrations = Migrations(&[
    migration!(1, "first_schema"),
    migration!(2, "tenant_columns"),
    migration!(3, "job_queue"),
    migration!(4, "chat_lifecycle"),
    migration!(5, "lorebooks"),
    migration!(6, "recall"),
    migration!(7, "lorebook_edits"),
    migration!(8, "profiles"),
]);

/// The schema this recapd writes (the last migration's version).
#[cfg(test)]
pub(super) const SCHEMA_VERSION: i64 = 8;

/// Opens the writing connection, creating or upgrading the schema, then
/// checkpoints the WAL into the database file and empties it: the last run
/// may have been killed right after a deletion, before its checkpoint (see
/// `lifecycle`), and its deleted rows must not outlive this start-up.
///
/// The connection overwrites what it deletes (`secure_delete`): freed
/// cells, pages and overflow pages are zeroed, so a deleted row's content
/// does not stay readable in the file once checkpointed.
pub(super) fn open_writer(path: &Path, fsync_every_commit: bool) -> Result<Connection, StoreError> {
    let opening = db_err("opening the database");
    let mut writer = Connection::open(path).map_err(&opening)?;
    let synchronous = if fsync_every_commit { "FULL" } else { "NORMAL" };
    writer
        .execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;
             PRAGMA secure_delete=ON;"
        ))
        .map_err(&opening)?;
    let secure: i64 = writer
        .query_row("PRAGMA secure_delete", [], |r| r.get(0))
        .map_err(&opening)?;
    if secure != 1 {
        return Err(StoreError::database(
            "opening the database",
            "this SQLite build refuses PRAGMA secure_delete; deleted chats would stay readable",
        ));
    }
    let version = stored_version(&writer, path)?;
    // `stored_version` refused a version past the last migration.
    for migration in MIGRATIONS.after(version).unwrap_or_default() {
        apply(&mut writer, migration)?;
        // A new database runs every migration: only upgrades are news.
        if version > 0 {
            tracing::info!(
                path = %path.display(),
                "upgraded the database to schema version {} ({})",
                migration.version,
                migration.name
            );
        }
    }
    if lifecycle::checkpoint(&writer).map_err(&opening)? == Checkpointed::Busy {
        tracing::warn!(
            path = %path.display(),
            "another process holds the database: the WAL checkpoint at start-up could not finish"
        );
    }
    Ok(writer)
}

/// The schema version recorded in the database; 0 for a new (empty) one.
/// Fails on a version this recapd does not know.
fn stored_version(writer: &Connection, path: &Path) -> Result<i64, StoreError> {
    let opening = db_err("opening the database");
    let has_kv: bool = writer
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'kv'",
            [],
            |r| r.get(0),
        )
        .map_err(&opening)?;
    let version: Option<String> = if has_kv {
        writer
            .query_row(
                "SELECT value FROM kv WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(&opening)?
    } else {
        None
    };
    let Some(version) = version else {
        return Ok(0);
    };
    match version.parse::<i64>() {
        Ok(v) if (1..=MIGRATIONS.latest()).contains(&v) => Ok(v),
        _ => Err(StoreError::corrupt(
            path.display().to_string(),
            format!(
                "schema version {version}; this recapd knows up to {} (a newer recapd wrote it)",
                MIGRATIONS.latest()
            ),
        )),
    }
}

/// Applies one migration and records its version in `kv`, in one
/// transaction. A migration that must stamp rows with the time reads it,
/// in microseconds, from `temp.migration_clock`.
fn apply(writer: &mut Connection, migration: &Migration) -> Result<(), StoreError> {
    let context = format!(
        "migrating the database to schema version {} ({})",
        migration.version, migration.name
    );
    let upgrading = |e| StoreError::database(context.clone(), e);
    let now_us = crate::wall_clock::now_us();
    let tx = writer.transaction().map_err(upgrading)?;
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS migration_clock (now_us INTEGER NOT NULL);
         DELETE FROM temp.migration_clock;",
    )
    .map_err(upgrading)?;
    tx.execute(
        "INSERT INTO temp.migration_clock VALUES (?1)",
        params![now_us.0],
    )
    .map_err(upgrading)?;
    tx.execute_batch(migration.sql).map_err(upgrading)?;
    tx.execute(
        "INSERT OR REPLACE INTO kv (key, value) VALUES ('schema_version', ?1)",
        params![migration.version.to_string()],
    )
    .map_err(upgrading)?;
    tx.execute_batch("DROP TABLE temp.migration_clock;")
        .map_err(upgrading)?;
    tx.commit().map_err(upgrading)
}

#[cfg(test)]
mod tests;
