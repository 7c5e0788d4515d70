//! Lore answers checked before they land (H2).

use crate::writing::AnswerCheck;

use super::LoreAnswer;

/// What a lore answer must hold to, made with its request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoreCheck {}

impl LoreCheck {
    /// Whether `answer` may land; `outer` is the request's whole check (its
    /// placeholders). The error is the reason.
    pub fn check(&self, outer: &AnswerCheck, answer: &LoreAnswer) -> Result<(), String> {
        todo!("H2: {outer:?} {answer:?}")
    }
}
