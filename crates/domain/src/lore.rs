//! Lorebook entries recapd writes itself: after each scene, the people,
//! places and things the scene establishes or changes are kept as
//! SillyTavern World Info entries in the chat's own book, one entry per
//! entity, updated when the story changes them.
//!
//! The pipeline, one job kind per step (see [`crate::jobs::JobKind`]):
//!
//! 1. **Extraction** (`LoreExtract`): the scene and its recap in, the
//!    entities out ([`types::Entity`]: type, name, keywords, content lines).
//! 2. **Matching**, without a request when it can ([`matching`]): the
//!    entry an entity already has, by type and normalised name, an alias
//!    or a key. A sure match is merged; no match and nothing similar makes
//!    a new entry at once, with no request.
//! 3. **Resolution** (`LoreResolve`), only when the match is ambiguous or
//!    absent while similar entries exist: the model picks the entry from a
//!    compact listing of the book ([`registry`]), or says the entity is new.
//! 4. **Merge** (`LoreMerge`): the entry's current content and the new
//!    facts in, the new content (and optionally a canonical name) out;
//!    a rename keeps the old name as a key ([`edit`]).
//! 5. **Compaction** (`LoreCompact`): an entry past
//!    `lore_compaction_threshold` tokens is rewritten shorter, before a
//!    merge into it and after one that took it past the threshold.
//!
//! What is written ([`edit`]): `comment` `<type>-<name>`, `key` the
//! cleaned keywords ([`keys`]), `content` the facts; an entry whose
//! [`edit::LOCKED_FIELD`] is true is never changed; duplicates (two
//! entries of one type and normalised name) are merged into the lowest
//! uid whenever a lore job lands.
//!
//! The requests ([`prepare`]), their default instructions
//! ([`instructions`]), the answers' JSON schemas ([`schema`]), parsing
//! ([`answer`]) and checks ([`check`]) follow the recap jobs' rules
//! ([`crate::writing`]).

pub mod answer;
pub mod check;
pub mod clean;
pub mod edit;
pub mod instructions;
pub mod keys;
pub mod matching;
pub mod prepare;
pub mod registry;
pub mod schema;
pub mod types;

pub use types::{
    Entity, EntityType, EntityTypes, EntryRead, LoreAnswer, LoreTask, Skipped, default_entity_types,
};
