//! The in-place upgrades of older databases, each in one transaction: it
//! applies whole or not at all. Each records the version it reaches, and
//! `schema::open_writer` chains them up to the current one (1 and 2 reach
//! 3, then 3 reaches 4). An upgrade runs the current schema's statements,
//! which create only what is missing, so tables of later versions may
//! appear early, empty: the later upgrade fills them all the same.
//!
//! - Version 1 was written before tenants had a column of their own: a chat
//!   of tenant T was stored under the one key `T` + U+001F + chat id (the
//!   default tenant's under the bare chat id), and a tenant's global
//!   settings under `global_settings:T` in `kv`. Its upgrade splits those
//!   keys into the tenant and chat columns.
//! - Version 2 had no job queue: its upgrade adds the `jobs` table, empty.
//! - Version 3 had no chat activity nor tombstones: its upgrade adds
//!   `chat_activity`, with a row for every chat (its message count, changed
//!   at the upgrade: the time of its last change was not kept), and
//!   `chat_tombstones`, empty.

use rusqlite::{Connection, params};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::store::StoreError;

/// The version-1 separator between a tenant and a chat id, as SQL. This
/// upgrade is the only place that still knows joined keys.
const V1_SEPARATOR: &str = "char(31)";

/// Moves every version-1 table to the `schema` (version `version`).
pub(super) fn from_v1(conn: &mut Connection, schema: &str, version: i64) -> Result<(), StoreError> {
    let upgrading = |e| StoreError::database("upgrading the database from schema version 1", e);
    let tenant = format!(
        "CASE WHEN instr(chat_id, {V1_SEPARATOR}) > 0
              THEN substr(chat_id, 1, instr(chat_id, {V1_SEPARATOR}) - 1) ELSE '' END"
    );
    let chat = format!(
        "CASE WHEN instr(chat_id, {V1_SEPARATOR}) > 0
              THEN substr(chat_id, instr(chat_id, {V1_SEPARATOR}) + 1) ELSE chat_id END"
    );
    let tx = conn.transaction().map_err(upgrading)?;
    tx.execute_batch(
        "ALTER TABLE chats RENAME TO chats_v1;
         ALTER TABLE messages RENAME TO messages_v1;
         ALTER TABLE recaps RENAME TO recaps_v1;
         ALTER TABLE chat_settings RENAME TO chat_settings_v1;
         DROP INDEX IF EXISTS messages_by_seq;",
    )
    .map_err(upgrading)?;
    tx.execute_batch(schema).map_err(upgrading)?;
    tx.execute_batch(&format!(
        "INSERT INTO chats (tenant, chat_id, needs_refresh, body)
             SELECT {tenant}, {chat}, needs_refresh, body FROM chats_v1;
         INSERT INTO messages (tenant, chat_id, message_id, seq, body)
             SELECT {tenant}, {chat}, message_id, seq, body FROM messages_v1;
         INSERT INTO recaps (tenant, chat_id, version, body)
             SELECT {tenant}, {chat}, version, body FROM recaps_v1;
         INSERT INTO chat_settings (tenant, chat_id, body)
             SELECT {tenant}, {chat}, body FROM chat_settings_v1;
         INSERT INTO global_settings (tenant, body)
             SELECT CASE WHEN key = 'global_settings' THEN ''
                         ELSE substr(key, length('global_settings:') + 1) END, value
             FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
         DELETE FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
         DROP TABLE chats_v1;
         DROP TABLE messages_v1;
         DROP TABLE recaps_v1;
         DROP TABLE chat_settings_v1;"
    ))
    .map_err(upgrading)?;
    tx.execute(
        "UPDATE kv SET value = ?1 WHERE key = 'schema_version'",
        params![version.to_string()],
    )
    .map_err(upgrading)?;
    tx.commit().map_err(upgrading)
}

/// Adds what a version-2 database lacks (the `jobs` table and its indexes;
/// every statement of `schema` creates only what is missing) and records
/// `version`.
pub(super) fn from_v2(conn: &mut Connection, schema: &str, version: i64) -> Result<(), StoreError> {
    let upgrading = |e| StoreError::database("upgrading the database from schema version 2", e);
    let tx = conn.transaction().map_err(upgrading)?;
    tx.execute_batch(schema).map_err(upgrading)?;
    tx.execute(
        "UPDATE kv SET value = ?1 WHERE key = 'schema_version'",
        params![version.to_string()],
    )
    .map_err(upgrading)?;
    tx.commit().map_err(upgrading)
}

/// Adds what a version-3 database lacks (`chat_activity`, backfilled for
/// every chat, and `chat_tombstones`; every statement of `schema` creates
/// only what is missing) and records `version`.
pub(super) fn from_v3(conn: &mut Connection, schema: &str, version: i64) -> Result<(), StoreError> {
    let upgrading = |e| StoreError::database("upgrading the database from schema version 3", e);
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
    let tx = conn.transaction().map_err(upgrading)?;
    tx.execute_batch(schema).map_err(upgrading)?;
    tx.execute(
        "INSERT OR IGNORE INTO chat_activity (tenant, chat_id, updated_us, message_count)
         SELECT c.tenant, c.chat_id, ?1,
                (SELECT count(*) FROM messages m WHERE m.tenant = c.tenant AND m.chat_id = c.chat_id)
         FROM chats c",
        params![now_us],
    )
    .map_err(upgrading)?;
    tx.execute(
        "UPDATE kv SET value = ?1 WHERE key = 'schema_version'",
        params![version.to_string()],
    )
    .map_err(upgrading)?;
    tx.commit().map_err(upgrading)
}
