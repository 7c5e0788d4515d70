//! A chat's end: deletion (DeleteChat, and `--chat-retention`'s deletion
//! of quiet chats) and the listing of a tenant's chats.
//!
//! A deletion erases the chat's rows in one commit that leaves a tombstone
//! (the chat id and its last revisions, no content), then tells every
//! subscriber of the chat, and every all-chats subscriber, one last
//! injection marked `deleted`. A chat re-created under the same id later
//! starts from the tombstone, so its revisions never go back. Other
//! replicas learn of a deletion as of any change: the claim moves the
//! chat's clock, they re-read it and find the tombstone
//! ([`Engine::load_into`] offers its injections).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::slot::{ChatSlot, LoadedChat, Resident};
use super::{Engine, EngineError};
use crate::domain::ids::{ChatKey, ClaimKey, Tenant};
use crate::domain::jobs::{Job, JobState};
use crate::domain::refresh::{Injection, InjectionKey};
use crate::domain::time::UnixMicros;
use crate::store::{self, ChatSettings, Tombstone, Write};
use crate::telemetry;

/// Why a chat is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deletion {
    /// DeleteChat: an unknown chat is NotFound.
    Api,
    /// `--chat-retention`: only if the chat did not change since
    /// `changed_before_us` (µs since the epoch); otherwise it is left.
    Retention {
        /// The bound its last change must be before.
        changed_before_us: UnixMicros,
    },
}

impl Deletion {
    /// The `reason` label of [`telemetry::CHATS_DELETED`].
    fn reason(self) -> &'static str {
        match self {
            Deletion::Api => "api",
            Deletion::Retention { .. } => "retention",
        }
    }
}

/// One chat as ListChats shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatSummary {
    /// The chat.
    pub chat_id: String,
    /// Its messages.
    pub message_count: u64,
    /// Its latest injection's revision (0 before its first refresh).
    pub revision: u64,
    /// Whether memory is enabled for it now (its effective settings).
    pub enabled: bool,
    /// When it last changed, µs since the epoch.
    pub updated_us: UnixMicros,
}

/// The injections a deleted chat's subscribers are told last, from its
/// tombstone: one for `auto_recap_scene`, and one for each tier
/// (message recaps, recall) that ever ran.
pub(super) fn deleted_injections(chat: &ChatKey, tombstone: &Tombstone) -> Vec<Arc<Injection>> {
    let mut last = vec![Arc::new(Injection::deleted(
        chat,
        InjectionKey::Scene,
        tombstone.revision,
        tombstone.deleted_us,
    ))];
    if tombstone.message_revision > 0 {
        last.push(Arc::new(Injection::deleted(
            chat,
            InjectionKey::Messages,
            tombstone.message_revision,
            tombstone.deleted_us,
        )));
    }
    if tombstone.recall_revision > 0 {
        last.push(Arc::new(Injection::deleted(
            chat,
            InjectionKey::Recall,
            tombstone.recall_revision,
            tombstone.deleted_us,
        )));
    }
    last
}

/// How many quiet chats one retention pass reads and deletes before it
/// pauses, so that traffic is never queued behind a long run of deletions.
const RETENTION_BATCH: usize = 64;

/// The pause between two batches of a retention pass.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

impl Engine {
    /// Deletes a chat (DeleteChat): answers with the revision of its last
    /// injection once the erasure is durable.
    ///
    /// # Errors
    /// NotFound for an unknown chat (one that has neither rows nor settings
    /// of its own, also one already deleted); store errors, nothing erased.
    pub async fn delete_chat(&self, chat_id: &ChatKey) -> Result<u64, EngineError> {
        self.retrying(|| self.delete_chat_once(chat_id, Deletion::Api))
            .await?
            .ok_or_else(|| EngineError::unknown_chat(chat_id))
    }

    /// Deletes a chat for `--chat-retention` if it did not change since
    /// `changed_before_us`: the revision of its last injection, or `None`
    /// when it was left (it changed since, or it is gone).
    pub async fn delete_quiet_chat(
        &self,
        chat_id: &ChatKey,
        changed_before_us: UnixMicros,
    ) -> Result<Option<u64>, EngineError> {
        let why = Deletion::Retention { changed_before_us };
        self.retrying(|| self.delete_chat_once(chat_id, why)).await
    }

    async fn delete_chat_once(
        &self,
        chat_id: &ChatKey,
        why: Deletion,
    ) -> Result<Option<u64>, EngineError> {
        let slot = self.slot(chat_id);
        let guard = self.lock(&slot).await?;
        let resident = &*guard;
        let has_rows = resident.chat.is_some();
        match why {
            Deletion::Api if !has_rows && *resident.settings() == ChatSettings::default() => {
                return Err(EngineError::unknown_chat(chat_id));
            }
            Deletion::Retention { changed_before_us }
                if !has_rows || resident.updated_us.is_some_and(|u| u >= changed_before_us) =>
            {
                return Ok(None);
            }
            _ => {}
        }
        // In a task of its own: a caller that goes away cannot stop it
        // between the commit and the memory update.
        let engine = self.clone();
        tokio::spawn(async move { engine.erase(&slot, guard, why).await })
            .await
            .map_err(EngineError::from_join)?
            .map(Some)
    }

