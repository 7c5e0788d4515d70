//! The index lane: index jobs ask the embeddings endpoint for the vectors
//! of a chat's passages that have none (recall), a batch at a time,
//! newest first, until every passage has one.
//!
//! One index job per chat at most is open. It is queued when a commit
//! leaves the chat's recall index with passages lacking vectors
//! (`recall_enabled`, an embeddings endpoint configured), and at start for
//! chats that still have some (`JobDriver::queue_index_jobs`). Each attempt
//! claims a batch under the chat's lock (RUNNING, under a lease and a
//! fence, by the driver recap jobs share, [`super::lane`]), asks with the
//! lock released, and applies under the lock again: a vector lands only if
//! its passage still has the text it was asked for (an edit, a swipe or a
//! deletion meanwhile discards it, and the passage stays to be asked
//! again). While passages lack vectors, the commit that applies a batch
//! claims the next one (up to the driver's requests in a row; then the job
//! goes back to PENDING for the other chats' turn); the job SUCCEEDS when
//! none lacks one. Vectors are written in the commit that moves the job,
//! so a kill -9 loses at most the batch in flight.

use std::collections::BTreeSet;

use crate::domain::backoff;
use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{self, Job, JobKind, JobLane, JobState, Lease, ReadSet};
use crate::domain::recall::index::PendingChunk;
use crate::domain::recall::vectors::MAX_DIMS;
use crate::domain::recall::{Source, StoredVector, indexable};
use crate::domain::refresh::Trigger;
use crate::domain::time::UnixMicros;
use crate::store::Write;
use crate::telemetry;

use super::super::recall_state::RecallState;
use super::super::slot::Resident;
use super::super::{EngineError, Next};
use super::apply::{self, Retries, fail, job_commit};
use super::failure::Endpoint;
use super::lane::{Applying, Claimed, Lane, Outcome, Prepared, Preparing};
use super::queue::{self, Enqueue, Origin, Queued};
use super::{JobDriver, Jobs};

/// What a batch's answer keeps: the vectors whose passages are unchanged
/// (attached to `index`), how many were discarded, the trims of the texts
/// the batch covered, and how many passages still lack a vector. An error
/// (the reason) when the vectors' dimension is not the index's.
type Kept = (Vec<StoredVector>, u64, Vec<(String, Source, u32)>, usize);

