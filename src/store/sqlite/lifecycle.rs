//! A chat's lifecycle in the embedded store (issue 16): its deletion and
//! tombstone, its activity (`chat_activity`: when it last changed, how many
//! messages it has), the listings built on them (ListChats, retention) and
//! the erasure of what a deletion removed.
//!
//! Erasure: the writing connection runs with `secure_delete` (see
//! `schema::open_writer`), so the pages a deletion writes carry zeros where
//! the chat's rows were. Those pages first go to the WAL, and the older
//! frames there still hold the rows; [`checkpoint`] copies the WAL into the
//! database file and truncates it to nothing. It runs after every committed
//! batch that deleted a chat (and again after later batches while it could
//! not finish), when the store closes, and at start-up, so that a process
//! killed between a deletion and its checkpoint erases it on the next start.

use crate::domain::time::UnixMicros;
use rusqlite::{Connection, Statement, Transaction, params};

use super::db_err;
use super::writes::{execute, run};
use crate::domain::ids::{ChatKey, Tenant};
use crate::store::{
    BranchOrigin, ChatListing, ChatSettings, StoreError, Tombstone, Write, from_json,
};

/// A count as an SQL `LIMIT`.
fn limit_column(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// A revision as stored: the same 64 bits, read as signed (SQLite integers
/// are signed).
fn revision_column(revision: u64) -> i64 {
    revision.cast_signed()
}

/// [`Write::DeleteChat`]: every row of the chat in every table goes, and
/// its tombstone is created or replaced (the latest deletion's revisions).
pub(super) fn delete_chat(
    tx: &Transaction<'_>,
    chat: &ChatKey,
    tombstone: &Tombstone,
) -> Result<(), StoreError> {
    let key = params![chat.tenant.name(), chat.id];
    for table in [
        "chats",
        "messages",
        "recaps",
        "chat_settings",
        "jobs",
        "recall_vectors",
        "chat_activity",
    ] {
        execute(
            tx,
            &format!("DELETE FROM {table} WHERE tenant = ?1 AND chat_id = ?2"),
            key,
        )?;
    }
    execute(
        tx,
        "INSERT INTO chat_tombstones
             (tenant, chat_id, revision, message_revision, deleted_us, recall_revision)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (tenant, chat_id) DO UPDATE
             SET revision = ?3, message_revision = ?4, deleted_us = ?5, recall_revision = ?6",
        params![
            chat.tenant.name(),
            chat.id,
            revision_column(tombstone.revision),
            revision_column(tombstone.message_revision),
            tombstone.deleted_us.0,
            revision_column(tombstone.recall_revision)
        ],
    )
}

/// The statement of [`put_activity`], held by the commit thread.
pub(super) const PUT_ACTIVITY: &str =
    "INSERT INTO chat_activity (tenant, chat_id, updated_us, message_count)
     VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (tenant, chat_id) DO UPDATE SET updated_us = ?3, message_count = ?4";

/// [`Write::Activity`]: creates or replaces the chat's activity row, with
/// the commit thread's [`PUT_ACTIVITY`].
pub(super) fn put_activity(
    statement: &mut Statement<'_>,
    chat: &ChatKey,
    message_count: u64,
    updated_us: UnixMicros,
) -> Result<(), StoreError> {
    run(
        statement,
        params![
            chat.tenant.name(),
            chat.id,
            updated_us.0,
            i64::try_from(message_count).unwrap_or(i64::MAX)
        ],
    )
}

/// Whether a batch deleted a chat or a lorebook (and so owes a
/// [`checkpoint`], so that the deleted content leaves the WAL too).
pub(super) fn deletes_a_chat<'a>(writes: impl IntoIterator<Item = &'a Write>) -> bool {
    writes
        .into_iter()
        .any(|write| matches!(write, Write::DeleteChat { .. } | Write::DeleteLorebook(_)))
}

/// The tombstone of `chat` and its activity time, read in the caller's
/// read transaction.
pub(super) fn tombstone_and_activity(
    conn: &Connection,
    chat: &ChatKey,
) -> Result<(Option<Tombstone>, Option<UnixMicros>), StoreError> {
    use rusqlite::OptionalExtension;
    let reading = db_err("reading a chat");
    let key = params![chat.tenant.name(), chat.id];
    let tombstone = conn
        .prepare_cached(
            "SELECT revision, message_revision, deleted_us, recall_revision FROM chat_tombstones
             WHERE tenant = ?1 AND chat_id = ?2",
        )
        .and_then(|mut s| {
            s.query_row(key, |r| {
                Ok(Tombstone {
                    revision: r.get::<_, i64>(0)?.cast_unsigned(),
                    message_revision: r.get::<_, i64>(1)?.cast_unsigned(),
                    deleted_us: UnixMicros(r.get(2)?),
                    recall_revision: r.get::<_, i64>(3)?.cast_unsigned(),
                })
            })
            .optional()
        })
        .map_err(&reading)?;
    let updated_us = conn
        .prepare_cached("SELECT updated_us FROM chat_activity WHERE tenant = ?1 AND chat_id = ?2")
        .and_then(|mut s| s.query_row(key, |r| r.get(0).map(UnixMicros)).optional())
        .map_err(&reading)?;
    Ok((tombstone, updated_us))
}

