//! The macros of the instructions and how they are replaced.
//!
//! A macro is `{{name}}` with the name spelled exactly (case and all, no
//! spaces inside the braces). Replacement is one pass from left to right:
//! the text put in for a macro is never scanned again, so a message that
//! itself contains `{{char}}` reaches the model as written. A `{{...}}`
//! whose name the instructions' kind does not know stays as it is.
//!
//! | macro | replaced by | kinds |
//! |---|---|---|
//! | `{{messages}}` | the candidates, one per line: `#<n> <name>: <text>`, or `#<n> (not eligible) <name>: <text>` | detection |
//! | `{{earliest_allowed_break}}` | the chat index of the earliest allowed break | detection |
//! | `{{scene_messages}}` | the scene's visible messages, one per line: `<name>: <text>` | scene recap |
//! | `{{scene_recap}}` | the break message's scene recap | merge |
//! | `{{current_running_recap}}` | the running-recap version the merge builds on; empty when none | merge |
//! | `{{message}}` | the recapped message's text, as written | message recap |
//! | `{{user}}`, `{{char}}` | the names of the chat's latest user message and latest character message; empty when none | every kind |
//!
//! The lore jobs' instructions know `{{user}}`, `{{char}}`,
//! `{{scene_messages}}` and `{{scene_recap}}` too, besides macros of their
//! own (see [`crate::lore::prepare`]).
//!
//! In the one-per-line lists a text's own line breaks (`\r\n`, `\n`,
//! `\r`) become single spaces, so that every message is one line.

use std::borrow::Cow;

use super::candidates::Candidate;
use crate::chat::Chat;
use crate::message::Message;

/// `{{messages}}`: a detection's candidates.
pub const MESSAGES: &str = "messages";
/// `{{earliest_allowed_break}}`: the earliest chat index a break may have.
pub const EARLIEST_ALLOWED_BREAK: &str = "earliest_allowed_break";
/// `{{scene_messages}}`: the messages of the scene a scene recap recaps.
pub const SCENE_MESSAGES: &str = "scene_messages";
/// `{{scene_recap}}`: the scene recap a merge folds in.
pub const SCENE_RECAP: &str = "scene_recap";
/// `{{current_running_recap}}`: the running recap a merge builds on.
pub const CURRENT_RUNNING_RECAP: &str = "current_running_recap";
/// `{{message}}`: the text a message recap recaps.
pub const MESSAGE: &str = "message";
/// `{{user}}`: the latest user message's speaker.
pub const USER: &str = "user";
/// `{{char}}`: the latest character message's speaker.
pub const CHAR: &str = "char";

/// `template` with every `{{name}}` whose name is in `values` replaced by
/// its value, in one left-to-right pass (see the module documentation).
/// The first pair of a name wins.
pub fn expand(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        // Only the known names are tried at each `{{`, so a template full
        // of braces still takes linear time.
        let known = values.iter().find(|(name, _)| {
            after
                .strip_prefix(name)
                .is_some_and(|tail| tail.starts_with("}}"))
        });
        match known {
            Some((name, value)) => {
                out.push_str(value);
                rest = &after[name.len() + 2..];
            }
            None => {
                // Not a known macro: keep one brace and look again from
                // the next one, so `{{{char}}` still finds `{{char}}`.
                out.push('{');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `text` with each line break (`\r\n`, `\n` or `\r`) replaced by one
/// space.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\r', '\n']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace("\r\n", " ").replace(['\r', '\n'], " "))
}

/// One line of `{{messages}}`: `#<n> <name>: <text>`, with `(not
/// eligible) ` before the name of a candidate that cannot be a break.
pub fn candidate_line(candidate: &Candidate) -> String {
    let mark = if candidate.eligible {
        ""
    } else {
        "(not eligible) "
    };
    format!(
        "#{} {mark}{}: {}",
        candidate.index,
        one_line(&candidate.name),
        one_line(&candidate.text)
    )
}

/// `{{messages}}`: the candidates' lines joined by line breaks.
pub fn candidate_lines(candidates: &[Candidate]) -> String {
    let lines: Vec<String> = candidates.iter().map(candidate_line).collect();
    lines.join("\n")
}

/// One line of `{{scene_messages}}`: `<name>: <text>`.
pub fn scene_line(message: &Message) -> String {
    format!("{}: {}", one_line(&message.name), one_line(message.text()))
}

/// The names `{{user}}` and `{{char}}` stand for in a chat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Speakers {
    /// The name of the chat's latest user message; empty when none.
    pub user: String,
    /// The name of the chat's latest character message (neither the
    /// user's nor a narrator's); empty when none.
    pub char: String,
}

/// The speakers of `chat`: the latest messages of each side, hidden ones
/// and thoughts included (a name is a name wherever it appears).
pub fn speakers(chat: &Chat) -> Speakers {
    let mut found = Speakers::default();
    let (mut user, mut char) = (None, None);
    for (_, message) in chat.messages().rev() {
        if message.is_user {
            user.get_or_insert(message.name.as_str());
        } else if !message.is_narrator {
            char.get_or_insert(message.name.as_str());
        }
        if user.is_some() && char.is_some() {
            break;
        }
    }
    found.user = user.unwrap_or_default().to_owned();
    found.char = char.unwrap_or_default().to_owned();
    found
}

#[cfg(test)]
mod tests;
