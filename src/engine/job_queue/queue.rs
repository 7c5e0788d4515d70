//! Changes to a chat's job list, made under the chat's lock: queueing (one
//! non-terminal job per kind and message), ending a job with the jobs that
//! wait for it, and putting a finished job back in the queue. Each returns
//! what to write; the caller commits it with the chat.

use std::time::Duration;

use super::QueueOptions;
use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{Job, JobKind, JobState, ReadSet};
use crate::domain::lore::LoreTask;
use crate::domain::time::UnixMicros;
use crate::store::Write;
use crate::telemetry::{self, spans};

use super::new_job_id;
use crate::engine::EngineError;
use crate::engine::slot::Resident;

/// Who asks for a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A client's RPC: refused past the per-chat limit.
    Request,
    /// A trigger or another job: dropped (and counted) past the limit.
    Automatic,
}

/// What [`queue`] did.
#[derive(Debug)]
pub enum Queued {
    /// The same work was already queued or running: that job.
    Existing(Job),
    /// A new job, now in the chat's list (to be written).
    New(Job),
    /// An automatic job past the per-chat limit: nothing queued.
    Dropped,
}

/// Refuses a client's request that would queue `new` more jobs past the
/// per-chat limit.
pub fn check_room(
    resident: &Resident,
    options: &QueueOptions,
    chat: &ChatKey,
    new: usize,
) -> Result<(), EngineError> {
    if resident.jobs.len().saturating_add(new) > options.max_jobs_per_chat {
        return Err(DomainError::ResourceExhausted(format!(
            "chat {:?} would have more than {} jobs queued or running (--max-jobs-per-chat)",
            chat.id, options.max_jobs_per_chat
        ))
        .into());
    }
    Ok(())
}

/// What to queue: `kind` on `message_id` of `chat`, asked by `origin` at
/// `now_us`; due at `not_before_us` and waiting for `depends_on`.
#[derive(Debug, Clone)]
pub struct Enqueue<'a> {
    /// The chat.
    pub chat: &'a ChatKey,
    /// The job's kind.
    pub kind: JobKind,
    /// The message it is about (empty for a detection).
    pub message_id: &'a str,
    /// Who asks.
    pub origin: Origin,
    /// Now.
    pub now_us: UnixMicros,
    /// When a new job is due (now unless [`Enqueue::due_at`]).
    pub not_before_us: UnixMicros,
    /// The job a new job waits for.
    pub depends_on: Option<String>,
}

impl<'a> Enqueue<'a> {
    /// `kind` on `message_id`, due now, waiting for nothing.
    pub fn new(
        chat: &'a ChatKey,
        kind: JobKind,
        message_id: &'a str,
        origin: Origin,
        now_us: UnixMicros,
    ) -> Enqueue<'a> {
        Enqueue {
            chat,
            kind,
            message_id,
            origin,
            now_us,
            not_before_us: now_us,
            depends_on: None,
        }
    }

    /// A new job is due at `not_before_us`.
    pub fn due_at(self, not_before_us: UnixMicros) -> Enqueue<'a> {
        Enqueue {
            not_before_us,
            ..self
        }
    }

    /// A new job waits for `depends_on`.
    pub fn after(self, depends_on: Option<String>) -> Enqueue<'a> {
        Enqueue { depends_on, ..self }
    }
}

