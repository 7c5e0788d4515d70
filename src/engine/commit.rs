//! The end of every chat operation, through one entry point,
//! [`Engine::commit`], in three steps: work out the chat's new row (running
//! the refresh the operation asked for), commit it with the operation's
//! writes, then update memory and tell subscribers. Several operations of
//! one chat may share the steps ([`Pending`]): each is planned after the
//! one before, all commit in one group, and each is published in order.
//!
//! A commit that fails (a store error, a conflict with another replica, a
//! panic) drops the chat's memory, in one place: the next operation reads
//! the chat again, so memory never holds what the store does not.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use super::slot::{ChatSlot, LoadedChat, Resident};
use super::{Engine, EngineError, Next};
use crate::domain::ids::ClaimKey;
use crate::domain::jobs::Job;
use crate::domain::recall;
use crate::domain::refresh::{self, Injection, RefreshContext, Trigger};
use crate::domain::settings::Settings;
use crate::domain::time::UnixMicros;
use crate::domain::tokens;
use crate::store::{ChatMeta, StoreError, Write};
use crate::telemetry;

/// Operations on one locked chat, changed in memory and planned, that
/// commit together: one group, so one fsync (see [`Engine::stage`]).
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

/// What [`Engine::commit`] commits, and how: built with [`Commit::one`] or
/// [`Commit::group`], then [`Commit::with_jobs`] and
/// [`Commit::in_caller_task`] where they apply.
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
    /// Operations already planned with [`Engine::stage`].
    Group(Pending),
}

/// The task a [`Commit`] runs in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Task {
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

    /// Runs in the caller's task: for callers nothing cancels.
    pub fn in_caller_task(mut self) -> Commit {
        self.task = Task::Caller;
        self
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
}

impl Engine {
    /// Commits `commit` on the locked chat and lets the lock go: the
    /// chat's row and the operations' rows in one group; then memory takes
    /// the new row, subscribers get the new injections, the debounce timer
    /// is (re)scheduled and changed jobs are announced. Answers with the
    /// revision of the (last) operation. On any failure (a store error, a
    /// conflict, a panic, caught and answered as
    /// [`EngineError::Panicked`]) the chat's memory is dropped and none of
    /// the operations is applied.
    pub(super) async fn commit(
        &self,
        slot: &Arc<ChatSlot>,
        chat: LoadedChat,
        commit: Commit,
    ) -> Result<u64, EngineError> {
        match commit.task {
            Task::Caller => self.commit_here(slot, chat, commit).await,
            Task::Own => {
                let engine = self.clone();
                let slot = slot.clone();
                tokio::spawn(async move { engine.commit_here(&slot, chat, commit).await })
                    .await
                    .map_err(EngineError::from_join)?
            }
        }
    }

