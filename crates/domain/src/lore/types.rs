//! The lore pipeline's data: the entity types a chat's book is written
//! with (a setting, so kept with the settings: [`crate::settings`]), an
//! extracted entity, what a lore job carries, and what the model answers
//! (job data, kept with the jobs: [`crate::jobs::lore_data`]).

pub use crate::jobs::lore_data::{Entity, EntryRead, LoreAnswer, LoreTask, Skipped};
pub use crate::settings::entity_types::{
    EntityType, EntityTypes, MAX_TYPE_DESCRIPTION_CHARS, MAX_TYPE_NAME_CHARS, MAX_TYPES,
    default_entity_types,
};