/// Queues `work` in the chat's list, unless the same work is already
/// there.
pub fn queue(
    resident: &mut Resident,
    options: &QueueOptions,
    work: Enqueue<'_>,
) -> Result<Queued, EngineError> {
    let Enqueue {
        chat,
        kind,
        message_id,
        origin,
        now_us,
        not_before_us,
        depends_on,
    } = work;
    if let Some(existing) = resident
        .jobs
        .iter()
        .find(|j| j.same_work(kind, message_id, ""))
    {
        return Ok(Queued::Existing(existing.clone()));
    }
    if resident.jobs.len() >= options.max_jobs_per_chat {
        if origin == Origin::Automatic {
            metrics::counter!(telemetry::JOBS_DROPPED, "kind" => kind.name()).increment(1);
            tracing::warn!(
                %chat,
                kind = kind.name(),
                limit = options.max_jobs_per_chat,
                "automatic job dropped: the chat has --max-jobs-per-chat jobs queued"
            );
            return Ok(Queued::Dropped);
        }
        return Err(DomainError::ResourceExhausted(format!(
            "chat {:?} already has {} jobs queued or running (--max-jobs-per-chat)",
            chat.id, options.max_jobs_per_chat
        ))
        .into());
    }
    let mut job = Job::new(
        new_job_id(now_us),
        chat.clone(),
        kind,
        message_id.to_owned(),
        now_us,
        origin == Origin::Automatic,
    );
    job.not_before_us = not_before_us;
    job.depends_on = depends_on;
    // Its attempts run later: their spans link to the call or event
    // queuing it, when traced.
    if let Some(queued_by) = spans::current() {
        job.traced_by = spans::traceparent(&queued_by);
    }
    resident.jobs.push(job.clone());
    Ok(Queued::New(job))
}

/// What a lore job is asked to do: its kind, its scene's break, what it is
/// about ([`Job::subject`]) and its input.
#[derive(Debug, Clone)]
pub struct LoreWork {
    /// A lore kind.
    pub kind: JobKind,
    /// The scene's break message.
    pub message_id: String,
    /// See [`Job::subject`].
    pub subject: String,
    /// The resolution's, merge's or compaction's input.
    pub task: Option<LoreTask>,
}

/// Queues lore `work` (an automatic job: dropped, and counted, past the
/// per-chat limit), unless the same work is already queued.
pub fn queue_lore(
    resident: &mut Resident,
    options: &QueueOptions,
    chat: &ChatKey,
    work: LoreWork,
    now_us: UnixMicros,
    depends_on: Option<String>,
) -> Result<Queued, EngineError> {
    let LoreWork {
        kind,
        message_id,
        subject,
        task,
    } = work;
    if let Some(existing) = resident
        .jobs
        .iter()
        .find(|j| j.same_work(kind, &message_id, &subject))
    {
        return Ok(Queued::Existing(existing.clone()));
    }
    // `queue`'s own check is for subject-less work; what it queues is new
    // and gets its subject and task here.
    let work = Enqueue::new(chat, kind, &message_id, Origin::Automatic, now_us).after(depends_on);
    match queue(resident, options, work)? {
        Queued::New(job) if subject.is_empty() && task.is_none() => Ok(Queued::New(job)),
        Queued::New(_) => {
            let queued = resident
                .jobs
                .last_mut()
                .ok_or_else(|| EngineError::Panicked("a queued job is missing".into()))?;
            queued.subject = subject;
            queued.lore = task;
            Ok(Queued::New(queued.clone()))
        }
        other => Ok(other),
    }
}

/// A job that changed, with the fence the store holds for it (the write's
/// expected fence).
pub type Changed = (Job, u64);

/// Ends the job at `at` in the chat's list with `state` and `reason`, and,
/// unless it succeeded, cancels the jobs that wait for it (recursively).
/// Each ended job's fence moves, so a request still running for it cannot
/// apply its answer.
pub fn end_with_dependents(
    resident: &mut Resident,
    at: usize,
    state: JobState,
    reason: &str,
    now_us: UnixMicros,
) -> Vec<Changed> {
    let ended = end_alone(resident, at, state, reason, now_us);
    if state == JobState::Succeeded {
        return vec![ended];
    }
    let dependents = cancel_dependents(resident, &ended.0, now_us);
    let mut all = vec![ended];
    all.extend(dependents);
    all
}

