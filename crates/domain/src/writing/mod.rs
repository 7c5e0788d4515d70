//! Writing recaps with an LLM: what recapd asks it and what it makes of
//! the answers, as pure rules: which messages a detection looks at and
//! which may be a break ([`candidates`]), the macros of the instructions
//! ([`macros`]), recapd's default instructions ([`instructions`]), the
//! request each job sends and what it read ([`mod@prepare`]), the JSON
//! schema of its answer ([`schema`]), answer parsing ([`answer`]), the
//! checks a parsed answer must pass ([`check`]), and the version a merge
//! builds on and makes ([`merge`]).
//!
//! The engine runs a job as: [`prepare()`] on the chat as it is now; send
//! [`Prepared::request`] with [`Prepared::schema`]; [`parse_answer`] with
//! [`Prepared::candidates`], then [`AnswerCheck::check`] with
//! [`Prepared::check`]; then, in the transaction that applies the result,
//! check [`read_unchanged`] on the chat as it is then.

pub mod answer;
pub mod candidates;
pub mod check;
pub mod instructions;
pub mod macros;
pub mod merge;
pub mod prepare;
pub mod schema;

pub use answer::{Answer, parse_answer};
pub use candidates::{Candidate, Candidates, detection_candidates, detection_ready};
pub use check::AnswerCheck;
pub use merge::{
    current_covers_later_scene, merge_base, merged_recap, rebuild_next, regenerated_recap,
    regeneration_scenes, scene_recaps_text,
};
pub use prepare::{PrepareError, Prepared, prepare, read_unchanged};

#[cfg(test)]
pub(crate) mod tests;
