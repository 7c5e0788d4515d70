//! The job queue in the shared store: the `jobs` table (migration 4), the
//! SQL of its writes, the fence check of a batch, and its reads.
//!
//! A row keeps what the queries select and order by in columns of its own
//! and the whole [`Job`] as JSON in `body`; [`Job::chat`] is not in the
//! JSON and is put back from the tenant and chat columns.
//!
//! Fences are checked the way claims are: apart and first. A batch that
//! writes jobs begins by locking their rows (`SELECT ... FOR UPDATE`, in
//! job id order, so two batches lock them in the same order), which makes
//! a replica that writes one of them meanwhile wait for this transaction.
//! The fences read are then followed through the batch's writes in order
//! ([`check_fences`]): a group that expects a fence an earlier group of the
//! same batch changed is fenced, as it would be committed alone after it.

use std::collections::HashMap;

use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::writes::Param;
use super::{PgStore, bounded, pg_err};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobKind, JobLane, JobState};
use crate::domain::time::UnixMicros;
use crate::store::{JobQuery, StoreError, Write, from_json, to_json};

/// Creates or replaces a job's row.
const PUT_JOB: &str = "INSERT INTO jobs (job_id, tenant, chat_id, state, kind, created_us,
                       updated_us, not_before_us, lease_until_us, fence, body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (job_id) DO UPDATE SET
         tenant = $2, chat_id = $3, state = $4, kind = $5, created_us = $6, updated_us = $7,
         not_before_us = $8, lease_until_us = $9, fence = $10, body = $11";

/// Removes the terminal jobs ($1: their states) last changed before $2.
/// A row another transaction holds is left for the next purge rather than
/// waited for (it is being changed, and a purge is never urgent).
const PURGE_JOBS: &str = "DELETE FROM jobs WHERE job_id IN (
         SELECT job_id FROM jobs WHERE state = ANY($1::bigint[]) AND updated_us < $2
         FOR UPDATE SKIP LOCKED)";

/// Locks the rows of the jobs ($1) a batch writes, in id order, and reads
/// what [`check_fences`] follows.
const LOCK_JOBS: &str = "SELECT job_id, fence, state, updated_us, tenant, chat_id FROM jobs
     WHERE job_id = ANY($1::text[]) ORDER BY job_id FOR UPDATE";

/// [`LOCK_JOBS`] for a batch that also deletes chats ($2 tenants, $3 chat
/// ids): their jobs' rows are locked with the others, in the same order,
/// so that the deletion takes no job lock after the batch's claims.
const LOCK_JOBS_AND_DELETED: &str = "SELECT job_id, fence, state, updated_us, tenant, chat_id
     FROM jobs WHERE job_id IN (
         SELECT unnest($1::text[])
         UNION
         SELECT j.job_id FROM jobs j
         JOIN unnest($2::text[], $3::text[]) AS deleted (tenant, chat_id)
           ON j.tenant = deleted.tenant AND j.chat_id = deleted.chat_id)
     ORDER BY job_id FOR UPDATE";

/// A chat's PENDING (1) and RUNNING (2) jobs, oldest first.
pub(super) const OPEN_JOBS_OF_CHAT: &str = "SELECT tenant, chat_id, body FROM jobs
     WHERE tenant = $1 AND chat_id = $2 AND state IN (1, 2)
     ORDER BY created_us, job_id";

/// Jobs that may start at $1, one per chat (its oldest) in chat order from
/// the chat after ($3, $4), at most $2 (see
/// [`crate::store::ChatStore::runnable_jobs`]); states 1 and 2 are PENDING
/// and RUNNING. A RUNNING job without a lease counts as one whose lease
/// expired. Chats compare byte by byte (`COLLATE "C"`), whatever the
/// database's locale, so that paging visits each chat once.
const RUNNABLE_JOBS: &str = "SELECT tenant, chat_id, body FROM (
         SELECT j.tenant, j.chat_id, j.body,
                row_number() OVER (PARTITION BY j.tenant, j.chat_id
                                   ORDER BY j.created_us, j.job_id) AS nth
         FROM jobs j
         WHERE ((j.state = 1 AND j.not_before_us <= $1)
                OR (j.state = 2 AND coalesce(j.lease_until_us, 0) < $1))
           AND (j.tenant COLLATE \"C\", j.chat_id COLLATE \"C\") > ($3, $4)
           AND (j.kind = $6) = $5
           AND NOT EXISTS (
               SELECT 1 FROM jobs r
               WHERE r.state = 2 AND r.lease_until_us >= $1
                 AND r.tenant = j.tenant AND r.chat_id = j.chat_id
                 AND (r.kind = $6) = $5)
     ) AS due WHERE nth = 1
     ORDER BY tenant COLLATE \"C\", chat_id COLLATE \"C\"
     LIMIT $2";

