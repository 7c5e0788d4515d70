//! Which message recaps fit in the short-term memory budget
//! (`check_message_exclusion` and `update_message_inclusion_flags`).

use super::autohide::auto_hide;
use super::chat::Chat;
use super::message::Message;
use super::settings::Settings;
use super::tokens::{Counter, JoinedCount};

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

/// Fills every message's cached text token count for `counter`; only
/// messages whose text changed since (or that were never counted with it)
/// are tokenised.
pub fn count_texts(chat: &mut Chat, counter: &Counter) {
    let key = counter.key();
    for message in chat.messages_mut() {
        if message.text_tokens.map(|(k, _)| k) != Some(key) {
            let (count, final_count) = counter.count_final(message.text());
            // An estimate is not kept: the next count asks again.
            message.text_tokens = final_count.then_some((key, count));
        }
    }
}

fn text_tokens(message: &Message, counter: &Counter) -> u32 {
    match message.text_tokens {
        Some((k, n)) if k == counter.key() => n,
        _ => counter.count(message.text()),
    }
}

/// `update_message_inclusion_flags`, newest to oldest: an eligible message
/// with a memory is included while the token count of the memories joined
/// newest first with `\n` stays within the budget; after the first one that
/// would exceed it, no older message is included. Returned in chat order.
/// Every count is made with `counter`, the chat's tokenizer (see
/// [`memories_within`] for how the budget is counted).
pub fn compute_inclusion(
    chat: &Chat,
    settings: &Settings,
    counter: &Counter,
) -> Vec<MessageInclusion> {
    let hidden_prefix = auto_hide(chat, settings.inclusion.auto_hide_scene_count);
    // Newest first: each message's line, and the memories that the budget
    // decides on (the line's index and the memory).
    let mut candidates: Vec<(usize, String)> = Vec::new();
    let mut lines: Vec<MessageInclusion> = chat
        .messages()
        .rev()
        .enumerate()
        .map(|(at, (seq, message))| {
            let hidden = message.hidden || hidden_prefix.hides(seq);
            let token_count = text_tokens(message, counter);
            let excluded = check_exclusion(message, hidden, settings, || token_count).or_else(
                || match message.data().memory_text(settings.inclusion.show_prefill) {
                    Some(memory) => {
                        candidates.push((at, memory));
                        None
                    }
                    None => Some(Exclusion::NoMemory),
                },
            );
            MessageInclusion {
                message_id: message.id.as_str().to_owned(),
                included: excluded.is_none(),
                hidden,
                token_count,
                excluded,
            }
        })
        .collect();
    if let Some(limit) = settings.token_limit() {
        let within = memories_within(&candidates, limit, counter);
        for (at, _) in &candidates[within..] {
            lines[*at].included = false;
            lines[*at].excluded = Some(Exclusion::TokenLimit);
        }
    }
    lines.reverse();
    lines
}

/// How many of `memories` (newest first) are included: the longest run
/// from the first whose `\n`-joined text has at most `limit` tokens, cut
/// at the first memory that would take it over.
///
/// With a tiktoken vocabulary each memory is joined in turn and only the
/// newest end of the text is counted ([`JoinedCount`]). A loaded
/// tokenizer's pieces are not known, so there the joined texts are
/// counted whole, and the cut is searched for: the prefixes of 1, 3, 7...
/// memories until one is over the limit, then halving between the last
/// two. That takes about `2 log2(n)` counts instead of `n`, each of a
/// text not much longer than the part that fits, so a chat of many
/// memories under a large budget is not counted quadratically. It relies
/// on a longer text never having fewer tokens, true of every tokenizer
/// recapd knows of (a join could only merge pieces across its `\n`, by a
/// token at most).
fn memories_within(memories: &[(usize, String)], limit: u64, counter: &Counter) -> usize {
    if counter.tiktoken_kind().is_some() {
        let mut joined = JoinedCount::new(counter);
        for (count, (_, memory)) in memories.iter().enumerate() {
            let next = joined.peek(memory);
            if next.total > limit {
                return count;
            }
            joined.accept(next);
        }
        return memories.len();
    }
    let fits = |n: usize| {
        let text: Vec<&str> = memories[..n].iter().map(|(_, m)| m.as_str()).collect();
        u64::from(counter.count(&text.join("\n"))) <= limit
    };
    // The largest n known to fit, and the smallest known not to.
    let (mut fit, mut over) = (0, None);
    let mut step = 1;
    while fit < memories.len() {
        let n = (fit + step).min(memories.len());
        if fits(n) {
            fit = n;
            step *= 2;
        } else {
            over = Some(n);
            break;
        }
    }
    let Some(mut over) = over else {
        return fit;
    };
    while over - fit > 1 {
        let middle = fit + (over - fit) / 2;
        if fits(middle) {
            fit = middle;
        } else {
            over = middle;
        }
    }
    fit
}

#[cfg(test)]
mod tests;
