//! The end of every chat operation, [`Chats::commit_locked`], in three
//! steps: work out the chat's new row (running the refresh the operation
//! asked for), commit it with the operation's writes, then update memory
//! and tell subscribers. Several operations of one chat may share the steps
//! ([`Pending`]): each is planned after the one before, all commit in one
//! group, and each is published in order. A chat's deletion is a commit
//! too ([`Commit::erase`]): the same claim, the same store commit, the same
//! memory drop on failure.
//!
//! A commit says what follows; it does not do it. It answers with
//! [`Committed`]: the jobs to announce, the debounced refreshes to
//! schedule, whether the chat wants an index job, the jobs of an erased
//! chat; its caller (the chats' update path, `super::chats`) carries them
//! out while the chat is still locked. The refresh reads the recall tier's
//! lines through [`TierSource`], which its caller gives it. So this module
//! names none of the job queue, the debounce timers or recall.
//!
//! A commit that fails (a store error, a conflict with another replica, a
//! panic) drops the chat's memory, in one place: the next operation reads
//! the chat again, so memory never holds what the store does not.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;

use super::slot::{ChatSlot, LoadedChat, Resident};
use super::{Chats, EngineError, Next};
use crate::domain::chat::Chat;
use crate::domain::ids::{ChatKey, ClaimKey};
use crate::domain::jobs::Job;
use crate::domain::recall::tier::TierLine;
use crate::domain::refresh::{Injection, Trigger};
use crate::domain::settings::Settings;
use crate::domain::time::UnixMicros;
use crate::domain::tokens::CounterKey;
use crate::store::{ChatMeta, StoreError, Tombstone, Write};
use crate::telemetry::spans;

mod erase;
mod plan;

pub(super) use erase::deleted_injections;

/// Where a refresh reads its recall tier's lines: given by the commit's
/// caller (the engine's recall part implements it), so that the commit
/// path does not name recall.
pub(super) trait TierSource: Sync {
    /// The recall tier's lines for a refresh of the locked chat `key`,
    /// best first (see `Chats::recall_tier_lines`).
    fn tier_lines(
        &self,
        key: &ChatKey,
        resident: &Resident,
        chat: &Chat,
        settings: &Settings,
    ) -> Vec<TierLine>;
}

/// What follows a durable commit, for its caller to carry out while the
/// chat is still locked (in this order: debounces, indexing, jobs).
#[must_use = "a commit's follow-ups must be carried out"]
pub(super) struct Committed {
    /// The revision the (last) operation answers with.
    pub revision: u64,
    /// The debounced refresh to (re)schedule, if the operations left one
    /// owed (a later refresh in the same group covers the earlier ones).
    pub debounce: Option<Debounced>,
    /// The chat's recall index lacks vectors and no index job of it is
    /// open: the index runner should queue one.
    pub indexing: bool,
    /// Jobs the operations changed, as they now are, to announce in order.
    pub announce: Vec<Job>,
    /// The chat was erased ([`Commit::erase`]).
    pub erased: Option<Erased>,
}

/// A debounced refresh a commit leaves owed: the last debounced trigger of
/// its operations and the chat's delay, plus how many of its debounced
/// events coalesced with a refresh already owed (counted in
/// `recapd_debounced_events_coalesced_total`, exactly as if each event had
/// been scheduled on its own).
pub(super) struct Debounced {
    /// The trigger the refresh will run with.
    pub trigger: Trigger,
    /// How long the chat must stay quiet first (`debounce_ms`).
    pub delay: Duration,
    /// Events of this commit that joined an owed refresh.
    pub coalesced: u64,
}

/// What an erasure leaves its caller to do (its chat's open jobs, ended,
/// are in [`Committed::announce`]).
pub(super) struct Erased {
    /// The chat had rows (it held a place under `--max-chats`).
    pub had_rows: bool,
}

/// A chat's erasure ([`Commit::erase`]): its rows go, leaving `tombstone`.
pub(super) struct Erasure {
    /// What the chat leaves.
    pub tombstone: Tombstone,
    /// The chat's own lorebook, which goes in the same transaction.
    pub book: Option<String>,
    /// Why (the `reason` label of `recapd_chats_deleted_total`).
    pub reason: &'static str,
    /// A job of the chat as its readers last see it, ended by the
    /// deletion at the given time (its row goes with the chat).
    pub end_job: fn(Job, UnixMicros) -> Job,
}

