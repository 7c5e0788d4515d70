//! Finding the entry an entity already has, without asking the model when
//! the answer is sure.

use super::Entity;
use super::registry::Registry;

/// What the deterministic match found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Exactly one entry is the entity's.
    Existing(String),
    /// No entry is, and none is similar: a new entry.
    New,
    /// Several entries could be, or none is but some are similar: the
    /// model decides among these uids (most likely first).
    Ambiguous(Vec<String>),
}

/// The entry `entity` has in `registry`.
pub fn resolve(entity: &Entity, registry: &Registry) -> Resolution {
    todo!("H1: {entity:?} {}", registry.entries.len())
}

/// An extraction's entities with those of one type and normalised name
/// combined into one (keywords and content lines unioned, in order).
pub fn combine(entities: Vec<Entity>) -> Vec<Entity> {
    todo!("H1: {}", entities.len())
}
