//! The job queue in the embedded store: the `jobs` table's writes (inside
//! the batch's transaction, on the writing connection) and its reads (on
//! the reading connection).
//!
//! A row keeps what the queries select and order by in columns of its own
//! (tenant, chat, state and kind codes, times, lease expiry, fence) and the
//! whole [`Job`] as JSON in `body`; [`Job::chat`] is not in the JSON and is
//! put back from the tenant and chat columns.

use crate::domain::time::UnixMicros;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Statement, Transaction, params, params_from_iter};

use super::db_err;
use super::writes::{execute, run};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobKind, JobLane, JobState};
use crate::store::{JobQuery, StoreError, from_json};

/// A fence as stored: the same 64 bits, read as signed (SQLite integers
/// are signed), so that distinct fences stay distinct.
fn fence_column(fence: u64) -> i64 {
    fence.cast_signed()
}

/// A count as an SQL `LIMIT`.
fn limit_column(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// The state codes of the terminal states, as an SQL list (`3, 4, 5, 6`).
pub(super) fn terminal_codes() -> String {
    codes(JobState::ALL.into_iter().filter(|s| s.is_terminal()))
}

/// State codes as an SQL list. Codes are numbers recapd chose, so they are
/// written into the statement rather than bound.
fn codes(states: impl IntoIterator<Item = JobState>) -> String {
    states
        .into_iter()
        .map(|s| s.code().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statement of [`put_job`], held by the commit thread.
pub(super) const PUT_JOB: &str =
    "INSERT INTO jobs (job_id, tenant, chat_id, state, kind, created_us, updated_us,
                   not_before_us, lease_until_us, fence, body)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
 ON CONFLICT (job_id) DO UPDATE SET
     tenant = ?2, chat_id = ?3, state = ?4, kind = ?5, created_us = ?6,
     updated_us = ?7, not_before_us = ?8, lease_until_us = ?9, fence = ?10, body = ?11";

/// [`crate::store::Write::Job`]: checks the stored fence when one is
/// expected (this runs inside the batch's transaction, after the batch's
/// earlier writes, on the one connection that writes), then creates or
/// replaces the row with the commit thread's [`PUT_JOB`] and `body`, the
/// job as JSON.
pub(super) fn put_job(
    tx: &Transaction<'_>,
    statement: &mut Statement<'_>,
    job: &Job,
    body: &str,
    expect_fence: Option<u64>,
) -> Result<(), StoreError> {
    if let Some(expected) = expect_fence {
        let stored: Option<i64> = tx
            .prepare_cached("SELECT fence FROM jobs WHERE job_id = ?1")
            .and_then(|mut s| s.query_row(params![job.id], |r| r.get(0)).optional())
            .map_err(db_err("checking a job's fence"))?;
        if stored != Some(fence_column(expected)) {
            return Err(StoreError::Fenced(job.id.clone()));
        }
    }
    run(
        statement,
        params![
            job.id,
            job.chat.tenant.name(),
            job.chat.id,
            job.state.code(),
            job.kind.code(),
            job.created_us.0,
            job.updated_us.0,
            job.not_before_us.0,
            job.lease.as_ref().map(|lease| lease.until_us.0),
            fence_column(job.fence),
            body
        ],
    )
}

/// [`crate::store::Write::PurgeJobs`]: removes the terminal jobs last
/// changed before `finished_before_us`.
pub(super) fn purge_jobs(
    tx: &Transaction<'_>,
    finished_before_us: UnixMicros,
) -> Result<(), StoreError> {
    execute(
        tx,
        &format!(
            "DELETE FROM jobs WHERE state IN ({}) AND updated_us < ?1",
            terminal_codes()
        ),
        params![finished_before_us.0],
    )
}

/// The jobs a query over `jobs` answers; its columns must be tenant,
/// chat_id, body.
fn jobs(
    conn: &Connection,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<Vec<Job>, StoreError> {
    let reading = db_err("reading jobs");
    let mut stmt = conn.prepare_cached(sql).map_err(&reading)?;
    let mut rows = stmt.query(values).map_err(&reading)?;
    let mut found = Vec::new();
    while let Some(row) = rows.next().map_err(&reading)? {
        let tenant: String = row.get(0).map_err(&reading)?;
        let chat_id: String = row.get(1).map_err(&reading)?;
        let body: String = row.get(2).map_err(&reading)?;
        let mut job: Job = from_json("job", &body)?;
        job.chat = ChatKey {
            tenant: Tenant(tenant),
            id: chat_id,
        };
        found.push(job);
    }
    Ok(found)
}

/// A chat's PENDING and RUNNING jobs, oldest first.
pub(super) fn open_jobs_of(conn: &Connection, chat: &ChatKey) -> Result<Vec<Job>, StoreError> {
    jobs(
        conn,
        &format!(
            "SELECT tenant, chat_id, body FROM jobs
             WHERE tenant = ?1 AND chat_id = ?2 AND state IN ({})
             ORDER BY created_us, job_id",
            codes([JobState::Pending, JobState::Running])
        ),
        params![chat.tenant.name(), chat.id],
    )
}

/// One job of `tenant`.
pub(super) fn job(
    conn: &Connection,
    tenant: &Tenant,
    job_id: &str,
) -> Result<Option<Job>, StoreError> {
    let found = jobs(
        conn,
        "SELECT tenant, chat_id, body FROM jobs WHERE job_id = ?1 AND tenant = ?2",
        params![job_id, tenant.name()],
    )?;
    Ok(found.into_iter().next())
}

/// A page of one tenant's jobs, newest first (see [`JobQuery`]).
pub(super) fn list_jobs(conn: &Connection, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
    if query.limit == 0 {
        return Ok(Vec::new());
    }
    // Only the conditions asked for, so that each form of the query has a
    // plan of its own that uses the right index.
    let mut sql = String::from("SELECT tenant, chat_id, body FROM jobs WHERE tenant = ?1");
    let mut values = vec![Value::Text(query.tenant.name().to_owned())];
    if let Some(chat_id) = &query.chat_id {
        values.push(Value::Text(chat_id.clone()));
        sql.push_str(&format!(" AND chat_id = ?{}", values.len()));
    }
    if !query.states.is_empty() {
        sql.push_str(&format!(
            " AND state IN ({})",
            codes(query.states.iter().copied())
        ));
    }
    if let Some(since_us) = query.changed_since_us {
        values.push(Value::Integer(since_us.0));
        sql.push_str(&format!(" AND updated_us >= ?{}", values.len()));
    }
    if let Some((created_us, job_id)) = &query.after {
        values.push(Value::Integer(created_us.0));
        values.push(Value::Text(job_id.clone()));
        sql.push_str(&format!(
            " AND (created_us, job_id) < (?{}, ?{})",
            values.len() - 1,
            values.len()
        ));
    }
    values.push(Value::Integer(limit_column(query.limit)));
    sql.push_str(&format!(
        " ORDER BY created_us DESC, job_id DESC LIMIT ?{}",
        values.len()
    ));
    jobs(conn, &sql, params_from_iter(values))
}

/// Jobs that may start at `now_us`, one per chat in chat order (see
/// [`crate::store::ChatStore::runnable_jobs`]). A RUNNING job without a
/// lease counts as one whose lease expired.
pub(super) fn runnable_jobs(
    conn: &Connection,
    now_us: UnixMicros,
    limit: usize,
    after: Option<&ChatKey>,
    lane: JobLane,
) -> Result<Vec<Job>, StoreError> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    // States 1 and 2 are PENDING and RUNNING (JobState::code). One job per
    // chat, its oldest: a chat runs one job at a time, and a chat with many
    // jobs must not fill the page and hide the others. Without `after`,
    // ('', '') is before every chat (a chat id is never empty).
    let (tenant, chat_id) = after.map_or(("", ""), |c| (c.tenant.name(), c.id.as_str()));
    jobs(
        conn,
        "SELECT tenant, chat_id, body FROM (
             SELECT j.tenant, j.chat_id, j.body,
                    row_number() OVER (PARTITION BY j.tenant, j.chat_id
                                       ORDER BY j.created_us, j.job_id) AS nth
             FROM jobs j
             WHERE ((j.state = 1 AND j.not_before_us <= ?1)
                    OR (j.state = 2 AND coalesce(j.lease_until_us, 0) < ?1))
               AND (j.tenant, j.chat_id) > (?3, ?4)
               AND (j.kind = ?6) = ?5
               AND NOT EXISTS (
                   SELECT 1 FROM jobs r
                   WHERE r.state = 2 AND r.lease_until_us >= ?1
                     AND r.tenant = j.tenant AND r.chat_id = j.chat_id
                     AND (r.kind = ?6) = ?5)
         ) WHERE nth = 1
         ORDER BY tenant, chat_id
         LIMIT ?2",
        params![
            now_us.0,
            limit_column(limit),
            tenant,
            chat_id,
            lane.is_index(),
            JobKind::Index.code()
        ],
    )
}

/// The earliest time after `after_us` at which a PENDING job becomes due
/// or a RUNNING job's lease expires.
pub(super) fn next_job_due(
    conn: &Connection,
    after_us: UnixMicros,
    lane: JobLane,
) -> Result<Option<UnixMicros>, StoreError> {
    // States 1 and 2 are PENDING and RUNNING (JobState::code).
    conn.prepare_cached(
        "SELECT min(due) FROM (
             SELECT min(not_before_us) AS due FROM jobs
             WHERE state = 1 AND not_before_us > ?1 AND (kind = ?3) = ?2
             UNION ALL
             SELECT min(lease_until_us) FROM jobs
             WHERE state = 2 AND lease_until_us > ?1 AND (kind = ?3) = ?2
         )",
    )
    .and_then(|mut s| {
        s.query_row(
            params![after_us.0, lane.is_index(), JobKind::Index.code()],
            |r| r.get::<_, Option<i64>>(0),
        )
    })
    .map(|due| due.map(UnixMicros))
    .map_err(db_err("reading when the next job is due"))
}
