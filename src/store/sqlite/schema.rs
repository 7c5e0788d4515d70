//! The database file's schema: creating it, and upgrading the versions
//! older recapds wrote.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::lifecycle::{self, Checkpointed};
use super::{db_err, upgrade};
use crate::store::StoreError;

/// The schema this recapd writes. Version 1 (before tenants had a column of
/// their own), version 2 (before the job queue) and version 3 (before chat
/// activity and tombstones) are upgraded in place at start-up, one version
/// after the other.
pub(super) const SCHEMA_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS global_settings (tenant TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chats (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    needs_refresh INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE TABLE IF NOT EXISTS messages (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id, message_id)
);
CREATE INDEX IF NOT EXISTS messages_by_seq ON messages (tenant, chat_id, seq);
CREATE TABLE IF NOT EXISTS recaps (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id, version)
);
CREATE TABLE IF NOT EXISTS chat_settings (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    state INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL,
    not_before_us INTEGER NOT NULL,
    lease_until_us INTEGER,
    fence INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, created_us DESC, job_id DESC);
CREATE INDEX IF NOT EXISTS jobs_by_chat ON jobs (tenant, chat_id, created_us DESC, job_id DESC);
-- States 1 and 2 are PENDING and RUNNING (JobState::code).
CREATE INDEX IF NOT EXISTS jobs_open_by_chat ON jobs (tenant, chat_id, created_us, job_id)
    WHERE state IN (1, 2);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, not_before_us);
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (state, lease_until_us);
-- When each chat last changed and its message count (ListChats, retention).
CREATE TABLE IF NOT EXISTS chat_activity (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    updated_us INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
-- Oldest change first, in the order `quiet_chats` reads.
CREATE INDEX IF NOT EXISTS chat_activity_by_time ON chat_activity (updated_us, tenant, chat_id);
-- What a deleted chat leaves: its last revisions, no content.
CREATE TABLE IF NOT EXISTS chat_tombstones (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    message_revision INTEGER NOT NULL,
    deleted_us INTEGER NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
";

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
    let mut version = stored_version(&writer, path)?;
    if version == 0 {
        let tx = writer.transaction().map_err(&opening)?;
        tx.execute_batch(SCHEMA).map_err(&opening)?;
        tx.execute(
            "INSERT INTO kv (key, value) VALUES ('schema_version', ?1)",
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(&opening)?;
        tx.commit().map_err(&opening)?;
        version = SCHEMA_VERSION;
    }
    // Each upgrade is one transaction that records its version: a crash
    // between two of them leaves a database the next start-up goes on
    // upgrading.
    while version < SCHEMA_VERSION {
        let (next, what) = match version {
            1 => (3, "tenants in their own column"),
            2 => (3, "the job queue"),
            _ => (4, "chat activity and tombstones"),
        };
        match version {
            1 => upgrade::from_v1(&mut writer, SCHEMA, next)?,
            2 => upgrade::from_v2(&mut writer, SCHEMA, next)?,
            _ => upgrade::from_v3(&mut writer, SCHEMA, next)?,
        }
        tracing::info!(
            path = %path.display(),
            "upgraded the database from schema version {version} to {next} ({what})"
        );
        version = next;
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
        Ok(v) if (1..=SCHEMA_VERSION).contains(&v) => Ok(v),
        _ => Err(StoreError::corrupt(
            path.display().to_string(),
            format!(
                "schema version {version}; this recapd knows up to {SCHEMA_VERSION} (a newer recapd wrote it)"
            ),
        )),
    }
}
