//! The commit side of the shared store: one transaction per batch of the
//! group commit, its statements pipelined. A batch takes its locks first,
//! in an order every batch shares: the rows of the jobs it writes (their
//! fences checked, [`jobs::check_fences`]) and of the jobs of the chats it
//! deletes, then the clocks it claims; its other writes follow in the order
//! of its groups (whole chats, [`Write::ReplaceChat`], last).

use deadpool_postgres::Pool;
use tokio_postgres::Statement;
use tokio_postgres::types::ToSql;

use super::hint::Hint;
use super::writes::{Param, claim, statement};
use super::{as_i64, as_u64, bounded, jobs, pg_err, pool_err, replace};
use crate::domain::ids::{ChatKey, ClaimKey};
use crate::store::group_commit::BatchCommit;
use crate::store::{StoreError, Write};

/// Statements pipelined in one step of a commit, each step bounded by the
/// call limit: a batch of any size makes progress, and a dead connection
/// still fails it within the limit.
const STATEMENTS_PER_STEP: usize = 2_000;

/// The commit side of the store, owned by its group commit task.
pub(super) struct PgCommitter {
    /// The store's connections.
    pub(super) pool: Pool,
    /// This process's name in notifications, so it skips its own.
    pub(super) replica: String,
    /// The notification channel (one per schema).
    pub(super) channel: String,
}

#[async_trait::async_trait]
impl BatchCommit for PgCommitter {
    async fn commit_batch(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        // A large batch (a whole chat of hundreds of MB, a chat_changed of
        // 200,000 messages) may take longer than one call's bound on a busy
        // machine: each step of its transaction is bounded instead, so a
        // dead connection still fails the commit within the bound.
        self.commit(groups).await
    }
}