/// Operations on one locked chat, changed in memory and planned, that
/// commit together: one group, so one fsync (see [`Chats::stage`]).
pub(super) struct Pending {
    /// The chat's effective settings, the same for every operation of the
    /// group.
    settings: Arc<Settings>,
    /// The rows the operations wrote, in order.
    writes: Vec<Write>,
    /// When the latest operation that wrote rows of the chat did.
    changed_at: Option<UnixMicros>,
    /// Each operation's plan, in order.
    outcomes: Vec<Outcome>,
}

/// What [`Chats::commit_locked`] commits, and how: built with
/// [`Commit::one`], [`Commit::group`] or [`Commit::erase`], then
/// [`Commit::with_jobs`] and [`Commit::in_caller_task`] where they apply.
pub(super) struct Commit {
    /// The operations.
    work: Work,
    /// Jobs the operations changed, as they now are: once durable, each is
    /// logged, counted and told to WatchJobs readers while the chat is
    /// still locked, so readers see each job's changes in order.
    jobs: Vec<Job>,
    /// The task the commit runs in.
    task: Task,
}

/// The operations of a [`Commit`].
enum Work {
    /// One operation whose change the chat already holds: its rows, and
    /// the refresh it asks for.
    One { writes: Vec<Write>, next: Next },
    /// Operations already planned with [`Chats::stage`].
    Group(Pending),
    /// The chat's deletion: its rows erased, a tombstone left, with the
    /// chat's own lorebook when named.
    Erase(Erasure),
}

/// The task a [`Commit`] runs in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Task {
    /// A task of its own, so that a caller that goes away (a cancelled
    /// RPC) cannot stop it between the commit and the memory update.
    Own,
    /// The caller's, which nothing cancels (a debounce timer, the task
    /// serving a publish group).
    Caller,
}

impl Commit {
    /// One operation: its rows, and per `next` a refresh.
    pub fn one(writes: Vec<Write>, next: Next) -> Commit {
        Commit {
            work: Work::One { writes, next },
            jobs: Vec::new(),
            task: Task::Own,
        }
    }

    /// The operations planned in `pending`, in one group.
    pub fn group(pending: Pending) -> Commit {
        Commit {
            work: Work::Group(pending),
            jobs: Vec::new(),
            task: Task::Own,
        }
    }

    /// The operations changed `jobs` (announced once durable).
    pub fn with_jobs(mut self, jobs: Vec<Job>) -> Commit {
        self.jobs.extend(jobs);
        self
    }

    /// The erasure of the locked chat (see [`Erasure`]).
    pub fn erase(erasure: Erasure) -> Commit {
        Commit {
            work: Work::Erase(erasure),
            jobs: Vec::new(),
            task: Task::Own,
        }
    }

    /// Runs in the caller's task: for callers nothing cancels.
    pub fn in_caller_task(mut self) -> Commit {
        self.task = Task::Caller;
        self
    }

    /// The task the commit runs in.
    pub fn task(&self) -> Task {
        self.task
    }
}

/// What the first step decided: the chat's new row, and what to do once it
/// is durable.
struct Outcome {
    meta: ChatMeta,
    /// New injections to push, the running recap's first.
    fresh: Vec<Arc<Injection>>,
    /// A debounced refresh to (re)schedule with this trigger.
    schedule: Option<Trigger>,
    /// The counter the fresh injections' token counts were made with.
    counted_with: Option<CounterKey>,
}

impl Chats {
    /// Commits `commit` on the locked chat, in the current task: the
    /// chat's row and the operations' rows in one group; then memory takes
    /// the new row and subscribers get the new injections. Answers with
    /// the chat, still locked, and what follows ([`Committed`]), for the
    /// caller to carry out. On any failure (a store error, a conflict, a
    /// panic, caught and answered as [`EngineError::Panicked`]) the chat's
    /// memory is dropped, the lock let go, and none of the operations is
    /// applied. `tiers` gives the recall tier's lines to a refresh.
    pub(super) async fn commit_locked(
        &self,
        slot: &Arc<ChatSlot>,
        mut chat: LoadedChat,
        commit: Commit,
        tiers: &dyn TierSource,
    ) -> Result<(LoadedChat, Committed), EngineError> {
        let Commit {
            work,
            jobs,
            task: _,
        } = commit;
        let committing = async {
            match work {
                Work::One { writes, next } => {
                    let mut pending = self.pending(slot, &chat);
                    let revision = self.stage(slot, &chat, &mut pending, writes, next, tiers);
                    self.commit_pending(slot, &mut chat, pending, revision)
                        .await
                }
                Work::Group(pending) => {
                    let revision = pending.revision(&chat);
                    self.commit_pending(slot, &mut chat, pending, revision)
                        .await
                }
                Work::Erase(erasure) => self.erase(slot, &mut chat, erasure).await,
            }
        };
        let result = match AssertUnwindSafe(committing).catch_unwind().await {
            Ok(result) => result,
            Err(panic) => Err(panic_while_locked(slot, &*panic)),
        };
        match result {
            Ok(mut committed) => {
                // The chat's memory changed: count it.
                self.account(slot, Some(&chat));
                if committed.announce.is_empty() {
                    committed.announce = jobs;
                } else {
                    committed.announce.extend(jobs);
                }
                Ok((chat, committed))
            }
            Err(error) => {
                let unloaded = chat.unload(slot);
                self.account(slot, unloaded.as_ref());
                Err(error)
            }
        }
    }

