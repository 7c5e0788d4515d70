//! The embedded store's lorebook rows: the conditional writes (a book's
//! version checked in the write itself), the entry edits appended to a
//! book, and the reads (a book's row and its edits read in one read
//! transaction, so they belong together).

use rusqlite::{Connection, OptionalExtension, params};

use super::db_err;
use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;
use crate::store::lorebooks::{version_column, version_of};
use crate::store::{
    DeleteLorebook, LorebookListing, NO_LOREBOOK, PutLorebook, PutLorebookEntry, StoreError,
    StoredLorebook,
};

/// Rows a conditional statement changed, by its prepared SQL.
fn changed(
    tx: &rusqlite::Transaction<'_>,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<usize, StoreError> {
    tx.prepare_cached(sql)
        .and_then(|mut statement| statement.execute(values))
        .map_err(db_err("writing a lorebook"))
}

/// Drops the entry edits of one book (its text was written whole, or it
/// was deleted).
fn drop_edits(
    tx: &rusqlite::Transaction<'_>,
    tenant: &Tenant,
    name: &str,
) -> Result<(), StoreError> {
    changed(
        tx,
        "DELETE FROM lorebook_edits WHERE tenant = ?1 AND name = ?2",
        params![tenant.name(), name],
    )
    .map(drop)
}

/// [`crate::store::Write::Lorebook`]: inserts the book when
/// `expect_version` says there is none, else updates the row that still
/// has that version, and drops its entry edits; nothing changed means
/// another writer moved it.
pub(super) fn put_lorebook(
    tx: &rusqlite::Transaction<'_>,
    put: &PutLorebook,
) -> Result<(), StoreError> {
    let entry_count = i64::try_from(put.entry_count).unwrap_or(i64::MAX);
    let rows = if put.expect_version == NO_LOREBOOK {
        changed(
            tx,
            "INSERT INTO lorebooks (tenant, name, json, entry_count, updated_us, version)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (tenant, name) DO NOTHING",
            params![
                put.tenant.name(),
                put.name,
                &*put.json.0,
                entry_count,
                put.updated_us.0,
                version_column(put.version)
            ],
        )?
    } else {
        changed(
            tx,
            "UPDATE lorebooks SET json = ?3, entry_count = ?4, updated_us = ?5, version = ?6,
                 log_bytes = 0
             WHERE tenant = ?1 AND name = ?2 AND version = ?7",
            params![
                put.tenant.name(),
                put.name,
                &*put.json.0,
                entry_count,
                put.updated_us.0,
                version_column(put.version),
                version_column(put.expect_version)
            ],
        )?
    };
    if rows == 1 {
        drop_edits(tx, &put.tenant, &put.name)
    } else {
        Err(StoreError::LorebookChanged(put.name.clone()))
    }
}

/// [`crate::store::Write::LorebookEntry`]: moves the row that still has
/// the version expected and appends the edit; nothing changed means
/// another writer moved it (or deleted the book).
pub(super) fn put_lorebook_entry(
    tx: &rusqlite::Transaction<'_>,
    put: &PutLorebookEntry,
) -> Result<(), StoreError> {
    let rows = changed(
        tx,
        "UPDATE lorebooks SET entry_count = ?3, updated_us = ?4, version = ?5,
             log_bytes = log_bytes + ?6
         WHERE tenant = ?1 AND name = ?2 AND version = ?7",
        params![
            put.tenant.name(),
            put.name,
            i64::try_from(put.entry_count).unwrap_or(i64::MAX),
            put.updated_us.0,
            version_column(put.version),
            i64::try_from(put.log_bytes()).unwrap_or(i64::MAX),
            version_column(put.expect_version)
        ],
    )?;
    if rows != 1 {
        return Err(StoreError::LorebookChanged(put.name.clone()));
    }
    changed(
        tx,
        "INSERT INTO lorebook_edits (tenant, name, seq, uid, json)
         SELECT ?1, ?2, coalesce(max(seq), 0) + 1, ?3, ?4 FROM lorebook_edits
         WHERE tenant = ?1 AND name = ?2",
        params![put.tenant.name(), put.name, put.uid, put.entry],
    )
    .map(drop)
}

