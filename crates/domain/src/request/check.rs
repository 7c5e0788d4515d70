//! What an answer is checked against before it lands, made with its
//! request: the instructions' placeholders, a merge's fewest characters,
//! a lore request's rule ([`AnswerCheck`]), and the text check every kind
//! applies ([`AnswerCheck::text`]). Which answers pass is
//! [`crate::writing::check`]'s rule (and [`crate::lore::check`]'s for lore
//! answers).

/// The most characters a placeholder has between its angle brackets;
/// longer `<...>` spans of the instructions are not placeholders.
pub const PLACEHOLDER_MAX_CHARS: usize = 80;

/// What an answer to one request is checked against, made with the
/// request ([`super::prepared::Prepared::check`]).
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
    pub lore: LoreCheck,
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

/// The rule of one lore request's answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LoreRule {
    /// Not a lore request: a lore answer to it is refused.
    #[default]
    NotLore,
    /// Extraction: the types an entity may have.
    Extract {
        /// The chat's entity type names.
        types: Vec<String>,
    },
    /// Resolution: the uids the request listed.
    Resolve {
        /// The listed uids.
        uids: Vec<String>,
    },
    /// Merge: the content's bounds.
    Merge {
        /// The fewest characters the new content may have.
        min_chars: usize,
        /// How `min_chars` was reached, for the reason.
        basis: String,
        /// The most characters it may have.
        max_chars: usize,
    },
    /// Compaction: the content must have fewer characters than this.
    Compact {
        /// The entry's characters.
        shorter_than: usize,
    },
}

/// What a lore answer must hold to, made with its request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoreCheck {
    /// The request's rule.
    pub rule: LoreRule,
}
