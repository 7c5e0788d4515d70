//! The embedded store: SQLite in WAL mode with `synchronous=FULL`, through
//! rusqlite's bundled build, so a commit that returned survives `kill -9`
//! and power loss, and no database server is needed.
//!
//! rusqlite blocks, so the store keeps its database calls off the async
//! workers: commits run on a thread of their own that owns the writing
//! connection (the group commit loop), and reads run in turn on a reading
//! thread that owns a second connection, which WAL lets read while a write
//! is in progress. Layout: `schema` creates and upgrades the database
//! file, `chat_rows` loads a chat, `jobs` holds the job queue's queries,
//! `lifecycle` deletes and lists chats and erases what deletions removed
//! (WAL checkpoints after deletions, at close and at start-up).

use std::path::Path;

use rusqlite::{Connection, params};

use super::group_commit::{self, CommitQueue};
use super::{
    ChatListing, ChatSettings, ChatStore, JobQuery, LoadedChat, LorebookListing, StoreError,
    StoredLorebook, TenantSettings, Write, from_json, to_json,
};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobLane};
use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::domain::time::UnixMicros;

mod chat_rows;
mod jobs;
mod lifecycle;
mod lorebooks;
mod recall;
mod schema;

use chat_rows::{ChatRows, Fetched};
use schema::open_writer;

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "recapd.sqlite3";

