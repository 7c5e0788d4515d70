//! `RenderPrompt` conversions.

use super::enum_value;
use crate::domain::prompt::{ExtensionPrompt, PromptMessage, PromptMode};
use crate::domain::refresh::Injection;
use crate::domain::settings::{self, Position, Role};
use crate::domain::{DomainError, Limits};
use crate::grpc::pb;

/// The request's mode.
pub fn mode(value: i32) -> Result<PromptMode, DomainError> {
    match enum_value::<pb::PromptMode>("mode", value)? {
        pb::PromptMode::TextCompletion => Ok(PromptMode::TextCompletion),
        pb::PromptMode::ChatCompletion => Ok(PromptMode::ChatCompletion),
        pb::PromptMode::Unspecified => Err(DomainError::invalid("mode", "must not be UNSPECIFIED")),
    }
}

/// One history message, checked.
pub fn message(
    message: pb::PromptMessage,
    field: &str,
    limits: &Limits,
) -> Result<PromptMessage, DomainError> {
    let pb::PromptMessage {
        role,
        name,
        content,
        hidden,
    } = message;
    limits.check_text(&format!("{field}.content"), &content)?;
    limits.check_text(&format!("{field}.name"), &name)?;
    Ok(PromptMessage {
        role: Role::from(enum_value::<pb::InjectionRole>(
            &format!("{field}.role"),
            role,
        )?),
        name,
        content,
        hidden,
    })
}

/// One extension prompt, checked.
pub fn extension_prompt(
    prompt: pb::ExtensionPrompt,
    field: &str,
    limits: &Limits,
) -> Result<ExtensionPrompt, DomainError> {
    let pb::ExtensionPrompt {
        key,
        value,
        position,
        depth,
        role,
        scan,
    } = prompt;
    if key.is_empty() {
        return Err(DomainError::invalid(
            format!("{field}.key"),
            "must not be empty",
        ));
    }
    limits.check_text(&format!("{field}.key"), &key)?;
    limits.check_text(&format!("{field}.value"), &value)?;
    let depth = settings::check_depth(depth).map_err(|_| {
        DomainError::invalid(
            format!("{field}.depth"),
            format!("{depth} is outside 0..={}", settings::MAX_DEPTH),
        )
    })?;
    Ok(ExtensionPrompt {
        key,
        value,
        position: Position::from(enum_value::<pb::InjectionPosition>(
            &format!("{field}.position"),
            position,
        )?),
        depth,
        role: Role::from(enum_value::<pb::InjectionRole>(
            &format!("{field}.role"),
            role,
        )?),
        scan,
    })
}

/// A chat's injection as the extension prompt SillyTavern would register.
pub fn injection_prompt(injection: &Injection) -> ExtensionPrompt {
    ExtensionPrompt {
        key: injection.key.as_str().to_owned(),
        value: injection.text.clone(),
        position: injection.position,
        depth: injection.depth,
        role: injection.role,
        scan: injection.scan,
    }
}

impl From<PromptMessage> for pb::PromptMessage {
    fn from(message: PromptMessage) -> Self {
        let PromptMessage {
            role,
            name,
            content,
            hidden,
        } = message;
        pb::PromptMessage {
            role: pb::InjectionRole::from(role).into(),
            name,
            content,
            hidden,
        }
    }
}
