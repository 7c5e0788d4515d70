//! The embedded store's writing side: groups made ready by their callers,
//! and the commit thread that executes them.
//!
//! Every write of the process passes through the one commit thread in
//! turn (SQLite has one writer), so the thread does only what must be
//! serial: bind, step, commit and sync. What can be done before, by each
//! caller on its own worker, is: [`EncodedGroup::encode`] turns a group's
//! rows into their JSON bodies before the group is queued, and the group
//! goes back to its caller with the answer to be freed there (see
//! `group_commit`). The rows most writes touch (messages, the chat's row,
//! its activity, running-recap versions, jobs) use [`Statements`] prepared
//! once for the thread's life rather than rusqlite's statement cache, which
//! looks each statement up by its text.

use std::borrow::Cow;

use rusqlite::{CachedStatement, Connection, Statement, Transaction, params};
use serde::Serialize;

use super::{db_err, jobs, lifecycle, lorebooks, recall};
use crate::domain::ids::ChatKey;
use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::store::group_commit::{self, Group};
use crate::store::{StoreError, Write, to_json};

/// How long the checkpoint after a batch that deleted a chat waits for a
/// busy reader before it gives up until later (the batch's callers wait
/// for it).
const CHECKPOINT_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// How long a checkpoint still owed waits for a busy reader when it is
/// tried again after a later batch.
const CHECKPOINT_RETRY_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// How often a checkpoint still owed is tried again, at most: under a
/// steady stream of reads every try may fail, and each one holds up a
/// batch.
const CHECKPOINT_RETRY_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the writing connection waits for a lock (`busy_timeout`).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A caller's all-or-nothing group, with the JSON body of each row it
/// puts serialised by the caller ([`EncodedGroup::encode`]): what the
/// embedded store's commit loop takes.
pub(super) struct EncodedGroup {
    writes: Vec<Write>,
    /// `bodies[i]` is the body of `writes[i]`'s row, when it has one.
    bodies: Vec<Option<String>>,
}

impl EncodedGroup {
    /// Serialises the body of each row `writes` put (on the caller's
    /// worker: the commit thread only binds them). The writes stay where
    /// they are. A value that cannot be serialised fails the group before
    /// it is queued, as it would have failed its transaction.
    pub(super) fn encode(writes: Vec<Write>) -> Result<EncodedGroup, StoreError> {
        let bodies = writes.iter().map(body_of).collect::<Result<_, _>>()?;
        Ok(EncodedGroup { writes, bodies })
    }

    /// The group's writes, in order, each with its row's body when the
    /// caller serialised one.
    fn encoded(&self) -> impl Iterator<Item = Encoded<'_>> {
        self.writes
            .iter()
            .zip(&self.bodies)
            .map(|(write, body)| Encoded {
                write,
                body: body.as_deref(),
            })
    }
}

impl Group for EncodedGroup {
    fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    fn goes_alone(&self) -> bool {
        group_commit::replaces_a_chat(&self.writes)
    }
}

/// One write of an [`EncodedGroup`], with its row's body.
struct Encoded<'a> {
    write: &'a Write,
    body: Option<&'a str>,
}

impl Encoded<'_> {
    /// The body of this write's row: the one serialised by the caller, or,
    /// for a write whose body was not, `value` serialised now.
    fn body<T: Serialize>(
        &self,
        what: &'static str,
        value: &T,
    ) -> Result<Cow<'_, str>, StoreError> {
        match self.body {
            Some(body) => Ok(Cow::Borrowed(body)),
            None => to_json(what, value).map(Cow::Owned),
        }
    }
}

/// The JSON body of the row `write` puts, when it puts one with a body.
/// Every write is named, so a new one is a decision here.
fn body_of(write: &Write) -> Result<Option<String>, StoreError> {
    let body = match write {
        Write::Chat { meta, .. } => to_json("chat row", meta)?,
        Write::Message { message, .. } => to_json("message", message)?,
        Write::Recap { version, .. } => to_json("running recap", version)?,
        Write::GlobalSettings { patch, .. } => to_json("global settings", patch)?,
        Write::Profiles { profiles, .. } => to_json("profiles", profiles)?,
        Write::ChatSettings { settings, .. } => to_json("chat settings", settings)?,
        Write::Job { job, .. } => to_json("job", job)?,
        // A whole chat's rows are serialised one at a time by the commit
        // thread: a large import is never held serialised whole.
        Write::ReplaceChat { .. }
        | Write::Claim { .. }
        | Write::DeleteMessage { .. }
        | Write::DeleteRecap { .. }
        | Write::AllChatsOweRefresh { .. }
        | Write::DeleteChat { .. }
        | Write::Activity { .. }
        | Write::PurgeJobs { .. }
        | Write::Lorebook(_)
        | Write::LorebookEntry(_)
        | Write::DeleteLorebook(_)
        | Write::RecallVectors { .. } => return Ok(None),
    };
    Ok(Some(body))
}

