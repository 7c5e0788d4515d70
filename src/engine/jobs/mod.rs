//! Recaps written by recapd: the job queue's operations (queue, cancel,
//! retry, list), the runners that take runnable jobs round-robin over
//! chats ([`runner`]), the one driver that claims, works and applies a job
//! of any lane ([`lane`]) and the lanes ([`recap`]: recap and lore jobs
//! with the LLM; [`index`]: index jobs with the embeddings endpoint). What
//! the queue holds, its rules and what events do to jobs are below the
//! chats, in [`super::job_queue`].
//!
//! Every change of a job is made under its chat's lock and committed
//! through the chat's commit path, together with the chat writes it goes
//! with: a job ends SUCCEEDED in the same transaction that applies its
//! result, and only under the fence its runner claimed (see
//! [`crate::store::Write::Job`]). With a shared store the commit also claims
//! the chat, so two replicas never both claim one job.

mod apply;
mod failure;
mod index;
mod lane;
mod lore;
mod recap;
mod runner;

use crate::domain::DomainError;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobKind, JobLane, JobState};
use crate::domain::message::MessageData;
use crate::domain::refresh::Trigger;
use crate::store::{JobQuery, Write};

use super::commit::Commit;
use super::job_queue::Jobs;
use super::job_queue::queue::{self, Enqueue, Origin, Queued};
use super::ops::{known_chat, known_chat_ref};
use super::{Chats, EngineError, Next};

/// The job queue's part: the requests clients make (generate, list,
/// cancel, retry) and the runners that claim, work and apply jobs lane by
/// lane (one driver over the [`lane`] trait, the fences in one place).
///
/// A handle, cheap to clone (it holds a [`Chats`], one `Arc`): each
/// runner task holds its own. It locks and commits chats through the
/// chats' update path and reaches the job machinery's state
/// ([`Jobs`]) and the lorebooks through them; nothing below holds a
/// `JobDriver`, so no chat operation can start a job's work.
#[derive(Clone)]
pub struct JobDriver {
    /// The chats whose jobs it runs (and, through them, the job queue's
    /// state and the lorebooks).
    pub(in crate::engine) chats: Chats,
}

impl JobDriver {
    /// The driver over `chats`.
    pub(super) fn new(chats: Chats) -> JobDriver {
        JobDriver { chats }
    }

    /// The job machinery's state.
    pub(in crate::engine) fn jobs(&self) -> &Jobs {
        self.chats.jobs()
    }

    /// Queues one job of `kind` on `message_id` at a client's request,
    /// after `prepare` (under the chat's lock) made the chat ready for it.
    async fn request_job(
        &self,
        chat_id: &ChatKey,
        kind: JobKind,
        message_id: &str,
        prepare: impl Fn(&mut super::slot::Resident) -> Result<PreparedRequest, EngineError>,
    ) -> Result<Job, EngineError> {
        self.jobs().require_writer()?;
        self.chats
            .retrying(|| async {
                let slot = self.chats.slot(chat_id);
                let mut guard = self.chats.lock(&slot).await?;
                let resident = &mut *guard;
                known_chat_ref(resident, chat_id)?;
                let now = self.chats.now();
                if let Some(existing) = resident
                    .jobs
                    .iter_mut()
                    .find(|j| j.same_work(kind, message_id, ""))
                {
                    // A request is for now: a job waiting (debounce, back-off)
                    // is made due.
                    if existing.state != JobState::Pending || existing.not_before_us <= now {
                        return Ok(existing.clone());
                    }
                    existing.not_before_us = now;
                    queue::touch(existing, now);
                    let job = existing.clone();
                    let write = Write::Job {
                        job: job.clone(),
                        expect_fence: Some(job.fence),
                    };
                    let commit =
                        Commit::one(vec![write], Next::Nothing).with_jobs(vec![job.clone()]);
                    self.chats.commit(&slot, guard, commit).await?;
                    self.jobs().wake(JobLane::Recap);
                    return Ok(job);
                }
                // Refused before the chat is touched: nothing is left half done.
                queue::check_room(resident, self.jobs().queue(), chat_id, 1)?;
                let PreparedRequest {
                    mut writes,
                    next,
                    depends_on,
                } = prepare(resident)?;
                let work =
                    Enqueue::new(chat_id, kind, message_id, Origin::Request, self.chats.now())
                        .after(depends_on);
                let queued = queue::queue(resident, self.jobs().queue(), work)?;
                let (job, fresh) = match queued {
                    Queued::Existing(job) => (job, None),
                    Queued::New(job) => (job.clone(), Some(job)),
                    Queued::Dropped => {
                        return Err(EngineError::Panicked("a requested job was dropped".into()));
                    }
                };
                if fresh.is_none() && writes.is_empty() {
                    return Ok(job);
                }
                let mut announce = Vec::new();
                if let Some(fresh) = fresh {
                    writes.push(Write::Job {
                        job: fresh.clone(),
                        expect_fence: None,
                    });
                    announce.push(fresh);
                }
                let commit = Commit::one(writes, next).with_jobs(announce);
                self.chats.commit(&slot, guard, commit).await?;
                self.jobs().wake(JobLane::Recap);
                Ok(job)
            })
            .await
    }

