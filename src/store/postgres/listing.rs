//! ListChats and `--chat-retention` on PostgreSQL: pages of a tenant's chats
//! by chat id, and the chats of every tenant that have been quiet longest.
//!
//! Chat ids compare byte by byte (`COLLATE "C"`, migration 5's index
//! `chats_by_id_bytes`), as the embedded store's BINARY does, whatever the
//! database's locale: a page token is the last chat id of a page, and the
//! next page starts strictly after it in that order on both stores.

use crate::domain::time::UnixMicros;
use serde::Deserialize;
use tokio_postgres::types::ToSql;

use super::{PgStore, as_u64, bounded, pg_err};
use crate::domain::ids::{ChatKey, Tenant};
use crate::store::{BranchOrigin, ChatListing, ChatSettings, StoreError, from_json};

/// The columns of a listed chat; `$1` is the tenant. The first page's form.
const FIRST_PAGE: &str = "SELECT c.chat_id, c.body, a.message_count, a.updated_us, s.body
     FROM chats c
     LEFT JOIN chat_activity a ON a.tenant = c.tenant AND a.chat_id = c.chat_id
     LEFT JOIN chat_settings s ON s.tenant = c.tenant AND s.chat_id = c.chat_id
     WHERE c.tenant = $1
     ORDER BY c.chat_id COLLATE \"C\" LIMIT $2";

/// The next pages' form: chats strictly after `$3`.
const NEXT_PAGE: &str = "SELECT c.chat_id, c.body, a.message_count, a.updated_us, s.body
     FROM chats c
     LEFT JOIN chat_activity a ON a.tenant = c.tenant AND a.chat_id = c.chat_id
     LEFT JOIN chat_settings s ON s.tenant = c.tenant AND s.chat_id = c.chat_id
     WHERE c.tenant = $1 AND c.chat_id COLLATE \"C\" > $3
     ORDER BY c.chat_id COLLATE \"C\" LIMIT $2";

/// Chats of every tenant last changed before `$1`, oldest change first
/// (ties by tenant and chat id, the order of the index
/// `chat_activity_by_change`), at most `$2`; only chats that have a row.
const QUIET_CHATS: &str = "SELECT a.tenant, a.chat_id FROM chat_activity a
     WHERE a.updated_us < $1
       AND EXISTS (SELECT 1 FROM chats c WHERE c.tenant = a.tenant AND c.chat_id = a.chat_id)
     ORDER BY a.updated_us, a.tenant, a.chat_id
     LIMIT $2";

/// The members of a chat's row ListChats shows: its revision (0 when the
/// row has none, as before the first refresh), its character and group.
#[derive(Deserialize)]
struct RowRevision {
    #[serde(default)]
    revision: u64,
    #[serde(default)]
    character_key: Option<String>,
    #[serde(default)]
    group_id: Option<String>,
    #[serde(default)]
    branched_from: Option<BranchOrigin>,
}

/// A count as an SQL `LIMIT`.
fn limit_column(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

impl PgStore {
    /// See [`crate::store::ChatStore::list_chats`]. A chat without activity
    /// (written by a recapd older than migration 5 since it ran) lists with
    /// no messages and 0 as its last change.
    pub(super) async fn read_chat_page(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ChatListing>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let limit = limit_column(limit);
        let tenant = tenant.name();
        bounded(async {
            let reading = pg_err("listing chats");
            let client = self.client().await?;
            let (sql, params): (&str, Vec<&(dyn ToSql + Sync)>) = match &after {
                None => (FIRST_PAGE, vec![&tenant, &limit]),
                Some(after) => (NEXT_PAGE, vec![&tenant, &limit, after]),
            };
            let statement = client.prepare_cached(sql).await.map_err(&reading)?;
            let rows = client.query(&statement, &params).await.map_err(&reading)?;
            rows.iter()
                .map(|row| {
                    let chat_id: String = row.try_get(0).map_err(&reading)?;
                    let body: &str = row.try_get(1).map_err(&reading)?;
                    let row_meta = from_json::<RowRevision>("chat row", body)?;
                    let count: Option<i64> = row.try_get(2).map_err(&reading)?;
                    let updated_us: Option<i64> = row.try_get(3).map_err(&reading)?;
                    let settings: Option<&str> = row.try_get(4).map_err(&reading)?;
                    Ok(ChatListing {
                        chat_id,
                        message_count: count.map_or(0, as_u64),
                        revision: row_meta.revision,
                        updated_us: UnixMicros(updated_us.unwrap_or(0)),
                        character_key: row_meta.character_key,
                        group_id: row_meta.group_id,
                        branched_from: row_meta.branched_from,
                        settings: settings
                            .map(|body| from_json::<ChatSettings>("chat settings", body))
                            .transpose()?,
                    })
                })
                .collect()
        })
        .await
    }

    /// See [`crate::store::ChatStore::quiet_chats`]. A chat without
    /// activity is never quiet: its age is unknown.
    pub(super) async fn read_quiet_chats(
        &self,
        changed_before_us: UnixMicros,
        limit: usize,
    ) -> Result<Vec<ChatKey>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.chat_keys(QUIET_CHATS, &[&changed_before_us.0, &limit_column(limit)])
            .await
    }
}

#[cfg(test)]
mod tests;
