//! The recall tier's setting types and checks (`recall_*`).

use serde::{Deserialize, Serialize};

use super::Milli;
use crate::DomainError;
use crate::ids::check_chat_id;

/// The most chats `recall_chats` may name.
pub const MAX_RECALL_CHATS: usize = 100;

/// The recall tier's default template (`recall_template`).
pub const DEFAULT_RECALL_TEMPLATE: &str =
    "Earlier in this story (recalled passages, best match first):\n{{recall}}";

/// The longest chunk setting, in characters.
pub const MAX_CHUNK_CHARS: u32 = 100_000;
/// The shortest chunk setting, in characters.
pub const MIN_CHUNK_CHARS: u32 = 50;

/// Other chats of the same tenant whose history a chat's recall also
/// searches (`recall_chats`), in the order given; empty by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ChatIds(pub Vec<String>);

impl ChatIds {
    /// The chat ids.
    pub fn ids(&self) -> &[String] {
        &self.0
    }
}

/// The check of `recall_chats`: valid chat ids, at most
/// [`MAX_RECALL_CHATS`], duplicates dropped (first kept). Errors name the
/// entry (`settings.recall_chats[i]`).
pub fn check_recall_chats(value: ChatIds) -> Result<ChatIds, DomainError> {
    let ChatIds(ids) = value;
    if ids.len() > MAX_RECALL_CHATS {
        return Err(DomainError::invalid(
            "settings.recall_chats",
            format!("{} chats, over the limit of {MAX_RECALL_CHATS}", ids.len()),
        ));
    }
    let mut kept: Vec<String> = Vec::with_capacity(ids.len());
    for (i, id) in ids.into_iter().enumerate() {
        check_chat_id(&format!("settings.recall_chats[{i}]"), &id)?;
        if !kept.contains(&id) {
            kept.push(id);
        }
    }
    Ok(ChatIds(kept))
}

/// The check of a recall score setting whose errors name `field`: a
/// number in 0..=1, kept to thousandths.
pub fn recall_fraction(field: &'static str) -> impl Fn(f64) -> Result<Milli, DomainError> {
    move |value| {
        if !(0.0..=1.0).contains(&value) {
            return Err(DomainError::invalid(
                field,
                format!("{value} is outside 0..=1"),
            ));
        }
        Ok(Milli((value * 1000.0).round() as u32))
    }
}
