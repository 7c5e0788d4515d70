//! From a lore job to the request it sends the LLM: which scene and which
//! entry it reads, the macros of its instructions filled in, the token
//! bound (the recap jobs' own, see [`crate::writing::prepare`]), its
//! answer's schema and check, and what it recorded having read.
//!
//! Every lore job belongs to a scene: its message must still be a visible
//! scene break ([`PrepareError::Gone`] otherwise). Macros, besides the
//! recap prompts' `{{user}}`, `{{char}}`, `{{scene_messages}}` and
//! `{{scene_recap}}` (the break's scene recap; empty when it has none):
//!
//! | macro | replaced by | kinds |
//! |---|---|---|
//! | `{{lore_entity_types}}` | the entity types, one per line: `- <name>: <description>` | extraction |
//! | `{{entity_type}}`, `{{entity_name}}` | the entity's type and name (a compaction's: its entry's) | resolution, merge, compaction |
//! | `{{entity}}` | the entity's new facts, one per line | resolution, merge |
//! | `{{entry}}` | the entry's content | merge, compaction |
//! | `{{lore_registry}}` | the book's entries, one per line with its uid, the candidates first (at most [`MAX_LISTED`]) | resolution |

use crate::chat::Chat;
use crate::jobs::{JobKind, LoreStep, ReadSet, RequestKind, fingerprint_text};
use crate::request::check::AnswerCheck;
use crate::request::macros::{CHAR, SCENE_MESSAGES, SCENE_RECAP, USER, expand, one_line, speakers};
use crate::request::prepared::{Bound, PrepareError, Prepared, Scene, instructions, prepared};
use crate::request::schema::recap_max_chars;
use crate::settings::Settings;
use crate::world_info::book::Book;

use super::check::{LoreCheck, LoreRule};
use super::edit::entry_fingerprint;
use super::registry::{Registry, RegistryEntry};
use super::schema::answer_schema;
use super::{Entity, EntryRead, LoreTask};

/// `{{lore_entity_types}}`.
pub const LORE_ENTITY_TYPES: &str = "lore_entity_types";
/// `{{entity_type}}`.
pub const ENTITY_TYPE: &str = "entity_type";
/// `{{entity_name}}`.
pub const ENTITY_NAME: &str = "entity_name";
/// `{{entity}}`.
pub const ENTITY: &str = "entity";
/// `{{entry}}`.
pub const ENTRY: &str = "entry";
/// `{{lore_registry}}`.
pub const LORE_REGISTRY: &str = "lore_registry";

/// The most entries a resolution lists.
pub const MAX_LISTED: usize = 200;

/// What a lore job's request is built from besides the chat: the job's
/// task and the chat's lorebook as it is now.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoreInput<'a> {
    /// The job's task (`None` for an extraction).
    pub task: Option<&'a LoreTask>,
    /// The chat's lorebook; `None` before it exists.
    pub book: Option<&'a Book>,
    /// The book's name.
    pub book_name: &'a str,
}

