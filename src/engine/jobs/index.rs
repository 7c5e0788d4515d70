//! The index lane: index jobs ask the embeddings endpoint for the vectors
//! of a chat's passages that have none (recall), a batch at a time,
//! newest first, until every passage has one.
//!
//! One index job per chat at most is open. It is queued when a commit
//! leaves the chat's recall index with passages lacking vectors
//! (`recall_enabled`, an embeddings endpoint configured), and at start for
//! chats that still have some (`Engine::catch_up_recall`). Each attempt
//! claims a batch under the chat's lock (RUNNING, under a lease and a
//! fence, as recap jobs are), asks with the lock released, and applies
//! under the lock again: a vector lands only if its passage still has the
//! text it was asked for (an edit, a swipe or a deletion meanwhile
//! discards it, and the passage stays to be asked again). The job then
//! goes back to PENDING while passages lack vectors, and SUCCEEDS when
//! none does. Vectors are written in the commit that moves the job, so a
//! kill -9 loses at most the batch in flight.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use crate::domain::backoff;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{self, Job, JobKind, JobState, Lease};
use crate::domain::recall::RecallIndex;
use crate::domain::recall::index::PendingChunk;
use crate::domain::recall::{Source, StoredVector, indexable};
use crate::domain::refresh::Trigger;
use crate::domain::time::UnixMicros;
use crate::llm::LlmError;
use crate::store::{StoreError, Write};
use crate::telemetry;

use super::super::{Engine, EngineError, Next};
use super::apply::{Retries, fail, job_commit, record_retry};
use super::failure::{Endpoint, JobFailure};
use super::queue::{self, Origin, Queued};

/// An index job this runner claimed, and the passages it asks for.
struct ClaimedBatch {
    job: Job,
    passages: Vec<PendingChunk>,
}

/// What claiming found.
enum Step {
    /// Nothing of the chat could start now.
    Idle,
    /// A job was settled without a request.
    Settled,
    /// A batch is claimed: ask the endpoint.
    Claimed(Box<ClaimedBatch>),
}

/// What became of a request.
enum Embedded {
    /// One vector per passage, in order.
    Vectors(Vec<Vec<f32>>),
    /// Worth another attempt later (after at least `retry_after`).
    Retry {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// Retrying cannot fix it.
    Fatal(String),
}

/// What a batch's answer keeps: the vectors whose passages are unchanged
/// (attached to `index`), how many were discarded, the trims of the texts
/// the batch covered, and how many passages still lack a vector. An error
/// (the reason) when the vectors' dimension is not the index's.
type Kept = (Vec<StoredVector>, u64, Vec<(String, Source, u32)>, usize);

fn keep_vectors(
    index: &mut RecallIndex,
    passages: &[PendingChunk],
    vectors: &[Vec<f32>],
    model: &str,
) -> Result<Kept, String> {
    if let Some(wrong) = vectors
        .iter()
        .find(|v| index.dims() != 0 && v.len() != index.dims())
    {
        return Err(format!(
            "the endpoint's vectors have {} dimensions, the chat's index {} (a new model under the same name?)",
            wrong.len(),
            index.dims()
        ));
    }
    let mut stored = Vec::new();
    let mut discarded = 0u64;
    for (passage, vector) in passages.iter().zip(vectors) {
        if index.attach(&passage.key, passage.fingerprint, vector) {
            stored.push(StoredVector {
                key: passage.key.clone(),
                fingerprint: passage.fingerprint,
                model: model.to_owned(),
                vector: vector.clone(),
            });
        } else {
            discarded += 1;
        }
    }
    let texts: BTreeSet<(&str, Source)> = passages
        .iter()
        .map(|p| (p.key.message_id.as_str(), p.key.source))
        .collect();
    let trims = texts
        .into_iter()
        .map(|(id, source)| (id.to_owned(), source, index.parts(id, source)))
        .collect();
    Ok((stored, discarded, trims, index.missing_count()))
}

impl Engine {
    /// The index lane's queuer, until the runner stops it: first every
    /// chat the store holds whose settings have `recall_enabled` (imported
    /// and existing chats catch up), then each chat
    /// [`Engine::want_index_job`] names, as they come; each checked again
    /// under its lock ([`Engine::queue_index_job`]).
    pub(super) async fn queue_index_jobs(&self) {
        self.want_recall_chats().await;
        loop {
            let wanted: Vec<ChatKey> = std::mem::take(&mut *self.inner.index_wanted.lock())
                .into_iter()
                .collect();
            if wanted.is_empty() {
                self.inner.index_wake.notified().await;
                continue;
            }
            for chat in wanted {
                if let Err(error) = self.retrying(|| self.queue_index_job(&chat)).await {
                    tracing::warn!(%chat, %error, "could not queue an index job; the next change asks again");
                }
            }
        }
    }