/// [`crate::store::Write::DeleteLorebook`]: deletes the row if it still
/// has the version expected.
pub(super) fn delete_lorebook(
    tx: &rusqlite::Transaction<'_>,
    delete: &DeleteLorebook,
) -> Result<(), StoreError> {
    let rows = changed(
        tx,
        "DELETE FROM lorebooks WHERE tenant = ?1 AND name = ?2 AND version = ?3",
        params![
            delete.tenant.name(),
            delete.name,
            version_column(delete.expect_version)
        ],
    )?;
    if rows == 1 {
        drop_edits(tx, &delete.tenant, &delete.name)
    } else {
        Err(StoreError::LorebookChanged(delete.name.clone()))
    }
}

/// A listing from the columns name, entry_count, updated_us, version.
fn listing(row: &rusqlite::Row<'_>) -> rusqlite::Result<LorebookListing> {
    Ok(LorebookListing {
        name: row.get(0)?,
        entry_count: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
        updated_us: UnixMicros(row.get(2)?),
        version: version_of(row.get(3)?),
    })
}

/// See [`crate::store::ChatStore::lorebook`]: the row and its edits in
/// one read transaction (one snapshot of the database).
pub(super) fn lorebook(
    conn: &Connection,
    tenant: &Tenant,
    name: &str,
) -> Result<Option<StoredLorebook>, StoreError> {
    let reading = db_err("reading a lorebook");
    let snapshot = conn.unchecked_transaction().map_err(&reading)?;
    let book = snapshot
        .prepare_cached(
            "SELECT name, entry_count, updated_us, version, json, log_bytes FROM lorebooks
             WHERE tenant = ?1 AND name = ?2",
        )
        .map_err(&reading)?
        .query_row(params![tenant.name(), name], |row| {
            Ok(StoredLorebook {
                listing: listing(row)?,
                json: row.get(4)?,
                edits: Vec::new(),
                log_bytes: u64::try_from(row.get::<_, i64>(5)?).unwrap_or(0),
            })
        })
        .optional()
        .map_err(&reading)?;
    let Some(mut book) = book else {
        return Ok(None);
    };
    if book.log_bytes > 0 {
        let mut stmt = snapshot
            .prepare_cached(
                "SELECT uid, json FROM lorebook_edits WHERE tenant = ?1 AND name = ?2
                 ORDER BY seq",
            )
            .map_err(&reading)?;
        let edits = stmt
            .query_map(params![tenant.name(), name], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
            })
            .map_err(&reading)?;
        book.edits = edits
            .map(|edit| edit.map_err(&reading))
            .collect::<Result<_, _>>()?;
    }
    Ok(Some(book))
}

/// See [`crate::store::ChatStore::lorebook_versions`]: the names go in as
/// one JSON array, so one statement serves any number of them.
pub(super) fn lorebook_versions(
    conn: &Connection,
    tenant: &Tenant,
    names: &[String],
) -> Result<Vec<(String, u64)>, StoreError> {
    let reading = db_err("reading lorebook versions");
    let names = crate::store::to_json("lorebook names", &names)?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT name, version FROM lorebooks
             WHERE tenant = ?1 AND name IN (SELECT value FROM json_each(?2))",
        )
        .map_err(&reading)?;
    let rows = stmt
        .query_map(params![tenant.name(), names], |row| {
            Ok((row.get::<_, String>(0)?, version_of(row.get(1)?)))
        })
        .map_err(&reading)?;
    rows.map(|row| row.map_err(&reading)).collect()
}

/// See [`crate::store::ChatStore::list_lorebooks`].
pub(super) fn list_lorebooks(
    conn: &Connection,
    tenant: &Tenant,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<LorebookListing>, StoreError> {
    let reading = db_err("listing lorebooks");
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut stmt = conn
        .prepare_cached(
            "SELECT name, entry_count, updated_us, version FROM lorebooks
             WHERE tenant = ?1 AND (?2 IS NULL OR name > ?2)
             ORDER BY name LIMIT ?3",
        )
        .map_err(&reading)?;
    let rows = stmt
        .query_map(params![tenant.name(), after, limit], listing)
        .map_err(&reading)?;
    rows.map(|row| row.map_err(&reading)).collect()
}

/// See [`crate::store::ChatStore::lorebook_count`].
pub(super) fn lorebook_count(conn: &Connection, tenant: &Tenant) -> Result<usize, StoreError> {
    let count: i64 = conn
        .prepare_cached("SELECT count(*) FROM lorebooks WHERE tenant = ?1")
        .and_then(|mut stmt| stmt.query_row(params![tenant.name()], |r| r.get(0)))
        .map_err(db_err("counting lorebooks"))?;
    Ok(usize::try_from(count).unwrap_or(0))
}
