//! Following other replicas (shared store only): their commits arrive as
//! hints ([`Change`]); a hinted chat this replica holds, or that someone
//! here watches, is re-read from the store and its newer injections pushed
//! to this replica's subscribers. A hint is never trusted for content, only
//! as a reason to re-read, and a periodic resync re-reads whatever a lost
//! hint would have named.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::mpsc;

use super::{Chats, EngineError};
use crate::domain::ids::ChatKey;
use crate::domain::jobs::Job;
use crate::store::Change;
use crate::telemetry;

impl Chats {
    /// Follows other replicas' commits until `changes` ends (the store
    /// closed) or the task is aborted (shutdown); resyncs every
    /// `resync_every` as well.
    pub async fn follow(
        self,
        mut changes: mpsc::UnboundedReceiver<Change>,
        resync_every: Duration,
    ) {
        let mut tick = tokio::time::interval(resync_every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                change = changes.recv() => match change {
                    None => return,
                    Some(Change::Chats(chats)) => {
                        for (chat_id, clock) in chats {
                            let engine = self.clone();
                            self.spawn_background(async move {
                                engine.catch_up(&chat_id, clock, "hint").await;
                            });
                        }
                    }
                    Some(Change::GlobalSettings(_)) => {
                        if let Err(error) = self.reload_global_settings().await {
                            tracing::warn!(%error, "cannot re-read global settings; the next resync retries");
                        }
                    }
                    Some(Change::Resync) => self.resync().await,
                },
                _ = tick.tick() => self.resync().await,
            }
        }
    }

    /// Re-reads a chat another replica moved to `version`, if this
    /// replica holds an older state of it or someone here watches it.
    async fn catch_up(&self, chat_id: &ChatKey, version: u64, cause: &'static str) {
        // WatchJobs readers learn of other replicas' job changes by this
        // re-read too, so they count as watching every chat.
        let everything_watched =
            self.inner.all_chats.receiver_count() > 0 || self.inner.jobs.watched();
        let slot = match self.inner.cache.resident(chat_id) {
            Some(slot) => slot,
            None if everything_watched => self.slot(chat_id),
            None => return,
        };
        let mut guard = slot.lock().await;
        match guard.as_ref() {
            Some(held) if held.version >= version => return,
            None if !everything_watched && slot.latest.receiver_count() == 0 => {
                slot.behind.store(true, Ordering::Release);
                return;
            }
            _ => {}
        }
        metrics::counter!(telemetry::REPLICA_RELOADS, "cause" => cause).increment(1);
        // Dropping the old state also stops its debounce timer; the load
        // schedules the refresh again if it is still owed.
        let held_jobs = guard.as_ref().map(|held| held.jobs.clone());
        let held_rows = guard.as_ref().is_some_and(|held| held.chat.is_some());
        *guard = None;
        self.account(&slot, None);
        if !everything_watched && slot.latest.receiver_count() == 0 {
            // Nobody here to tell: the next call that needs the chat reads
            // it, instead of every change of the other replica doing so.
            slot.behind.store(true, Ordering::Release);
            return;
        }
        if let Err(error) = self.load_into(&slot, &mut guard, true).await {
            slot.behind.store(true, Ordering::Release);
            tracing::warn!(chat = %chat_id, %error, "cannot re-read a chat another replica changed; the next resync retries");
            return;
        }
        if held_rows && guard.as_ref().is_some_and(|loaded| loaded.chat.is_none()) {
            // Another replica deleted it: its place under --max-chats is free.
            self.free_chat_place();
        }
        if self.inner.jobs.watched()
            && let Some(loaded) = guard.as_ref()
        {
            let loaded_jobs = loaded.jobs.clone();
            // Told under the chat's lock, so that no change this replica
            // makes to these jobs next can reach readers before them.
            self.tell_jobs_changed_elsewhere(chat_id, held_jobs.unwrap_or_default(), loaded_jobs)
                .await;
            drop(guard);
        }
    }

    /// Tells WatchJobs readers what another replica did to a chat's jobs:
    /// each job now held that is new or changed, and the final state of each
    /// job held before that has since ended.
    async fn tell_jobs_changed_elsewhere(
        &self,
        chat_id: &ChatKey,
        before: Vec<Job>,
        now: Vec<Job>,
    ) {
        for job in &now {
            let same = before
                .iter()
                .any(|old| old.id == job.id && old.updated_us == job.updated_us);
            if !same {
                self.inner.jobs.tell(job.clone());
            }
        }
        for old in before
            .iter()
            .filter(|old| !now.iter().any(|j| j.id == old.id))
        {
            match self.inner.store.job(&chat_id.tenant, &old.id).await {
                Ok(Some(ended)) => {
                    self.inner.jobs.tell(ended);
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(chat = %chat_id, job = %old.id, %error, "cannot read a job another replica ended")
                }
            }
        }
    }

    /// Re-reads every tenant's global settings; newer ones held here (a
    /// change made since) are kept.
    pub(super) async fn reload_global_settings(&self) -> Result<(), EngineError> {
        for global in self.inner.store.global_settings().await? {
            self.set_global(&global.tenant, global.patch, global.profiles, global.clock);
        }
        Ok(())
    }

    /// Brings every chat held here up to the store, and loads the chats that
    /// owe a refresh and have been quiet for a while, so that one replica
    /// runs it even if the replica that owed it stopped (a chat in a burst
    /// of changes is left to the replicas taking them).
    async fn resync(&self) {
        if let Err(error) = self.reload_global_settings().await {
            tracing::warn!(%error, "cannot re-read global settings; the next resync retries");
        }
        if let Err(error) = self.resync_chats().await {
            tracing::warn!(%error, "resync failed; the next one retries");
        }
    }

    async fn resync_chats(&self) -> Result<(), EngineError> {
        let Some(replicas) = self.inner.replicas.clone() else {
            return Ok(());
        };
        let mut held: Vec<(ChatKey, u64)> = Vec::new();
        for slot in self.inner.cache.slots() {
            // A chat being worked on is claimed by its commit anyway.
            let Ok(state) = slot.state.try_lock() else {
                continue;
            };
            match state.as_ref() {
                Some(resident) => held.push((slot.key.clone(), resident.version)),
                // Watched but not in memory (a failed commit or re-read):
                // read it now, so its subscribers are not left behind.
                None if slot.latest.receiver_count() > 0 => {
                    drop(state);
                    self.catch_up(&slot.key, u64::MAX, "resync").await;
                }
                None => {}
            }
        }
        let ids: Vec<ChatKey> = held.iter().map(|(id, _)| id.clone()).collect();
        let stored = replicas.clocks(&ids).await?;
        let owed = replicas
            .chats_owing_refresh_quiet_for(super::TAKEOVER_GRACE)
            .await?;
        let held: std::collections::HashMap<ChatKey, u64> = held.into_iter().collect();
        self.announce_changed_chats().await?;
        for (chat_id, clock) in stored {
            if held.get(&chat_id).is_some_and(|&g| g < clock) {
                self.catch_up(&chat_id, clock, "resync").await;
            }
        }
        for chat_id in owed {
            if held.contains_key(&chat_id) {
                continue;
            }
            let slot = self.slot(&chat_id);
            drop(self.lock(&slot).await?);
        }
        Ok(())
    }

    /// For all-chats subscribers: re-reads every chat changed since the
    /// previous resync (minus a margin), held here or not, since a
    /// notification this replica missed named it.
    async fn announce_changed_chats(&self) -> Result<(), EngineError> {
        const MARGIN: Duration = Duration::from_secs(2);
        let Some(replicas) = self.inner.replicas.clone() else {
            return Ok(());
        };
        let watched = self.inner.all_chats.receiver_count() > 0;
        // Nothing to catch up on before the first look.
        let since = self
            .inner
            .last_resync_ms
            .lock()
            .filter(|_| watched)
            .map(|last| last.saturating_sub(MARGIN));
        let (changed, now) = replicas.changed_since(since).await?;
        *self.inner.last_resync_ms.lock() = Some(now);
        for (chat_id, clock) in changed {
            self.catch_up(&chat_id, clock, "resync").await;
        }
        Ok(())
    }
}
