//! The shared store: PostgreSQL, for several recapd replicas serving the same
//! chats. Rows are the embedded store's (JSON bodies in text columns, keyed
//! by tenant and chat) plus a per-chat clock, `chat_clock`, and a per-tenant
//! clock for global settings, `settings_clock`, whose values every
//! commit claims ([`Write::Claim`]): the database, not a replica's memory,
//! decides the order of a chat's changes. Each committed batch sends one
//! `NOTIFY` in its own transaction, naming the chats it changed; [`listen`]
//! turns other replicas' notifications into [`Change`] hints. A deleted
//! chat ([`Write::DeleteChat`]) keeps its clock, which the deletion's claim
//! moves on like any change (so other replicas re-read it and find it gone,
//! and one that read it before conflicts), and a tombstone; every other row
//! of it goes. [`listing`] reads pages of chats and the quiet ones.
//!
//! The client is tokio-postgres with a deadpool pool on the process's own
//! runtime. Commits go through the group commit loop ([`group_commit`]),
//! run as a task; every call is bounded by [`bound::OPERATION_TIMEOUT`].

mod bound;
mod commit;
mod hint;
mod jobs;
mod listen;
mod listing;
mod lorebooks;
mod migrations;
mod reads;
mod replace;
pub mod tls;
mod writes;

pub use tls::PgTls;

use crate::domain::time::{UnixMicros, UnixMillis};
use bound::{OPERATION_TIMEOUT, bounded, bounded_while_progressing};
use commit::PgCommitter;
use migrations::migrate;

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::mpsc;
use tokio_postgres::types::ToSql;

use super::group_commit::{self, CommitQueue};
use super::{
    Change, ChatListing, ChatSettings, ChatStore, JobQuery, LoadedChat, LorebookListing,
    ReplicaStore, StoreError, StoredLorebook, TenantSettings, Write, from_json,
};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobLane};
use crate::domain::recall::StoredVector;
use crate::tls_common::with_causes;

/// How long a call waits for a connection, or to open one, before it
/// fails (and the RPC answers UNAVAILABLE).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where and how to reach the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Where the database is and how to log in, parsed from a libpq-style
    /// URL (`postgres://user@host:port/database?...`). Its `Debug` hides
    /// the password. The URL's TLS parameters are in `tls`, which has set
    /// its TLS negotiation (`sslmode`).
    pub connection: tokio_postgres::Config,
    /// The TLS connector of every connection, pool and listener alike,
    /// built from the URL's `sslmode`, `sslrootcert`, `sslcert`, `sslkey`.
    pub tls: PgTls,
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

/// PostgreSQL-backed [`ChatStore`] and [`ReplicaStore`], shared by every
/// replica that names the same database and schema.
pub struct PgStore {
    pool: Pool,
    commits: CommitQueue,
    /// The feed of other replicas' commits, until taken.
    changes: parking_lot::Mutex<Option<mpsc::UnboundedReceiver<Change>>>,
    /// The listener task; stopped with the store.
    listener: tokio::task::JoinHandle<()>,
    /// This process's name in notifications.
    replica: String,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

fn pg_err(context: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::database(context, e)
}

/// A failure to get a connection, with its causes spelled out: a refused
/// TLS handshake says why (an unknown issuer, a name the certificate does
/// not carry), which tokio-postgres keeps in the error's sources only.
fn pool_err(e: deadpool_postgres::PoolError) -> StoreError {
    StoreError::database("no PostgreSQL connection", with_causes(&e))
}

fn as_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn as_u64(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// The chat key of a row whose first two columns are tenant and chat id.
fn chat_key(row: &tokio_postgres::Row) -> ChatKey {
    ChatKey {
        tenant: Tenant(row.get(0)),
        id: row.get(1),
    }
}

impl PgStore {
    /// Connects, applies the migrations the database lacks, and starts
    /// listening for other replicas' commits; returns once it listens.
    pub async fn open(options: &PgOptions) -> Result<PgStore, StoreError> {
        check_schema(&options.schema).map_err(|e| StoreError::database("schema", e))?;
        let mut config = options.connection.clone();
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
        let manager = Manager::from_config(
            config.clone(),
            options.tls.connector(),
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
            .map_err(|e| StoreError::database("building the connection pool", e))?;
        let channel = format!("recapd_{}", options.schema);
        let replica = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        // Not bounded by OPERATION_TIMEOUT: a migration that moves every row
        // of a large database takes as long as it takes (it is one
        // transaction, and replicas starting meanwhile wait for its lock).
        migrate(&pool, &options.schema).await?;
        let (feed, changes) = mpsc::unbounded_channel();
        let listening = tokio::sync::oneshot::channel();
        let listener = tokio::spawn(listen::run(
            config,
            options.tls.connector(),
            channel.clone(),
            replica.clone(),
            feed,
            listening.0,
        ));
        // Serve only once other replicas' commits are heard.
        let heard = tokio::time::timeout(CONNECT_TIMEOUT * 2, listening.1).await;
        if !matches!(heard, Ok(Ok(()))) {
            listener.abort();
            return Err(StoreError::database(
                "starting the listener",
                "could not LISTEN for other replicas' commits",
            ));
        }
        let (commits, requests) = group_commit::queue();
        tokio::spawn(group_commit::run_async(
            requests,
            PgCommitter {
                pool: pool.clone(),
                replica: replica.clone(),
                channel,
            },
        ));
        Ok(PgStore {
            pool,
            commits,
            changes: parking_lot::Mutex::new(Some(changes)),
            listener,
            replica,
        })
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        self.pool.get().await.map_err(pool_err)
    }

    async fn chat_keys(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<ChatKey>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(sql, params)
                .await
                .map_err(pg_err("listing chats"))?;
            Ok(rows.iter().map(chat_key).collect())
        })
        .await
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

#[async_trait::async_trait]
impl ChatStore for PgStore {
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.commits.commit(writes).await
    }

    async fn job(&self, tenant: &Tenant, job_id: &str) -> Result<Option<Job>, StoreError> {
        self.read_job(tenant, job_id).await
    }

    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
        self.read_jobs_page(query).await
    }

    async fn runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&ChatKey>,
        lane: JobLane,
    ) -> Result<Vec<Job>, StoreError> {
        self.read_runnable_jobs(now_us, limit, after, lane).await
    }

