//! The embedded store: SQLite in WAL mode with `synchronous=FULL`, through
//! rusqlite's bundled build, so a commit that returned survives `kill -9`
//! and power loss, and no database server is needed.
//!
//! rusqlite blocks, so the store keeps its database calls off the async
//! workers: commits run on a thread of their own that owns the writing
//! connection (the group commit loop), and reads run in turn on a reading
//! thread that owns a second connection, which WAL lets read while a write
//! is in progress. Layout: `schema` creates and upgrades the database
//! file, `writes` makes groups ready and runs the commit thread,
//! `chat_rows` loads a chat, `jobs` holds the job queue's queries,
//! `lifecycle` deletes and lists chats and erases what deletions removed
//! (WAL checkpoints after deletions, at close and at start-up).

use std::path::Path;

use rusqlite::{Connection, params};

use super::group_commit::{self, CommitQueue};
use super::{
    ChatListing, ChatSettings, ChatStore, JobQuery, LoadedChat, LorebookListing, StoreError,
    StoredLorebook, TenantSettings, Write, from_json,
};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobLane};
use crate::domain::recall::StoredVector;
use crate::domain::time::UnixMicros;
use writes::EncodedGroup;

mod chat_rows;
mod jobs;
mod lifecycle;
mod lorebooks;
mod recall;
mod schema;
mod writes;

use chat_rows::{ChatRows, Fetched};
use schema::open_writer;
// What the store's tests (`tests`, and the modules under it, which import
// this module whole) write rows with.
#[cfg(test)]
use {
    crate::domain::{message::Message, recaps::RecapVersion},
    writes::commit_groups as commit,
};

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "recapd.sqlite3";

/// SQLite-backed [`ChatStore`].
pub struct SqliteStore {
    commits: CommitQueue<EncodedGroup>,
    /// Completes (its sender dropped) once the commit thread, its queue
    /// closed, has checkpointed the WAL and closed the writing connection.
    checkpointed: tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
    /// The reading thread's queue: each read runs there, in turn, on the
    /// reading connection.
    reads: std::sync::mpsc::Sender<Read>,
}

/// One read, run on the reading thread.
type Read = Box<dyn FnOnce(&Connection) + Send>;

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteStore")
    }
}

fn db_err(context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError {
    move |e| StoreError::database(context, e)
}

impl SqliteStore {
    /// Opens (creating when needed, upgrading an older schema) the database
    /// in `data_dir`, which must exist, and starts its commit thread. With
    /// `fsync_every_commit` (`synchronous=FULL`) a commit that returned
    /// survives power loss; without it (`synchronous=NORMAL`) it survives a
    /// crash of the process but maybe not of the machine.
    pub async fn open(
        data_dir: &Path,
        fsync_every_commit: bool,
    ) -> Result<SqliteStore, StoreError> {
        let path = data_dir.join(DB_FILE);
        let (writer, reader) = tokio::task::spawn_blocking(move || {
            let writer = open_writer(&path, fsync_every_commit)?;
            let reader = Connection::open(&path).map_err(db_err("opening the database"))?;
            reader
                .execute_batch("PRAGMA busy_timeout=5000;")
                .map_err(db_err("opening the database"))?;
            Ok::<_, StoreError>((writer, reader))
        })
        .await
        .map_err(join_error)??;
        let (commits, requests) = group_commit::queue();
        let (checkpointed_tx, checkpointed) = tokio::sync::oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("recapd-commit".into())
            .spawn(move || {
                writes::commit_loop(writer, requests);
                drop(checkpointed_tx);
            })
            .map_err(|e| StoreError::database("starting the commit thread", e))?;
        // One thread reads, on the one reading connection. What it
        // allocates is short-lived (rows as text; a chat is decoded by the
        // caller, see `chat_rows`), so its allocator pool stays small and
        // is reused read after read.
        let (reads, queue) = std::sync::mpsc::channel::<Read>();
        std::thread::Builder::new()
            .name("recapd-read".into())
            .spawn(move || {
                for read in queue {
                    read(&reader);
                }
            })
            .map_err(|e| StoreError::database("starting the reading thread", e))?;
        Ok(SqliteStore {
            commits,
            checkpointed: tokio::sync::Mutex::new(Some(checkpointed)),
            reads,
        })
    }

    /// Runs `read` on the reading thread, off the async workers. A panic in
    /// it fails this read only.
    async fn read<T: Send + 'static>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Read = Box::new(move |conn| {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(conn)))
                .unwrap_or_else(|panic| Err(StoreError::from_panic(&*panic)));
            // The caller may have gone away (a cancelled call).
            let _ = answer.send(result);
        });
        self.reads.send(job).map_err(|_| StoreError::Closed)?;
        answered.await.map_err(|_| StoreError::Closed)?
    }
}