/// The request of lore job `kind` on break `message_id`.
///
/// - Extraction: the break's scene (as a scene recap reads it);
///   NothingToDo when no message of it is visible.
/// - Resolution: NothingToDo without an entity, or when the book has no
///   entry to list.
/// - Merge, compaction: Gone when the entry (or the book) is gone;
///   NothingToDo when the entry is locked.
///
/// Every kind: Gone when the message is missing or no longer a visible
/// break; TooLong over the bound.
pub fn prepare(
    kind: JobKind,
    chat: &Chat,
    settings: &Settings,
    message_id: &str,
    lore: &LoreInput<'_>,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Result<Prepared, PrepareError> {
    let bound = Bound::of(settings, count_tokens);
    let scene = Scene::of(chat, message_id);
    // A compaction reads no scene, but its break must still be one.
    if let Err(PrepareError::Gone(reason)) = &scene {
        return Err(PrepareError::Gone(reason.clone()));
    }
    let names = speakers(chat);
    let recap = scene.as_ref().ok().and_then(Scene::recap).unwrap_or("");
    let common = |extra: &[(&str, &str)], template: &str| -> String {
        let mut values: Vec<(&str, &str)> = extra.to_vec();
        values.extend([
            (SCENE_RECAP, recap),
            (USER, names.user.as_str()),
            (CHAR, names.char.as_str()),
        ]);
        expand(template, &values)
    };
    let template = instructions(kind, settings);
    let RequestKind::Lore(step) = kind.request() else {
        return Err(PrepareError::Gone(format!(
            "a {} job is not a lore job",
            kind.name()
        )));
    };
    let (request, read, rule, uids) = match step {
        LoreStep::Extract => {
            let scene = scene?;
            let types = type_lines(settings);
            let request = common(
                &[
                    (SCENE_MESSAGES, &scene.lines()),
                    (LORE_ENTITY_TYPES, &types),
                ],
                template,
            );
            let read = ReadSet {
                messages: scene.read_messages(),
                scene_recap: scene.recap().map(fingerprint_text),
                ..ReadSet::default()
            };
            let rule = LoreRule::Extract {
                types: names_of_types(settings),
            };
            (request, read, rule, Vec::new())
        }
        LoreStep::Resolve => {
            let scene = scene?;
            let entity = task_entity(lore)?;
            let book = lore.book.ok_or_else(nothing_listed)?;
            let registry = Registry::of(book, &settings.lore.entity_types);
            let candidates = lore.task.map_or(&[][..], |t| t.candidates.as_slice());
            let listed: Vec<String> = registry
                .listed(candidates, MAX_LISTED)
                .iter()
                .map(|e| e.uid.clone())
                .collect();
            if listed.is_empty() {
                return Err(nothing_listed());
            }
            let request = common(
                &[
                    (ENTITY_TYPE, &entity.kind),
                    (ENTITY_NAME, &one_line(&entity.name)),
                    (ENTITY, &facts(entity)),
                    (LORE_REGISTRY, &registry.listing(candidates, MAX_LISTED)),
                ],
                template,
            );
            let read = ReadSet {
                messages: scene.read_messages(),
                ..ReadSet::default()
            };
            let rule = LoreRule::Resolve {
                uids: listed.clone(),
            };
            (request, read, rule, listed)
        }
        LoreStep::Merge => {
            let scene = scene?;
            let entity = task_entity(lore)?;
            let (registry, uid) = task_entry(lore, settings)?;
            let entry = writable(&registry, &uid)?;
            let request = common(
                &[
                    (ENTITY_TYPE, &entity.kind),
                    (ENTITY_NAME, &one_line(&entity.name)),
                    (ENTITY, &facts(entity)),
                    (ENTRY, &entry.content),
                ],
                template,
            );
            let read = ReadSet {
                messages: scene.read_messages(),
                entry: entry_read(lore, &uid),
                ..ReadSet::default()
            };
            let old = entry.content.trim().chars().count();
            let ratio = settings.writing.running_recap_min_ratio.0;
            let max_chars = usize::try_from(recap_max_chars(settings)).unwrap_or(usize::MAX);
            let wanted = u64::try_from(old).unwrap_or(u64::MAX) * u64::from(ratio) / 1000;
            let rule = LoreRule::Merge {
                // Never more than an answer may have: an entry grown past
                // it (compaction off, a client's long entry) is still
                // merged into.
                min_chars: usize::try_from(wanted).unwrap_or(usize::MAX).min(max_chars),
                basis: format!("running_recap_min_ratio of the entry's {old} characters"),
                max_chars,
            };
            (request, read, rule, Vec::new())
        }
        LoreStep::Compact => {
            let (registry, uid) = task_entry(lore, settings)?;
            let entry = writable(&registry, &uid)?;
            let kind_name = if entry.kind.is_empty() {
                "entry"
            } else {
                entry.kind.as_str()
            };
            let request = common(
                &[
                    (ENTITY_TYPE, kind_name),
                    (ENTITY_NAME, &one_line(&entry.name)),
                    (ENTRY, &entry.content),
                ],
                template,
            );
            let read = ReadSet {
                entry: entry_read(lore, &uid),
                ..ReadSet::default()
            };
            let rule = LoreRule::Compact {
                shorter_than: entry.content.trim().chars().count(),
            };
            (request, read, rule, Vec::new())
        }
    };
    bound.check(&request)?;
    let mut prepared = prepared(request, read, message_id.to_owned(), None);
    let (name, schema) = answer_schema(kind, settings, &uids);
    prepared.schema_name = name;
    prepared.schema = schema;
    prepared.check = AnswerCheck {
        lore: LoreCheck { rule },
        ..AnswerCheck::for_instructions(template)
    };
    Ok(prepared)
}