    async fn next_job_due(
        &self,
        after_us: UnixMicros,
        lane: JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        self.read_next_job_due(after_us, lane).await
    }

    async fn lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<StoredLorebook>, StoreError> {
        self.read_lorebook(tenant, name).await
    }

    async fn lorebook_versions(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, u64)>, StoreError> {
        self.read_lorebook_versions(tenant, names).await
    }

    async fn list_lorebooks(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LorebookListing>, StoreError> {
        self.read_lorebook_page(tenant, after, limit).await
    }

    async fn lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError> {
        self.read_lorebook_count(tenant).await
    }

    async fn recall_vectors(&self, chat: &ChatKey) -> Result<Vec<StoredVector>, StoreError> {
        // One statement: the call limit bounds the whole read, as nothing
        // counts rows as progress here (a chat's load does, row by row).
        let progress = AtomicU64::new(0);
        bounded_while_progressing(&progress, async {
            let client = self.client().await?;
            reads::vectors_of(&client, chat.tenant.name(), &chat.id).await
        })
        .await
    }

    async fn load(&self, chat: &ChatKey) -> Result<LoadedChat, StoreError> {
        // A large chat's rows may take longer than one call's bound to
        // arrive: the bound holds for the wait between two rows instead.
        let progress = AtomicU64::new(0);
        bounded_while_progressing(&progress, self.load_chat(chat, &progress)).await
    }

    async fn global_settings(&self) -> Result<Vec<TenantSettings>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT g.tenant, g.body, coalesce(k.generation, 0)
                     FROM global_settings g LEFT JOIN settings_clock k USING (tenant)
                     ORDER BY g.tenant",
                    &[],
                )
                .await
                .map_err(pg_err("reading global settings"))?;
            let settings = rows
                .iter()
                .map(|r| {
                    Ok(TenantSettings {
                        tenant: Tenant(r.get(0)),
                        patch: from_json("global settings", r.get(1))?,
                        clock: as_u64(r.get(2)),
                        ..TenantSettings::default()
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let rows = client
                .query(
                    "SELECT p.tenant, p.body, coalesce(k.generation, 0)
                     FROM profiles p LEFT JOIN settings_clock k USING (tenant)
                     ORDER BY p.tenant",
                    &[],
                )
                .await
                .map_err(pg_err("reading profiles"))?;
            let profiles = rows
                .iter()
                .map(|r| {
                    Ok((
                        Tenant(r.get(0)),
                        from_json("profiles", r.get(1))?,
                        as_u64(r.get(2)),
                    ))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            Ok(crate::store::with_profiles(settings, profiles))
        })
        .await
    }

    async fn chat_count(&self) -> Result<usize, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let count: i64 = client
                .query_one("SELECT count(*) FROM chats", &[])
                .await
                .map_err(pg_err("counting chats"))?
                .get(0);
            Ok(usize::try_from(count).unwrap_or(0))
        })
        .await
    }