/// Ends the job at `at` in the chat's list with `state` and `reason`,
/// moving its fence; the jobs waiting for it are left as they are.
pub fn end_alone(
    resident: &mut Resident,
    at: usize,
    state: JobState,
    reason: &str,
    now_us: UnixMicros,
) -> Changed {
    let mut job = resident.jobs.remove(at);
    let fence = job.fence;
    finish(&mut job, state, reason, now_us);
    job.fence += 1;
    (job, fence)
}

/// Cancels the jobs that wait for `cause` (which ended), and those that
/// wait for them, each with its fence moved.
pub fn cancel_dependents(resident: &mut Resident, cause: &Job, now_us: UnixMicros) -> Vec<Changed> {
    let mut ended: Vec<Changed> = Vec::new();
    let mut causes = vec![(cause.id.clone(), cause.state)];
    while let Some((cause_id, cause_state)) = causes.pop() {
        let why = format!(
            "waited for job {cause_id}, which ended {}",
            cause_state.name()
        );
        while let Some(at) = resident
            .jobs
            .iter()
            .position(|j| j.depends_on.as_deref() == Some(&cause_id))
        {
            let mut waiting = resident.jobs.remove(at);
            let fence = waiting.fence;
            finish(&mut waiting, JobState::Cancelled, &why, now_us);
            waiting.fence += 1;
            waiting.cancelled_by = Some(cause_id.clone());
            causes.push((waiting.id.clone(), waiting.state));
            ended.push((waiting, fence));
        }
    }
    ended
}

/// The jobs that waited for `discarded` (whose work was queued again):
/// they wait for the job doing `work` (kind, message, subject) now, or,
/// when there is none, they are cancelled.
pub fn hand_over_dependents(
    resident: &mut Resident,
    discarded: &Job,
    work: (JobKind, &str, &str),
    now_us: UnixMicros,
) -> Vec<Changed> {
    let (kind, message_id, subject) = work;
    let replacement = resident
        .jobs
        .iter()
        .find(|j| j.same_work(kind, message_id, subject))
        .map(|j| j.id.clone());
    let Some(replacement) = replacement else {
        return cancel_dependents(resident, discarded, now_us);
    };
    let mut handed = Vec::new();
    for waiting in &mut resident.jobs {
        if waiting.depends_on.as_deref() == Some(discarded.id.as_str()) {
            waiting.depends_on = Some(replacement.clone());
            touch(waiting, now_us);
            handed.push((waiting.clone(), waiting.fence));
        }
    }
    handed
}

/// Sets a job's terminal state and result.
pub fn finish(job: &mut Job, state: JobState, result: &str, now_us: UnixMicros) {
    job.state = state;
    job.result = short(result);
    job.lease = None;
    touch(job, now_us);
}

/// Stamps a change of `job` at `now_us`, always later than its previous
/// change (clocks of replicas differ, and WatchJobs readers order a job's
/// changes by this stamp).
pub fn touch(job: &mut Job, now_us: UnixMicros) {
    job.updated_us = now_us.max(job.updated_us.saturating_add(Duration::from_micros(1)));
}

/// Puts a finished job back in the queue, due now, with no attempts made.
pub fn requeue(job: &mut Job, now_us: UnixMicros) {
    job.state = JobState::Pending;
    job.attempts = 0;
    job.last_error.clear();
    job.result.clear();
    job.not_before_us = now_us;
    touch(job, now_us);
    job.lease = None;
    job.fence += 1;
    job.cancelled_by = None;
    job.read = ReadSet::default();
}

/// The writes of changed jobs.
pub fn job_writes(changed: &[Changed]) -> Vec<Write> {
    changed
        .iter()
        .map(|(job, fence)| Write::Job {
            job: job.clone(),
            expect_fence: Some(*fence),
        })
        .collect()
}

/// At most 300 characters of `text` (a job's result or error is a short
/// note, not a copy of the answer).
pub fn short(text: &str) -> String {
    crate::domain::jobs::clip(text, 300)
}
