//! recapd's default lore instructions: the defaults of the lore prompt
//! settings and of `lore_book_name_template`. They are the settings'
//! defaults, so they are written beside them (`settings/lore_instructions.rs`)
//! and named here too.

pub use crate::settings::{
    DEFAULT_LORE_BOOK_NAME_TEMPLATE, DEFAULT_LORE_COMPACT_PROMPT, DEFAULT_LORE_EXTRACT_PROMPT,
    DEFAULT_LORE_MERGE_PROMPT, DEFAULT_LORE_RESOLVE_PROMPT,
};