    async fn chats_of(&self, tenant: &Tenant) -> Result<Vec<ChatKey>, StoreError> {
        self.chat_keys(
            "SELECT tenant, chat_id FROM chats WHERE tenant = $1 ORDER BY chat_id",
            &[&tenant.name()],
        )
        .await
    }

    async fn chat_settings_of(
        &self,
        tenant: &Tenant,
    ) -> Result<Vec<(ChatKey, ChatSettings)>, StoreError> {
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT tenant, chat_id, body FROM chat_settings WHERE tenant = $1
                     ORDER BY chat_id",
                    &[&tenant.name()],
                )
                .await
                .map_err(pg_err("reading chat settings"))?;
            rows.iter()
                .map(|r| Ok((chat_key(r), from_json("chat settings", r.get(2))?)))
                .collect()
        })
        .await
    }

    async fn list_chats(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ChatListing>, StoreError> {
        self.read_chat_page(tenant, after, limit).await
    }

    async fn quiet_chats(
        &self,
        changed_before_us: UnixMicros,
        limit: usize,
    ) -> Result<Vec<ChatKey>, StoreError> {
        self.read_quiet_chats(changed_before_us, limit).await
    }

    async fn chats_owing_refresh(&self) -> Result<Vec<ChatKey>, StoreError> {
        self.chat_keys(
            "SELECT tenant, chat_id FROM chats WHERE needs_refresh ORDER BY tenant, chat_id",
            &[],
        )
        .await
    }

    async fn close(&self) {
        self.commits.close().await;
    }
}

#[async_trait::async_trait]
impl ReplicaStore for PgStore {
    fn changes(&self) -> Option<mpsc::UnboundedReceiver<Change>> {
        self.changes.lock().take()
    }

    async fn chats_owing_refresh_quiet_for(
        &self,
        quiet: Duration,
    ) -> Result<Vec<ChatKey>, StoreError> {
        self.chat_keys(
            "SELECT c.tenant, c.chat_id FROM chats c LEFT JOIN chat_clock k USING (tenant, chat_id)
             WHERE c.needs_refresh
               AND coalesce(k.changed_at, '-infinity') < now() - $1 * interval '1 millisecond'
             ORDER BY c.tenant, c.chat_id",
            &[&(quiet.as_millis() as f64)],
        )
        .await
    }

    async fn changed_since(
        &self,
        since_ms: Option<UnixMillis>,
    ) -> Result<(Vec<(ChatKey, u64)>, UnixMillis), StoreError> {
        bounded(async {
            let client = self.client().await?;
            let now: i64 = client
                .query_one("SELECT (extract(epoch FROM now()) * 1000)::bigint", &[])
                .await
                .map_err(pg_err("reading the clock"))?
                .get(0);
            let Some(since_ms) = since_ms else {
                return Ok((Vec::new(), UnixMillis(now)));
            };
            let rows = client
                .query(
                    "SELECT tenant, chat_id, generation FROM chat_clock
                     WHERE changed_at >= to_timestamp($1::bigint / 1000.0)",
                    &[&since_ms.0],
                )
                .await
                .map_err(pg_err("listing changed chats"))?;
            let changed = rows
                .iter()
                .map(|r| (chat_key(r), as_u64(r.get(2))))
                .collect();
            Ok((changed, UnixMillis(now)))
        })
        .await
    }

    async fn clocks(&self, chats: &[ChatKey]) -> Result<Vec<(ChatKey, u64)>, StoreError> {
        if chats.is_empty() {
            return Ok(Vec::new());
        }
        let tenants: Vec<&str> = chats.iter().map(|c| c.tenant.name()).collect();
        let ids: Vec<&str> = chats.iter().map(|c| c.id.as_str()).collect();
        bounded(async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT k.tenant, k.chat_id, k.generation
                     FROM chat_clock k JOIN unnest($1::text[], $2::text[]) AS wanted (tenant, chat_id)
                       USING (tenant, chat_id)",
                    &[&tenants, &ids],
                )
                .await
                .map_err(pg_err("reading claim clocks"))?;
            Ok(rows
                .iter()
                .map(|r| (chat_key(r), as_u64(r.get(2))))
                .collect())
        })
        .await
    }
}

#[cfg(test)]
mod tests;