/// The earliest time after $1 at which a PENDING (1) job is due or a
/// RUNNING (2) job's lease expires.
const NEXT_JOB_DUE: &str = "SELECT least(
         (SELECT min(not_before_us) FROM jobs
          WHERE state = 1 AND not_before_us > $1 AND (kind = $3) = $2),
         (SELECT min(lease_until_us) FROM jobs
          WHERE state = 2 AND lease_until_us > $1 AND (kind = $3) = $2))";

/// A fence as stored: the same 64 bits, read as signed (`bigint`), so that
/// distinct fences stay distinct.
fn fence_column(fence: u64) -> i64 {
    fence.cast_signed()
}

/// A count as an SQL `LIMIT`.
fn limit_column(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// The codes of the terminal states.
fn terminal_codes() -> Vec<i64> {
    JobState::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .map(JobState::code)
        .collect()
}

/// The SQL and parameters of [`Write::Job`] (its fence is checked apart,
/// by [`check_fences`]).
pub(super) fn put_job(job: &Job) -> Result<(&'static str, Vec<Param>), StoreError> {
    let params: Vec<Param> = vec![
        Box::new(job.id.clone()),
        Box::new(job.chat.tenant.name().to_owned()),
        Box::new(job.chat.id.clone()),
        Box::new(job.state.code()),
        Box::new(job.kind.code()),
        Box::new(job.created_us.0),
        Box::new(job.updated_us.0),
        Box::new(job.not_before_us.0),
        Box::new(job.lease.as_ref().map(|lease| lease.until_us.0)),
        Box::new(fence_column(job.fence)),
        Box::new(to_json("job", job)?),
    ];
    Ok((PUT_JOB, params))
}

/// The SQL and parameters of [`Write::PurgeJobs`].
pub(super) fn purge_jobs(finished_before_us: UnixMicros) -> (&'static str, Vec<Param>) {
    (
        PURGE_JOBS,
        vec![Box::new(terminal_codes()), Box::new(finished_before_us.0)],
    )
}

/// The statement that locks the rows of the jobs `groups` write, and of
/// the jobs of the chats they delete ([`Write::DeleteChat`]), first in the
/// batch; `None` when they do neither.
pub(super) fn lock_jobs(groups: &[Vec<Write>]) -> Option<(&'static str, Vec<Param>)> {
    let mut ids: Vec<String> = Vec::new();
    let mut deleted: Vec<&ChatKey> = Vec::new();
    for write in groups.iter().flatten() {
        match write {
            Write::Job { job, .. } => ids.push(job.id.clone()),
            Write::DeleteChat { chat, .. } => deleted.push(chat),
            _ => {}
        }
    }
    ids.sort_unstable();
    ids.dedup();
    if deleted.is_empty() {
        return (!ids.is_empty()).then(|| (LOCK_JOBS, vec![Box::new(ids) as Param]));
    }
    deleted.sort_unstable();
    deleted.dedup();
    let tenants: Vec<String> = deleted.iter().map(|c| c.tenant.name().to_owned()).collect();
    let chats: Vec<String> = deleted.iter().map(|c| c.id.clone()).collect();
    Some((
        LOCK_JOBS_AND_DELETED,
        vec![Box::new(ids), Box::new(tenants), Box::new(chats)],
    ))
}

/// What the fence check follows of a job's row.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    fence: i64,
    state: i64,
    updated_us: UnixMicros,
    chat: ChatKey,
}

impl Stored {
    fn of(job: &Job) -> Stored {
        Stored {
            fence: fence_column(job.fence),
            state: job.state.code(),
            updated_us: job.updated_us,
            chat: job.chat.clone(),
        }
    }
}

/// Fails with [`StoreError::Fenced`] at the first [`Write::Job`] of
/// `groups` whose expected fence is not its job's: as `locked` (the rows
/// of [`lock_jobs`]) has it, changed by the batch's earlier writes (a job
/// created, purged, or gone with its deleted chat).
pub(super) fn check_fences(groups: &[Vec<Write>], locked: &[Row]) -> Result<(), StoreError> {
    let mut stored = HashMap::new();
    for row in locked {
        let id: String = row.try_get(0).map_err(pg_err("reading a job's fence"))?;
        let found = Stored {
            fence: row.try_get(1).map_err(pg_err("reading a job's fence"))?,
            state: row.try_get(2).map_err(pg_err("reading a job's fence"))?,
            updated_us: UnixMicros(row.try_get(3).map_err(pg_err("reading a job's fence"))?),
            chat: ChatKey {
                tenant: Tenant(row.try_get(4).map_err(pg_err("reading a job's fence"))?),
                id: row.try_get(5).map_err(pg_err("reading a job's fence"))?,
            },
        };
        stored.insert(id, found);
    }
    follow_fences(groups, stored)
}