/// SQLite-backed [`ChatStore`].
pub struct SqliteStore {
    commits: CommitQueue,
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
                commit_loop(writer, requests);
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

/// How long the checkpoint after a batch that deleted a chat waits for a
/// busy reader before it gives up until later (the batch's callers wait
/// for it).
const CHECKPOINT_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// How long a checkpoint still owed waits for a busy reader when it is
/// tried again, after a later batch (whose callers wait for it).
const CHECKPOINT_RETRY_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// How often a checkpoint still owed is tried again, at most: under a
/// steady stream of reads every try may fail, and each one holds up a
/// batch.
const CHECKPOINT_RETRY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the writing connection waits for a lock (`busy_timeout`).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The commit thread: serves the queue until it is closed (or the store
/// dropped), checkpointing the WAL after each batch that deleted a chat,
/// and once more at the end, before the store's `close` returns.
fn commit_loop(mut writer: Connection, requests: group_commit::CommitRequests) {
    // A checkpoint after a deletion that could not finish is retried after
    // a later batch, at most every CHECKPOINT_RETRY_EVERY, until one does.
    let mut owed_since_try: Option<std::time::Instant> = None;
    group_commit::run_blocking(requests, |groups| {
        commit(&mut writer, groups)?;
        let wait = if lifecycle::deletes_a_chat(groups) {
            Some(CHECKPOINT_WAIT)
        } else {
            owed_since_try
                .filter(|tried| tried.elapsed() >= CHECKPOINT_RETRY_EVERY)
                .map(|_| CHECKPOINT_RETRY_WAIT)
        };
        if let Some(wait) = wait {
            // The batch is durable: the checkpoint only erases the deleted
            // rows' older copies, and its failure fails nothing. Logged
            // once per deletion, not at every retry.
            let short = writer.busy_timeout(wait);
            let done = match lifecycle::checkpoint(&writer) {
                Ok(lifecycle::Checkpointed::Done) => true,
                Ok(lifecycle::Checkpointed::Busy) => false,
                Err(error) => {
                    tracing::warn!(%error, "the WAL checkpoint after a deletion failed; it is tried again later");
                    false
                }
            };
            if !done && owed_since_try.is_none() {
                tracing::info!(
                    "a reader kept the WAL checkpoint after a deletion from finishing; it is tried again within a second or two"
                );
            }
            owed_since_try = (!done).then(std::time::Instant::now);
            if short.is_ok() && writer.busy_timeout(BUSY_TIMEOUT).is_err() {
                tracing::warn!("could not restore the writing connection's busy timeout");
            }
        }
        Ok(())
    });
    lifecycle::checkpoint_logged(&writer, "closing the store");
    drop(writer);
}

/// One batch in one transaction on the writing connection.
fn commit(conn: &mut Connection, groups: &[Vec<Write>]) -> Result<(), StoreError> {
    let tx = conn.transaction().map_err(db_err("beginning a commit"))?;
    for write in groups.iter().flatten() {
        apply(&tx, write)?;
    }
    tx.commit().map_err(db_err("committing"))
}

fn execute(
    tx: &rusqlite::Transaction<'_>,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<(), StoreError> {
    tx.prepare_cached(sql)
        .and_then(|mut statement| statement.execute(values))
        .map(drop)
        .map_err(db_err("writing a row"))
}

fn put_message(
    tx: &rusqlite::Transaction<'_>,
    chat: &ChatKey,
    seq: i64,
    message: &Message,
) -> Result<(), StoreError> {
    execute(
        tx,
        "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (tenant, chat_id, message_id) DO UPDATE SET seq = ?4, body = ?5",
        params![
            chat.tenant.name(),
            chat.id,
            message.id.as_str(),
            seq,
            to_json("message", message)?
        ],
    )
}

fn put_recap(
    tx: &rusqlite::Transaction<'_>,
    chat: &ChatKey,
    version: &RecapVersion,
) -> Result<(), StoreError> {
    execute(
        tx,
        "INSERT INTO recaps (tenant, chat_id, version, body) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (tenant, chat_id, version) DO UPDATE SET body = ?4",
        params![
            chat.tenant.name(),
            chat.id,
            version.version,
            to_json("running recap", version)?
        ],
    )
}

fn apply(tx: &rusqlite::Transaction<'_>, write: &Write) -> Result<(), StoreError> {
    match write {
        // One process writes a data directory: nobody else can move a chat.
        Write::Claim { .. } => Ok(()),
        Write::Job { job, expect_fence } => jobs::put_job(tx, job, *expect_fence),
        Write::PurgeJobs { finished_before_us } => jobs::purge_jobs(tx, *finished_before_us),
        Write::Lorebook(put) => lorebooks::put_lorebook(tx, put),
        Write::DeleteLorebook(delete) => lorebooks::delete_lorebook(tx, delete),
        Write::DeleteChat { chat, tombstone } => lifecycle::delete_chat(tx, chat, tombstone),
        Write::Activity {
            chat,
            message_count,
            updated_us,
        } => lifecycle::put_activity(tx, chat, *message_count, *updated_us),
        Write::Chat { chat, meta } => execute(
            tx,
            "INSERT INTO chats (tenant, chat_id, needs_refresh, body) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (tenant, chat_id) DO UPDATE SET needs_refresh = ?3, body = ?4",
            params![
                chat.tenant.name(),
                chat.id,
                meta.needs_refresh,
                to_json("chat row", meta)?
            ],
        ),
        Write::Message { chat, seq, message } => put_message(tx, chat, *seq, message),
        Write::ReplaceChat { chat, content } => {
            let key = params![chat.tenant.name(), chat.id];
            execute(
                tx,
                "DELETE FROM messages WHERE tenant = ?1 AND chat_id = ?2",
                key,
            )?;
            execute(
                tx,
                "DELETE FROM recaps WHERE tenant = ?1 AND chat_id = ?2",
                key,
            )?;
            execute(
                tx,
                "DELETE FROM recall_vectors WHERE tenant = ?1 AND chat_id = ?2",
                key,
            )?;
            // One body at a time: a large chat is never serialised whole.
            for (seq, message) in content.0.messages() {
                put_message(tx, chat, seq, message)?;
            }
            for version in content.0.recaps().versions() {
                put_recap(tx, chat, version)?;
            }
            Ok(())
        }
        Write::DeleteMessage { chat, message_id } => {
            execute(
                tx,
                "DELETE FROM messages WHERE tenant = ?1 AND chat_id = ?2 AND message_id = ?3",
                params![chat.tenant.name(), chat.id, message_id],
            )?;
            recall::delete_message_vectors(tx, chat, message_id)
        }
        Write::RecallVectors {
            chat,
            vectors,
            trims,
        } => recall::put_vectors(tx, chat, vectors, trims),
        Write::Recap { chat, version } => put_recap(tx, chat, version),
        Write::DeleteRecap { chat, version } => execute(
            tx,
            "DELETE FROM recaps WHERE tenant = ?1 AND chat_id = ?2 AND version = ?3",
            params![chat.tenant.name(), chat.id, version],
        ),
        Write::GlobalSettings { tenant, patch } => execute(
            tx,
            "INSERT INTO global_settings (tenant, body) VALUES (?1, ?2)
             ON CONFLICT (tenant) DO UPDATE SET body = ?2",
            params![tenant.name(), to_json("global settings", patch)?],
        ),
        Write::AllChatsOweRefresh { tenant } => execute(
            tx,
            "UPDATE chats SET needs_refresh = 1 WHERE tenant = ?1",
            params![tenant.name()],
        ),
        Write::ChatSettings { chat, settings } => execute(
            tx,
            "INSERT INTO chat_settings (tenant, chat_id, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (tenant, chat_id) DO UPDATE SET body = ?3",
            params![
                chat.tenant.name(),
                chat.id,
                to_json("chat settings", settings)?
            ],
        ),
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
        self.commits.commit(writes).await
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
            rows.map(|row| {
                let (tenant, body) = row.map_err(&reading)?;
                Ok(TenantSettings {
                    tenant: Tenant(tenant),
                    patch: from_json("global settings", &body)?,
                    clock: 0,
                })
            })
            .collect()
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
