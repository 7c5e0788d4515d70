//! The shared store: PostgreSQL, for several recapd replicas serving the same
//! chats. Rows are the embedded store's (JSON bodies in text columns) plus a
//! per-chat clock, `chat_clock`, whose generation every commit claims
//! ([`Write::Claim`]): the database, not a replica's memory, decides the order
//! of a chat's changes. Each committed batch sends one `NOTIFY` in its own
//! transaction, naming the chats it changed; [`listen`] turns other replicas'
//! notifications into [`Change`] hints.
//!
//! The client is tokio-postgres with a deadpool pool, driven by a small
//! runtime of the store's own, so the blocking [`Store`] calls (made from the
//! committer thread and from `spawn_blocking`) never run on, or wait for, the
//! server's async workers.

mod hint;
mod listen;
mod migrations;
mod reads;
mod writes;

use hint::Hint;
use migrations::migrate;
use writes::{CLAIM, Param, statement};

use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde::Serialize;
use tokio::sync::mpsc;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Statement};

use super::{Change, ChatSettings, LoadedChat, Store, StoreError, StoredChat, Write};
use crate::domain::settings::SettingsPatch;

/// How long a call waits for a connection, or to open one, before it
/// fails (and the RPC answers UNAVAILABLE).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Longest a store call may take, waiting for the database included,
/// before it fails (a commit that timed out is rolled back or, if it
/// reached the server, may still land: it is not acknowledged either way).
const OPERATION_TIMEOUT: Duration = Duration::from_secs(20);

/// Where and how to reach the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// A libpq-style URL, `postgres://user@host:port/database?...`.
    pub url: String,
    /// The schema recapd's tables live in; created when missing. Replicas
    /// share data exactly when they share URL and schema.
    pub schema: String,
    /// Most connections in the pool (the listener has one more).
    pub pool_size: usize,
}

/// Checks a schema name: lower-case ASCII letters, digits and `_`, starting
/// with a letter or `_`, at most 48 bytes (the notification channel adds a
/// prefix within PostgreSQL's 63-byte identifiers).
pub fn check_schema(name: &str) -> Result<(), String> {
    let valid_start = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let valid_rest = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid_start && valid_rest && name.len() <= 48 {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a valid schema name (a-z, 0-9 and _, starting with a letter or _, at most 48 bytes)"
        ))
    }
}

/// PostgreSQL-backed [`Store`], shared by every replica that names the same
/// database and schema.
pub struct PgStore {
    /// Runs the pool's connections and the listener. `None` only while
    /// dropping.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    /// This process's name in notifications, so it skips its own.
    replica: String,
    /// The notification channel (one per schema).
    channel: String,
    changes: Mutex<Option<mpsc::UnboundedReceiver<Change>>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("replica", &self.replica)
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

fn pg_err(e: tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => {
            StoreError::Database(format!("PostgreSQL {}: {}", db.code().code(), db.message()))
        }
        None => StoreError::Database(format!("PostgreSQL: {e}")),
    }
}

