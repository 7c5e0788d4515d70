//! What a lore job carries, read and answered: an extracted entity, a
//! resolution's, merge's or compaction's task, the entry a job read,
//! and the parsed answer. They are job data (a [`super::Job`] and its
//! [`super::ReadSet`] hold them), so they sit with the jobs, below the
//! lore requests ([`crate::lore`]) that fill them.

use serde::{Deserialize, Serialize};

/// One entity as an extraction answers it: what the scene established or
/// changed about one person, place or thing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    /// Its type's name (one of the chat's
    /// [`EntityTypes`](crate::settings::EntityTypes)).
    #[serde(rename = "type")]
    pub kind: String,
    /// Its name as the story uses it.
    pub name: String,
    /// Words that should bring the entry into the prompt (other names,
    /// titles); cleaned before they become keys ([`crate::lore::keys`]).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The facts, one per line.
    #[serde(default)]
    pub content: Vec<String>,
}

/// What a lore resolution, merge or compaction job carries (stored with
/// the job, so that a restart or another replica runs the same task).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoreTask {
    /// Resolution and merge: the entity's new facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<Entity>,
    /// Merge and compaction: the entry's uid. Resolution: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// Resolution: the uids the deterministic match found ambiguous or
    /// similar, which the listing shows first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// Merge: the entry's compaction was already queued for this merge
    /// (an entry still past the threshold after it is merged into as it
    /// is, rather than compacted again and again).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub compacted: bool,
}

/// The entry a lore merge or compaction was given, as it was then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryRead {
    /// The book's name.
    pub book: String,
    /// The entry's uid.
    pub uid: String,
    /// [`crate::lore::edit::entry_fingerprint`] of the entry then.
    pub fingerprint: u64,
}

/// A part of an answer recapd left out because it was invalid (an
/// entity of the wrong shape, a name empty once cleaned, a name, key or
/// content past the book's limits; a merge's unusable new name), and why.
/// The rest of the answer is applied; the job's result lists these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where in the answer: `entities[1]`, `name`; with the entity's
    /// cleaned name clipped when it has one.
    pub what: String,
    /// Why, in one line of bounded length.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.reason)
    }
}

/// What a lore job's answer says, parsed ([`crate::lore::answer`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoreAnswer {
    /// Extraction: the entities of the scene (possibly none), cleaned
    /// ([`crate::lore::clean`]), and the invalid ones left out.
    Entities {
        /// The valid entities, in the answer's order.
        entities: Vec<Entity>,
        /// The entities left out.
        skipped: Vec<Skipped>,
    },
    /// Resolution: the uid of the entity's entry, or `None` for a new one.
    Resolved(Option<String>),
    /// Merge: the entry's new content, and a canonical name when the
    /// entity is better known by another name now.
    Merged {
        /// The new content.
        content: String,
        /// The canonical name, when given, valid and not blank.
        name: Option<String>,
        /// The new name, when it was given but invalid (the content is
        /// merged under the entry's name).
        skipped: Vec<Skipped>,
    },
    /// Compaction: the shorter content.
    Compacted(String),
}