const PUT_MESSAGE: &str = "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
     VALUES (?1, ?2, ?3, ?4, ?5)
     ON CONFLICT (tenant, chat_id, message_id) DO UPDATE SET seq = ?4, body = ?5";

const PUT_CHAT: &str =
    "INSERT INTO chats (tenant, chat_id, needs_refresh, body) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (tenant, chat_id) DO UPDATE SET needs_refresh = ?3, body = ?4";

const PUT_RECAP: &str =
    "INSERT INTO recaps (tenant, chat_id, version, body) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (tenant, chat_id, version) DO UPDATE SET body = ?4";

/// The writing connection's statements for the rows most groups write,
/// prepared once for the commit thread's life. A statement survives
/// transactions, checkpoints and failed steps (it is reset after each
/// use); SQLite prepares it again by itself if the schema changes.
pub(super) struct Statements<'c> {
    message: Statement<'c>,
    chat: Statement<'c>,
    activity: Statement<'c>,
    recap: Statement<'c>,
    job: Statement<'c>,
}

impl<'c> Statements<'c> {
    fn prepare(conn: &'c Connection) -> Result<Statements<'c>, StoreError> {
        let prepare = |sql| {
            conn.prepare(sql)
                .map_err(db_err("preparing the writing statements"))
        };
        Ok(Statements {
            message: prepare(PUT_MESSAGE)?,
            chat: prepare(PUT_CHAT)?,
            activity: prepare(lifecycle::PUT_ACTIVITY)?,
            recap: prepare(PUT_RECAP)?,
            job: prepare(jobs::PUT_JOB)?,
        })
    }
}

/// Runs one held statement with `values`.
pub(super) fn run(
    statement: &mut Statement<'_>,
    values: impl rusqlite::Params,
) -> Result<(), StoreError> {
    statement
        .execute(values)
        .map(drop)
        .map_err(db_err("writing a row"))
}

/// Runs `sql` (from rusqlite's statement cache) with `values`.
pub(super) fn execute(
    tx: &Transaction<'_>,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<(), StoreError> {
    tx.prepare_cached(sql)
        .and_then(|mut statement: CachedStatement<'_>| statement.execute(values))
        .map(drop)
        .map_err(db_err("writing a row"))
}

/// The commit thread: serves the queue until it is closed (or the store
/// dropped), checkpointing the WAL after each batch that deleted a chat,
/// and once more at the end, before the store's `close` returns.
pub(super) fn commit_loop(
    writer: Connection,
    requests: group_commit::CommitRequests<EncodedGroup>,
) {
    // Prepared at the first batch; a failure fails that batch and is tried
    // again at the next.
    let mut statements: Option<Statements<'_>> = None;
    // A checkpoint after a deletion that could not finish is retried after
    // a later batch, at most every CHECKPOINT_RETRY_EVERY, until one does.
    let mut owed_since_try: Option<std::time::Instant> = None;
    group_commit::run_blocking(requests, |groups| {
        let held = match &mut statements {
            Some(held) => held,
            None => statements.insert(Statements::prepare(&writer)?),
        };
        commit(&writer, held, groups)?;
        let wait = if groups
            .iter()
            .any(|group| lifecycle::deletes_a_chat(&group.writes))
        {
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
    drop(statements);
    lifecycle::checkpoint_logged(&writer, "closing the store");
    drop(writer);
}

/// One batch in one transaction on the writing connection (the only
/// connection that writes, on the only thread that uses it, so the
/// transaction needs no exclusive borrow: the held statements share it).
fn commit(
    conn: &Connection,
    statements: &mut Statements<'_>,
    groups: &[EncodedGroup],
) -> Result<(), StoreError> {
    let tx = conn
        .unchecked_transaction()
        .map_err(db_err("beginning a commit"))?;
    for encoded in groups.iter().flat_map(EncodedGroup::encoded) {
        apply(&tx, statements, &encoded)?;
    }
    tx.commit().map_err(db_err("committing"))
}

fn put_message(
    statements: &mut Statements<'_>,
    chat: &ChatKey,
    seq: i64,
    message: &Message,
    body: &str,
) -> Result<(), StoreError> {
    run(
        &mut statements.message,
        params![chat.tenant.name(), chat.id, message.id.as_str(), seq, body],
    )
}

fn put_recap(
    statements: &mut Statements<'_>,
    chat: &ChatKey,
    version: &RecapVersion,
    body: &str,
) -> Result<(), StoreError> {
    run(
        &mut statements.recap,
        params![chat.tenant.name(), chat.id, version.version, body],
    )
}

fn apply(
    tx: &Transaction<'_>,
    statements: &mut Statements<'_>,
    encoded: &Encoded<'_>,
) -> Result<(), StoreError> {
    match encoded.write {
        // One process writes a data directory: nobody else can move a chat.
        Write::Claim { .. } => Ok(()),
        Write::Job { job, expect_fence } => jobs::put_job(
            tx,
            &mut statements.job,
            job,
            &encoded.body("job", job)?,
            *expect_fence,
        ),
        Write::PurgeJobs { finished_before_us } => jobs::purge_jobs(tx, *finished_before_us),
        Write::Lorebook(put) => lorebooks::put_lorebook(tx, put),
        Write::LorebookEntry(put) => lorebooks::put_lorebook_entry(tx, put),
        Write::DeleteLorebook(delete) => lorebooks::delete_lorebook(tx, delete),
        Write::DeleteChat { chat, tombstone } => lifecycle::delete_chat(tx, chat, tombstone),
        Write::Activity {
            chat,
            message_count,
            updated_us,
        } => lifecycle::put_activity(&mut statements.activity, chat, *message_count, *updated_us),
        Write::Chat { chat, meta } => run(
            &mut statements.chat,
            params![
                chat.tenant.name(),
                chat.id,
                meta.needs_refresh,
                encoded.body("chat row", meta)?
            ],
        ),
        Write::Message { chat, seq, message } => put_message(
            statements,
            chat,
            *seq,
            message,
            &encoded.body("message", message)?,
        ),
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
                put_message(
                    statements,
                    chat,
                    seq,
                    message,
                    &to_json("message", message)?,
                )?;
            }
            for version in content.0.recaps().versions() {
                put_recap(
                    statements,
                    chat,
                    version,
                    &to_json("running recap", version)?,
                )?;
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
        Write::Recap { chat, version } => put_recap(
            statements,
            chat,
            version,
            &encoded.body("running recap", version)?,
        ),
        Write::DeleteRecap { chat, version } => execute(
            tx,
            "DELETE FROM recaps WHERE tenant = ?1 AND chat_id = ?2 AND version = ?3",
            params![chat.tenant.name(), chat.id, version],
        ),
        Write::GlobalSettings { tenant, patch } => execute(
            tx,
            "INSERT INTO global_settings (tenant, body) VALUES (?1, ?2)
             ON CONFLICT (tenant) DO UPDATE SET body = ?2",
            params![tenant.name(), encoded.body("global settings", patch)?],
        ),
        Write::Profiles { tenant, profiles } => execute(
            tx,
            "INSERT INTO profiles (tenant, body) VALUES (?1, ?2)
             ON CONFLICT (tenant) DO UPDATE SET body = ?2",
            params![tenant.name(), encoded.body("profiles", profiles)?],
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
                encoded.body("chat settings", settings)?
            ],
        ),
    }
}

/// `groups` encoded and committed as one batch, as the commit thread does
/// (for tests that drive the writing connection directly).
#[cfg(test)]
pub(super) fn commit_groups(
    conn: &mut Connection,
    groups: &[Vec<Write>],
) -> Result<(), StoreError> {
    let encoded = groups
        .iter()
        .map(|group| EncodedGroup::encode(group.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut statements = Statements::prepare(conn)?;
    commit(conn, &mut statements, &encoded)
}
