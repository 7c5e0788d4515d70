//! Refreshes asked for as such: one chat now (the Refresh RPC), every chat
//! of a tenant (after a global change), and those a stop left owed.

use std::sync::Arc;

use super::chats::Change;
use super::commit::Commit;
use super::{Chats, EngineError, Next};
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::{Injection, Trigger};

/// How many chats a global change refreshes at the same time.
const PARALLEL_REFRESHES: usize = 32;

impl Chats {
    /// Refreshes a known chat now; `NotFound` for an unknown one.
    pub(super) async fn refresh_chat(
        &self,
        chat_id: &ChatKey,
        trigger: Trigger,
    ) -> Result<Arc<Injection>, EngineError> {
        let slot = self
            .update(chat_id, |slot, resident| {
                if resident.chat.is_none() {
                    return Err(EngineError::unknown_chat(chat_id));
                }
                let commit = Commit::one(Vec::new(), Next::Refresh(trigger));
                Ok(Change::Commit(commit, slot.clone()))
            })
            .await?;
        let latest = slot.latest.borrow().scene.clone();
        latest.ok_or_else(|| EngineError::Panicked("a refresh left no injection".into()))
    }

    /// Refreshes every known chat (after a global change), a few at a time;
    /// the first error is returned after all have been tried.
    pub(super) async fn refresh_every_chat(
        &self,
        tenant: &Tenant,
        trigger: Trigger,
    ) -> Result<(), EngineError> {
        let ids = self.inner.store.chats_of(tenant).await?;
        self.refresh_chats(ids, trigger).await
    }

    /// Refreshes `ids`, a few at a time; the first error is returned after
    /// all have been tried.
    pub(super) async fn refresh_chats(
        &self,
        ids: Vec<ChatKey>,
        trigger: Trigger,
    ) -> Result<(), EngineError> {
        let permits = Arc::new(tokio::sync::Semaphore::new(PARALLEL_REFRESHES));
        let mut tasks = tokio::task::JoinSet::new();
        for id in ids {
            let engine = self.clone();
            let permits = permits.clone();
            tasks.spawn(crate::telemetry::spans::carry(async move {
                let _permit = permits.acquire().await;
                engine.refresh_chat(&id, trigger).await.map(drop)
            }));
        }
        let mut first_error = None;
        while let Some(result) = tasks.join_next().await {
            if let Ok(Err(error)) = result {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Counts with the LLM endpoint the texts that refreshes estimated
    /// (the LLM_ENDPOINT tokenizer), and refreshes their chats again once
    /// counted, until `stop`; returns at once on a server without an LLM
    /// endpoint.
    pub async fn run_token_counts(self, stop: tokio_util::sync::CancellationToken) {
        let Some(endpoint) = self.tokenizers().endpoint().cloned() else {
            return;
        };
        let refresh = |chats: Vec<ChatKey>| {
            let engine = self.clone();
            async move {
                // A chat deleted meanwhile has nothing to refresh.
                if let Err(error) = engine.refresh_chats(chats, Trigger::TokensCounted).await {
                    tracing::debug!(%error, "a refresh after token counts failed");
                }
            }
        };
        endpoint.run(refresh, stop).await;
    }

    /// Refreshes, once, every chat that owed a debounced refresh when the
    /// previous process stopped. Returns how many were refreshed.
    pub async fn refresh_owed(&self) -> Result<usize, EngineError> {
        let ids = self.inner.store.chats_owing_refresh().await?;
        for id in &ids {
            if self.shared() {
                // Maybe owed by a replica still running: loading the chat
                // schedules the refresh after a grace (see `load_into`).
                let slot = self.slot(id);
                drop(self.lock(&slot).await?);
            } else {
                self.refresh_chat(id, Trigger::Startup).await?;
            }
        }
        Ok(ids.len())
    }
}
