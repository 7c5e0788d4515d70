//! Answers checked before they land: an answer that parsed can still be
//! unusable, and is then retried like a malformed one (and the job FAILED
//! with the reason once its attempts are spent), so that a job never
//! stores it.
//!
//! A text the answer stores (a scene recap and its name, a merge's new
//! running recap, a message recap) is unusable when, trimmed:
//! - it is empty (the parser already refuses an empty recap; a scene's
//!   name may be empty, for prompts that ask for none, and is then not
//!   checked further);
//! - it is one of the instructions' own placeholders: a `<...>` of the
//!   kind's instructions (`<the recap>`, `<the new memory>`...), compared
//!   without case, with its angle brackets, or without them for a
//!   placeholder of several words; or, for a recap, it has a
//!   placeholder's shape, one `<...>` of at most [`PLACEHOLDER_MAX_CHARS`]
//!   characters and nothing else (`<the scene's recap>`; a scene's name
//!   such as `<Untitled>` may have that shape);
//! - it holds an unreplaced macro: `{{name}}` with a name of letters,
//!   digits and `_`;
//! - for a merge, it has fewer characters than `running_recap_min_ratio`
//!   of the version it builds on plus the scene recap (0 turns this off):
//!   a model that answers with a sentence where the memory had pages has
//!   lost the story.
//!
//! A detection's rationale is stored nowhere but the job's result and is
//! not checked; its break is already one the request showed.

use super::answer::Answer;
use crate::jobs::JobKind;
use crate::lore::check::LoreCheck;
pub use crate::request::check::{AnswerCheck, PLACEHOLDER_MAX_CHARS, placeholders};

impl AnswerCheck {
    /// Whether `answer` may be stored; the error is the reason. (The
    /// check's data is the request kernel's, [`crate::request::check`];
    /// a lore answer is [`LoreCheck::check`]'s.)
    pub fn check(&self, answer: &Answer) -> Result<(), String> {
        match answer {
            Answer::Break(_) | Answer::NoBreak { .. } => Ok(()),
            Answer::Lore(answer) => self.lore.check(self, answer),
            Answer::SceneRecap { name, recap } => {
                if !name.trim().is_empty() {
                    self.text("scene_name", name, false)?;
                }
                self.text("recap", recap, true)
            }
            Answer::Recap(recap) => {
                self.text("recap", recap, true)?;
                let chars = recap.trim().chars().count();
                if chars < self.min_recap_chars {
                    return Err(format!(
                        "the new running recap has {chars} characters, fewer than {} ({})",
                        self.min_recap_chars, self.min_recap_basis
                    ));
                }
                Ok(())
            }
        }
    }
}

/// The check of a merge: the instructions' placeholders, and at least
/// `ratio_milli / 1000` of the characters of `base` (the version it builds
/// on, empty when none) plus `scene_recap`, but never more than `cap` (the
/// most characters the answer may have), so that a long memory does not
/// make every merge unusable.
pub fn merge_check(
    instructions: &str,
    base: &str,
    scene_recap: &str,
    ratio_milli: u32,
    cap: usize,
) -> AnswerCheck {
    let before = base.trim().chars().count() + scene_recap.trim().chars().count();
    let min = (before as u128 * u128::from(ratio_milli)).div_ceil(1000);
    let min = usize::try_from(min).unwrap_or(usize::MAX);
    let ratio = f64::from(ratio_milli) / 1000.0;
    let mut basis = format!(
        "running_recap_min_ratio {ratio} of the {before} characters of the version it builds on and the scene recap"
    );
    if min > cap {
        basis.push_str(&format!(", capped at the answer's limit of {cap}"));
    }
    AnswerCheck {
        placeholders: placeholders(instructions),
        min_recap_chars: min.min(cap),
        min_recap_basis: basis,
        lore: LoreCheck::default(),
    }
}

/// The check of a job of `kind` whose instructions are `instructions`,
/// for every kind but a merge (see [`merge_check`]).
pub fn check_for(kind: JobKind, instructions: &str) -> AnswerCheck {
    match kind {
        JobKind::DetectSceneBreak => AnswerCheck::default(),
        _ => AnswerCheck::for_instructions(instructions),
    }
}

#[cfg(test)]
mod tests;