    /// GenerateSceneRecap: makes `message_id` a visible scene break if it
    /// is not one, and queues its scene recap (an existing non-terminal one
    /// is returned, made due now if it was waiting).
    pub async fn generate_scene_recap(
        &self,
        chat: &ChatKey,
        message_id: &str,
    ) -> Result<Job, EngineError> {
        self.request_job(chat, JobKind::SceneRecap, message_id, |resident| {
            let known = known_chat_ref(resident, chat)?;
            let data = known.message_data(message_id)?;
            if data.is_visible_scene_break() {
                return Ok(PreparedRequest::default());
            }
            let update = MessageData {
                scene_break: Some(true),
                scene_break_visible: Some(true),
                ..MessageData::default()
            };
            let changed = known_chat(resident, chat)?;
            let changes = changed.set_message_data(message_id, &update)?;
            Ok(PreparedRequest {
                writes: super::ops::writes_for(chat, changed, &changes),
                next: Next::Debounce(Trigger::MessageDataChanged),
                depends_on: None,
            })
        })
        .await
    }

    /// DetectSceneBreaks: queues a detection over the chat's open scene now
    /// (a detection already waiting is made due now and returned).
    pub async fn detect_scene_breaks(&self, chat: &ChatKey) -> Result<Job, EngineError> {
        self.request_job(chat, JobKind::DetectSceneBreak, "", |_| {
            Ok(PreparedRequest::default())
        })
        .await
    }

    /// GenerateRunningRecap: queues the merge of break `message_id`'s scene
    /// recap; it waits for a scene recap of that break still under way.
    pub async fn generate_running_recap(
        &self,
        chat: &ChatKey,
        message_id: &str,
    ) -> Result<Job, EngineError> {
        self.request_job(chat, JobKind::RunningRecap, message_id, |resident| {
            let data = known_chat_ref(resident, chat)?.message_data(message_id)?;
            let pending_recap = resident
                .jobs
                .iter()
                .find(|j| j.same_work(JobKind::SceneRecap, message_id, ""))
                .map(|j| j.id.clone());
            if pending_recap.is_none() && !(data.is_visible_scene_break() && data.has_scene_recap())
            {
                return Err(DomainError::FailedPrecondition(format!(
                    "message {message_id:?} is not a scene break with a scene recap to merge"
                ))
                .into());
            }
            Ok(PreparedRequest {
                writes: Vec::new(),
                next: Next::Nothing,
                depends_on: pending_recap,
            })
        })
        .await
    }

    /// RegenerateRunningRecap: queues the rebuild of the running recap from
    /// every scene recap at once (FAILED_PRECONDITION when no scene has
    /// one).
    pub async fn regenerate_running_recap(&self, chat: &ChatKey) -> Result<Job, EngineError> {
        self.request_job(chat, JobKind::RegenerateRunningRecap, "", |resident| {
            let chat_ref = known_chat_ref(resident, chat)?;
            let scenes = chat_ref
                .scene_breaks()
                .iter()
                .filter_map(|seq| chat_ref.message_at(*seq))
                .any(|m| m.data().has_scene_recap());
            if !scenes {
                return Err(DomainError::FailedPrecondition(
                    "no scene of the chat has a recap to build the running recap from".to_owned(),
                )
                .into());
            }
            Ok(PreparedRequest::default())
        })
        .await
    }

