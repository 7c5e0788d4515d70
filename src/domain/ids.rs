//! Chat and message ids: chosen by clients, so checked before use.

use super::DomainError;

/// Longest accepted id, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// Checks a chat id: non-empty, at most [`MAX_ID_BYTES`] bytes, no control
/// characters. `field` names the request field in the error.
pub fn check_chat_id(field: &str, id: &str) -> Result<(), DomainError> {
    check_id(field, id)
}

/// Checks a message id with the same rules as a chat id.
pub fn check_message_id(field: &str, id: &str) -> Result<(), DomainError> {
    check_id(field, id)
}

fn check_id(field: &str, id: &str) -> Result<(), DomainError> {
    if id.is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(DomainError::invalid(
            field,
            format!("{} bytes is longer than {MAX_ID_BYTES}", id.len()),
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            field,
            "must not contain control characters",
        ));
    }
    Ok(())
}

/// Separates a tenant from a chat id in the engine's chat keys
/// (`TENANT\u{1f}CHAT`; the default tenant's keys are the bare chat id).
/// Chat ids and tenant names never contain control characters, so a key
/// splits one way only.
pub const SCOPE_SEPARATOR: char = '\u{1f}';

/// The chat id a client sees for an engine key.
pub fn unscoped(key: &str) -> &str {
    key.split_once(SCOPE_SEPARATOR)
        .map_or(key, |(_, chat)| chat)
}

/// The tenant an engine key belongs to (empty: the default tenant).
pub fn tenant_of(key: &str) -> &str {
    key.split_once(SCOPE_SEPARATOR)
        .map_or("", |(tenant, _)| tenant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_ids_pass() {
        assert!(check_chat_id("chat_id", "alice/chat-2024-01-01 @12h").is_ok());
        assert!(check_message_id("message_id", "ü").is_ok());
    }

    #[test]
    fn empty_long_and_control_ids_are_refused_naming_the_field() {
        for bad in ["", "a\nb", "tab\there", "nul\0"] {
            let err = check_chat_id("chat_id", bad).unwrap_err();
            assert!(err.to_string().starts_with("invalid chat_id"), "{err}");
        }
        let long = "x".repeat(MAX_ID_BYTES + 1);
        assert!(check_chat_id("chat_id", &long).is_err());
        assert!(check_chat_id("chat_id", &long[1..]).is_ok());
    }
}