    /// Commits the erasure of the locked chat, then empties its memory and
    /// tells its subscribers.
    async fn erase(
        &self,
        slot: &Arc<ChatSlot>,
        mut guard: LoadedChat,
        why: Deletion,
    ) -> Result<u64, EngineError> {
        let resident = &mut *guard;
        let meta = &resident.meta;
        let tombstone = Tombstone {
            revision: meta.revision + 1,
            message_revision: meta
                .message_injection
                .as_ref()
                .map_or(meta.message_revision_floor, |last| last.revision + 1),
            recall_revision: meta
                .recall_injection
                .as_ref()
                .map_or(meta.recall_revision_floor, |last| last.revision + 1),
            deleted_us: self.now(),
        };
        let mut writes = vec![Write::DeleteChat {
            chat: slot.key.clone(),
            tombstone,
        }];
        if self.shared() {
            writes.insert(
                0,
                Write::Claim {
                    key: ClaimKey::Chat(slot.key.clone()),
                    clock: resident.clock,
                },
            );
        }
        // The lorebook recapd created for the chat's lore goes with it
        // (in the same transaction), unless the settings keep it.
        let owned_book = match &resident.meta.lore_book {
            Some(name)
                if resident
                    .effective(&self.global(&slot.key.tenant))
                    .lore_delete_book_with_chat =>
            {
                Some(name.clone())
            }
            _ => None,
        };
        let deletion = match &owned_book {
            Some(name) => self.book_deletion(&slot.key.tenant, name).await?,
            None => None,
        };
        if let Some(deletion) = &deletion {
            writes.push(deletion.write.clone());
        }
        if let Err(error) = self.inner.store.commit(writes).await {
            tracing::warn!(chat = %slot.key, %error, "deletion failed; the chat reloads from the store");
            let unloaded = guard.unload(slot);
            self.account(slot, unloaded.as_ref());
            return Err(error.into());
        }
        if let Some(deletion) = deletion {
            deletion.done();
        }
        let had_rows = resident.chat.is_some();
        let open_jobs = std::mem::take(&mut resident.jobs);
        let clock = resident.clock + u64::from(self.shared());
        // Dropping the old state stops its pending debounced refresh.
        *guard = Resident::from_store(
            &slot.key,
            store::LoadedChat {
                clock,
                tombstone: Some(tombstone),
                ..store::LoadedChat::default()
            },
        );
        let last = deleted_injections(&slot.key, &tombstone);
        slot.latest.send_modify(|latest| {
            for injection in &last {
                latest.offer(injection.clone());
            }
        });
        slot.announced.store(true, Ordering::Release);
        for injection in last {
            let _ = self.inner.all_chats.send(injection);
        }
        for job in open_jobs {
            self.announce_job(ended_by_deletion(job, tombstone.deleted_us));
        }
        if had_rows {
            self.free_chat_place();
        }
        self.account(slot, Some(&guard));
        metrics::counter!(telemetry::CHATS_DELETED, "reason" => why.reason()).increment(1);
        tracing::info!(chat = %slot.key, reason = why.reason(), revision = tombstone.revision, "chat deleted");
        Ok(tombstone.revision)
    }

    /// A page of a tenant's chats, ordered by chat id (as bytes), strictly
    /// after `after`, at most `limit`.
    pub async fn list_chats(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ChatSummary>, EngineError> {
        let global = self.global(tenant);
        let listed = self.inner.store.list_chats(tenant, after, limit).await?;
        Ok(listed
            .into_iter()
            .map(|chat| {
                let own = chat.settings.unwrap_or_default();
                let settings = global.settings.with(&own.overrides);
                ChatSummary {
                    enabled: settings.chat_enabled(own.enabled),
                    chat_id: chat.chat_id,
                    message_count: chat.message_count,
                    revision: chat.revision,
                    updated_us: chat.updated_us,
                }
            })
            .collect())
    }

    /// Deletes, until `stop`, the chats that did not change for
    /// `retention`: a pass every [`retention_period`], each in batches of
    /// [`RETENTION_BATCH`] with a pause between them.
    pub async fn run_retention(self, retention: Duration, stop: CancellationToken) {
        let period = retention_period(retention);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(period) => {}
            }
            let changed_before_us = self.now().saturating_sub(retention);
            self.retention_pass(changed_before_us, &stop).await;
        }
    }

    /// One pass: deletes the chats that did not change since
    /// `changed_before_us`, batch after batch, until a batch deletes none.
    async fn retention_pass(&self, changed_before_us: UnixMicros, stop: &CancellationToken) {
        loop {
            let quiet = match self
                .inner
                .store
                .quiet_chats(changed_before_us, RETENTION_BATCH)
                .await
            {
                Ok(quiet) => quiet,
                Err(error) => {
                    tracing::warn!(%error, "cannot list chats for retention; the next pass retries");
                    return;
                }
            };
            let mut deleted = 0;
            for chat in &quiet {
                if stop.is_cancelled() {
                    return;
                }
                match self.delete_quiet_chat(chat, changed_before_us).await {
                    Ok(Some(_)) => deleted += 1,
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(%chat, %error, "retention could not delete a chat; the next pass retries")
                    }
                }
            }
            // A short batch was the last; a batch of chats that all
            // changed (or failed) would come back the same.
            if quiet.len() < RETENTION_BATCH || deleted == 0 {
                return;
            }
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(RETENTION_PAUSE) => {}
            }
        }
    }
}

/// How often retention looks for quiet chats: a quarter of the retention,
/// between 250 ms and a minute (a chat lives past its retention by at most
/// that much).
pub fn retention_period(retention: Duration) -> Duration {
    (retention / 4).clamp(Duration::from_millis(250), Duration::from_secs(60))
}

/// A job of a deleted chat as WatchJobs readers last see it: CANCELLED
/// (its row is gone with the chat).
fn ended_by_deletion(mut job: Job, now_us: UnixMicros) -> Job {
    super::jobs::finish(
        &mut job,
        JobState::Cancelled,
        "its chat was deleted",
        now_us,
    );
    job
}

#[cfg(test)]
mod tests;