    /// GenerateLore: queues the lore extraction of the scene ending at break
    /// `message_id`; it waits for a scene recap of that break still under
    /// way.
    pub async fn generate_lore(
        &self,
        chat: &ChatKey,
        message_id: &str,
    ) -> Result<Job, EngineError> {
        self.request_job(chat, JobKind::LoreExtract, message_id, |resident| {
            let data = known_chat_ref(resident, chat)?.message_data(message_id)?;
            if !data.is_visible_scene_break() {
                return Err(DomainError::FailedPrecondition(format!(
                    "message {message_id:?} is not a visible scene break"
                ))
                .into());
            }
            let pending_recap = resident
                .jobs
                .iter()
                .find(|j| j.same_work(JobKind::SceneRecap, message_id, ""))
                .map(|j| j.id.clone());
            Ok(PreparedRequest {
                writes: Vec::new(),
                next: Next::Nothing,
                depends_on: pending_recap,
            })
        })
        .await
    }

    /// GenerateMessageRecaps: queues one message recap per message (ids
    /// checked and deduplicated by the caller); all or none.
    pub async fn generate_message_recaps(
        &self,
        chat_id: &ChatKey,
        message_ids: &[String],
    ) -> Result<Vec<Job>, EngineError> {
        self.jobs().require_writer()?;
        self.chats
            .retrying(|| async {
                let slot = self.chats.slot(chat_id);
                let mut guard = self.chats.lock(&slot).await?;
                let resident = &mut *guard;
                let chat = known_chat_ref(resident, chat_id)?;
                for id in message_ids {
                    chat.message_data(id)?;
                }
                let new = message_ids
                    .iter()
                    .filter(|id| {
                        !resident
                            .jobs
                            .iter()
                            .any(|j| j.same_work(JobKind::MessageRecap, id, ""))
                    })
                    .count();
                // All or none: refused before any is queued.
                queue::check_room(resident, self.jobs().queue(), chat_id, new)?;
                let now = self.chats.now();
                let mut jobs = Vec::with_capacity(message_ids.len());
                let mut fresh = Vec::new();
                for id in message_ids {
                    let work =
                        Enqueue::new(chat_id, JobKind::MessageRecap, id, Origin::Request, now);
                    match queue::queue(resident, self.jobs().queue(), work)? {
                        Queued::Existing(job) => jobs.push(job),
                        Queued::New(job) => {
                            jobs.push(job.clone());
                            fresh.push(job);
                        }
                        Queued::Dropped => {}
                    }
                }
                if fresh.is_empty() {
                    return Ok(jobs);
                }
                let writes = fresh
                    .iter()
                    .map(|job| Write::Job {
                        job: job.clone(),
                        expect_fence: None,
                    })
                    .collect();
                let commit = Commit::one(writes, Next::Nothing).with_jobs(fresh);
                self.chats.commit(&slot, guard, commit).await?;
                self.jobs().wake(JobLane::Recap);
                Ok(jobs)
            })
            .await
    }

    /// ListJobs: a page of the tenant's jobs, newest first.
    pub async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, EngineError> {
        Ok(self.chats.store().list_jobs(query).await?)
    }

    /// CancelJob: a PENDING or RUNNING job ends CANCELLED (a running
    /// request's answer is then not applied), and so do the jobs waiting
    /// for it.
    pub async fn cancel_job(&self, tenant: &Tenant, job_id: &str) -> Result<Job, EngineError> {
        let stored = self
            .chats
            .store()
            .job(tenant, job_id)
            .await?
            .ok_or_else(|| EngineError::unknown_job(job_id))?;
        let chat_id = stored.chat.clone();
        self.chats
            .retrying(|| async {
                let slot = self.chats.slot(&chat_id);
                let mut guard = self.chats.lock(&slot).await?;
                let resident = &mut *guard;
                let Some(at) = resident.jobs.iter().position(|j| j.id == job_id) else {
                    return Err(DomainError::FailedPrecondition(format!(
                        "job {job_id:?} has already finished"
                    ))
                    .into());
                };
                let now = self.chats.now();
                let changed = queue::end_with_dependents(
                    resident,
                    at,
                    JobState::Cancelled,
                    "cancelled by CancelJob",
                    now,
                );
                let writes = queue::job_writes(&changed);
                let announce: Vec<Job> = changed.into_iter().map(|(job, _)| job).collect();
                let job = announce[0].clone();
                self.chats
                    .commit(
                        &slot,
                        guard,
                        Commit::one(writes, Next::Nothing).with_jobs(announce),
                    )
                    .await?;
                Ok(job)
            })
            .await
    }

