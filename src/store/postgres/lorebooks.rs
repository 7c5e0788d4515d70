//! The PostgreSQL store's lorebook rows: each write's SQL (a book's
//! version checked in the statement itself, which answers a row only when
//! it applied) and the reads. Names compare byte by byte (the column's
//! collation "C", migration 6). A write of the whole book, and its
//! deletion, drop its entry edits in the same statement; an entry's edit
//! moves the row's version and appends the edit in one statement; a read
//! takes the row and its edits in one statement (one snapshot).

use super::writes::Param;
use super::{PgStore, bounded, pg_err};
use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;
use crate::store::lorebooks::{version_column, version_of};
use crate::store::{
    DeleteLorebook, LorebookListing, NO_LOREBOOK, PutLorebook, PutLorebookEntry, StoreError,
    StoredLorebook,
};

/// A new book: inserted only when no row of its name exists (and no
/// edits are left of an earlier book of its name).
const INSERT: &str = "WITH added AS (
         INSERT INTO lorebooks (tenant, name, json, entry_count, updated_us, version)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (tenant, name) DO NOTHING
         RETURNING 1),
     dropped AS (
         DELETE FROM lorebook_edits WHERE tenant = $1 AND name = $2
         AND EXISTS (SELECT 1 FROM added))
     SELECT 1 FROM added";

/// A changed book: updated only while it has the version `$7`, its entry
/// edits dropped.
const UPDATE: &str = "WITH moved AS (
         UPDATE lorebooks SET json = $3, entry_count = $4, updated_us = $5, version = $6,
             log_bytes = 0
         WHERE tenant = $1 AND name = $2 AND version = $7
         RETURNING 1),
     dropped AS (
         DELETE FROM lorebook_edits WHERE tenant = $1 AND name = $2
         AND EXISTS (SELECT 1 FROM moved))
     SELECT 1 FROM moved";

/// One entry's edit: the row moved only while it has the version `$8`,
/// the edit appended after the book's last.
const PUT_ENTRY: &str = "WITH moved AS (
         UPDATE lorebooks SET entry_count = $5, updated_us = $6, version = $7,
             log_bytes = log_bytes + $9
         WHERE tenant = $1 AND name = $2 AND version = $8
         RETURNING 1)
     INSERT INTO lorebook_edits (tenant, name, seq, uid, json)
     SELECT $1, $2,
         coalesce((SELECT max(seq) FROM lorebook_edits WHERE tenant = $1 AND name = $2), 0) + 1,
         $3, $4
     FROM moved
     RETURNING 1";

/// A deleted book: deleted only while it has the version `$3`, its entry
/// edits with it.
const DELETE: &str = "WITH gone AS (
         DELETE FROM lorebooks WHERE tenant = $1 AND name = $2 AND version = $3
         RETURNING 1),
     dropped AS (
         DELETE FROM lorebook_edits WHERE tenant = $1 AND name = $2
         AND EXISTS (SELECT 1 FROM gone))
     SELECT 1 FROM gone";

/// The SQL and parameters of [`crate::store::Write::Lorebook`]; it answers
/// no row when another writer moved the book first.
pub(super) fn put_lorebook(put: &PutLorebook) -> (&'static str, Vec<Param>) {
    let mut params: Vec<Param> = vec![
        Box::new(put.tenant.name().to_owned()),
        Box::new(put.name.clone()),
        Box::new(put.json.0.to_string()),
        Box::new(i64::try_from(put.entry_count).unwrap_or(i64::MAX)),
        Box::new(put.updated_us.0),
        Box::new(version_column(put.version)),
    ];
    if put.expect_version == NO_LOREBOOK {
        (INSERT, params)
    } else {
        params.push(Box::new(version_column(put.expect_version)));
        (UPDATE, params)
    }
}

