//! A chat's end: deletion (DeleteChat, and `--chat-retention`'s deletion
//! of quiet chats) and the listing of a tenant's chats.
//!
//! A deletion erases the chat's rows in one commit that leaves a tombstone
//! (the chat id and its last revisions, no content), then tells every
//! subscriber of the chat, and every all-chats subscriber, one last
//! injection marked `deleted` (the commit's [`Commit::erase`], through the
//! chats' update path like every change of a chat). A chat re-created under the same id later
//! starts from the tombstone, so its revisions never go back. Other
//! replicas learn of a deletion as of any change: the claim moves the
//! chat's version, they re-read it and find the tombstone
//! ([`Chats::load_into`] offers its injections).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::chats::Change;
use super::commit::{Commit, Erasure};
use super::slot::{ChatSlot, Resident};
use super::{Chats, EngineError};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobState};
use crate::domain::time::UnixMicros;
use crate::store::{BranchOrigin, ChatSettings, Tombstone};

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
    /// The `reason` label of [`crate::telemetry::CHATS_DELETED`].
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
    /// The character it is with, when known.
    pub character_key: Option<String>,
    /// The group it is in (its own, else the one listing it), if any.
    pub group_id: Option<String>,
    /// The chat it is a branch of and the message it was branched at, if
    /// it is a branch.
    pub branched_from: Option<BranchOrigin>,
}

/// The tombstone a chat's erasure leaves: the next revision of each
/// injection key (the running recap's, and each tier's that ever ran),
/// and when.
fn tombstone_of(resident: &Resident, deleted_us: UnixMicros) -> Tombstone {
    let meta = &resident.meta;
    Tombstone {
        revision: meta.revision + 1,
        message_revision: meta
            .message_injection
            .as_ref()
            .map_or(meta.message_revision_floor, |last| last.revision + 1),
        recall_revision: meta
            .recall_injection
            .as_ref()
            .map_or(meta.recall_revision_floor, |last| last.revision + 1),
        deleted_us,
    }
}

/// How many quiet chats one retention pass reads and deletes before it
/// pauses, so that traffic is never queued behind a long run of deletions.
const RETENTION_BATCH: usize = 64;

/// The pause between two batches of a retention pass.
const RETENTION_PAUSE: Duration = Duration::from_millis(50);

impl Chats {
    /// Deletes a chat (DeleteChat): answers with the revision of its last
    /// injection once the erasure is durable.
    ///
    /// # Errors
    /// NotFound for an unknown chat (one that has neither rows nor settings
    /// of its own, also one already deleted); store errors, nothing erased.
    pub async fn delete_chat(&self, chat_id: &ChatKey) -> Result<u64, EngineError> {
        self.delete_chat_as(chat_id, Deletion::Api)
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
        self.delete_chat_as(chat_id, Deletion::Retention { changed_before_us })
            .await
    }

    /// Deletes a chat through the update path: an erasure is a commit
    /// ([`Commit::erase`]), in a task of its own so that a caller that goes
    /// away cannot stop it halfway.
    async fn delete_chat_as(
        &self,
        chat_id: &ChatKey,
        why: Deletion,
    ) -> Result<Option<u64>, EngineError> {
        let (erased, revision) = self
            .update_revision(chat_id, |slot, resident| {
                let has_rows = resident.chat.is_some();
                match why {
                    Deletion::Api
                        if !has_rows && *resident.settings() == ChatSettings::default() =>
                    {
                        return Err(EngineError::unknown_chat(chat_id));
                    }
                    Deletion::Retention { changed_before_us }
                        if !has_rows
                            || resident.updated_us.is_some_and(|u| u >= changed_before_us) =>
                    {
                        return Ok(Change::Answer(false));
                    }
                    _ => {}
                }
                let commit = Commit::erase(Erasure {
                    tombstone: tombstone_of(resident, self.now()),
                    book: self.own_book(slot, resident),
                    reason: why.reason(),
                    end_job: ended_by_deletion,
                });
                Ok(Change::Commit(commit, true))
            })
            .await?;
        Ok(erased.then_some(revision))
    }

    /// The lorebook recapd created for the chat's lore, which goes with
    /// the chat (in the same transaction) unless the settings keep it.
    fn own_book(&self, slot: &ChatSlot, resident: &Resident) -> Option<String> {
        match &resident.meta.lore_book {
            Some(name)
                if resident
                    .effective(&self.global(&slot.key.tenant), &slot.key.id)
                    .lore
                    .delete_book_with_chat =>
            {
                Some(name.clone())
            }
            _ => None,
        }
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
                let identity = crate::domain::profiles::ChatIdentity {
                    chat_id: &chat.chat_id,
                    character_key: chat.character_key.as_deref(),
                    group_id: chat.group_id.as_deref(),
                };
                let settings = global.resolve(identity, Some(&own.overrides));
                let group_id = global.group_of(identity).map(str::to_owned);
                ChatSummary {
                    enabled: settings.chat_enabled(own.enabled),
                    message_count: chat.message_count,
                    revision: chat.revision,
                    updated_us: chat.updated_us,
                    character_key: chat.character_key,
                    group_id,
                    branched_from: chat.branched_from,
                    chat_id: chat.chat_id,
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
    super::job_queue::finish(
        &mut job,
        JobState::Cancelled,
        "its chat was deleted",
        now_us,
    );
    job
}

#[cfg(test)]
mod tests;
