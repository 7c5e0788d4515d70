//! Reads that must see one moment of the database: a chat with its
//! generation, and the global settings with theirs.

use super::{PgStore, as_u64, from_json, now_ms, pg_err};
use crate::domain::ids::tenant_of;
use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::domain::settings::SettingsPatch;
use crate::store::{
    ChatMeta, ChatSettings, LoadedChat, StoreError, StoredChat, global_settings_claim,
};

/// A read-only REPEATABLE READ transaction: every query in it sees the same
/// snapshot.
async fn snapshot(
    client: &mut deadpool_postgres::Object,
) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg_err)
}

impl PgStore {
    pub(super) async fn load_async(&self, chat_id: &str) -> Result<LoadedChat, StoreError> {
        let mut client = self.client().await?;
        // One snapshot for every row of the chat, so the generation read is
        // the one the rows belong to.
        let tx = snapshot(&mut client).await?;
        let clock = tx
            .query_opt(
                "SELECT generation, (extract(epoch FROM now() - changed_at) * 1000)::bigint
                 FROM chat_clock WHERE chat_id = $1",
                &[&chat_id],
            )
            .await
            .map_err(pg_err)?;
        let settings_claim = global_settings_claim(tenant_of(chat_id));
        let settings_generation = tx
            .query_opt(
                "SELECT generation FROM chat_clock WHERE chat_id = $1",
                &[&settings_claim],
            )
            .await
            .map_err(pg_err)?
            .map_or(0, |r| as_u64(r.get(0)));
        let row = tx
            .query_opt(
                "SELECT needs_refresh, body FROM chats WHERE chat_id = $1",
                &[&chat_id],
            )
            .await
            .map_err(pg_err)?;
        let settings = tx
            .query_opt(
                "SELECT body FROM chat_settings WHERE chat_id = $1",
                &[&chat_id],
            )
            .await
            .map_err(pg_err)?
            .map(|r| from_json::<ChatSettings>(r.get(0)))
            .transpose()?;
        let chat = match row {
            None => None,
            Some(row) => {
                let mut meta: ChatMeta = from_json(row.get(1))?;
                // The column is the truth: AllChatsOweRefresh sets only it.
                meta.needs_refresh = row.get(0);
                let messages = tx
                    .query(
                        "SELECT seq, body FROM messages WHERE chat_id = $1 ORDER BY seq",
                        &[&chat_id],
                    )
                    .await
                    .map_err(pg_err)?
                    .iter()
                    .map(|r| Ok((r.get::<_, i64>(0), from_json::<Message>(r.get(1))?)))
                    .collect::<Result<Vec<_>, StoreError>>()?;
                let recaps = tx
                    .query(
                        "SELECT body FROM recaps WHERE chat_id = $1 ORDER BY version",
                        &[&chat_id],
                    )
                    .await
                    .map_err(pg_err)?
                    .iter()
                    .map(|r| from_json::<RecapVersion>(r.get(0)))
                    .collect::<Result<Vec<_>, StoreError>>()?;
                Some(StoredChat {
                    meta,
                    messages,
                    recaps,
                })
            }
        };
        tx.commit().await.map_err(pg_err)?;
        Ok(LoadedChat {
            chat,
            settings,
            generation: clock.as_ref().map_or(0, |r| as_u64(r.get(0))),
            // Aged on the database's clock, dated on ours: replicas whose
            // clocks differ still agree on how long ago it was.
            changed_ms: clock.map(|r| now_ms().saturating_sub(r.get::<_, i64>(1))),
            settings_generation,
        })
    }

    /// Every tenant's global settings with their claim's generation.
    pub(super) async fn global_settings_async(
        &self,
    ) -> Result<Vec<(String, SettingsPatch, u64)>, StoreError> {
        let mut client = self.client().await?;
        // One snapshot: each patch with the generation it was written at.
        let tx = snapshot(&mut client).await?;
        let rows = tx
            .query(
                "SELECT key, value FROM kv
                 WHERE key = 'global_settings' OR key LIKE 'global_settings:%'",
                &[],
            )
            .await
            .map_err(pg_err)?;
        let mut globals = Vec::new();
        for row in rows {
            let key: String = row.get(0);
            let tenant = key
                .strip_prefix("global_settings:")
                .unwrap_or("")
                .to_owned();
            let generation = tx
                .query_opt(
                    "SELECT generation FROM chat_clock WHERE chat_id = $1",
                    &[&global_settings_claim(&tenant)],
                )
                .await
                .map_err(pg_err)?
                .map_or(0, |r| as_u64(r.get(0)));
            globals.push((tenant, from_json(row.get(1))?, generation));
        }
        tx.commit().await.map_err(pg_err)?;
        Ok(globals)
    }
}
