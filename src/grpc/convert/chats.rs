//! ListChats' conversions: its page tokens and its summaries.

use super::jobs::{hex, unhex};
use super::{pb, timestamp_us};
use crate::domain::{DomainError, ids};
use crate::engine::ChatSummary;

/// What a ListChats token holds before the chat id, so that a ListJobs
/// token is never taken for one.
const CHATS_TOKEN_PREFIX: &str = "chats:";

/// The longest token [`chat_page_token`] makes.
const MAX_TOKEN_CHARS: usize = 2 * (CHATS_TOKEN_PREFIX.len() + ids::MAX_ID_BYTES);

/// The `next_page_token` after a page ending with chat `last`: the hex of
/// its place in ListChats's order. Clients treat it as opaque.
pub fn chat_page_token(last: &str) -> String {
    hex(&format!("{CHATS_TOKEN_PREFIX}{last}"))
}

/// The chat id a ListChats request's `page_token` names (`None` for an
/// empty token: the first page). A token this server could not have given
/// is INVALID_ARGUMENT on `page_token`.
pub fn chat_page_after(token: &str) -> Result<Option<String>, DomainError> {
    if token.is_empty() {
        return Ok(None);
    }
    let malformed = || DomainError::invalid("page_token", "is not a token ListChats gave");
    let plain = unhex(token, MAX_TOKEN_CHARS).ok_or_else(malformed)?;
    let chat_id = plain
        .strip_prefix(CHATS_TOKEN_PREFIX)
        .ok_or_else(malformed)?;
    ids::check_chat_id("page_token", chat_id).map_err(|_| malformed())?;
    Ok(Some(chat_id.to_owned()))
}

impl From<ChatSummary> for pb::ChatSummary {
    fn from(chat: ChatSummary) -> Self {
        let ChatSummary {
            chat_id,
            message_count,
            revision,
            enabled,
            updated_us,
            character_key,
            group_id,
            branched_from,
        } = chat;
        let (parent_chat_id, parent_message_id) = branched_from
            .map(|origin| (origin.chat_id, origin.message_id))
            .unwrap_or_default();
        pb::ChatSummary {
            chat_id,
            message_count: u32::try_from(message_count).unwrap_or(u32::MAX),
            revision,
            enabled,
            updated_at: Some(timestamp_us(updated_us)),
            character_key: character_key.unwrap_or_default(),
            group_id: group_id.unwrap_or_default(),
            parent_chat_id,
            parent_message_id,
        }
    }
}

#[cfg(test)]
mod tests;