/// A page of `tenant`'s chats that have a row, by chat id (bytes), strictly
/// after `after`, at most `limit` (see [`crate::store::ChatStore::list_chats`]).
pub(super) fn list_chats(
    conn: &Connection,
    tenant: &Tenant,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<ChatListing>, StoreError> {
    let listing = db_err("listing chats");
    // Two statements rather than `?2 IS NULL OR ...`: each walks the
    // primary key from where the page starts.
    let sql = format!(
        "SELECT c.chat_id, coalesce(json_extract(c.body, '$.revision'), 0),
                coalesce(a.message_count, 0), coalesce(a.updated_us, 0), s.body,
                json_extract(c.body, '$.character_key'), json_extract(c.body, '$.group_id'),
                json_extract(c.body, '$.branched_from.chat_id'),
                json_extract(c.body, '$.branched_from.message_id')
         FROM chats c
         LEFT JOIN chat_activity a ON a.tenant = c.tenant AND a.chat_id = c.chat_id
         LEFT JOIN chat_settings s ON s.tenant = c.tenant AND s.chat_id = c.chat_id
         WHERE c.tenant = ?1 {}
         ORDER BY c.chat_id LIMIT ?2",
        if after.is_some() {
            "AND c.chat_id > ?3"
        } else {
            ""
        }
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(&listing)?;
    let read = |r: &rusqlite::Row<'_>| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, Option<String>>(6)?,
            (
                r.get::<_, Option<String>>(7)?,
                r.get::<_, Option<String>>(8)?,
            ),
        ))
    };
    let rows = match after {
        Some(after) => stmt.query_map(params![tenant.name(), limit_column(limit), after], read),
        None => stmt.query_map(params![tenant.name(), limit_column(limit)], read),
    }
    .map_err(&listing)?;
    rows.map(|row| {
        let (
            chat_id,
            revision,
            message_count,
            updated_us,
            settings,
            character_key,
            group_id,
            parent,
        ) = row.map_err(&listing)?;
        Ok(ChatListing {
            chat_id,
            message_count: u64::try_from(message_count).unwrap_or(0),
            revision: revision.cast_unsigned(),
            updated_us: UnixMicros(updated_us),
            settings: settings
                .map(|body| from_json::<ChatSettings>("chat settings", &body))
                .transpose()?,
            character_key,
            group_id,
            branched_from: match parent {
                (Some(chat_id), message_id) => Some(BranchOrigin {
                    chat_id,
                    message_id: message_id.unwrap_or_default(),
                }),
                (None, _) => None,
            },
        })
    })
    .collect()
}

/// Chats of every tenant that have a row and last changed before
/// `changed_before_us`, oldest change first, at most `limit`.
pub(super) fn quiet_chats(
    conn: &Connection,
    changed_before_us: UnixMicros,
    limit: usize,
) -> Result<Vec<ChatKey>, StoreError> {
    super::chat_keys(
        conn,
        "SELECT a.tenant, a.chat_id FROM chat_activity a
         JOIN chats c ON c.tenant = a.tenant AND c.chat_id = a.chat_id
         WHERE a.updated_us < ?1
         ORDER BY a.updated_us, a.tenant, a.chat_id LIMIT ?2",
        params![changed_before_us.0, limit_column(limit)],
    )
}

/// How a [`checkpoint`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checkpointed {
    /// The whole WAL is in the database file, and the WAL is empty.
    Done,
    /// A reader (or another process) kept it from finishing: some frames
    /// stay in the WAL until the next one.
    Busy,
}

/// Copies the whole WAL into the database file and truncates the WAL to
/// nothing (`wal_checkpoint(TRUNCATE)`), waiting for readers as long as the
/// connection's busy timeout allows.
pub(super) fn checkpoint(conn: &Connection) -> Result<Checkpointed, rusqlite::Error> {
    let (busy, _log, _copied): (i64, i64, i64) =
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    Ok(if busy == 0 {
        Checkpointed::Done
    } else {
        Checkpointed::Busy
    })
}

/// [`checkpoint`] after a commit (`when`: what for), best effort: the
/// commit is durable already, so a failure is logged, never returned.
/// Returns whether it finished (if not, the caller tries again later).
pub(super) fn checkpoint_logged(conn: &Connection, when: &str) -> bool {
    match checkpoint(conn) {
        Ok(Checkpointed::Done) => true,
        Ok(Checkpointed::Busy) => {
            tracing::warn!(
                "{when}: the WAL checkpoint could not finish (a reader was busy); deleted chats stay in the WAL until the next one"
            );
            false
        }
        Err(error) => {
            tracing::warn!(
                %error,
                "{when}: the WAL checkpoint failed; deleted chats stay in the WAL until the next one"
            );
            false
        }
    }
}
