//! What a lore answer does to the chat's book: entries created at once,
//! merges and resolutions queued for the entities that have (or may have)
//! an entry, merged and compacted content written, and the compactions an
//! entry written past `lore_compaction_threshold` tokens needs. Called by
//! `take_lore_answer` with the book held.

use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::clip;
use crate::domain::jobs::{Job, JobKind};
use crate::domain::lore::answer::SKIPPED_QUOTE_CHARS;
use crate::domain::lore::edit::{self, LoreLimits};
use crate::domain::lore::keys::entry_comment;
use crate::domain::lore::matching::{Resolution, combine, resolve};
use crate::domain::lore::registry::Registry;
use crate::domain::lore::{Entity, LoreAnswer, LoreTask, Skipped};
use crate::domain::settings::Settings;
use crate::domain::time::UnixMicros;
use crate::domain::tokens::Counter;
use crate::domain::world_info::book::Book;
use crate::telemetry;

use super::super::super::EngineError;
use super::super::super::slot::Resident;
use super::super::queue::{self, LoreWork, Queued};
use super::entity_subject;
use crate::engine::QueueOptions;

/// What one answer did to the book, for the job's result and metrics.
#[derive(Default)]
pub(super) struct Effects {
    /// The job's result, one note per change or change skipped.
    pub(super) notes: Vec<String>,
    /// The `outcome` labels of `recapd_lore_entries_total` to count once
    /// the change is durable.
    pub(super) outcomes: Vec<&'static str>,
    /// Entries whose content the answer wrote (to compact when too long).
    pub(super) touched: Vec<String>,
    /// Whether the book changed (and is written).
    pub(super) changed: bool,
    /// The parts of the answer left out as invalid, each where and why.
    pub(super) skipped: Vec<Skipped>,
}

impl Effects {
    /// Notes a change (or a change skipped) of `outcome`, counted once the
    /// commit is durable.
    pub(super) fn note(&mut self, outcome: &'static str, text: String) {
        self.outcomes.push(outcome);
        self.notes.push(text);
    }

    /// Notes a part of the answer left out as invalid (counted as
    /// `invalid` once the commit is durable).
    fn skip(&mut self, skipped: Skipped) {
        self.outcomes.push("invalid");
        self.skipped.push(skipped);
    }

    /// The job's result: how many parts of the answer were skipped and
    /// why (at most [`SKIPPED_SHOWN`] reasons) first, so that the result's
    /// clip never cuts it off, then the notes; `nothing to change` when
    /// there is neither.
    pub(super) fn result(&self, kind: JobKind) -> String {
        let mut parts = self.notes.clone();
        if !self.skipped.is_empty() {
            let count = self.skipped.len();
            let what = match (kind, count) {
                (JobKind::LoreExtract, 1) => "1 entity".to_owned(),
                (JobKind::LoreExtract, n) => format!("{n} entities"),
                (_, n) => n.to_string(),
            };
            let mut reasons: Vec<String> = self
                .skipped
                .iter()
                .take(SKIPPED_SHOWN)
                .map(ToString::to_string)
                .collect();
            if count > SKIPPED_SHOWN {
                reasons.push(format!("and {} more", count - SKIPPED_SHOWN));
            }
            parts.insert(
                0,
                format!("{what} skipped as invalid: {}", reasons.join("; ")),
            );
        }
        if parts.is_empty() {
            "nothing to change".to_owned()
        } else {
            parts.join("; ")
        }
    }
}

/// The most skipped parts a job's result gives the reason of.
const SKIPPED_SHOWN: usize = 3;

/// How a skipped entity is named in the job's result: its type and name
/// as its entry's comment, clipped.
fn skipped_entity(entity: &Entity) -> String {
    clip(
        &entry_comment(&entity.kind, &entity.name),
        SKIPPED_QUOTE_CHARS,
    )
}

/// Counts what a durable lore commit did to entries.
pub(in crate::engine::jobs) fn count_outcomes(outcomes: &[&'static str]) {
    for outcome in outcomes {
        metrics::counter!(telemetry::LORE_ENTRIES, "outcome" => *outcome).increment(1);
    }
}

/// What applying one lore answer to the chat's book needs: the locked
/// chat, the job, the chat's settings and lore limits, the queue's
/// options, the book being changed and what the answer did so far.
pub(super) struct LoreApply<'a> {
    /// The chat.
    pub chat_id: &'a ChatKey,
    /// The chat, locked: the jobs the answer leads to are queued here.
    pub resident: &'a mut Resident,
    /// The job whose answer it is.
    pub job: &'a Job,
    /// The chat's effective settings.
    pub settings: &'a Settings,
    /// What counts the chat's tokens.
    pub counter: &'a Counter,
    /// The lore limits of those settings under the operator's.
    pub limits: &'a LoreLimits,
    /// The queue's options (the per-chat limit).
    pub queue: &'a QueueOptions,
    /// The book, changed in place.
    pub book: Book,
    /// What the answer did so far.
    pub effects: Effects,
    /// Now.
    pub now: UnixMicros,
}

