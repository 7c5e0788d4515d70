//! What recapd makes of a lore job's answer (H2).

use crate::jobs::JobKind;

use super::LoreAnswer;

/// Reads the answer `text` to a lore job of `kind`; the error is the reason.
pub fn parse_answer(kind: JobKind, text: &str) -> Result<LoreAnswer, String> {
    todo!("H2: {kind:?} {text}")
}
