//! LorebookService's conversions: its page tokens and its answers.

use crate::domain::DomainError;
use crate::engine::{LorebookEntry, LorebookSummary, check_lorebook_name};
use crate::grpc::convert::{hex, timestamp_us, unhex};
use crate::grpc::pb;

/// What a ListLorebooks token holds before the book's name, so that a
/// ListChats or ListJobs token is never taken for one.
const TOKEN_PREFIX: &str = "lorebooks:";

/// The longest token [`page_token`] makes.
const MAX_TOKEN_CHARS: usize = 2 * (TOKEN_PREFIX.len() + crate::engine::MAX_LOREBOOK_NAME_BYTES);

/// The `next_page_token` after a page ending with the book `last`: the hex
/// of its place in ListLorebooks' order. Clients treat it as opaque.
pub fn page_token(last: &str) -> String {
    hex(&format!("{TOKEN_PREFIX}{last}"))
}

/// The book name a ListLorebooks request's `page_token` names (`None` for
/// an empty token: the first page). A token this server could not have
/// given is INVALID_ARGUMENT on `page_token`.
pub fn page_after(token: &str) -> Result<Option<String>, DomainError> {
    if token.is_empty() {
        return Ok(None);
    }
    let malformed = || DomainError::invalid("page_token", "is not a token ListLorebooks gave");
    let plain = unhex(token, MAX_TOKEN_CHARS).ok_or_else(malformed)?;
    let name = plain.strip_prefix(TOKEN_PREFIX).ok_or_else(malformed)?;
    check_lorebook_name(name).map_err(|_| malformed())?;
    Ok(Some(name.to_owned()))
}

impl From<LorebookSummary> for pb::Lorebook {
    fn from(book: LorebookSummary) -> Self {
        let LorebookSummary {
            name,
            entry_count,
            updated_us,
        } = book;
        pb::Lorebook {
            name,
            entry_count: u32::try_from(entry_count).unwrap_or(u32::MAX),
            updated_at: Some(timestamp_us(updated_us)),
        }
    }
}

impl From<LorebookEntry> for pb::LorebookEntry {
    fn from(entry: LorebookEntry) -> Self {
        let LorebookEntry { uid, json, book } = entry;
        pb::LorebookEntry {
            name: book.name.clone(),
            uid,
            json,
            lorebook: Some(book.into()),
        }
    }
}

#[cfg(test)]
mod tests;
