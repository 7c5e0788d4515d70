//! A chat's deletion as a commit ([`Commit::erase`](super::Commit::erase)):
//! its rows erased in one commit that leaves a tombstone (the chat id and
//! its last revisions, no content), claimed as every commit is; then its
//! memory emptied and its subscribers, and every all-chats subscriber,
//! told one last injection marked `deleted`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::super::slot::{ChatSlot, Resident};
use super::super::{Chats, EngineError};
use super::{Committed, Erased, Erasure};
use crate::domain::ids::ChatKey;
use crate::domain::refresh::{Injection, InjectionKey};
use crate::store::{self, Tombstone, Write};
use crate::telemetry;

impl Chats {
    /// Erases the locked chat in one commit that leaves its tombstone (and
    /// deletes its own lorebook, when named and stored), then empties its
    /// memory and tells its subscribers.
    pub(super) async fn erase(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        erasure: Erasure,
    ) -> Result<Committed, EngineError> {
        let Erasure {
            tombstone,
            book,
            reason,
            end_job,
        } = erasure;
        let mut writes = vec![Write::DeleteChat {
            chat: slot.key.clone(),
            tombstone,
        }];
        let deletion = match &book {
            Some(name) => {
                self.lorebooks()
                    .book_deletion(&slot.key.tenant, name)
                    .await?
            }
            None => None,
        };
        if let Some(deletion) = &deletion {
            writes.push(deletion.write.clone());
        }
        if let Err(error) = self.commit_claimed(slot, resident, writes).await {
            tracing::warn!(chat = %slot.key, %error, "deletion failed; the chat reloads from the store");
            return Err(error.into());
        }
        if let Some(deletion) = deletion {
            deletion.done();
        }
        let had_rows = resident.chat.is_some();
        let open_jobs = std::mem::take(&mut resident.jobs);
        // Dropping the old state stops its pending debounced refresh.
        *resident = Resident::from_store(
            &slot.key,
            store::LoadedChat {
                clock: resident.version,
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
        metrics::counter!(telemetry::CHATS_DELETED, "reason" => reason).increment(1);
        tracing::info!(chat = %slot.key, reason, revision = tombstone.revision, "chat deleted");
        Ok(Committed {
            revision: tombstone.revision,
            debounce: None,
            indexing: false,
            announce: open_jobs
                .into_iter()
                .map(|job| end_job(job, tombstone.deleted_us))
                .collect(),
            erased: Some(Erased { had_rows }),
        })
    }
}

/// The injections a deleted chat's subscribers are told last, from its
/// tombstone: one for `auto_recap_scene`, and one for each tier
/// (message recaps, recall) that ever ran.
pub(in crate::engine) fn deleted_injections(
    chat: &ChatKey,
    tombstone: &Tombstone,
) -> Vec<Arc<Injection>> {
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

#[cfg(test)]
mod tests;
