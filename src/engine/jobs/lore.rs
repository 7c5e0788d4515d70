//! Lore jobs' own steps (see [`crate::domain::lore`] for the pipeline):
//! the chat's book read for a request; a merge into an entry past the
//! compaction threshold made to wait for the entry's compaction; and an
//! answer applied to the book under its lock, in the commit that ends the
//! job, together with the jobs it leads to (merges, resolutions,
//! compactions).
//!
//! Stale answers are never applied: an extraction, resolution or merge
//! whose scene changed is DISCARDED and the scene's extraction queued
//! afresh (the facts must be read again); a merge or compaction whose
//! entry changed (a client's edit) is DISCARDED and queued afresh, so it
//! runs again on the edited text.

use std::sync::Arc;

use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::{JobKind, JobState};
use crate::domain::lore::edit::{self, LoreLimits};
use crate::domain::lore::keys::{entry_comment, normalise_name};
use crate::domain::lore::registry::Registry;
use crate::domain::lore::{Entity, LoreAnswer, LoreTask};
use crate::domain::settings::Settings;
use crate::domain::time::UnixMicros;
use crate::domain::world_info::book::Book;
use crate::domain::writing::{self, macros::speakers};
use crate::store::{StoreError, Write};

use super::super::commit::Commit;
use super::super::lorebooks::{HeldBook, naming_the_flag, templated_name};
use super::super::slot::Resident;
use super::super::{EngineError, Next};
use super::JobDriver;
use super::apply::{fail, job_commit};
use super::failure::JobFailure;
use super::queue::{self, Changed, LoreWork, Queued};
pub(super) use effects::count_outcomes;
use effects::{Effects, LoreApply, queue_follow_up};

mod effects;

/// The result of a lore job whose answer the book refused.
const NOT_APPLIED: &str = "its answer could not be applied";

/// The subject of a resolution or merge about `entity`:
/// `<type>-<normalised name>`.
pub(super) fn entity_subject(entity: &Entity) -> String {
    entry_comment(&entity.kind, &normalise_name(&entity.name))
}

/// Where a chat's lore goes: the book the chat names, or a new one.
struct Target {
    /// The book's name.
    name: String,
    /// The chat names it already (`world_info_chat_book`); otherwise it is
    /// created (and attached) by the first answer with something to write.
    attached: bool,
}

/// An answer applied: the commit, the book held until it is durable, and
/// the book state to cache then.
pub(super) struct LoreApplied<'a> {
    /// What to commit.
    pub commit: Commit,
    /// The book's lock, held until the commit is durable.
    pub held: Option<HeldBook<'a>>,
    /// The book's new state, cached once the commit is durable.
    pub written: Option<crate::engine::lorebooks::WrittenBook>,
    /// What it did to entries, counted once the commit is durable.
    pub outcomes: Vec<&'static str>,
}

impl LoreApplied<'_> {
    fn without_book(commit: Commit) -> Self {
        LoreApplied {
            commit,
            held: None,
            written: None,
            outcomes: Vec::new(),
        }
    }
}

/// The lore limits of `settings` under the operator's book limits.
pub(super) fn lore_limits(settings: &Settings, engine: &JobDriver) -> LoreLimits {
    LoreLimits {
        max_entries: settings.lore.max_entries as usize,
        max_keys: settings.lore.max_keys as usize,
        book: engine.chats.lorebooks().limits().book,
    }
}

impl JobDriver {
    /// The chat's lore book as it is now, for a lore job's request: `None`
    /// before it exists.
    pub(super) async fn lore_book_for_request(
        &self,
        chat_id: &ChatKey,
        settings: &Settings,
    ) -> Result<Option<Arc<Book>>, EngineError> {
        if settings.world_info.chat_book.is_empty() {
            return Ok(None);
        }
        self.chats
            .lorebooks()
            .book_now(&chat_id.tenant, &settings.world_info.chat_book)
            .await
    }

    /// Before a merge into an entry past `lore_compaction_threshold`
    /// tokens is claimed: the entry's compaction is queued and the merge
    /// made to wait for it (once per merge: an entry still too long after
    /// its compaction is merged into as it is). `None` when the merge may
    /// run now.
    pub(super) fn compaction_first(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        at: usize,
        settings: &Settings,
        book: Option<&Book>,
        now: UnixMicros,
    ) -> Result<Option<Commit>, EngineError> {
        let job = &resident.jobs[at];
        let threshold = settings.lore.compaction_threshold as usize;
        let (Some(book), Some(task)) = (book, job.lore.as_ref()) else {
            return Ok(None);
        };
        if job.kind != JobKind::LoreMerge || threshold == 0 || task.compacted {
            return Ok(None);
        }
        let Some(uid) = task.uid.clone() else {
            return Ok(None);
        };
        let registry = Registry::of(book, &settings.lore.entity_types);
        let counter = self.chats.counter(settings);
        let too_long = registry
            .get(&uid)
            .is_some_and(|entry| counter.count(&entry.content) as usize > threshold);
        if !too_long || edit::is_locked(book, &uid) {
            return Ok(None);
        }
        let message_id = job.message_id.clone();
        let compaction = LoreWork {
            kind: JobKind::LoreCompact,
            message_id,
            subject: uid.clone(),
            task: Some(LoreTask {
                uid: Some(uid),
                ..LoreTask::default()
            }),
        };
        let (compaction, fresh) = match queue::queue_lore(
            resident,
            self.jobs().queue(),
            chat_id,
            compaction,
            now,
            None,
        )? {
            Queued::New(job) => (job.id.clone(), vec![job]),
            Queued::Existing(job) => (job.id, Vec::new()),
            // No room for the compaction: the merge runs as it is.
            Queued::Dropped => return Ok(None),
        };
        let merge = &mut resident.jobs[at];
        let fence = merge.fence;
        merge.depends_on = Some(compaction);
        if let Some(task) = merge.lore.as_mut() {
            task.compacted = true;
        }
        queue::touch(merge, now);
        let changed: Vec<Changed> = vec![(merge.clone(), fence)];
        Ok(Some(job_commit(Vec::new(), Next::Nothing, changed, fresh)))
    }