impl PgCommitter {
    /// One transaction for the whole batch. Its statements are pipelined
    /// (sent together, answered in order) rather than one round trip each.
    async fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        let mut client = bounded(async { self.pool.get().await.map_err(pool_err) }).await?;
        let tx = bounded(async {
            client
                .transaction()
                .await
                .map_err(pg_err("beginning a commit"))
        })
        .await?;
        // Claims first (after the jobs' rows), in key order, so two batches
        // lock clocks in the same order and cannot deadlock; a stable sort
        // keeps one chat's groups in their order.
        let mut claims: Vec<(&ClaimKey, u64)> = groups
            .iter()
            .flatten()
            .filter_map(|w| match w {
                Write::Claim { key, clock } => Some((key, *clock)),
                _ => None,
            })
            .collect();
        claims.sort_by(|a, b| a.0.cmp(b.0));
        let mut statements: Vec<(Statement, Vec<Param>)> = Vec::new();
        // The jobs' rows before anything else: their fences are checked
        // before any claim or write counts.
        let job_lock = jobs::lock_jobs(groups);
        let locks_jobs = job_lock.is_some();
        if let Some((sql, params)) = job_lock {
            let prepared = bounded(async {
                tx.prepare_cached(sql)
                    .await
                    .map_err(pg_err("preparing a job lock"))
            })
            .await?;
            statements.push((prepared, params));
        }
        for (key, clock) in &claims {
            let (sql, params) = claim(key, as_i64(*clock));
            let prepared = bounded(async {
                tx.prepare_cached(sql)
                    .await
                    .map_err(pg_err("preparing a claim"))
            })
            .await?;
            statements.push((prepared, params));
        }
        let mut tenants = Vec::new();
        // The statements that answer a row only when applied (a lorebook's
        // version checked), with the book each names.
        let mut conditional: Vec<(usize, &str)> = Vec::new();
        // Whole chats are written last (below): the recall vectors written
        // after a chat's replacement in the batch's order (a branch's) are
        // written after it too, or the replacement would remove them.
        let mut replaced: Vec<&ChatKey> = Vec::new();
        for write in groups.iter().flatten() {
            match write {
                Write::ReplaceChat { chat, .. } => replaced.push(chat),
                Write::RecallVectors { chat, .. } if replaced.contains(&chat) => continue,
                _ => {}
            }
            if let Write::GlobalSettings { tenant, .. } | Write::Profiles { tenant, .. } = write {
                tenants.push(tenant.name().to_owned());
            }
            match write {
                Write::Lorebook(put) => conditional.push((statements.len(), &put.name)),
                Write::LorebookEntry(put) => conditional.push((statements.len(), &put.name)),
                Write::DeleteLorebook(delete) => {
                    conditional.push((statements.len(), &delete.name));
                }
                _ => {}
            }
            if let Some((sql, params)) = statement(write)? {
                let prepared = bounded(async {
                    tx.prepare_cached(sql)
                        .await
                        .map_err(pg_err("preparing a write"))
                })
                .await?;
                statements.push((prepared, params));
            }
        }
        let params: Vec<Vec<&(dyn ToSql + Sync)>> = statements
            .iter()
            .map(|(_, params)| params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect())
            .collect();
        let pending: Vec<_> = statements.iter().zip(&params).collect();
        let mut answers = Vec::with_capacity(pending.len());
        for step in pending.chunks(STATEMENTS_PER_STEP) {
            let rows = bounded(async {
                futures_util::future::try_join_all(
                    step.iter()
                        .map(|((statement, _), params)| tx.query(statement, params)),
                )
                .await
                .map_err(pg_err("writing rows"))
            })
            .await?;
            answers.extend(rows);
        }
        for (at, name) in conditional {
            if answers.get(at).is_none_or(Vec::is_empty) {
                return Err(StoreError::LorebookChanged(name.to_owned()));
            }
        }
        let mut hint = Hint {
            replica: self.replica.clone(),
            tenants,
            ..Hint::default()
        };
        let mut answers = answers.into_iter();
        if locks_jobs {
            let locked = answers.next().unwrap_or_default();
            jobs::check_fences(groups, &locked)?;
        }
        for ((key, _), rows) in claims.iter().zip(answers) {
            let Some(row) = rows.first() else {
                return Err(StoreError::Conflict((*key).clone()));
            };
            if let ClaimKey::Chat(chat) = key {
                hint.chats.push((
                    chat.tenant.name().to_owned(),
                    chat.id.clone(),
                    as_u64(row.get(0)),
                ));
            }
        }
        let writes: Vec<&Write> = groups.iter().flatten().collect();
        for (at, write) in writes.iter().enumerate() {
            if let Write::ReplaceChat { chat, content } = write {
                // Written last, a whole chat would outlive a deletion of it
                // later in the batch: the deletion has the last word.
                let deleted_later = writes[at + 1..]
                    .iter()
                    .any(|w| matches!(w, Write::DeleteChat { chat: gone, .. } if gone == chat));
                if !deleted_later {
                    replace::replace_chat(&tx, chat, &content.0).await?;
                    for vectors in writes[at + 1..].iter().filter(
                        |w| matches!(w, Write::RecallVectors { chat: of, .. } if of == chat),
                    ) {
                        if let Some((sql, params)) = statement(vectors)? {
                            let params: Vec<&(dyn ToSql + Sync)> =
                                params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
                            bounded(async {
                                tx.execute(sql, &params)
                                    .await
                                    .map_err(pg_err("writing a branch's recall vectors"))
                            })
                            .await?;
                        }
                    }
                }
            }
        }
        if !hint.chats.is_empty() || !hint.tenants.is_empty() {
            for payload in hint.encode()? {
                bounded(async {
                    tx.execute("SELECT pg_notify($1, $2)", &[&self.channel, &payload])
                        .await
                        .map_err(pg_err("notifying other replicas"))
                })
                .await?;
            }
        }
        bounded(async { tx.commit().await.map_err(pg_err("committing")) }).await
    }
}
