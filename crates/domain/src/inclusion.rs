//! Which message recaps fit in the short-term memory budget
//! (`check_message_exclusion` and `update_message_inclusion_flags`).

use super::autohide::auto_hide;
use super::chat::Chat;
use super::message::Message;
use super::settings::{Settings, TokenizerKind};
use super::tokens::{self, JoinedCount};

/// Why a message's recap is left out; the first rule that hits wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exclusion {
    /// The extension's own system-memory message.
    SystemMemory,
    /// Excluded by hand (`exclude`).
    Excluded,
    /// A user message while `include_user_messages` is off.
    UserMessage,
    /// A thought message.
    Thoughts,
    /// Hidden (by hand or by auto-hide) while `include_system_messages` is off.
    Hidden,
    /// A narrator message while `include_narrator_messages` is off.
    Narrator,
    /// Its character is in `disabled_character_keys`.
    CharacterDisabled,
    /// Its character is a disabled member of the chat's group
    /// ([`Settings::group_disabled_members`]).
    DisabledGroupMember,
    /// Its text has fewer tokens than `message_length_threshold`.
    BelowLengthThreshold,
    /// It is eligible but has no memory.
    NoMemory,
    /// Its memory would take the joined memories over the token budget, or
    /// a newer one already did.
    TokenLimit,
}

impl Exclusion {
    /// The reason as reported by `GetInclusion` (`excluded_reason`).
    pub fn reason(self) -> &'static str {
        match self {
            Exclusion::SystemMemory => "is_auto_recap_system_memory",
            Exclusion::Excluded => "exclude",
            Exclusion::UserMessage => "include_user_messages",
            Exclusion::Thoughts => "is_thoughts",
            Exclusion::Hidden => "include_system_messages",
            Exclusion::Narrator => "include_narrator_messages",
            Exclusion::CharacterDisabled => "disabled_character_keys",
            Exclusion::DisabledGroupMember => "disabled_group_member",
            Exclusion::BelowLengthThreshold => "message_length_threshold",
            Exclusion::NoMemory => "no_memory",
            Exclusion::TokenLimit => "token_limit",
        }
    }
}

/// `check_message_exclusion`: the first exclusion rule that hits `message`.
/// `hidden` is true when it is hidden by hand or by auto-hide; `text_tokens`
/// is asked only when a length threshold is set.
pub fn check_exclusion(
    message: &Message,
    hidden: bool,
    settings: &Settings,
    text_tokens: impl FnOnce() -> u32,
) -> Option<Exclusion> {
    let data = message.data();
    if data.is_auto_recap_system_memory == Some(true) {
        return Some(Exclusion::SystemMemory);
    }
    if data.exclude == Some(true) {
        return Some(Exclusion::Excluded);
    }
    if message.is_user && !settings.inclusion.include_user_messages {
        return Some(Exclusion::UserMessage);
    }
    if message.is_thoughts {
        return Some(Exclusion::Thoughts);
    }
    if hidden && !settings.inclusion.include_system_messages {
        return Some(Exclusion::Hidden);
    }
    if message.is_narrator && !settings.inclusion.include_narrator_messages {
        return Some(Exclusion::Narrator);
    }
    if settings
        .chat
        .disabled_character_keys
        .iter()
        .any(|key| *key == message.character_key)
    {
        return Some(Exclusion::CharacterDisabled);
    }
    if !message.character_key.is_empty()
        && settings
            .group_disabled_members
            .iter()
            .any(|key| *key == message.character_key)
    {
        return Some(Exclusion::DisabledGroupMember);
    }
    if settings.inclusion.message_length_threshold > 0
        && u64::from(text_tokens()) < settings.inclusion.message_length_threshold
    {
        return Some(Exclusion::BelowLengthThreshold);
    }
    None
}

/// One message's line in `GetInclusion`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageInclusion {
    /// The message.
    pub message_id: String,
    /// Whether its memory is in the short-term memory.
    pub included: bool,
    /// Hidden by hand or by auto-hide.
    pub hidden: bool,
    /// Tokens of the message's text.
    pub token_count: u32,
    /// Why it is left out, when it is.
    pub excluded: Option<Exclusion>,
}

/// Fills every message's cached text token count for `kind`; only messages
/// whose text changed since (or that were never counted) are tokenised.
pub fn count_texts(chat: &mut Chat, kind: TokenizerKind) {
    for message in chat.messages_mut() {
        if message.text_tokens.map(|(k, _)| k) != Some(kind) {
            message.text_tokens = Some((kind, tokens::count(kind, message.text())));
        }
    }
}

fn text_tokens(message: &Message, kind: TokenizerKind) -> u32 {
    match message.text_tokens {
        Some((k, n)) if k == kind => n,
        _ => tokens::count(kind, message.text()),
    }
}

/// `update_message_inclusion_flags`, newest to oldest: an eligible message
/// with a memory is included while the token count of the memories joined
/// newest first with `\n` stays within the budget; after the first one that
/// would exceed it, no older message is included. Returned in chat order.
pub fn compute_inclusion(chat: &Chat, settings: &Settings) -> Vec<MessageInclusion> {
    let kind = settings.inclusion.tokenizer;
    let hidden_prefix = auto_hide(chat, settings.inclusion.auto_hide_scene_count);
    let limit = settings.token_limit();
    let mut joined = JoinedCount::new(kind);
    let mut limit_reached = false;
    let mut lines: Vec<MessageInclusion> = chat
        .messages()
        .rev()
        .map(|(seq, message)| {
            let hidden = message.hidden || hidden_prefix.hides(seq);
            let token_count = text_tokens(message, kind);
            let excluded =
                check_exclusion(message, hidden, settings, || token_count).or_else(|| {
                    let Some(memory) = message.data().memory_text(settings.inclusion.show_prefill)
                    else {
                        return Some(Exclusion::NoMemory);
                    };
                    if limit_reached {
                        return Some(Exclusion::TokenLimit);
                    }
                    if let Some(limit) = limit {
                        let next = joined.peek(&memory);
                        if next.total > limit {
                            limit_reached = true;
                            return Some(Exclusion::TokenLimit);
                        }
                        joined.accept(next);
                    }
                    None
                });
            MessageInclusion {
                message_id: message.id.as_str().to_owned(),
                included: excluded.is_none(),
                hidden,
                token_count,
                excluded,
            }
        })
        .collect();
    lines.reverse();
    lines
}

#[cfg(test)]
mod tests;
