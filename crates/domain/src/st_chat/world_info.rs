//! SillyTavern's World Info state of one chat, as its chat file's
//! `chat_metadata` carries it: the chat's own lorebook (`world_info`, a
//! book name: world-info.js:94 `METADATA_KEY`, read at :4432-4450 at
//! 51ad27f) and the timed effects of its entries (`timedWorldInfo`, an
//! object of `sticky` and `cooldown` effects: world-info.js:556-577).
//!
//! recapd does not keep these in the chat: an import hands them to the
//! chat's settings (`world_info_chat_book`, the chat's own override) and
//! to the chat's row (its timed-effect state, as JSON text), and an export
//! writes back what those hold then. Reading never refuses a file for
//! them: a value SillyTavern would not use is dropped with a warning.

use serde_json::value::RawValue;

use crate::settings::check_book_name;

/// The `chat_metadata` member naming the chat's lorebook.
pub const BOOK_KEY: &str = "world_info";
/// The `chat_metadata` member holding the chat's timed effects.
pub const TIMED_KEY: &str = "timedWorldInfo";

/// A chat's World Info state as its file carries it (read by an import,
/// written by an export).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatWorldInfo {
    /// `chat_metadata.world_info`: the chat's lorebook as written (empty is
    /// SillyTavern's "none" and comes back as written); `None`: the member
    /// is absent. When present, a valid book name or empty
    /// ([`check_book_name`]).
    pub book: Option<String>,
    /// `chat_metadata.timedWorldInfo`, the JSON text of an object exactly as
    /// written (numbers and member order kept); `None`: absent.
    pub timed: Option<String>,
}

impl ChatWorldInfo {
    /// Whether the file carries neither member.
    pub fn is_empty(&self) -> bool {
        self.book.is_none() && self.timed.is_none()
    }

    /// Bytes of text it holds (counted against the header's text limit).
    pub fn text_bytes(&self) -> usize {
        self.book.as_ref().map_or(0, String::len) + self.timed.as_ref().map_or(0, String::len)
    }

    /// Takes `chat_metadata`'s member `key` if it is one of the two:
    /// `true` when it was (read, or dropped with a warning about header
    /// line `line`), `false` for any other member.
    pub(super) fn take_member(
        &mut self,
        key: &str,
        value: &RawValue,
        line: usize,
        warnings: &mut Vec<String>,
    ) -> bool {
        match key {
            BOOK_KEY => {
                match book_name(value) {
                    Ok(name) => self.book = Some(name),
                    Err(reason) => warnings.push(format!(
                        "line {line}: chat_metadata.{BOOK_KEY} {reason}; dropped: the chat has \
                         no chat lorebook"
                    )),
                }
                true
            }
            TIMED_KEY => {
                // `RawValue` holds valid JSON: an object is one that starts so.
                if value.get().starts_with('{') {
                    self.timed = Some(value.get().to_owned());
                } else {
                    warnings.push(format!(
                        "line {line}: chat_metadata.{TIMED_KEY} is not a JSON object; dropped: \
                         the chat starts with no timed World Info effects"
                    ));
                }
                true
            }
            _ => false,
        }
    }
}

/// The book name a `world_info` member holds, or why it holds none
/// recapd can use.
fn book_name(value: &RawValue) -> Result<String, String> {
    let name: String =
        serde_json::from_str(value.get()).map_err(|_| "is not a string".to_owned())?;
    if !name.is_empty() {
        check_book_name(BOOK_KEY, &name).map_err(|e| match e {
            crate::DomainError::Invalid { reason, .. } => format!("is no usable name ({reason})"),
            other => other.to_string(),
        })?;
    }
    Ok(name)
}
