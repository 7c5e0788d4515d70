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

/// [`check_message_id`] for a field name built from parts
/// (`format_args!`), formatted only for an error.
pub fn check_message_id_in(field: std::fmt::Arguments<'_>, id: &str) -> Result<(), DomainError> {
    check_id(field, id)
}

fn check_id(field: impl std::fmt::Display, id: &str) -> Result<(), DomainError> {
    if id.is_empty() {
        return Err(DomainError::invalid(field.to_string(), "must not be empty"));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(DomainError::invalid(
            field.to_string(),
            format!("{} bytes is longer than {MAX_ID_BYTES}", id.len()),
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            field.to_string(),
            "must not contain control characters",
        ));
    }
    Ok(())
}

/// The tenant a request acts for: the name its token maps to, or the
/// default tenant (empty name) when authentication is off. Tenants never see
/// each other's chats or global settings: every key below carries one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tenant(pub String);

impl Tenant {
    /// The key of this tenant's chat `chat_id`.
    pub fn chat(&self, chat_id: &str) -> ChatKey {
        ChatKey {
            tenant: self.clone(),
            id: chat_id.to_owned(),
        }
    }

    /// The tenant's name (empty for the default tenant).
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str("(default tenant)")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// A chat as recapd keys it: the tenant it belongs to and the id the
/// client chose. Two tenants may use the same chat id; their chats never
/// meet, because every map, row and notification is keyed by both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChatKey {
    /// The tenant that owns the chat.
    pub tenant: Tenant,
    /// The chat id the client sees.
    pub id: String,
}

impl ChatKey {
    /// A chat of the default tenant (the only tenant without
    /// authentication).
    pub fn untenanted(chat_id: &str) -> ChatKey {
        Tenant::default().chat(chat_id)
    }
}

impl std::fmt::Display for ChatKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.tenant.0.is_empty() {
            write!(f, "{:?}", self.id)
        } else {
            write!(f, "{:?} of tenant {:?}", self.id, self.tenant.0)
        }
    }
}

/// What a replica claims before it commits (see the store's `Write::Claim`):
/// one chat, or one tenant's global settings. A distinct type, so a
/// settings claim can never be mistaken for a chat.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClaimKey {
    /// A tenant's global settings. First in the order, so a commit that
    /// claims both locks the settings before any chat.
    GlobalSettings(Tenant),
    /// A chat's rows.
    Chat(ChatKey),
}

impl std::fmt::Display for ClaimKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimKey::Chat(chat) => write!(f, "chat {chat}"),
            ClaimKey::GlobalSettings(tenant) if tenant.0.is_empty() => {
                f.write_str("the global settings")
            }
            ClaimKey::GlobalSettings(tenant) => {
                write!(f, "the global settings of tenant {:?}", tenant.0)
            }
        }
    }
}

#[cfg(test)]
mod tests;