fn keep_vectors(
    index: &mut RecallState,
    passages: &[PendingChunk],
    vectors: &[Vec<f32>],
    model: &str,
) -> Result<Kept, String> {
    if let Some(long) = vectors.iter().find(|v| v.len() > MAX_DIMS) {
        return Err(format!(
            "the endpoint's vectors have {} dimensions, more than the {MAX_DIMS} recapd keeps",
            long.len()
        ));
    }
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

/// What asking `passages` reads: their messages as they are now (the rest
/// of the job's read set, `read`, kept).
fn batch_read(chat: &Chat, passages: &[PendingChunk], read: &ReadSet) -> ReadSet {
    let ids: BTreeSet<&str> = passages.iter().map(|p| p.key.message_id.as_str()).collect();
    let messages = ids
        .into_iter()
        .filter_map(|id| {
            chat.message(id)
                .map(|(_, m)| (id.to_owned(), jobs::fingerprint(m)))
        })
        .collect();
    ReadSet {
        messages,
        ..read.clone()
    }
}

impl JobDriver {
    /// The index lane's queuer, until the runner stops it: first every
    /// chat the store holds whose settings have `recall_enabled` (imported
    /// and existing chats catch up), then each chat
    /// [`Jobs::want_index`] names, as they come; each checked again
    /// under its lock ([`JobDriver::queue_index_job`]).
    pub(super) async fn queue_index_jobs(&self) {
        self.want_recall_chats().await;
        loop {
            for chat in self.jobs().take_wanted_index().await {
                if let Err(error) = self.chats.retrying(|| self.queue_index_job(&chat)).await {
                    tracing::warn!(%chat, %error, "could not queue an index job; the next change asks again");
                }
            }
        }
    }

    /// Names every stored chat whose effective settings have
    /// `recall_enabled` to the queuer (read from the settings rows, without
    /// loading the chats).
    async fn want_recall_chats(&self) {
        let store = &self.chats.store();
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
            let global = self.chats.global(&tenant);
            for chat in chats {
                let recall = match own.get(&chat) {
                    Some(settings) => global.settings.with(&settings.overrides).recall.enabled,
                    None => global.settings.recall.enabled,
                };
                if recall {
                    wanted += 1;
                    self.jobs().want_index_quietly(chat);
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
        if !self.chats.indexing() {
            return Ok(None);
        }
        let slot = self.chats.slot(chat_id);
        let mut guard = self.chats.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&self.chats.global(&chat_id.tenant), &chat_id.id);
        let Some(chat) = resident.chat.clone() else {
            return Ok(None);
        };
        if !settings.recall.enabled
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
            let inline_limit = self.chats.limits().recall_inline_passages;
            recall.synced(&chat, &settings, self.jobs().recall_model(), inline_limit);
            recall.missing_count()
        };
        if missing == 0 {
            return Ok(None);
        }
        let now = self.chats.now();
        let work = Enqueue::new(chat_id, JobKind::Index, "", Origin::Automatic, now);
        let queued = queue::queue(resident, self.jobs().queue(), work)?;
        let Queued::New(job) = queued else {
            return Ok(None);
        };
        let commit = job_commit(Vec::new(), Next::Nothing, Vec::new(), vec![job.clone()]);
        self.chats.commit(&slot, guard, commit).await?;
        Ok(Some(job))
    }
}

/// The index lane (see the module documentation).
pub(super) struct IndexLane;

impl Lane for IndexLane {
    /// The passages a batch asks vectors for.
    type Ask = Vec<PendingChunk>;
    /// One vector per passage, in order.
    type Answer = Vec<Vec<f32>>;

    const LANE: JobLane = JobLane::Index;
    const DROPPED: &'static str = "index job was cancelled or taken over; its vectors are dropped";
    const REFUSED: &'static str = "refused by the embeddings endpoint";

    fn runs(&self, jobs: &Jobs) -> bool {
        jobs.embedder().is_some()
    }

    fn may_start(&self, _job: &Job, _jobs: &[Job], _chat: &Chat) -> bool {
        true
    }

    /// The job's next batch, or the job settled when nothing is left to
    /// ask (or recall was turned off).
    async fn prepare(
        &self,
        engine: &JobDriver,
        preparing: Preparing<'_>,
    ) -> Result<Prepared<Vec<PendingChunk>>, EngineError> {
        let Preparing {
            chat_id,
            resident,
            at,
            settings,
            now,
        } = preparing;
        if !settings.recall.enabled {
            return Ok(Prepared::Settled(apply::end(
                resident,
                at,
                JobState::Cancelled,
                "recall_enabled is off for the chat",
                now,
            )));
        }
        let batch_size = engine
            .jobs()
            .embedder()
            .map_or(1, |e| e.setup.batch_size.max(1));
        let Some(chat) = resident.chat.clone() else {
            return Err(EngineError::unknown_chat(chat_id));
        };
        let inline_limit = engine.chats.limits().recall_inline_passages;
        let mut recall = resident.recall.lock();
        recall.synced(&chat, settings, engine.jobs().recall_model(), inline_limit);
        let passages = recall.missing(&chat, batch_size);
        drop(recall);
        if passages.is_empty() {
            return Ok(Prepared::Settled(apply::end(
                resident,
                at,
                JobState::Succeeded,
                "every passage has its vector",
                now,
            )));
        }
        Ok(Prepared::Ask {
            read: batch_read(&chat, &passages, &resident.jobs[at].read),
            message_id: None,
            ask: passages,
        })
    }

    /// Asks the embeddings endpoint for the batch's vectors.
    async fn work(
        &self,
        engine: &JobDriver,
        chat: &ChatKey,
        claimed: &Claimed<Vec<PendingChunk>>,
    ) -> Outcome<Vec<Vec<f32>>> {
        let Some(embedder) = engine.jobs().embedder().cloned() else {
            return Outcome::Fatal("no embeddings endpoint configured".into());
        };
        let texts: Vec<String> = claimed.ask.iter().map(|p| p.text.clone()).collect();
        match embedder.client.embed(&texts).await {
            Ok(answer) if answer.vectors.len() == texts.len() => Outcome::Answer(answer.vectors),
            Ok(answer) => Outcome::Retry {
                reason: format!(
                    "unusable answer: {} vectors for {} passages",
                    answer.vectors.len(),
                    texts.len()
                ),
                retry_after: None,
            },
            Err(error) => Outcome::failed(Endpoint::Embeddings, chat, &claimed.job, error),
        }
    }

    fn retries(&self, jobs: &Jobs) -> Retries {
        let setup = jobs.embedder().map(|e| &e.setup);
        Retries {
            max_attempts: setup.map_or(1, |s| s.max_attempts),
            backoff_base: setup.map_or(backoff::DEFAULT_BASE, |s| s.backoff_base),
        }
    }

    /// The index stops asking until the chat's next change.
    fn gave_up(&self, resident: &mut Resident) {
        resident.recall.lock().indexing_failed = true;
    }

    /// Keeps the vectors whose passages are unchanged, in the commit that
    /// moves the job on (PENDING for the next batch, or SUCCEEDED).
    async fn apply(
        &self,
        engine: &JobDriver,
        applying: Applying<'_>,
        claimed: &Claimed<Vec<PendingChunk>>,
        vectors: &Vec<Vec<f32>>,
        go_on: bool,
    ) -> Result<Option<Claimed<Vec<PendingChunk>>>, EngineError> {
        let Applying {
            chat_id,
            slot,
            chat: mut guard,
            at,
            now,
        } = applying;
        let resident = &mut *guard;
        let settings = resident.effective(&engine.chats.global(&chat_id.tenant), &chat_id.id);
        let Some(chat) = resident.chat.clone() else {
            return Err(EngineError::unknown_chat(chat_id));
        };
        let model = engine.jobs().recall_model().to_owned();
        let inline_limit = engine.chats.limits().recall_inline_passages;
        let kept = {
            let mut recall = resident.recall.lock();
            recall.synced(&chat, &settings, &model, inline_limit);
            keep_vectors(&mut recall, &claimed.ask, vectors, &model)
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
                return engine
                    .chats
                    .commit(&slot, guard, commit)
                    .await
                    .map(|_| None);
            }
        };
        // The tier's query is made of the latest messages: new vectors of
        // those move it; the others matter once the index is complete.
        let query: Vec<&str> = chat
            .messages()
            .rev()
            .filter(|(_, m)| indexable(m))
            .take(settings.recall.query_messages as usize)
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
        // The next batch, claimed in this same commit (see `Lane::apply`).
        let batch = if go_on
            && remaining > 0
            && settings.recall.enabled
            && settings.chat_enabled(resident.settings().enabled)
        {
            let batch_size = engine
                .jobs()
                .embedder()
                .map_or(1, |e| e.setup.batch_size.max(1));
            resident.recall.lock().missing(&chat, batch_size)
        } else {
            Vec::new()
        };
        let mut next_claim = None;
        let changed = if remaining == 0 {
            queue::end_with_dependents(resident, at, JobState::Succeeded, &note, now)
        } else {
            let read =
                (!batch.is_empty()).then(|| batch_read(&chat, &batch, &resident.jobs[at].read));
            let lease = engine.jobs().queue().lease;
            let owner = engine.jobs().owner().to_owned();
            let job = &mut resident.jobs[at];
            let fence = job.fence;
            job.lease = None;
            job.last_error.clear();
            job.result = queue::short(&note);
            match read {
                Some(read) => {
                    job.state = JobState::Running;
                    job.attempts = 1;
                    job.fence += 1;
                    job.lease = Some(Lease {
                        owner,
                        until_us: now.saturating_add(lease),
                    });
                    job.read = read;
                    next_claim = Some(Claimed {
                        job: job.clone(),
                        ask: batch,
                    });
                }
                None => {
                    job.state = JobState::Pending;
                    job.attempts = 0;
                    job.not_before_us = now;
                }
            }
            queue::touch(job, now);
            if let Some(next) = &mut next_claim {
                next.job = job.clone();
            }
            vec![(job.clone(), fence)]
        };
        engine
            .chats
            .commit(&slot, guard, job_commit(writes, next, changed, Vec::new()))
            .await
            .map(|_| next_claim)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_past_the_most_dimensions_fail_the_batch_naming_them() {
        let mut index = RecallState::default();
        let error =
            keep_vectors(&mut index, &[], &[vec![0.5; MAX_DIMS + 1]], "m").expect_err("refused");
        assert!(error.contains(&(MAX_DIMS + 1).to_string()), "{error}");
        assert!(keep_vectors(&mut index, &[], &[vec![0.5; 384]], "m").is_ok());
    }
}