impl LoreApply<'_> {
    /// What `answer` does to the book, duplicates merged and the
    /// compactions it needs queued: the jobs it queued.
    pub(super) fn change_book(&mut self, answer: &LoreAnswer) -> Result<Vec<Job>, EngineError> {
        let mut fresh = self.effect(answer)?;
        let (types, limits) = (&self.settings.lore.entity_types, self.limits);
        for merged in edit::deduplicate(&mut self.book, types, limits)? {
            self.effects.changed = true;
            self.effects.touched.push(merged.kept.clone());
            self.effects.note(
                "deduplicated",
                format!("entry {} merged into entry {}", merged.removed, merged.kept),
            );
        }
        if self.job.kind != JobKind::LoreCompact {
            fresh.extend(self.compactions_due()?);
        }
        Ok(fresh)
    }

    /// What `answer` does to the book (changed in place), and the jobs it
    /// leads to.
    fn effect(&mut self, answer: &LoreAnswer) -> Result<Vec<Job>, EngineError> {
        let (settings, limits) = (self.settings, self.limits);
        let types = &settings.lore.entity_types;
        let task = self.job.lore.clone().unwrap_or_default();
        let mut fresh = Vec::new();
        match answer {
            LoreAnswer::Entities { entities, skipped } => {
                for skipped in skipped {
                    self.effects.skip(skipped.clone());
                }
                for entity in combine(entities.clone()) {
                    if let Some(reason) = edit::entity_problem(&entity, &limits.book) {
                        self.effects.skip(Skipped {
                            what: skipped_entity(&entity),
                            reason,
                        });
                        continue;
                    }
                    if types.get(&entity.kind).is_none() {
                        self.effects.notes.push(format!(
                            "{} left out: {:?} is not one of lore_entity_types",
                            entity.name, entity.kind
                        ));
                        continue;
                    }
                    let registry = Registry::of(&self.book, types);
                    match resolve(&entity, &registry) {
                        Resolution::Existing(uid) => fresh.extend(self.merge_into(entity, uid)?),
                        Resolution::New => self.create(&entity)?,
                        Resolution::Ambiguous(candidates) => {
                            let work = LoreWork {
                                kind: JobKind::LoreResolve,
                                message_id: self.job.message_id.clone(),
                                subject: entity_subject(&entity),
                                task: Some(LoreTask {
                                    entity: Some(entity),
                                    candidates,
                                    ..LoreTask::default()
                                }),
                            };
                            fresh.extend(self.queue(work)?);
                        }
                    }
                }
            }
            LoreAnswer::Resolved(uid) => {
                let Some(entity) = task.entity else {
                    return Ok(fresh);
                };
                match uid {
                    Some(uid) if self.book.entry(uid).is_some() => {
                        fresh.extend(self.merge_into(entity, uid.clone())?);
                    }
                    Some(uid) => {
                        // The entry it chose was deleted meanwhile.
                        self.effects.notes.push(format!(
                            "entry {uid} is gone; {} is written as a new entry",
                            entity.name
                        ));
                        self.create(&entity)?;
                    }
                    None => {
                        // An entry of that very name may have appeared
                        // since the request: merged, never duplicated.
                        match resolve(&entity, &Registry::of(&self.book, types)) {
                            Resolution::Existing(uid) => {
                                fresh.extend(self.merge_into(entity, uid)?);
                            }
                            _ => self.create(&entity)?,
                        }
                    }
                }
            }
            LoreAnswer::Merged {
                content,
                name,
                skipped,
            } => {
                let (Some(uid), Some(entity)) = (task.uid, task.entity) else {
                    return Ok(fresh);
                };
                for skipped in skipped {
                    self.effects.skip(skipped.clone());
                }
                // A new name longer than a key may be is skipped: the
                // content is merged under the entry's name.
                let effects = &mut self.effects;
                let name = name.as_deref().filter(|name| {
                    let fits = name.len() <= limits.book.max_key_bytes;
                    if !fits {
                        effects.skip(Skipped {
                            what: "name".into(),
                            reason: format!(
                                "the new name has {} bytes, more than a key may have ({})",
                                name.len(),
                                limits.book.max_key_bytes
                            ),
                        });
                    }
                    fits
                });
                if edit::merge_entry(
                    &mut self.book,
                    &uid,
                    content,
                    name,
                    &names_of(&entity),
                    types,
                    limits,
                )? {
                    self.effects.changed = true;
                    self.effects.touched.push(uid.clone());
                    self.effects
                        .note("merged", format!("{} merged into entry {uid}", entity.name));
                } else {
                    self.effects
                        .note("locked", format!("entry {uid} is locked; left as it is"));
                }
            }
            LoreAnswer::Compacted(content) => {
                let Some(uid) = task.uid else {
                    return Ok(fresh);
                };
                if edit::merge_entry(&mut self.book, &uid, content, None, &[], types, limits)? {
                    self.effects.changed = true;
                    self.effects
                        .note("compacted", format!("entry {uid} compacted"));
                } else {
                    self.effects
                        .note("locked", format!("entry {uid} is locked; left as it is"));
                }
            }
        }
        Ok(fresh)
    }

    /// Queues the merge of `entity` into entry `uid`: nothing when the
    /// entry is locked, and no request when the entry already holds every
    /// fact (its keys still gain the entity's new keywords).
    fn merge_into(&mut self, entity: Entity, uid: String) -> Result<Vec<Job>, EngineError> {
        if edit::is_locked(&self.book, &uid) {
            self.effects.note(
                "locked",
                format!(
                    "{} belongs to locked entry {uid}; left as it is",
                    entity.name
                ),
            );
            return Ok(Vec::new());
        }
        if edit::adds_nothing(&self.book, &uid, &entity) {
            // Nothing to ask: only keywords the entry lacks are added.
            if edit::add_keys(
                &mut self.book,
                &uid,
                &names_of(&entity),
                &self.settings.lore.entity_types,
                self.limits,
            )? {
                self.effects.changed = true;
            }
            self.effects
                .notes
                .push(format!("{}: nothing new for entry {uid}", entity.name));
            return Ok(Vec::new());
        }
        self.effects
            .notes
            .push(format!("{} to be merged into entry {uid}", entity.name));
        let work = LoreWork {
            kind: JobKind::LoreMerge,
            message_id: self.job.message_id.clone(),
            subject: entity_subject(&entity),
            task: Some(LoreTask {
                entity: Some(entity),
                uid: Some(uid),
                ..LoreTask::default()
            }),
        };
        self.queue(work)
    }

    /// Queues a lore job that follows from the answer: the new job, if
    /// any.
    fn queue(&mut self, work: LoreWork) -> Result<Vec<Job>, EngineError> {
        queue_follow_up(self.resident, self.queue, self.chat_id, work, self.now)
    }

    /// The compactions of the entries the answer wrote that are now past
    /// `lore_compaction_threshold` tokens.
    fn compactions_due(&mut self) -> Result<Vec<Job>, EngineError> {
        let settings = self.settings;
        let threshold = settings.lore.compaction_threshold as usize;
        if threshold == 0 || self.effects.touched.is_empty() {
            return Ok(Vec::new());
        }
        let mut works = Vec::new();
        let registry = Registry::of(&self.book, &settings.lore.entity_types);
        for uid in &self.effects.touched {
            let Some(entry) = registry.get(uid) else {
                continue;
            };
            if entry.locked || self.counter.count(&entry.content) as usize <= threshold {
                continue;
            }
            works.push(LoreWork {
                kind: JobKind::LoreCompact,
                message_id: self.job.message_id.clone(),
                subject: uid.clone(),
                task: Some(LoreTask {
                    uid: Some(uid.clone()),
                    ..LoreTask::default()
                }),
            });
        }
        let mut fresh = Vec::new();
        for work in works {
            fresh.extend(self.queue(work)?);
        }
        Ok(fresh)
    }

    /// Writes a new entry for `entity`, or notes why not (the book is
    /// full).
    fn create(&mut self, entity: &Entity) -> Result<(), EngineError> {
        create(
            &mut self.book,
            entity,
            self.settings,
            self.limits,
            &mut self.effects,
        )
    }
}