/// The error for a blocking task that did not finish: it panicked, or the
/// runtime is shutting down.
fn join_error(error: tokio::task::JoinError) -> StoreError {
    match error.try_into_panic() {
        Ok(panic) => StoreError::from_panic(&*panic),
        Err(_) => StoreError::Closed,
    }
}

/// The chat keys a query over `chats` answers (columns tenant, chat_id).
fn chat_keys(
    conn: &Connection,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<Vec<ChatKey>, StoreError> {
    let listing = db_err("listing chats");
    let mut stmt = conn.prepare_cached(sql).map_err(&listing)?;
    let rows = stmt
        .query_map(values, |r| {
            Ok(ChatKey {
                tenant: Tenant(r.get(0)?),
                id: r.get(1)?,
            })
        })
        .map_err(&listing)?;
    rows.map(|r| r.map_err(&listing)).collect()
}

#[async_trait::async_trait]
impl ChatStore for SqliteStore {
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.commits.commit(EncodedGroup::encode(writes)?).await
    }

    async fn recall_vectors(&self, chat: &ChatKey) -> Result<Vec<StoredVector>, StoreError> {
        let key = chat.clone();
        self.read(move |conn| recall::vectors_of(conn, &key)).await
    }

    async fn load(&self, chat: &ChatKey) -> Result<LoadedChat, StoreError> {
        let key = chat.clone();
        let fetched = self
            .read(move |conn| {
                // One read transaction: every row of the chat, its settings and
                // its jobs as of one commit.
                let reading = db_err("reading a chat");
                let tx = conn.unchecked_transaction().map_err(&reading)?;
                let rows = ChatRows::read(&tx, &key)?;
                tx.commit().map_err(&reading)?;
                // A big chat is decoded here: its decoding would hold an async
                // worker for as long as a blocking call (see `chat_rows`).
                if rows.is_big() {
                    rows.decode().map(|chat| Fetched::Decoded(Box::new(chat)))
                } else {
                    Ok(Fetched::Rows(rows))
                }
            })
            .await?;
        match fetched {
            Fetched::Decoded(loaded) => Ok(*loaded),
            // A panic while decoding fails this load only, as on the
            // reading thread.
            Fetched::Rows(rows) => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rows.decode()))
                    .unwrap_or_else(|panic| Err(StoreError::from_panic(&*panic)))
            }
        }
    }

    async fn job(&self, tenant: &Tenant, job_id: &str) -> Result<Option<Job>, StoreError> {
        let (tenant, job_id) = (tenant.clone(), job_id.to_owned());
        self.read(move |conn| jobs::job(conn, &tenant, &job_id))
            .await
    }

    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
        let query = query.clone();
        self.read(move |conn| jobs::list_jobs(conn, &query)).await
    }

    async fn runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&ChatKey>,
        lane: JobLane,
    ) -> Result<Vec<Job>, StoreError> {
        let after = after.cloned();
        self.read(move |conn| jobs::runnable_jobs(conn, now_us, limit, after.as_ref(), lane))
            .await
    }

    async fn next_job_due(
        &self,
        after_us: UnixMicros,
        lane: JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        self.read(move |conn| jobs::next_job_due(conn, after_us, lane))
            .await
    }

    async fn lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<StoredLorebook>, StoreError> {
        let (tenant, name) = (tenant.clone(), name.to_owned());
        self.read(move |conn| lorebooks::lorebook(conn, &tenant, &name))
            .await
    }

    async fn lorebook_versions(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, u64)>, StoreError> {
        let (tenant, names) = (tenant.clone(), names.to_vec());
        self.read(move |conn| lorebooks::lorebook_versions(conn, &tenant, &names))
            .await
    }

    async fn list_lorebooks(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LorebookListing>, StoreError> {
        let (tenant, after) = (tenant.clone(), after.map(str::to_owned));
        self.read(move |conn| lorebooks::list_lorebooks(conn, &tenant, after.as_deref(), limit))
            .await
    }

    async fn lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError> {
        let tenant = tenant.clone();
        self.read(move |conn| lorebooks::lorebook_count(conn, &tenant))
            .await
    }

    async fn global_settings(&self) -> Result<Vec<TenantSettings>, StoreError> {
        self.read(|conn| {
            let reading = db_err("reading global settings");
            let mut stmt = conn
                .prepare_cached("SELECT tenant, body FROM global_settings ORDER BY tenant")
                .map_err(&reading)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(&reading)?;
            let settings = rows
                .map(|row| {
                    let (tenant, body) = row.map_err(&reading)?;
                    Ok(TenantSettings {
                        tenant: Tenant(tenant),
                        patch: from_json("global settings", &body)?,
                        ..TenantSettings::default()
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let mut stmt = conn
                .prepare_cached("SELECT tenant, body FROM profiles ORDER BY tenant")
                .map_err(&reading)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(&reading)?;
            let profiles = rows
                .map(|row| {
                    let (tenant, body) = row.map_err(&reading)?;
                    Ok((Tenant(tenant), from_json("profiles", &body)?, 0))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            Ok(super::with_profiles(settings, profiles))
        })
        .await
    }

    async fn chat_count(&self) -> Result<usize, StoreError> {
        self.read(|conn| {
            let count: i64 = conn
                .query_row("SELECT count(*) FROM chats", [], |r| r.get(0))
                .map_err(db_err("counting chats"))?;
            Ok(usize::try_from(count).unwrap_or(0))
        })
        .await
    }

    async fn chats_of(&self, tenant: &Tenant) -> Result<Vec<ChatKey>, StoreError> {
        let tenant = tenant.clone();
        self.read(move |conn| {
            chat_keys(
                conn,
                "SELECT tenant, chat_id FROM chats WHERE tenant = ?1 ORDER BY chat_id",
                params![tenant.name()],
            )
        })
        .await
    }

    async fn chat_settings_of(
        &self,
        tenant: &Tenant,
    ) -> Result<Vec<(ChatKey, ChatSettings)>, StoreError> {
        let tenant = tenant.clone();
        self.read(move |conn| {
            let reading = db_err("reading chat settings");
            let mut stmt = conn
                .prepare_cached(
                    "SELECT chat_id, body FROM chat_settings WHERE tenant = ?1 ORDER BY chat_id",
                )
                .map_err(&reading)?;
            let rows = stmt
                .query_map(params![tenant.name()], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(&reading)?;
            rows.map(|row| {
                let (id, body) = row.map_err(&reading)?;
                Ok((tenant.chat(&id), from_json("chat settings", &body)?))
            })
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
        let (tenant, after) = (tenant.clone(), after.map(str::to_owned));
        self.read(move |conn| lifecycle::list_chats(conn, &tenant, after.as_deref(), limit))
            .await
    }

    async fn quiet_chats(
        &self,
        changed_before_us: UnixMicros,
        limit: usize,
    ) -> Result<Vec<ChatKey>, StoreError> {
        self.read(move |conn| lifecycle::quiet_chats(conn, changed_before_us, limit))
            .await
    }

    async fn chats_owing_refresh(&self) -> Result<Vec<ChatKey>, StoreError> {
        self.read(|conn| {
            chat_keys(
                conn,
                "SELECT tenant, chat_id FROM chats WHERE needs_refresh ORDER BY tenant, chat_id",
                [],
            )
        })
        .await
    }

    /// Also checkpoints the WAL into the database file before it returns,
    /// so that a clean stop leaves no deleted chat's rows in the WAL.
    async fn close(&self) {
        self.commits.close().await;
        // Held while waiting: a second caller returns once it is done too.
        let mut checkpointed = self.checkpointed.lock().await;
        if let Some(done) = checkpointed.take() {
            let _ = done.await;
        }
    }
}

#[cfg(test)]
mod tests;