    /// Names every stored chat whose effective settings have
    /// `recall_enabled` to the queuer (read from the settings rows, without
    /// loading the chats).
    async fn want_recall_chats(&self) {
        let store = &self.inner.store;
        let chats = match store
            .quiet_chats(UnixMicros(i64::MAX), usize::MAX >> 1)
            .await
        {
            Ok(chats) => chats,
            Err(error) => {
                tracing::warn!(%error, "could not list the chats to index; each is indexed at its next change");
                return;
            }
        };
        let mut by_tenant: std::collections::BTreeMap<_, Vec<ChatKey>> = Default::default();
        for chat in chats {
            by_tenant.entry(chat.tenant.clone()).or_default().push(chat);
        }
        let mut wanted = 0usize;
        for (tenant, chats) in by_tenant {
            let own: std::collections::HashMap<ChatKey, crate::store::ChatSettings> =
                match store.chat_settings_of(&tenant).await {
                    Ok(own) => own.into_iter().collect(),
                    Err(error) => {
                        tracing::warn!(%tenant, %error, "could not read chat settings to index");
                        continue;
                    }
                };
            let global = self.global(&tenant);
            for chat in chats {
                let recall = match own.get(&chat) {
                    Some(settings) => global.settings.with(&settings.overrides).recall_enabled,
                    None => global.settings.recall_enabled,
                };
                if recall {
                    wanted += 1;
                    self.inner.index_wanted.lock().insert(chat);
                }
            }
        }
        if wanted > 0 {
            tracing::info!(
                chats = wanted,
                "chats with recall_enabled are checked for passages to index"
            );
        }
    }

    /// Under the chat's lock: queues the chat's index job when it has
    /// `recall_enabled`, is enabled, has no open index job and its recall
    /// index has passages without vectors. Returns the job queued.
    pub(crate) async fn queue_index_job(
        &self,
        chat_id: &ChatKey,
    ) -> Result<Option<Job>, EngineError> {
        if !self.indexing() {
            return Ok(None);
        }
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(chat) = resident.chat.clone() else {
            return Ok(None);
        };
        if !settings.recall_enabled
            || !settings.chat_enabled(resident.settings().enabled)
            || resident.jobs.iter().any(|j| j.kind.is_index())
        {
            return Ok(None);
        }
        let missing = {
            let mut recall = resident.recall.lock();
            if recall.indexing_failed {
                return Ok(None);
            }
            recall
                .synced(&chat, &settings, self.recall_model())
                .missing_count()
        };
        if missing == 0 {
            return Ok(None);
        }
        let now = self.now();
        let queued = queue::queue(
            resident,
            &self.jobs().queue,
            chat_id,
            JobKind::Index,
            "",
            Origin::Automatic,
            now,
            None,
        )?;
        let Queued::New(job) = queued else {
            return Ok(None);
        };
        let commit = job_commit(Vec::new(), Next::Nothing, Vec::new(), vec![job.clone()]);
        self.commit(&slot, guard, commit).await?;
        Ok(Some(job))
    }

    /// Starts the chat's index job, if it is due, and sees one batch
    /// through. Returns whether a job was started or settled.
    pub(super) async fn run_next_index_job(
        &self,
        chat: &ChatKey,
        permit: OwnedSemaphorePermit,
    ) -> Result<bool, EngineError> {
        let claimed = match self.retrying(|| self.claim_batch(chat)).await {
            Ok(Step::Idle) => return Ok(false),
            Ok(Step::Settled) => return Ok(true),
            Ok(Step::Claimed(claimed)) => claimed,
            Err(EngineError::Store(StoreError::Fenced(_))) => return Ok(true),
            Err(error) => return Err(error),
        };
        let embedded = self.embed_batch(chat, &claimed).await;
        drop(permit);
        match self
            .retrying(|| self.apply_vectors(chat, &claimed, &embedded))
            .await
        {
            Err(EngineError::Store(StoreError::Fenced(job))) => {
                tracing::info!(%chat, %job, "index job was cancelled or taken over; its vectors are dropped");
                Ok(true)
            }
            other => other.map(|()| true),
        }
    }

