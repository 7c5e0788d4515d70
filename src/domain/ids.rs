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