/// The SQL and parameters of [`crate::store::Write::LorebookEntry`]; it
/// answers no row when another writer moved the book first.
pub(super) fn put_lorebook_entry(put: &PutLorebookEntry) -> (&'static str, Vec<Param>) {
    (
        PUT_ENTRY,
        vec![
            Box::new(put.tenant.name().to_owned()),
            Box::new(put.name.clone()),
            Box::new(put.uid.clone()),
            Box::new(put.entry.clone()),
            Box::new(i64::try_from(put.entry_count).unwrap_or(i64::MAX)),
            Box::new(put.updated_us.0),
            Box::new(version_column(put.version)),
            Box::new(version_column(put.expect_version)),
            Box::new(i64::try_from(put.log_bytes()).unwrap_or(i64::MAX)),
        ],
    )
}

/// The SQL and parameters of [`crate::store::Write::DeleteLorebook`]; it
/// answers no row when the book changed or went first.
pub(super) fn delete_lorebook(delete: &DeleteLorebook) -> (&'static str, Vec<Param>) {
    (
        DELETE,
        vec![
            Box::new(delete.tenant.name().to_owned()),
            Box::new(delete.name.clone()),
            Box::new(version_column(delete.expect_version)),
        ],
    )
}

/// A listing from the columns name, entry_count, updated_us, version.
fn listing(row: &tokio_postgres::Row) -> LorebookListing {
    LorebookListing {
        name: row.get(0),
        entry_count: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
        updated_us: UnixMicros(row.get(2)),
        version: version_of(row.get(3)),
    }
}

impl PgStore {
    /// See [`crate::store::ChatStore::lorebook`].
    pub(super) async fn read_lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<StoredLorebook>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT name, entry_count, updated_us, version, json, log_bytes,
                         ARRAY(SELECT uid FROM lorebook_edits
                               WHERE tenant = $1 AND name = $2 ORDER BY seq),
                         ARRAY(SELECT json FROM lorebook_edits
                               WHERE tenant = $1 AND name = $2 ORDER BY seq)
                     FROM lorebooks WHERE tenant = $1 AND name = $2",
                    &[&tenant.name(), &name],
                )
                .await
                .map_err(pg_err("reading a lorebook"))?;
            Ok(row.map(|row| {
                let uids: Vec<String> = row.get(6);
                let texts: Vec<Option<String>> = row.get(7);
                StoredLorebook {
                    listing: listing(&row),
                    json: row.get(4),
                    edits: uids.into_iter().zip(texts).collect(),
                    log_bytes: u64::try_from(row.get::<_, i64>(5)).unwrap_or(0),
                }
            }))
        })
        .await
    }

    /// See [`crate::store::ChatStore::lorebook_versions`].
    pub(super) async fn read_lorebook_versions(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, u64)>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT name, version FROM lorebooks WHERE tenant = $1 AND name = ANY($2)",
                    &[&tenant.name(), &names],
                )
                .await
                .map_err(pg_err("reading lorebook versions"))?;
            Ok(rows
                .iter()
                .map(|row| (row.get(0), version_of(row.get(1))))
                .collect())
        })
        .await
    }

    /// See [`crate::store::ChatStore::list_lorebooks`].
    pub(super) async fn read_lorebook_page(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LorebookListing>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT name, entry_count, updated_us, version FROM lorebooks
                     WHERE tenant = $1 AND ($2::text IS NULL OR name > $2::text)
                     ORDER BY name LIMIT $3",
                    &[&tenant.name(), &after, &limit],
                )
                .await
                .map_err(pg_err("listing lorebooks"))?;
            Ok(rows.iter().map(listing).collect())
        })
        .await
    }

    /// See [`crate::store::ChatStore::lorebook_count`].
    pub(super) async fn read_lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let count: i64 = client
                .query_one(
                    "SELECT count(*) FROM lorebooks WHERE tenant = $1",
                    &[&tenant.name()],
                )
                .await
                .map_err(pg_err("counting lorebooks"))?
                .get(0);
            Ok(usize::try_from(count).unwrap_or(0))
        })
        .await
    }
}
