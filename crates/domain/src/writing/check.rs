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

/// The most characters a placeholder has between its angle brackets;
/// longer `<...>` spans of the instructions are not placeholders.
pub const PLACEHOLDER_MAX_CHARS: usize = 80;

/// What an answer to one request is checked against, made with the
/// request ([`super::prepare::Prepared::check`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerCheck {
    /// The instructions' placeholders, as written (`<the recap>`).
    pub placeholders: Vec<String>,
    /// Merge only: the fewest characters the new running recap may have.
    pub min_recap_chars: usize,
    /// Merge only: how `min_recap_chars` was reached, for the reason.
    pub min_recap_basis: String,
    /// Lore jobs only: what their answer must hold to (types, uids,
    /// lengths).
    pub lore: crate::lore::check::LoreCheck,
}

impl AnswerCheck {
    /// The check of answers to `instructions` (the kind's prompt setting,
    /// before its macros are replaced).
    pub fn for_instructions(instructions: &str) -> AnswerCheck {
        AnswerCheck {
            placeholders: placeholders(instructions),
            ..AnswerCheck::default()
        }
    }

    /// Whether `answer` may be stored; the error is the reason.
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

    /// Checks one text; `shape` refuses any placeholder-shaped text too.
    pub fn text(&self, field: &str, text: &str, shape: bool) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() {
            return Err(format!("the answer's {field} is empty"));
        }
        let bare = |p: &str| {
            p.trim_start_matches('<')
                .trim_end_matches('>')
                .trim()
                .to_lowercase()
        };
        let lower = text.to_lowercase();
        let shaped = shape
            && text.starts_with('<')
            && text.ends_with('>')
            && text.chars().count() <= PLACEHOLDER_MAX_CHARS + 2
            && !text[1..text.len() - 1].contains(['<', '>']);
        // Without its brackets only a placeholder of several words is
        // refused: a prompt's `<Alice>` must not refuse the name Alice.
        let is_placeholder = |p: &String| {
            lower == p.to_lowercase() || (bare(p).contains(' ') && bare(&lower) == bare(p))
        };
        // Reasons name the instructions' placeholder, never the answer's
        // text: a job's error shows recapd's words only.
        if let Some(placeholder) = self.placeholders.iter().find(|p| is_placeholder(p)) {
            return Err(format!(
                "the answer's {field} is the instructions' placeholder {placeholder}"
            ));
        }
        if shaped {
            return Err(format!(
                "the answer's {field} has the shape of a placeholder (one <...> and nothing else)"
            ));
        }
        if unreplaced_macro(text).is_some() {
            return Err(format!(
                "the answer's {field} holds an unreplaced macro ({{{{name}}}})"
            ));
        }
        Ok(())
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
        lore: crate::lore::check::LoreCheck::default(),
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

/// The `<...>` spans of `instructions` that may be placeholders: on one
/// line, 1 to [`PLACEHOLDER_MAX_CHARS`] characters inside, not a closing
/// tag (`</think>`), each once.
pub fn placeholders(instructions: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = instructions;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(['>', '<', '\n']) else {
            break;
        };
        if after[close..].starts_with('>') {
            let inner = &after[..close];
            let chars = inner.chars().count();
            if (1..=PLACEHOLDER_MAX_CHARS).contains(&chars) && !inner.starts_with('/') {
                let placeholder = format!("<{inner}>");
                if !found.contains(&placeholder) {
                    found.push(placeholder);
                }
            }
        }
        rest = &after[close..];
    }
    found
}

/// The first `{{name}}` of `text` whose name is letters, digits and `_`.
fn unreplaced_macro(text: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(open) = text[from..].find("{{") {
        let start = from + open;
        let after = &text[start + 2..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with("}}") {
            return Some(&text[start..start + 2 + name_len + 2]);
        }
        from = start + 2;
    }
    None
}

#[cfg(test)]
mod tests;