/// Queues a lore job that follows from another: the new job, if any.
pub(super) fn queue_follow_up(
    resident: &mut Resident,
    options: &QueueOptions,
    chat_id: &ChatKey,
    work: LoreWork,
    now: UnixMicros,
) -> Result<Vec<Job>, EngineError> {
    Ok(
        match queue::queue_lore(resident, options, chat_id, work, now, None)? {
            Queued::New(job) => vec![job],
            Queued::Existing(_) | Queued::Dropped => Vec::new(),
        },
    )
}

/// What an entity is called, as keys of the entry it is merged into: its
/// name (an entry found through an alias or a resolution may have
/// another), then its keywords.
fn names_of(entity: &Entity) -> Vec<String> {
    std::iter::once(entity.name.clone())
        .chain(entity.keywords.iter().cloned())
        .collect()
}

/// Writes a new entry for `entity`, or notes why not (the book is full).
fn create(
    book: &mut Book,
    entity: &Entity,
    settings: &Settings,
    limits: &LoreLimits,
    effects: &mut Effects,
) -> Result<(), EngineError> {
    if book.entry_count() >= limits.max_entries {
        effects.note(
            "full",
            format!(
                "{} not written: the book holds {} entries, lore_max_entries",
                entity.name,
                book.entry_count()
            ),
        );
        return Ok(());
    }
    // Past this, a refusal is the operator's limits: this entity is
    // skipped, the answer's others still land.
    match edit::create_entry(book, entity, &settings.lore.entity_types, limits) {
        Ok(uid) => {
            effects.changed = true;
            effects.touched.push(uid.clone());
            effects.note(
                "created",
                format!(
                    "entry {uid} {} created",
                    entry_comment(&entity.kind, &entity.name)
                ),
            );
            Ok(())
        }
        Err(DomainError::ResourceExhausted(reason)) => {
            effects.skip(Skipped {
                what: skipped_entity(entity),
                reason,
            });
            Ok(())
        }
        Err(refused) => Err(refused.into()),
    }
}