    /// [`Engine::commit`] in the current task.
    async fn commit_here(
        &self,
        slot: &Arc<ChatSlot>,
        mut chat: LoadedChat,
        commit: Commit,
    ) -> Result<u64, EngineError> {
        let Commit {
            work,
            jobs,
            task: _,
        } = commit;
        let committing = async {
            let (pending, revision) = match work {
                Work::One { writes, next } => {
                    let mut pending = self.pending(slot, &chat);
                    let revision = self.stage(slot, &chat, &mut pending, writes, next);
                    (pending, revision)
                }
                Work::Group(pending) => {
                    let revision = pending.revision(&chat);
                    (pending, revision)
                }
            };
            self.commit_pending(slot, &mut chat, pending).await?;
            Ok(revision)
        };
        let result = match AssertUnwindSafe(committing).catch_unwind().await {
            Ok(result) => result,
            Err(panic) => Err(panic_while_locked(slot, &*panic)),
        };
        match result {
            Ok(revision) => {
                // The chat's memory changed: count it.
                self.account(slot, Some(&chat));
                for job in jobs {
                    self.announce_job(job);
                }
                Ok(revision)
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
    /// with [`Engine::stage`] and commit together with [`Commit::group`].
    pub(super) fn pending(&self, slot: &ChatSlot, resident: &Resident) -> Pending {
        Pending {
            settings: resident.effective(&self.global(&slot.key.tenant)),
            writes: Vec::new(),
            changed_at: None,
            outcomes: Vec::new(),
        }
    }

    /// Plans one operation whose change `resident` already holds (its rows
    /// in `writes`; per `next`, a refresh) after those already in `pending`,
    /// and adds it there. Returns the revision the operation answers with
    /// once committed.
    pub(super) fn stage(
        &self,
        slot: &ChatSlot,
        resident: &Resident,
        pending: &mut Pending,
        writes: Vec<Write>,
        next: Next,
    ) -> u64 {
        // The recall index cuts the messages written again before the
        // refresh below reads it.
        resident.recall.lock().note_writes(&writes);
        let base = pending.outcomes.last().map_or(&resident.meta, |o| &o.meta);
        let outcome = self.plan(slot, resident, base, &pending.settings, next);
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
    /// operation in order. On a store error memory is left as it was, for
    /// [`Engine::commit_here`] to drop.
    async fn commit_pending(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        pending: Pending,
    ) -> Result<(), EngineError> {
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
        let claimed = self.shared() && !writes.is_empty();
        if claimed {
            writes.insert(
                0,
                Write::Claim {
                    key: ClaimKey::Chat(slot.key.clone()),
                    clock: resident.clock,
                },
            );
        }
        if let Err(error) = self.inner.store.commit(writes).await {
            // With a shared store, a job fence that moved means memory was
            // behind another replica (which claims the chat with every job
            // change): re-read and re-run, as for a claim conflict. A runner
            // whose job was really taken over finds that on the re-read.
            let error = match error {
                StoreError::Fenced(_) if claimed => {
                    StoreError::Conflict(ClaimKey::Chat(slot.key.clone()))
                }
                other => other,
            };
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
        if claimed {
            resident.clock += 1;
        }
        if resident.chat.is_some() && changed_at.is_some() {
            resident.updated_us = changed_at;
        }
        for outcome in outcomes {
            self.publish_committed(slot, resident, &settings, outcome);
        }
        self.want_indexing(slot, resident, &settings);
        Ok(())
    }

    /// Step one: the chat's new row, from `base` (its row before the
    /// operation). Runs the refresh `next` asks for (a disabled chat is
    /// refreshed only by immediate triggers; a debounced trigger with no
    /// delay refreshes now), or marks one owed.
    fn plan(
        &self,
        slot: &ChatSlot,
        resident: &Resident,
        base: &ChatMeta,
        settings: &Settings,
        next: Next,
    ) -> Outcome {
        let enabled = settings.chat_enabled(resident.settings().enabled);
        let next = match next {
            Next::Debounce(_) if !enabled => Next::Nothing,
            Next::Debounce(trigger) if settings.debounce_ms == 0 => Next::Refresh(trigger),
            other => other,
        };
        let mut outcome = Outcome {
            meta: base.clone(),
            fresh: Vec::new(),
            schedule: None,
        };
        let Some(chat) = &resident.chat else {
            return outcome;
        };
        match next {
            Next::Refresh(trigger) => {
                let ctx = RefreshContext {
                    chat: &slot.key,
                    settings,
                    enabled,
                    revision: outcome.meta.revision + 1,
                    trigger,
                    now_us: self.now(),
                };
                self.refresh_into(&mut outcome, resident, ctx);
            }
            Next::Debounce(trigger) => {
                outcome.meta.needs_refresh = true;
                outcome.schedule = Some(trigger);
            }
            Next::Nothing => {}
        }
        outcome.meta.current_recap = chat.recaps().current_version();
        outcome.meta.st_file = chat.st_file().cloned();
        outcome
    }

    /// Runs the refreshes (each tier while it is on, and once more when it
    /// goes off so subscribers drop it) into `outcome`. Token
    /// counts of an unchanged text are reused when counted with the same
    /// tokenizer.
    fn refresh_into(&self, outcome: &mut Outcome, resident: &Resident, ctx: RefreshContext<'_>) {
        let Some(chat) = &resident.chat else {
            return;
        };
        let settings = ctx.settings;
        let same_tokenizer = resident.counted_with == Some(settings.tokenizer);
        let count = |previous: Option<&Injection>, text: &str| match previous {
            Some(p) if p.text == text && same_tokenizer => p.token_count,
            _ => tokens::count(settings.tokenizer, text),
        };
        let started = Instant::now();
        let previous = outcome.meta.injection.as_deref();
        let injection = Arc::new(refresh::refresh(chat, ctx, |text| count(previous, text)));
        metrics::histogram!(telemetry::REFRESH_DURATION).record(started.elapsed().as_secs_f64());
        metrics::counter!(telemetry::REFRESHES, "trigger" => ctx.trigger.name()).increment(1);
        outcome.meta.revision = injection.revision;
        outcome.meta.needs_refresh = false;
        outcome.meta.injection = Some(injection.clone());
        outcome.fresh.push(injection);
        let previous = outcome.meta.message_injection.as_deref();
        if settings.message_recaps_enabled || previous.is_some_and(|p| !p.text.is_empty()) {
            let ctx = RefreshContext {
                revision: previous.map_or(outcome.meta.message_revision_floor, |p| p.revision) + 1,
                ..ctx
            };
            let tier = Arc::new(refresh::refresh_message_recaps(chat, ctx, |text| {
                count(previous, text)
            }));
            outcome.meta.message_injection = Some(tier.clone());
            outcome.fresh.push(tier);
        }
        let previous = outcome.meta.recall_injection.as_deref();
        if settings.recall_enabled || previous.is_some_and(|p| !p.text.is_empty()) {
            let ctx = RefreshContext {
                revision: previous.map_or(outcome.meta.recall_revision_floor, |p| p.revision) + 1,
                ..ctx
            };
            let started = Instant::now();
            let lines = (ctx.enabled && settings.recall_enabled)
                .then(|| self.recall_tier_lines(ctx.chat, resident, chat, settings));
            let tier = Arc::new(recall::tier::refresh_recall(chat, lines, ctx, |text| {
                tokens::count(settings.tokenizer, text)
            }));
            metrics::histogram!(telemetry::RECALL_TIER_DURATION)
                .record(started.elapsed().as_secs_f64());
            outcome.meta.recall_injection = Some(tier.clone());
            outcome.fresh.push(tier);
        }
    }

    /// Step three, once the commit is durable: memory takes the new row,
    /// subscribers get the new injections, the debounce timer is
    /// (re)scheduled.
    fn publish_committed(
        &self,
        slot: &Arc<ChatSlot>,
        resident: &mut Resident,
        settings: &Settings,
        outcome: Outcome,
    ) {
        let Outcome {
            meta,
            fresh,
            schedule,
        } = outcome;
        resident.persisted |= resident.chat.is_some();
        resident.meta = meta;
        if let Some(injection) = fresh.first() {
            resident.cancel_debounce();
            resident.counted_with = Some(settings.tokenizer);
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
        if let Some(trigger) = schedule {
            self.schedule_debounce(
                slot,
                resident,
                trigger,
                Duration::from_millis(settings.debounce_ms),
            );
        }
    }
}

impl Engine {
    /// After a commit: when the chat's recall index (as the refresh left
    /// it) has passages without vectors, the chat has `recall_enabled` and
    /// an embeddings endpoint is configured, and no index job of the chat
    /// is open, asks the index runner to queue one.
    fn want_indexing(&self, slot: &ChatSlot, resident: &Resident, settings: &Settings) {
        if !self.indexing() || !settings.recall_enabled || resident.chat.is_none() {
            return;
        }
        if resident.jobs.iter().any(|job| job.kind.is_index()) {
            return;
        }
        let missing = {
            let recall = resident.recall.lock();
            !recall.indexing_failed
                && recall
                    .index
                    .as_ref()
                    .is_some_and(|index| index.missing_count() > 0)
        };
        if missing {
            self.want_index_job(&slot.key);
        }
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
