//! The chats' update path: one way to change a chat.
//!
//! [`Chats::update`] takes a chat's key and a change: it finds the chat's
//! slot, locks it (loading the chat if needed), runs the change on the
//! chat in memory, commits what the change asks ([`Change`]) and, when
//! another replica changed the chat first, runs it all again on a fresh
//! read (the engine's [`Retry`](crate::engine::retry::Retry) policy). The chat operations
//! of clients go through it, deletion included ([`Commit::erase`]), with
//! two exceptions: publish, whose events queue on the chat's slot and
//! whoever holds the lock commits them as one group (`crate::engine::publish`);
//! and the job requests and job lanes (`crate::engine::jobs`), which lock and
//! commit on their own through [`Chats::commit`].
//!
//! [`Chats::commit`] runs the commit itself ([`Chats::commit_locked`],
//! which says what follows and does none of it), in a task of its own
//! unless asked otherwise, then [`Chats::carry_out`] carries out what
//! follows while the chat is still locked: debounced refreshes scheduled,
//! the index runner woken, changed jobs announced. A debounce timer's
//! refresh calls the two halves itself, in the timer's task.

use std::sync::Arc;

use super::Chats;
use crate::domain::ids::ChatKey;
use crate::engine::EngineError;
use crate::engine::commit::{Commit, Committed, Erased, Task};
use crate::engine::slot::{ChatSlot, LoadedChat};

/// What a change made by [`Chats::update`] asks for, once it changed the
/// chat in memory.
pub(in crate::engine) enum Change<T> {
    /// Commit `Commit`; answer with the value once it is durable (a failed
    /// commit drops it).
    Commit(Commit, T),
    /// Nothing to commit: answer with the value now.
    Answer(T),
}

impl Chats {
    /// Changes the chat `key`: locks it (loaded), runs `change` on it,
    /// commits what the change asks, and runs it all again on a fresh read
    /// while another replica changed the chat first. An error of `change`
    /// answers as it is, and commits nothing (the change must then have
    /// left the chat as it was).
    pub(in crate::engine) async fn update<T>(
        &self,
        key: &ChatKey,
        change: impl Fn(&Arc<ChatSlot>, &mut LoadedChat) -> Result<Change<T>, EngineError> + Sync,
    ) -> Result<T, EngineError> {
        self.update_revision(key, change)
            .await
            .map(|(value, _)| value)
    }

    /// [`Chats::update`], answering also with the chat's revision once
    /// committed (as it is, when there was nothing to commit).
    pub(in crate::engine) async fn update_revision<T>(
        &self,
        key: &ChatKey,
        change: impl Fn(&Arc<ChatSlot>, &mut LoadedChat) -> Result<Change<T>, EngineError> + Sync,
    ) -> Result<(T, u64), EngineError> {
        self.update_async(key, |slot, mut chat| {
            let changed = change(&slot, &mut chat).map(|change| (chat, change));
            std::future::ready(changed)
        })
        .await
    }

    /// [`Chats::update_revision`] with a change that awaits (it holds the
    /// locked chat meanwhile): given the chat's slot and the locked chat,
    /// it hands the chat back with what it asks.
    pub(in crate::engine) async fn update_async<T, F, Fut>(
        &self,
        key: &ChatKey,
        change: F,
    ) -> Result<(T, u64), EngineError>
    where
        F: Fn(Arc<ChatSlot>, LoadedChat) -> Fut + Sync,
        Fut: Future<Output = Result<(LoadedChat, Change<T>), EngineError>>,
    {
        let change = &change;
        self.retrying(move || async move {
            let slot = self.slot(key);
            let chat = self.lock(&slot).await?;
            match change(slot.clone(), chat).await? {
                (chat, Change::Answer(value)) => Ok((value, chat.meta.revision)),
                (chat, Change::Commit(commit, value)) => {
                    let revision = self.commit(&slot, chat, commit).await?;
                    Ok((value, revision))
                }
            }
        })
        .await
    }

    /// Commits `commit` on the locked chat and lets the lock go, having
    /// carried out what follows (see [`Chats::commit_locked`]): the
    /// debounce timer (re)scheduled, the index runner asked for an index
    /// job, changed jobs announced (while the chat is still locked, so
    /// WatchJobs readers see each job's changes in order). Answers with
    /// the revision of the (last) operation. Runs in a task of its own
    /// unless [`Commit::in_caller_task`], so that a caller that goes away
    /// (a cancelled RPC) cannot stop it between the commit and the memory
    /// update.
    pub(in crate::engine) async fn commit(
        &self,
        slot: &Arc<ChatSlot>,
        chat: LoadedChat,
        commit: Commit,
    ) -> Result<u64, EngineError> {
        match commit.task() {
            Task::Caller => self.commit_and_carry_out(slot, chat, commit).await,
            Task::Own => {
                let chats = self.clone();
                let slot = slot.clone();
                tokio::spawn(crate::telemetry::spans::carry(async move {
                    chats.commit_and_carry_out(&slot, chat, commit).await
                }))
                .await
                .map_err(EngineError::from_join)?
            }
        }
    }

    /// [`Chats::commit`] in the current task.
    async fn commit_and_carry_out(
        &self,
        slot: &Arc<ChatSlot>,
        chat: LoadedChat,
        commit: Commit,
    ) -> Result<u64, EngineError> {
        let (mut chat, committed) = self.commit_locked(slot, chat, commit, self).await?;
        Ok(self.carry_out(slot, &mut chat, committed))
    }

    /// Carries out what follows a commit, the chat still locked; returns
    /// the commit's revision.
    pub(in crate::engine) fn carry_out(
        &self,
        slot: &Arc<ChatSlot>,
        chat: &mut LoadedChat,
        committed: Committed,
    ) -> u64 {
        let Committed {
            revision,
            debounce,
            indexing,
            announce,
            erased,
        } = committed;
        if let Some(owed) = debounce {
            self.schedule_debounce(slot, chat, owed);
        }
        if indexing {
            self.inner.jobs.want_index(&slot.key);
        }
        for job in announce {
            self.inner.jobs.announce(job);
        }
        if let Some(Erased { had_rows: true }) = erased {
            self.free_chat_place();
        }
        revision
    }
}