fn pool_err(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::Database(format!("no PostgreSQL connection: {e}"))
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn as_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl PgStore {
    /// Connects, applies the migrations the database lacks, and starts
    /// listening for other replicas' commits. Blocks; call it off the
    /// async workers.
    pub fn open(options: &PgOptions) -> Result<PgStore, StoreError> {
        check_schema(&options.schema).map_err(StoreError::Database)?;
        let mut config = tokio_postgres::Config::from_str(&options.url)
            .map_err(|e| StoreError::Database(format!("bad PostgreSQL URL: {e}")))?;
        let search_path = format!("-c search_path={}", options.schema);
        let merged = match config.get_options() {
            Some(given) if !given.is_empty() => format!("{given} {search_path}"),
            _ => search_path,
        };
        config.options(&merged);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("recapd");
        }
        // A connection whose peer vanished (a partition, a failover) is
        // given up within seconds instead of TCP's many minutes.
        config.keepalives_idle(Duration::from_secs(10));
        config.keepalives_interval(Duration::from_secs(3));
        config.keepalives_retries(3);
        config.tcp_user_timeout(OPERATION_TIMEOUT / 2);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("recapd-pg")
            .enable_all()
            .build()
            .map_err(|e| {
                StoreError::Database(format!("cannot start the PostgreSQL runtime: {e}"))
            })?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Database(format!("cannot build the pool: {e}")))?;
        let channel = format!("recapd_{}", options.schema);
        let replica = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        runtime.block_on(migrate(&pool, &options.schema))?;
        let (feed, changes) = mpsc::unbounded_channel();
        let listening = tokio::sync::oneshot::channel();
        runtime.spawn(listen::run(
            config,
            channel.clone(),
            replica.clone(),
            feed,
            listening.0,
        ));
        // Serve only once other replicas' commits are heard.
        runtime
            .block_on(async { tokio::time::timeout(CONNECT_TIMEOUT * 2, listening.1).await })
            .map_err(|_| StoreError::Database("could not LISTEN for other replicas".into()))?
            .map_err(|_| StoreError::Database("the listener stopped".into()))?;
        Ok(PgStore {
            runtime: Some(runtime),
            pool,
            replica,
            channel,
            changes: Mutex::new(Some(changes)),
        })
    }

    fn block<T>(&self, work: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        match &self.runtime {
            Some(runtime) => runtime.block_on(async {
                tokio::time::timeout(OPERATION_TIMEOUT, work)
                    .await
                    .unwrap_or_else(|_| {
                        Err(StoreError::Database(format!(
                            "PostgreSQL did not answer within {} s",
                            OPERATION_TIMEOUT.as_secs()
                        )))
                    })
            }),
            None => Err(StoreError::Closed),
        }
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_err)
    }

    /// One transaction for the whole batch. Its statements are pipelined
    /// (sent together, answered in order) rather than one round trip each.
    async fn commit_async(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_err)?;
        // Claims first, in chat order, so two batches lock chats in the same
        // order and cannot deadlock; a stable sort keeps one chat's groups in
        // their order.
        let mut claims: Vec<(&str, u64)> = groups
            .iter()
            .flatten()
            .filter_map(|w| match w {
                Write::Claim {
                    chat_id,
                    generation,
                } => Some((chat_id.as_str(), *generation)),
                _ => None,
            })
            .collect();
        claims.sort_by(|a, b| a.0.cmp(b.0));
        let mut statements: Vec<(Statement, Vec<Param>)> = Vec::new();
        if !claims.is_empty() {
            let claim = tx.prepare_cached(CLAIM).await.map_err(pg_err)?;
            for (chat_id, generation) in &claims {
                statements.push((
                    claim.clone(),
                    vec![
                        Box::new((*chat_id).to_owned()),
                        Box::new(as_i64(*generation)),
                    ],
                ));
            }
        }
        let mut tenants = Vec::new();
        for write in groups.iter().flatten() {
            if let Write::GlobalSettings { tenant, .. } = write {
                tenants.push(tenant.clone());
            }
            if let Some((sql, params)) = statement(write)? {
                statements.push((tx.prepare_cached(sql).await.map_err(pg_err)?, params));
            }
        }
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = statements
            .iter()
            .map(|(_, params)| params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect())
            .collect();
        let answers = futures_util::future::try_join_all(
            statements
                .iter()
                .zip(&params)
                .map(|((statement, _), params)| tx.query(statement, params)),
        )
        .await
        .map_err(pg_err)?;
        let mut hint = Hint {
            replica: self.replica.clone(),
            tenants,
            ..Hint::default()
        };
        for ((chat_id, _), rows) in claims.iter().zip(&answers) {
            let Some(row) = rows.first() else {
                return Err(StoreError::Conflict((*chat_id).to_owned()));
            };
            hint.chats.push(((*chat_id).to_owned(), as_u64(row.get(0))));
        }
        if !hint.chats.is_empty() || !hint.tenants.is_empty() {
            for payload in hint.encode()? {
                tx.execute("SELECT pg_notify($1, $2)", &[&self.channel, &payload])
                    .await
                    .map_err(pg_err)?;
            }
        }
        tx.commit().await.map_err(pg_err)
    }

    async fn strings(&self, sql: &str) -> Result<Vec<String>, StoreError> {
        let client = self.client().await?;
        let rows = client.query(sql, &[]).await.map_err(pg_err)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn pairs<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let client = self.client().await?;
        let rows = client.query(sql, &[]).await.map_err(pg_err)?;
        rows.iter()
            .map(|r| Ok((r.get::<_, String>(0), from_json(r.get(1))?)))
            .collect()
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Dropping a runtime waits for its tasks, which is not allowed
        // where the last store handle may go (an async task).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Store for PgStore {
    fn shared(&self) -> bool {
        true
    }

    fn changes(&self) -> Option<mpsc::UnboundedReceiver<Change>> {
        match self.changes.lock() {
            Ok(mut changes) => changes.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        self.block(self.commit_async(groups))
    }

    fn load(&self, chat_id: &str) -> Result<LoadedChat, StoreError> {
        self.block(self.load_async(chat_id))
    }

    fn load_chat(&self, chat_id: &str) -> Result<Option<StoredChat>, StoreError> {
        self.load(chat_id).map(|loaded| loaded.chat)
    }

    fn load_chat_settings(&self, chat_id: &str) -> Result<Option<ChatSettings>, StoreError> {
        self.load(chat_id).map(|loaded| loaded.settings)
    }

    fn all_chat_settings(&self) -> Result<Vec<(String, ChatSettings)>, StoreError> {
        self.block(self.pairs("SELECT chat_id, body FROM chat_settings ORDER BY chat_id"))
    }

    fn load_global_settings(&self) -> Result<Vec<(String, SettingsPatch)>, StoreError> {
        let rows: Vec<(String, SettingsPatch)> = self.block(self.pairs(
            "SELECT key, value FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%'",
        ))?;
        Ok(rows
            .into_iter()
            .map(|(key, patch)| {
                let tenant = key.strip_prefix("global_settings:").unwrap_or("");
                (tenant.to_owned(), patch)
            })
            .collect())
    }

    fn load_global_settings_versioned(
        &self,
    ) -> Result<Vec<(String, SettingsPatch, u64)>, StoreError> {
        self.block(self.global_settings_async())
    }

    fn chat_ids(&self) -> Result<Vec<String>, StoreError> {
        self.block(self.strings("SELECT chat_id FROM chats ORDER BY chat_id"))
    }

    fn chats_needing_refresh(&self) -> Result<Vec<String>, StoreError> {
        self.block(self.strings("SELECT chat_id FROM chats WHERE needs_refresh ORDER BY chat_id"))
    }

    fn chats_owing_refresh_quiet_for(&self, quiet_ms: i64) -> Result<Vec<String>, StoreError> {
        self.block(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT c.chat_id FROM chats c LEFT JOIN chat_clock k USING (chat_id)
                     WHERE c.needs_refresh
                       AND coalesce(k.changed_at, '-infinity') < now() - $1 * interval '1 millisecond'
                     ORDER BY c.chat_id",
                    &[&(quiet_ms as f64)],
                )
                .await
                .map_err(pg_err)?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn changed_since(
        &self,
        since_ms: Option<i64>,
    ) -> Result<(Vec<(String, u64)>, i64), StoreError> {
        self.block(async {
            let client = self.client().await?;
            let now: i64 = client
                .query_one("SELECT (extract(epoch FROM now()) * 1000)::bigint", &[])
                .await
                .map_err(pg_err)?
                .get(0);
            let Some(since_ms) = since_ms else {
                return Ok((Vec::new(), now));
            };
            let rows = client
                .query(
                    "SELECT chat_id, generation FROM chat_clock
                     WHERE changed_at >= to_timestamp($1::bigint / 1000.0)",
                    &[&since_ms],
                )
                .await
                .map_err(pg_err)?;
            let changed = rows
                .iter()
                .map(|r| (r.get::<_, String>(0), as_u64(r.get(1))))
                .collect();
            Ok((changed, now))
        })
    }

    fn generations(&self, chat_ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        if chat_ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids = chat_ids.to_vec();
        self.block(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT chat_id, generation FROM chat_clock WHERE chat_id = ANY($1)",
                    &[&ids],
                )
                .await
                .map_err(pg_err)?;
            Ok(rows
                .iter()
                .map(|r| (r.get::<_, String>(0), as_u64(r.get(1))))
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for good in ["recapd", "_x", "rt_0af3", &"a".repeat(48)] {
            assert!(check_schema(good).is_ok(), "{good}");
        }
        for bad in ["", "Recapd", "1abc", "a-b", "a\"b", "a b", &"a".repeat(49)] {
            assert!(check_schema(bad).is_err(), "{bad}");
        }
    }
}