/// Whether the scene a lore job read is unchanged beyond its messages
/// (which the caller compares): an extraction's scene recap, when it read
/// one, is still the break's.
pub fn scene_unchanged(read: &ReadSet, chat: &Chat, message_id: &str) -> bool {
    let Some(expected) = read.scene_recap else {
        return true;
    };
    chat.message(message_id)
        .and_then(|(_, m)| m.data().scene_recap_memory.as_deref())
        .filter(|r| !r.trim().is_empty())
        .map(fingerprint_text)
        == Some(expected)
}

/// `{{lore_entity_types}}`.
fn type_lines(settings: &Settings) -> String {
    let lines: Vec<String> = settings
        .lore
        .entity_types
        .types()
        .iter()
        .map(|t| format!("- {}: {}", t.name, t.description))
        .collect();
    lines.join("\n")
}

/// The setting's type names.
fn names_of_types(settings: &Settings) -> Vec<String> {
    settings
        .lore
        .entity_types
        .types()
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

/// `{{entity}}`: the facts, one per line.
fn facts(entity: &Entity) -> String {
    let lines: Vec<String> = entity
        .content
        .iter()
        .map(|line| one_line(line.trim()).into_owned())
        .filter(|line| !line.is_empty())
        .collect();
    lines.join("\n")
}

fn nothing_listed() -> PrepareError {
    PrepareError::NothingToDo("the chat's book has no entry to match against".into())
}

/// The task's entity.
fn task_entity<'a>(lore: &LoreInput<'a>) -> Result<&'a Entity, PrepareError> {
    lore.task
        .and_then(|t| t.entity.as_ref())
        .ok_or_else(|| PrepareError::NothingToDo("the job names no entity".into()))
}

/// The registry of the book and the task's entry uid; Gone without them.
fn task_entry(
    lore: &LoreInput<'_>,
    settings: &Settings,
) -> Result<(Registry, String), PrepareError> {
    let uid = lore
        .task
        .and_then(|t| t.uid.clone())
        .ok_or_else(|| PrepareError::NothingToDo("the job names no entry".into()))?;
    let book = lore.book.ok_or_else(|| {
        PrepareError::Gone(format!(
            "the chat's book {:?} no longer exists",
            lore.book_name
        ))
    })?;
    Ok((Registry::of(book, &settings.lore.entity_types), uid))
}

/// Entry `uid`, when it exists and is not locked.
fn writable<'r>(registry: &'r Registry, uid: &str) -> Result<&'r RegistryEntry, PrepareError> {
    let entry = registry.get(uid).ok_or_else(|| {
        PrepareError::Gone(format!("entry {uid} of the chat's book no longer exists"))
    })?;
    if entry.locked {
        return Err(PrepareError::NothingToDo(format!(
            "entry {uid} is locked; recapd leaves it as it is"
        )));
    }
    Ok(entry)
}

/// What reading entry `uid` read.
fn entry_read(lore: &LoreInput<'_>, uid: &str) -> Option<EntryRead> {
    let book = lore.book?;
    Some(EntryRead {
        book: lore.book_name.to_owned(),
        uid: uid.to_owned(),
        fingerprint: entry_fingerprint(book, uid)?,
    })
}

#[cfg(test)]
mod tests;
