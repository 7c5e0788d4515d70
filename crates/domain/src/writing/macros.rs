//! The macros of the instructions and how they are replaced: shared by
//! the recap and the lore requests, so written in the request kernel
//! ([`crate::request::macros`]) and named here too.

pub use crate::request::macros::{
    CHAR, CURRENT_RUNNING_RECAP, EARLIEST_ALLOWED_BREAK, MESSAGE, MESSAGES, SCENE_MESSAGES,
    SCENE_RECAP, Speakers, USER, candidate_line, candidate_lines, expand, one_line, scene_line,
    speakers,
};