    /// After a panic while the chat was locked outside a commit: its
    /// memory, which may hold a change never committed, is dropped (the
    /// next operation re-reads the store). Returns the error the callers
    /// get.
    pub(super) fn forget_after_panic(
        &self,
        slot: &ChatSlot,
        chat: LoadedChat,
        panic: &(dyn std::any::Any + Send),
    ) -> EngineError {
        let error = panic_while_locked(slot, panic);
        let unloaded = chat.unload(slot);
        self.account(slot, unloaded.as_ref());
        error
    }

    /// A group of operations on the locked chat, empty: operations join it
    /// with [`Chats::stage`] and commit together with [`Commit::group`].
    pub(super) fn pending(&self, slot: &ChatSlot, resident: &Resident) -> Pending {
        Pending {
            settings: resident.effective(&self.global(&slot.key.tenant), &slot.key.id),
            writes: Vec::new(),
            changed_at: None,
            outcomes: Vec::new(),
        }
    }

    /// Plans one operation whose change `resident` already holds (its rows
    /// in `writes`; per `next`, a refresh) after those already in `pending`,
    /// and adds it there (a refresh reads its recall lines from `tiers`).
    /// Returns the revision the operation answers with
    /// once committed.
    pub(super) fn stage(
        &self,
        slot: &ChatSlot,
        resident: &Resident,
        pending: &mut Pending,
        writes: Vec<Write>,
        next: Next,
        tiers: &dyn TierSource,
    ) -> u64 {
        // The recall index cuts the messages written again before the
        // refresh below reads it.
        resident.recall.lock().note_writes(&writes);
        let base = pending.outcomes.last().map_or(&resident.meta, |o| &o.meta);
        let outcome = self.plan(slot, resident, base, &pending.settings, next, tiers);
        // The operation wrote rows of the chat: it changed (a refresh
        // alone does not; see `Write::Activity`).
        if !writes.is_empty() {
            pending.changed_at = Some(self.now());
        }
        pending.writes.extend(writes);
        let revision = outcome.meta.revision;
        pending.outcomes.push(outcome);
        revision
    }

    /// Commits the operations of `pending` in one group with the chat's
    /// row; then updates memory and tells subscribers, operation by
    /// operation in order. Answers with what follows, `revision` its
    /// answer. On a store error memory is left as it was, for
    /// [`Chats::commit_locked`] to drop.
    async fn commit_pending(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        pending: Pending,
        revision: u64,
    ) -> Result<Committed, EngineError> {
        let Pending {
            settings,
            mut writes,
            changed_at,
            outcomes,
        } = pending;
        // Most debounced events leave the row as it is: skip the write.
        if let (Some(_), Some(last)) = (&resident.chat, outcomes.last())
            && (last.meta != resident.meta || !resident.persisted)
        {
            writes.push(Write::Chat {
                chat: slot.key.clone(),
                meta: last.meta.clone(),
            });
        }
        if let (Some(updated_us), Some(chat)) = (changed_at, &resident.chat) {
            writes.push(Write::Activity {
                chat: slot.key.clone(),
                message_count: chat.len() as u64,
                updated_us,
            });
        }
        if let Err(error) = self.commit_claimed(slot, resident, writes).await {
            match &error {
                StoreError::Conflict(_) => {
                    tracing::debug!(chat = %slot.key, "changed by another replica; reloading")
                }
                _ => {
                    tracing::warn!(chat = %slot.key, %error, "commit failed; chat reloads from the store")
                }
            }
            return Err(error.into());
        }
        if resident.chat.is_some() && changed_at.is_some() {
            resident.updated_us = changed_at;
        }
        let mut debounce: Option<Debounced> = None;
        let mut coalesced = 0;
        for outcome in outcomes {
            if !outcome.fresh.is_empty() {
                // A refresh covers the debounced refreshes asked before it.
                debounce = None;
            }
            if let Some(trigger) = self.publish_committed(slot, resident, outcome) {
                if debounce.is_some() || resident.debounce.is_some() {
                    coalesced += 1;
                }
                debounce = Some(Debounced {
                    trigger,
                    delay: Duration::from_millis(settings.chat.debounce_ms),
                    coalesced: 0,
                });
            }
        }
        if let Some(owed) = debounce.as_mut() {
            owed.coalesced = coalesced;
        } else if coalesced > 0 {
            // Every owed refresh was covered by a later one: the events
            // still coalesced when they came.
            metrics::counter!(crate::telemetry::DEBOUNCE_COALESCED).increment(coalesced);
        }
        Ok(Committed {
            revision,
            debounce,
            indexing: self.wants_indexing(resident, &settings),
            announce: Vec::new(),
            erased: None,
        })
    }

