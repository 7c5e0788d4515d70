//! The database file's schema: creating it, and upgrading the versions
//! older recapds wrote.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::{db_err, upgrade};
use crate::store::StoreError;

/// The schema this recapd writes. Version 1 (before tenants had a column of
/// their own) and version 2 (before the job queue) are upgraded in place at
/// start-up.
pub(super) const SCHEMA_VERSION: i64 = 3;

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
";

/// Opens the writing connection, creating or upgrading the schema.
pub(super) fn open_writer(path: &Path, fsync_every_commit: bool) -> Result<Connection, StoreError> {
    let opening = db_err("opening the database");
    let mut writer = Connection::open(path).map_err(&opening)?;
    let synchronous = if fsync_every_commit { "FULL" } else { "NORMAL" };
    writer
        .execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;"
        ))
        .map_err(&opening)?;
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
    match version.as_deref() {
        None => {
            let tx = writer.transaction().map_err(&opening)?;
            tx.execute_batch(SCHEMA).map_err(&opening)?;
            tx.execute(
                "INSERT INTO kv (key, value) VALUES ('schema_version', ?1)",
                params![SCHEMA_VERSION.to_string()],
            )
            .map_err(&opening)?;
            tx.commit().map_err(&opening)?;
        }
        Some("1") => {
            upgrade::from_v1(&mut writer, SCHEMA, SCHEMA_VERSION)?;
            tracing::info!(
                path = %path.display(),
                "upgraded the database to schema version {SCHEMA_VERSION} (tenants in their own column)"
            );
        }
        Some("2") => {
            upgrade::from_v2(&mut writer, SCHEMA, SCHEMA_VERSION)?;
            tracing::info!(
                path = %path.display(),
                "upgraded the database to schema version {SCHEMA_VERSION} (the job queue)"
            );
        }
        Some(v) if v == SCHEMA_VERSION.to_string() => {}
        Some(v) => {
            return Err(StoreError::corrupt(
                path.display().to_string(),
                format!(
                    "schema version {v}; this recapd knows up to {SCHEMA_VERSION} (a newer recapd wrote it)"
                ),
            ));
        }
    }
    Ok(writer)
}