    /// The book a chat's lore goes to.
    async fn lore_target(
        &self,
        chat_id: &ChatKey,
        resident: &Resident,
        settings: &Settings,
    ) -> Result<Target, EngineError> {
        if !settings.world_info.chat_book.is_empty() {
            return Ok(Target {
                name: settings.world_info.chat_book.clone(),
                attached: true,
            });
        }
        let names = resident.chat.as_deref().map(speakers).unwrap_or_default();
        let wanted = templated_name(
            &settings.lore.book_name_template,
            chat_id,
            &names.user,
            &names.char,
        );
        Ok(Target {
            name: self
                .chats
                .lorebooks()
                .free_book_name(&chat_id.tenant, &wanted)
                .await?,
            attached: false,
        })
    }

    /// Applies lore answer `answer` of the job at `at` (see the module
    /// documentation): the commit that ends the job with the book's
    /// change, or that discards it.
    pub(super) async fn take_lore_answer(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        at: usize,
        answer: &LoreAnswer,
        now: UnixMicros,
    ) -> Result<LoreApplied<'_>, EngineError> {
        let settings = resident.effective(&self.chats.global(&chat_id.tenant), &chat_id.id);
        let job = resident.jobs[at].clone();
        let chat = resident
            .chat
            .clone()
            .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
        if !writing::read_unchanged(job.kind, &job.read, &chat, &job.message_id) {
            // The facts came from a scene that is no longer what it was:
            // they are read again.
            let again = LoreWork {
                kind: JobKind::LoreExtract,
                message_id: job.message_id.clone(),
                subject: String::new(),
                task: None,
            };
            let why = "its scene changed before its answer could be applied; the scene's lore is read again";
            return Ok(LoreApplied::without_book(
                self.discard_lore(chat_id, resident, at, again, why, now)?,
            ));
        }
        let target = match self.lore_target(chat_id, resident, &settings).await {
            Ok(target) => target,
            Err(EngineError::Domain(refused)) => {
                // No name for a new book: asking again would not help.
                resident.jobs[at].last_error = queue::short(&refused.to_string());
                return Ok(LoreApplied::without_book(fail(
                    resident,
                    at,
                    NOT_APPLIED,
                    now,
                )));
            }
            Err(other) => return Err(other),
        };
        // Read before the book is held: holding a book's lock (and the
        // tenant's lock of new books) while waiting for other books' locks
        // could deadlock with an import that holds those.
        let sources = if settings.lore.seed_from_active_books {
            self.seed_sources(chat_id, &settings).await?
        } else {
            Vec::new()
        };
        // A book the chat names but the tenant does not have (yet) is
        // created too, and counted as any new book.
        let held = match self
            .chats
            .lorebooks()
            .hold_book(&chat_id.tenant, &target.name)
            .await
        {
            Ok(held) => held,
            Err(EngineError::Domain(refused @ DomainError::ResourceExhausted(_))) => {
                resident.jobs[at].last_error = queue::short(&refused.to_string());
                return Ok(LoreApplied::without_book(fail(
                    resident,
                    at,
                    NOT_APPLIED,
                    now,
                )));
            }
            Err(other) => return Err(other),
        };
        if !target.attached && held.book().is_some() {
            // Another writer took the free name meanwhile: the answer is
            // applied again, under another name.
            return Err(StoreError::LorebookChanged(target.name).into());
        }
        if let Some(read) = &job.read.entry
            && (read.book != held.name() || !edit::entry_unchanged(read, held.book().map(|b| &**b)))
        {
            let again = LoreWork {
                kind: job.kind,
                message_id: job.message_id.clone(),
                subject: job.subject.clone(),
                task: job.lore.clone(),
            };
            let why = "its entry changed before its answer could be applied; queued again on the entry as it is now";
            let commit = self.discard_lore(chat_id, resident, at, again, why, now)?;
            return Ok(LoreApplied {
                commit,
                held: Some(held),
                written: None,
                outcomes: Vec::new(),
            });
        }
        let limits = lore_limits(&settings, self);
        let created_now = held.book().is_none();
        let mut book = held.book().map_or_else(Book::empty, |b| (**b).clone());
        let mut effects = Effects::default();
        if created_now && !sources.is_empty() {
            let sources: Vec<&Book> = sources
                .iter()
                .filter(|(name, _)| name != held.name())
                .map(|(_, b)| &**b)
                .collect();
            let copied = match edit::seed(&mut book, &sources, &limits) {
                Ok(copied) => copied,
                Err(refused) => {
                    let refused = naming_the_flag(refused);
                    resident.jobs[at].last_error =
                        queue::short(&format!("the book could not be seeded: {refused}"));
                    return Ok(LoreApplied {
                        commit: fail(resident, at, NOT_APPLIED, now),
                        held: Some(held),
                        written: None,
                        outcomes: Vec::new(),
                    });
                }
            };
            if copied > 0 {
                // Written even when the answer adds nothing itself: the
                // jobs it queues work on the copies.
                effects.changed = true;
                effects.notes.push(format!("seeded {copied} entries"));
            }
        }
        // Every job the answer leads to is queued at the end of the chat's
        // list: a refusal (or an error) takes them off again, so the list
        // stays what the store holds.
        let queued_before = resident.jobs.len();
        let counter = self.chats.counter(&settings);
        let mut apply = LoreApply {
            chat_id,
            resident: &mut *resident,
            job: &job,
            settings: &settings,
            counter: &counter,
            limits: &limits,
            queue: self.jobs().queue(),
            book,
            effects,
            now,
        };
        let changed = apply.change_book(answer);
        let LoreApply { book, effects, .. } = apply;
        let fresh = match changed {
            Ok(fresh) => fresh,
            Err(error) => {
                resident.jobs.truncate(queued_before);
                let EngineError::Domain(refused) = error else {
                    return Err(error);
                };
                let refused = naming_the_flag(refused);
                resident.jobs[at].last_error = queue::short(&JobFailure::NotApplied.report(
                    chat_id,
                    &job,
                    &refused.to_string(),
                ));
                return Ok(LoreApplied {
                    commit: fail(resident, at, NOT_APPLIED, now),
                    held: Some(held),
                    written: None,
                    outcomes: Vec::new(),
                });
            }
        };
        let mut writes = Vec::new();
        let mut written = None;
        if effects.changed {
            let (write, state) = held.write(book, now);
            writes.push(write);
            written = Some(state);
            if !target.attached {
                writes.extend(attach(chat_id, resident, held.name()));
            }
        }
        let result = effects.result(job.kind);
        let ended = queue::end_with_dependents(resident, at, JobState::Succeeded, &result, now);
        Ok(LoreApplied {
            commit: job_commit(writes, Next::Nothing, ended, fresh),
            held: Some(held),
            written,
            outcomes: effects.outcomes,
        })
    }

    /// The books whose entries a new chat book starts with
    /// (`lore_seed_from_active_books`): the global, character and persona
    /// books that apply to the chat.
    async fn seed_sources(
        &self,
        chat_id: &ChatKey,
        settings: &Settings,
    ) -> Result<Vec<(String, Arc<Book>)>, EngineError> {
        let mut names: Vec<String> = settings.world_info.global_books.names().to_vec();
        names.extend(settings.world_info.character_books.names().iter().cloned());
        if !settings.world_info.persona_book.is_empty() {
            names.push(settings.world_info.persona_book.clone());
        }
        self.chats
            .lorebooks()
            .lorebooks_for_scan(&chat_id.tenant, &names)
            .await
    }

    /// Ends the lore job at `at` DISCARDED with `why` and queues `again`;
    /// the jobs that waited for it wait for the work queued again.
    fn discard_lore(
        &self,
        chat_id: &ChatKey,
        resident: &mut Resident,
        at: usize,
        again: LoreWork,
        why: &str,
        now: UnixMicros,
    ) -> Result<Commit, EngineError> {
        let mut ended = vec![queue::end_alone(
            resident,
            at,
            JobState::Discarded,
            why,
            now,
        )];
        let (kind, message_id, subject) =
            (again.kind, again.message_id.clone(), again.subject.clone());
        let fresh = queue_follow_up(resident, self.jobs().queue(), chat_id, again, now)?;
        let handed =
            queue::hand_over_dependents(resident, &ended[0].0, (kind, &message_id, &subject), now);
        ended.extend(handed);
        Ok(job_commit(Vec::new(), Next::Nothing, ended, fresh))
    }
}

/// The writes that attach a book recapd created as the chat's book: the
/// chat's `world_info_chat_book` override, and the chat's row naming it as
/// the book recapd owns (deleted with the chat).
fn attach(chat_id: &ChatKey, resident: &mut Resident, name: &str) -> Vec<Write> {
    let mut own = resident.settings().clone();
    own.overrides.world_info_chat_book = Some(name.to_owned());
    resident.set_settings(own.clone());
    resident.meta.lore_book = Some(name.to_owned());
    vec![
        Write::ChatSettings {
            chat: chat_id.clone(),
            settings: own,
        },
        Write::Chat {
            chat: chat_id.clone(),
            meta: resident.meta.clone(),
        },
    ]
}