    /// Commits `writes` of the locked chat; with a shared store (and
    /// something to write), claiming the chat at the version its state was
    /// read at first, and moving that version on once durable. The one
    /// place where a chat's claim is made.
    async fn commit_claimed(
        &self,
        slot: &ChatSlot,
        resident: &mut Resident,
        mut writes: Vec<Write>,
    ) -> Result<(), StoreError> {
        let claimed = self.shared() && !writes.is_empty();
        if claimed {
            writes.insert(
                0,
                Write::Claim {
                    key: ClaimKey::Chat(slot.key.clone()),
                    clock: resident.version,
                },
            );
        }
        if let Err(error) = self.inner.store.commit(writes).await {
            // With a shared store, a job fence that moved means memory was
            // behind another replica (which claims the chat with every job
            // change): re-read and re-run, as for a claim conflict. A runner
            // whose job was really taken over finds that on the re-read.
            return Err(match error {
                StoreError::Fenced(_) if claimed => {
                    StoreError::Conflict(ClaimKey::Chat(slot.key.clone()))
                }
                other => other,
            });
        }
        if claimed {
            resident.version += 1;
        }
        Ok(())
    }

    /// Step three, once the commit is durable: memory takes the new row,
    /// subscribers get the new injections (a refresh stops the pending
    /// debounced one). Returns the trigger of a debounced refresh to
    /// (re)schedule.
    fn publish_committed(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        outcome: Outcome,
    ) -> Option<Trigger> {
        let Outcome {
            meta,
            fresh,
            schedule,
            counted_with,
        } = outcome;
        resident.persisted |= resident.chat.is_some();
        resident.meta = meta;
        if let Some(injection) = fresh.first() {
            resident.cancel_debounce();
            resident.counted_with = counted_with;
            tracing::debug!(
                chat = %slot.key,
                trigger = ?injection.trigger,
                revision = injection.revision,
                tokens = injection.token_count,
                text = %injection.text,
                "[MEMORY INJECTION] refreshed"
            );
        }
        if !fresh.is_empty() {
            // The counts cost a lock of the shared channel: only for a span.
            let span = if crate::telemetry::traces::enabled() {
                spans::push(
                    slot.latest.receiver_count() + self.inner.all_chats.receiver_count(),
                    fresh.len(),
                )
            } else {
                tracing::Span::none()
            };
            let _entered = span.enter();
            // One send for both keys: each subscriber wakes once.
            slot.latest.send_modify(|latest| {
                for injection in &fresh {
                    latest.offer(injection.clone());
                }
            });
            slot.announced
                .store(true, std::sync::atomic::Ordering::Release);
            for injection in fresh {
                let _ = self.inner.all_chats.send(injection);
            }
        }
        schedule
    }

    /// After a commit: whether the chat's recall index (as the refresh
    /// left it) has passages without vectors, the chat has
    /// `recall_enabled` and an embeddings endpoint is configured, and no
    /// index job of the chat is open (then the index runner should queue
    /// one).
    fn wants_indexing(&self, resident: &Resident, settings: &Settings) -> bool {
        if !self.indexing() || !settings.recall.enabled || resident.chat.is_none() {
            return false;
        }
        if resident.jobs.iter().any(|job| job.kind.is_index()) {
            return false;
        }
        let recall = resident.recall.lock();
        !recall.indexing_failed && recall.missing_count() > 0
    }
}

impl Pending {
    /// The revision the group's last operation answers with (the chat's
    /// own when the group is empty).
    fn revision(&self, resident: &Resident) -> u64 {
        self.outcomes
            .last()
            .map_or(resident.meta.revision, |o| o.meta.revision)
    }
}

/// Logs a panic caught while the chat was locked and makes the error its
/// callers get.
fn panic_while_locked(slot: &ChatSlot, panic: &(dyn std::any::Any + Send)) -> EngineError {
    let message = crate::store::panic_message(panic);
    tracing::error!(chat = %slot.key, panic = message, "an operation panicked; the chat reloads from the store");
    EngineError::Panicked(message)
}
