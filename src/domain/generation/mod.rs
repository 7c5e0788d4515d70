//! What recapd asks an LLM and what it makes of the answers, as pure rules:
//! which messages a detection looks at and which may be a break
//! ([`candidates`]), the prompts' macros ([`macros`]), recapd's default
//! prompts ([`prompts`]), the prompt of each job and what it read
//! ([`mod@prepare`]), and the version a merge builds on and makes
//! ([`merge`]).

pub mod candidates;
pub mod macros;
pub mod merge;
pub mod prepare;
pub mod prompts;
#[cfg(test)]
mod test_chat;

pub use candidates::{Candidate, Candidates, detection_candidates};
pub use merge::{merge_base, merged_recap};
pub use prepare::{PrepareError, Prepared, prepare, read_unchanged};
