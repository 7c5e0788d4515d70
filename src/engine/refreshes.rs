//! Refreshes asked for as such: one chat now (the Refresh RPC), every chat
//! of a tenant (after a global change), and those a stop left owed.

use std::sync::Arc;

use super::{Engine, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::{tenant_of, unscoped};
use crate::domain::refresh::{Injection, Trigger};
use crate::store::StoreError;

/// How many chats a global change refreshes at the same time.
const PARALLEL_REFRESHES: usize = 32;

impl Engine {
    /// Refreshes a known chat now; `NotFound` for an unknown one.
    pub(super) async fn refresh_chat(
        &self,
        chat_id: &str,
        trigger: Trigger,
    ) -> Result<Arc<Injection>, EngineError> {
        self.retrying(|| self.refresh_chat_once(chat_id, trigger))
            .await
    }

    async fn refresh_chat_once(
        &self,
        chat_id: &str,
        trigger: Trigger,
    ) -> Result<Arc<Injection>, EngineError> {
        let slot = self.slot(chat_id);
        let guard = self.lock(&slot).await?;
        if guard.as_ref().is_none_or(|r| r.chat.is_none()) {
            return Err(DomainError::NotFound(format!("chat {:?}", unscoped(chat_id))).into());
        }
        self.finish(&slot, guard, Vec::new(), Next::Refresh(trigger))
            .await?;
        let latest = slot.latest.borrow().scene.clone();
        latest.ok_or_else(|| StoreError::Database("refresh left no injection".into()).into())
    }

    /// Refreshes every known chat (after a global change), a few at a time;
    /// the first error is returned after all have been tried.
    pub(super) async fn refresh_every_chat(
        &self,
        tenant: &str,
        trigger: Trigger,
    ) -> Result<(), EngineError> {
        let store = self.inner.store.clone();
        let mut ids = tokio::task::spawn_blocking(move || store.chat_ids())
            .await
            .map_err(|e| StoreError::Database(format!("list task failed: {e}")))??;
        ids.retain(|id| tenant_of(id) == tenant);
        let permits = Arc::new(tokio::sync::Semaphore::new(PARALLEL_REFRESHES));
        let mut tasks = tokio::task::JoinSet::new();
        for id in ids {
            let engine = self.clone();
            let permits = permits.clone();
            tasks.spawn(async move {
                let _permit = permits.acquire().await;
                engine.refresh_chat(&id, trigger).await.map(drop)
            });
        }
        let mut first_error = None;
        while let Some(result) = tasks.join_next().await {
            if let Ok(Err(error)) = result {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Refreshes, once, every chat that owed a debounced refresh when the
    /// previous process stopped. Returns how many were refreshed.
    pub async fn refresh_owed(&self) -> Result<usize, EngineError> {
        let store = self.inner.store.clone();
        let ids = tokio::task::spawn_blocking(move || store.chats_needing_refresh())
            .await
            .map_err(|e| StoreError::Database(format!("list task failed: {e}")))??;
        for id in &ids {
            if self.inner.shared {
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