    /// Under the chat's lock: claims the next batch of the chat's due
    /// index job, or settles the job when nothing is left to ask (or
    /// recall was turned off).
    async fn claim_batch(&self, chat_id: &ChatKey) -> Result<Step, EngineError> {
        let Some(embedder) = self.jobs().embedder.clone() else {
            return Ok(Step::Idle);
        };
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(chat) = resident.chat.clone() else {
            return Ok(Step::Idle);
        };
        if !settings.chat_enabled(resident.settings().enabled) {
            return Ok(Step::Idle);
        }
        let now = self.now();
        let lapsed = |job: &Job| self.lease_lapsed(job, now);
        let index_jobs = || resident.jobs.iter().filter(|j| j.kind.is_index());
        if index_jobs().any(|j| j.state == JobState::Running && !lapsed(j)) {
            return Ok(Step::Idle);
        }
        let Some(at) = resident.jobs.iter().position(|job| {
            job.kind.is_index()
                && match job.state {
                    JobState::Pending => job.not_before_us <= now,
                    JobState::Running => lapsed(job),
                    _ => false,
                }
        }) else {
            return Ok(Step::Idle);
        };
        if !settings.recall_enabled {
            let ended = queue::end_with_dependents(
                resident,
                at,
                JobState::Cancelled,
                "recall_enabled is off for the chat",
                now,
            );
            self.commit(
                &slot,
                guard,
                job_commit(Vec::new(), Next::Nothing, ended, Vec::new()),
            )
            .await?;
            return Ok(Step::Settled);
        }
        let passages = resident
            .recall
            .lock()
            .synced(&chat, &settings, self.recall_model())
            .missing(&chat, embedder.setup.batch_size.max(1));
        if passages.is_empty() {
            let ended = queue::end_with_dependents(
                resident,
                at,
                JobState::Succeeded,
                "every passage has its vector",
                now,
            );
            self.commit(
                &slot,
                guard,
                job_commit(Vec::new(), Next::Nothing, ended, Vec::new()),
            )
            .await?;
            return Ok(Step::Settled);
        }
        let read: BTreeSet<&str> = passages.iter().map(|p| p.key.message_id.as_str()).collect();
        let lease = self.jobs().queue.lease;
        let job = &mut resident.jobs[at];
        let fence = job.fence;
        job.state = JobState::Running;
        job.attempts += 1;
        job.fence += 1;
        job.lease = Some(Lease {
            owner: self.jobs().owner.clone(),
            until_us: now.saturating_add(lease),
        });
        job.read.messages = read
            .into_iter()
            .filter_map(|id| {
                chat.message(id)
                    .map(|(_, m)| (id.to_owned(), jobs::fingerprint(m)))
            })
            .collect();
        queue::touch(job, now);
        let claimed = job.clone();
        self.commit(
            &slot,
            guard,
            job_commit(
                Vec::new(),
                Next::Nothing,
                vec![(claimed.clone(), fence)],
                Vec::new(),
            ),
        )
        .await?;
        Ok(Step::Claimed(Box::new(ClaimedBatch {
            job: claimed,
            passages,
        })))
    }

    /// Asks the embeddings endpoint for the batch's vectors, renewing the
    /// job's lease while the request runs.
    async fn embed_batch(&self, chat: &ChatKey, claimed: &ClaimedBatch) -> Embedded {
        let Some(embedder) = self.jobs().embedder.clone() else {
            return Embedded::Fatal("no embeddings endpoint configured".into());
        };
        let _renewal = self.renew_lease_meanwhile(chat, &claimed.job);
        let texts: Vec<String> = claimed.passages.iter().map(|p| p.text.clone()).collect();
        let embedded = match embedder.client.embed(&texts).await {
            Ok(answer) if answer.vectors.len() == texts.len() => Embedded::Vectors(answer.vectors),
            Ok(answer) => Embedded::Retry {
                reason: format!(
                    "unusable answer: {} vectors for {} passages",
                    answer.vectors.len(),
                    texts.len()
                ),
                retry_after: None,
            },
            Err(error) => {
                let shown = JobFailure::of(Endpoint::Embeddings, &error).report(
                    chat,
                    &claimed.job,
                    error.reason(),
                );
                match error {
                    LlmError::Retryable { retry_after, .. } => Embedded::Retry {
                        reason: shown,
                        retry_after,
                    },
                    LlmError::Fatal { .. } => Embedded::Fatal(shown),
                }
            }
        };
        let label = match &embedded {
            Embedded::Vectors(_) => "ok",
            Embedded::Retry { .. } => "retryable",
            Embedded::Fatal(_) => "fatal",
        };
        metrics::counter!(telemetry::LLM_ATTEMPTS, "kind" => JobKind::Index.name(), "outcome" => label)
            .increment(1);
        embedded
    }

