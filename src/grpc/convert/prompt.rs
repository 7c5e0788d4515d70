//! `RenderPrompt` conversions.

use super::enum_value;
use crate::domain::prompt::{ExtensionPrompt, PromptMessage, PromptMode};
use crate::domain::settings::{self, Position, Role};
use crate::domain::{DomainError, Limits, ids};
use crate::grpc::pb;

/// The request's mode.
pub fn mode(value: i32) -> Result<PromptMode, DomainError> {
    match enum_value::<pb::PromptMode>("mode", value)? {
        pb::PromptMode::TextCompletion => Ok(PromptMode::TextCompletion),
        pb::PromptMode::ChatCompletion => Ok(PromptMode::ChatCompletion),
        pb::PromptMode::Unspecified => Err(DomainError::invalid("mode", "must not be UNSPECIFIED")),
    }
}

/// A request's history, checked: each entry as [`message`] checks it,
/// named `history[i]`. `with_chat` says whether the request names a chat
/// (a `message_id` needs one).
pub fn history(
    history: Vec<pb::PromptMessage>,
    with_chat: bool,
    limits: &Limits,
) -> Result<Vec<PromptMessage>, DomainError> {
    history
        .into_iter()
        .enumerate()
        .map(|(i, m)| message(m, &format!("history[{i}]"), with_chat, limits))
        .collect()
}

/// One history message, checked: text limits, a known role, and a
/// `message_id` that is a valid id given only with a chat (`with_chat`).
pub fn message(
    message: pb::PromptMessage,
    field: &str,
    with_chat: bool,
    limits: &Limits,
) -> Result<PromptMessage, DomainError> {
    let pb::PromptMessage {
        role,
        name,
        content,
        hidden,
        message_id,
    } = message;
    limits.check_text(format_args!("{field}.content"), &content)?;
    limits.check_text(format_args!("{field}.name"), &name)?;
    if !message_id.is_empty() {
        let field = format!("{field}.message_id");
        if !with_chat {
            return Err(DomainError::invalid(field, "needs the request's chat_id"));
        }
        ids::check_message_id(&field, &message_id)?;
    }
    Ok(PromptMessage {
        role: Role::from(enum_value::<pb::InjectionRole>(
            &format!("{field}.role"),
            role,
        )?),
        name,
        content,
        hidden,
        message_id,
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
    limits.check_text(format_args!("{field}.key"), &key)?;
    limits.check_text(format_args!("{field}.value"), &value)?;
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

/// A request's extension prompts, each checked as [`extension_prompt`]
/// checks it, named `extra[i]`.
pub fn extension_prompts(
    prompts: Vec<pb::ExtensionPrompt>,
    limits: &Limits,
) -> Result<Vec<ExtensionPrompt>, DomainError> {
    prompts
        .into_iter()
        .enumerate()
        .map(|(i, p)| extension_prompt(p, &format!("extra[{i}]"), limits))
        .collect()
}

impl From<PromptMessage> for pb::PromptMessage {
    fn from(message: PromptMessage) -> Self {
        let PromptMessage {
            role,
            name,
            content,
            hidden,
            message_id,
        } = message;
        pb::PromptMessage {
            role: pb::InjectionRole::from(role).into(),
            name,
            content,
            hidden,
            message_id,
        }
    }
}
