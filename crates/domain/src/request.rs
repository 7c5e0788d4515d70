//! The request kernel: what every request recapd sends an LLM shares,
//! whether a recap job's ([`crate::writing`]) or a lore job's
//! ([`crate::lore`]), and importing neither: the prepared request and what
//! it read, the token bound and the scene it reads ([`prepared`]), the
//! instructions' macros ([`macros`]), schema building ([`schema`]), answer
//! reading ([`answer`]), what an answer is checked against ([`check`]),
//! and a detection's candidates ([`candidates`]).

pub mod answer;
pub mod candidates;
pub mod check;
pub mod macros;
pub mod prepared;
pub mod schema;

pub use check::{AnswerCheck, LoreCheck, LoreRule};
pub use prepared::{PrepareError, Prepared};