    /// Under the chat's lock again: records a failed attempt, or keeps the
    /// vectors whose passages are unchanged, in the commit that moves the
    /// job on (PENDING for the next batch, or SUCCEEDED).
    async fn apply_vectors(
        &self,
        chat_id: &ChatKey,
        claimed: &ClaimedBatch,
        embedded: &Embedded,
    ) -> Result<(), EngineError> {
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let Some(at) = resident
            .jobs
            .iter()
            .position(|j| j.id == claimed.job.id && j.fence == claimed.job.fence)
        else {
            return Err(StoreError::Fenced(claimed.job.id.clone()).into());
        };
        let now = self.now();
        let vectors = match embedded {
            Embedded::Retry {
                reason,
                retry_after,
            } => {
                let setup = self.jobs().embedder.as_ref().map(|e| &e.setup);
                let retries = Retries {
                    max_attempts: setup.map_or(1, |s| s.max_attempts),
                    backoff_base: setup.map_or(backoff::DEFAULT_BASE, |s| s.backoff_base),
                };
                let (commit, gave_up) =
                    record_retry(resident, at, reason, *retry_after, now, retries);
                if gave_up {
                    resident.recall.lock().indexing_failed = true;
                }
                return self.commit(&slot, guard, commit).await.map(|_| ());
            }
            Embedded::Fatal(reason) => {
                resident.jobs[at].last_error = queue::short(reason);
                resident.recall.lock().indexing_failed = true;
                let commit = fail(resident, at, "refused by the embeddings endpoint", now);
                return self.commit(&slot, guard, commit).await.map(|_| ());
            }
            Embedded::Vectors(vectors) => vectors,
        };
        let settings = resident.effective(&self.global(&chat_id.tenant));
        let Some(chat) = resident.chat.clone() else {
            return Err(EngineError::unknown_chat(chat_id));
        };
        let model = self.recall_model().to_owned();
        let kept = {
            let mut recall = resident.recall.lock();
            let index = recall.synced(&chat, &settings, &model);
            keep_vectors(index, &claimed.passages, vectors, &model)
        };
        let (stored, discarded, trims, remaining) = match kept {
            Ok(kept) => {
                resident.recall.lock().indexing_failed = false;
                kept
            }
            Err(reason) => {
                resident.jobs[at].last_error = queue::short(&reason);
                resident.recall.lock().indexing_failed = true;
                let commit = fail(resident, at, "vectors of another dimension", now);
                return self.commit(&slot, guard, commit).await.map(|_| ());
            }
        };
        // The tier's query is made of the latest messages: new vectors of
        // those move it; the others matter once the index is complete.
        let query: Vec<&str> = chat
            .messages()
            .rev()
            .filter(|(_, m)| indexable(m))
            .take(settings.recall_query_messages as usize)
            .map(|(_, m)| m.id.as_str())
            .collect();
        let touches_query = stored
            .iter()
            .any(|v| query.contains(&v.key.message_id.as_str()));
        let next = if !stored.is_empty() && (touches_query || remaining == 0) {
            Next::Refresh(Trigger::RecallIndexed)
        } else {
            Next::Nothing
        };
        let indexed = stored.len() as u64;
        metrics::counter!(telemetry::RECALL_PASSAGES, "outcome" => "indexed").increment(indexed);
        metrics::counter!(telemetry::RECALL_PASSAGES, "outcome" => "discarded")
            .increment(discarded);
        let mut writes = Vec::new();
        if !stored.is_empty() || !trims.is_empty() {
            writes.push(Write::RecallVectors {
                chat: chat_id.clone(),
                vectors: stored,
                trims,
            });
        }
        let note = format!(
            "{indexed} passages indexed, {discarded} discarded (changed meanwhile), {remaining} to go"
        );
        let changed = if remaining == 0 {
            queue::end_with_dependents(resident, at, JobState::Succeeded, &note, now)
        } else {
            let job = &mut resident.jobs[at];
            let fence = job.fence;
            job.state = JobState::Pending;
            job.lease = None;
            job.attempts = 0;
            job.last_error.clear();
            job.result = queue::short(&note);
            job.not_before_us = now;
            queue::touch(job, now);
            vec![(job.clone(), fence)]
        };
        self.commit(&slot, guard, job_commit(writes, next, changed, Vec::new()))
            .await
            .map(|_| ())
    }
}
