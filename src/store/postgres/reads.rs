//! The read that must see one moment of the database: a chat with its
//! claim clock, its tenant's settings clock, its open jobs, its
//! tombstone and its last change.

use crate::domain::time::UnixMicros;
use crate::domain::time::UnixMillis;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::TryStreamExt as _;

use super::{PgStore, as_u64, jobs, pg_err};
use crate::domain::ids::ChatKey;
use crate::domain::message::Message;
use crate::domain::recall::{ChunkKey, Source, StoredVector};
use crate::domain::recaps::RecapVersion;
use crate::store::vectors::from_bytes;
use crate::store::{
    ChatMeta, ChatSettings, LoadedChat, StoreError, StoredChat, Tombstone, from_json,
};
use crate::wall_clock::now_ms;

/// A chat's recall vectors, read by `client` (a transaction or not).
pub(super) async fn vectors_of(
    client: &impl deadpool_postgres::GenericClient,
    tenant: &str,
    id: &str,
) -> Result<Vec<StoredVector>, StoreError> {
    client
        .query(
            "SELECT message_id, source, part, fingerprint, model, vector FROM recall_vectors
             WHERE tenant = $1 AND chat_id = $2",
            &[&tenant, &id],
        )
        .await
        .map_err(pg_err("reading a chat's recall vectors"))?
        .iter()
        .map(|r| {
            let source: i16 = r.get(1);
            let source = Source::from_code(i64::from(source)).ok_or_else(|| {
                StoreError::corrupt("recall vector".to_owned(), format!("source {source}"))
            })?;
            Ok(StoredVector {
                key: ChunkKey {
                    message_id: r.get::<_, &str>(0).into(),
                    source,
                    part: u32::try_from(r.get::<_, i32>(2)).unwrap_or(0),
                },
                fingerprint: r.get::<_, i64>(3).cast_unsigned(),
                model: r.get(4),
                vector: from_bytes(r.get::<_, &[u8]>(5))?,
            })
        })
        .collect()
}

impl PgStore {
    /// A chat's rows, open jobs, tombstone and activity in one read-only
    /// REPEATABLE READ transaction, so the claim clock read is the one they
    /// belong to (a deleted chat reads as its clock and tombstone, no
    /// rows). Each message row received counts in `progress` (the
    /// caller's bound restarts on it).
    pub(super) async fn load_chat(
        &self,
        key: &ChatKey,
        progress: &AtomicU64,
    ) -> Result<LoadedChat, StoreError> {
        let reading = pg_err("reading a chat");
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(&reading)?;
        let (tenant, id) = (key.tenant.name(), key.id.as_str());
        let clock = tx
            .query_opt(
                "SELECT generation, (extract(epoch FROM now() - changed_at) * 1000)::bigint
                 FROM chat_clock WHERE tenant = $1 AND chat_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(&reading)?;
        let settings_clock = tx
            .query_opt(
                "SELECT generation FROM settings_clock WHERE tenant = $1",
                &[&tenant],
            )
            .await
            .map_err(&reading)?
            .map_or(0, |r| as_u64(r.get(0)));
        let row = tx
            .query_opt(
                "SELECT needs_refresh, body FROM chats WHERE tenant = $1 AND chat_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(&reading)?;
        let settings = tx
            .query_opt(
                "SELECT body FROM chat_settings WHERE tenant = $1 AND chat_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(&reading)?
            .map(|r| from_json::<ChatSettings>("chat settings", r.get(0)))
            .transpose()?;
        let chat = match row {
            None => None,
            Some(row) => {
                let mut meta: ChatMeta = from_json("chat row", row.get(1))?;
                // The column is the truth: AllChatsOweRefresh sets only it.
                meta.needs_refresh = row.get(0);
                // Rows are decoded as they arrive, so a large chat's JSON
                // bodies are never all held at once beside its messages.
                let rows = tx
                    .query_raw(
                        "SELECT seq, body FROM messages WHERE tenant = $1 AND chat_id = $2
                         ORDER BY seq",
                        [tenant, id],
                    )
                    .await
                    .map_err(&reading)?;
                let mut rows = std::pin::pin!(rows);
                let mut messages = Vec::new();
                while let Some(r) = rows.try_next().await.map_err(&reading)? {
                    progress.fetch_add(1, Ordering::Relaxed);
                    messages.push((
                        r.get::<_, i64>(0),
                        from_json::<Message>("message", r.get(1))?,
                    ));
                }
                let recaps = tx
                    .query(
                        "SELECT body FROM recaps WHERE tenant = $1 AND chat_id = $2
                         ORDER BY version",
                        &[&tenant, &id],
                    )
                    .await
                    .map_err(&reading)?
                    .iter()
                    .map(|r| from_json::<RecapVersion>("running recap", r.get(0)))
                    .collect::<Result<Vec<_>, StoreError>>()?;
                Some(StoredChat {
                    meta,
                    messages,
                    recaps,
                })
            }
        };
        let tombstone = tx
            .query_opt(
                "SELECT revision, message_revision, deleted_us, recall_revision FROM chat_tombstones
                 WHERE tenant = $1 AND chat_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(&reading)?
            .map(|r| Tombstone {
                revision: as_u64(r.get(0)),
                message_revision: as_u64(r.get(1)),
                deleted_us: UnixMicros(r.get(2)),
                recall_revision: as_u64(r.get(3)),
            });
        let updated_us = tx
            .query_opt(
                "SELECT updated_us FROM chat_activity WHERE tenant = $1 AND chat_id = $2",
                &[&tenant, &id],
            )
            .await
            .map_err(&reading)?
            .map(|r| UnixMicros(r.get::<_, i64>(0)));
        let jobs = tx
            .query(jobs::OPEN_JOBS_OF_CHAT, &[&tenant, &id])
            .await
            .map_err(&reading)?;
        let jobs = jobs::decode_jobs(&jobs)?;
        let vectors = vectors_of(&tx, tenant, id).await?;
        tx.commit().await.map_err(&reading)?;
        Ok(LoadedChat {
            chat,
            settings,
            clock: clock.as_ref().map_or(0, |r| as_u64(r.get(0))),
            // Aged on the database's clock, dated on ours: replicas whose
            // clocks differ still agree on how long ago it was.
            changed_ms: clock.map(|r| UnixMillis(now_ms().0.saturating_sub(r.get::<_, i64>(1)))),
            settings_clock,
            jobs,
            vectors,
            tombstone,
            updated_us,
        })
    }
}