    /// RetryJob: a FAILED or CANCELLED job runs again with its attempts
    /// reset, and so do the jobs its failure or cancellation cancelled.
    pub async fn retry_job(&self, tenant: &Tenant, job_id: &str) -> Result<Job, EngineError> {
        // With nothing to run jobs, every retry is refused before the job
        // is looked up (with an embeddings endpoint alone, index jobs only).
        if self.jobs().embedder().is_none() {
            self.jobs().require_writer()?;
        }
        let stored = self
            .chats
            .store()
            .job(tenant, job_id)
            .await?
            .ok_or_else(|| EngineError::unknown_job(job_id))?;
        if stored.kind.is_index() {
            if self.jobs().embedder().is_none() {
                return Err(EngineError::no_embedder());
            }
        } else {
            self.jobs().require_writer()?;
        }
        let chat_id = stored.chat.clone();
        self.chats
            .retrying(|| async {
                // Read again inside each attempt: another replica may have moved it.
                let mut job = self
                    .chats
                    .store()
                    .job(tenant, job_id)
                    .await?
                    .ok_or_else(|| EngineError::unknown_job(job_id))?;
                if !matches!(job.state, JobState::Failed | JobState::Cancelled) {
                    return Err(DomainError::FailedPrecondition(format!(
                        "job {job_id:?} is {}; only a failed or cancelled job can be retried",
                        job.state.name()
                    ))
                    .into());
                }
                let waiting = self
                    .chats
                    .store()
                    .list_jobs(&JobQuery {
                        tenant: tenant.clone(),
                        chat_id: Some(chat_id.id.clone()),
                        states: vec![JobState::Cancelled],
                        limit: self.jobs().queue().max_jobs_per_chat,
                        after: None,
                        changed_since_us: None,
                    })
                    .await?
                    .into_iter()
                    .filter(|j| j.cancelled_by.as_deref() == Some(job_id));
                let slot = self.chats.slot(&chat_id);
                let mut guard = self.chats.lock(&slot).await?;
                let resident = &mut *guard;
                known_chat_ref(resident, &chat_id)?;
                if let Some(other) = resident
                    .jobs
                    .iter()
                    .find(|j| j.same_work(job.kind, &job.message_id, &job.subject))
                {
                    return Err(DomainError::FailedPrecondition(format!(
                        "job {:?} already does this work",
                        other.id
                    ))
                    .into());
                }
                let now = self.chats.now();
                job.chat = chat_id.clone();
                let mut again = vec![job];
                for mut dependent in waiting {
                    // Work queued again meanwhile is not queued twice.
                    if resident.jobs.iter().any(|j| {
                        j.same_work(dependent.kind, &dependent.message_id, &dependent.subject)
                    }) {
                        continue;
                    }
                    dependent.chat = chat_id.clone();
                    again.push(dependent);
                }
                queue::check_room(resident, self.jobs().queue(), &chat_id, again.len())?;
                // Oldest first, as the chat's job list is kept.
                again.sort_by(|a, b| (a.created_us, &a.id).cmp(&(b.created_us, &b.id)));
                let mut writes = Vec::new();
                for job in &mut again {
                    let fence = job.fence;
                    queue::requeue(job, now);
                    writes.push(Write::Job {
                        job: job.clone(),
                        expect_fence: Some(fence),
                    });
                }
                resident.jobs.extend(again.iter().cloned());
                resident
                    .jobs
                    .sort_by(|a, b| (a.created_us, &a.id).cmp(&(b.created_us, &b.id)));
                let retried = again
                    .iter()
                    .find(|j| j.id == job_id)
                    .cloned()
                    .ok_or_else(|| EngineError::Panicked("retried job lost".into()))?;
                self.chats
                    .commit(
                        &slot,
                        guard,
                        Commit::one(writes, Next::Nothing).with_jobs(again),
                    )
                    .await?;
                self.jobs().wake(JobLane::Recap);
                Ok(retried)
            })
            .await
    }
}

/// What a client's request did to the chat before its job is queued.
#[derive(Default)]
struct PreparedRequest {
    writes: Vec<Write>,
    next: Next,
    depends_on: Option<String>,
}