/// [`check_fences`] over the rows as read.
fn follow_fences(
    groups: &[Vec<Write>],
    mut stored: HashMap<String, Stored>,
) -> Result<(), StoreError> {
    let terminal = terminal_codes();
    for write in groups.iter().flatten() {
        match write {
            Write::Job { job, expect_fence } => {
                if let Some(expected) = expect_fence {
                    let fence = stored.get(&job.id).map(|s| s.fence);
                    if fence != Some(fence_column(*expected)) {
                        return Err(StoreError::Fenced(job.id.clone()));
                    }
                }
                stored.insert(job.id.clone(), Stored::of(job));
            }
            Write::PurgeJobs { finished_before_us } => stored.retain(|_, s| {
                !(terminal.contains(&s.state) && s.updated_us < *finished_before_us)
            }),
            // A runner that was mid-job when its chat was deleted drops
            // its result.
            Write::DeleteChat { chat, .. } => stored.retain(|_, s| s.chat != *chat),
            _ => {}
        }
    }
    Ok(())
}

/// The jobs of rows whose columns are tenant, chat_id, body.
pub(super) fn decode_jobs(rows: &[Row]) -> Result<Vec<Job>, StoreError> {
    rows.iter()
        .map(|row| {
            let reading = pg_err("reading a job");
            let mut job: Job = from_json("job", row.try_get(2).map_err(&reading)?)?;
            job.chat = ChatKey {
                tenant: Tenant(row.try_get(0).map_err(&reading)?),
                id: row.try_get(1).map_err(&reading)?,
            };
            Ok(job)
        })
        .collect()
}

impl PgStore {
    /// The jobs `sql` selects (tenant, chat_id, body), as one bounded call.
    async fn query_jobs(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Job>, StoreError> {
        bounded(async {
            let reading = pg_err("reading jobs");
            let client = self.client().await?;
            let statement = client.prepare_cached(sql).await.map_err(&reading)?;
            let rows = client.query(&statement, params).await.map_err(&reading)?;
            decode_jobs(&rows)
        })
        .await
    }

    /// See [`crate::store::ChatStore::job`].
    pub(super) async fn read_job(
        &self,
        tenant: &Tenant,
        job_id: &str,
    ) -> Result<Option<Job>, StoreError> {
        let found = self
            .query_jobs(
                "SELECT tenant, chat_id, body FROM jobs WHERE job_id = $1 AND tenant = $2",
                &[&job_id, &tenant.name()],
            )
            .await?;
        Ok(found.into_iter().next())
    }

    /// See [`crate::store::ChatStore::list_jobs`].
    pub(super) async fn read_jobs_page(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        // Only the conditions asked for, so that each form of the query has
        // a plan of its own that uses the right index.
        let mut sql = String::from("SELECT tenant, chat_id, body FROM jobs WHERE tenant = $1");
        let mut params: Vec<Param> = vec![Box::new(query.tenant.name().to_owned())];
        if let Some(chat_id) = &query.chat_id {
            params.push(Box::new(chat_id.clone()));
            sql.push_str(&format!(" AND chat_id = ${}", params.len()));
        }
        if !query.states.is_empty() {
            let codes: Vec<i64> = query.states.iter().map(|s| s.code()).collect();
            params.push(Box::new(codes));
            sql.push_str(&format!(" AND state = ANY(${}::bigint[])", params.len()));
        }
        if let Some(since_us) = query.changed_since_us {
            params.push(Box::new(since_us.0));
            sql.push_str(&format!(" AND updated_us >= ${}", params.len()));
        }
        if let Some((created_us, job_id)) = &query.after {
            params.push(Box::new(created_us.0));
            params.push(Box::new(job_id.clone()));
            sql.push_str(&format!(
                " AND (created_us, job_id) < (${}, ${})",
                params.len() - 1,
                params.len()
            ));
        }
        params.push(Box::new(limit_column(query.limit)));
        sql.push_str(&format!(
            " ORDER BY created_us DESC, job_id DESC LIMIT ${}",
            params.len()
        ));
        let params: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
        self.query_jobs(&sql, &params).await
    }

    /// See [`crate::store::ChatStore::runnable_jobs`].
    pub(super) async fn read_runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&ChatKey>,
        lane: JobLane,
    ) -> Result<Vec<Job>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // ('', '') is before every chat (a chat id is never empty).
        let (tenant, chat_id) = after.map_or(("", ""), |c| (c.tenant.name(), c.id.as_str()));
        self.query_jobs(
            RUNNABLE_JOBS,
            &[
                &now_us.0,
                &limit_column(limit),
                &tenant,
                &chat_id,
                &lane.is_index(),
                &JobKind::Index.code(),
            ],
        )
        .await
    }

    /// See [`crate::store::ChatStore::next_job_due`].
    pub(super) async fn read_next_job_due(
        &self,
        after_us: UnixMicros,
        lane: JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        bounded(async {
            let reading = pg_err("reading when the next job is due");
            let client = self.client().await?;
            let row = client
                .query_one(
                    NEXT_JOB_DUE,
                    &[&after_us.0, &lane.is_index(), &JobKind::Index.code()],
                )
                .await
                .map_err(&reading)?;
            let due: Option<i64> = row.try_get(0).map_err(&reading)?;
            Ok(due.map(UnixMicros))
        })
        .await
    }
}

#[cfg(test)]
mod tests;
