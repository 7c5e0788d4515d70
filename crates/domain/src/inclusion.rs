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
    if message.is_user && !settings.include_user_messages {
        return Some(Exclusion::UserMessage);
    }
    if message.is_thoughts {
        return Some(Exclusion::Thoughts);
    }
    if hidden && !settings.include_system_messages {
        return Some(Exclusion::Hidden);
    }
    if message.is_narrator && !settings.include_narrator_messages {
        return Some(Exclusion::Narrator);
    }
    if settings
        .disabled_character_keys
        .iter()
        .any(|key| *key == message.character_key)
    {
        return Some(Exclusion::CharacterDisabled);
    }
    if settings.message_length_threshold > 0
        && u64::from(text_tokens()) < settings.message_length_threshold
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
    let kind = settings.tokenizer;
    let hidden_prefix = auto_hide(chat, settings.auto_hide_scene_count);
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
                    let Some(memory) = message.data().memory_text(settings.show_prefill) else {
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
mod tests {
    use super::*;
    use crate::chat::ChatEvent;
    use crate::chat::tests::msg;
    use crate::message::MessageData;
    use crate::settings::{ContextType, SettingsPatch};

    fn chat(messages: Vec<Message>, memories: &[(&str, &str)]) -> Chat {
        let mut chat = Chat::default();
        chat.apply(ChatEvent::ChatChanged(messages)).unwrap();
        for (id, memory) in memories {
            let data = MessageData {
                memory: Some((*memory).to_owned()),
                ..Default::default()
            };
            chat.set_message_data(id, &data).unwrap();
        }
        chat
    }

    fn reasons(lines: &[MessageInclusion]) -> Vec<&'static str> {
        lines
            .iter()
            .map(|l| l.excluded.map_or("included", Exclusion::reason))
            .collect()
    }

    #[test]
    fn each_exclusion_rule_in_order() {
        let s = Settings::default();
        let plain = msg("m", "some words here");
        assert_eq!(check_exclusion(&plain, false, &s, || 3), None);

        let mut m = plain.clone();
        m.data_mut().is_auto_recap_system_memory = Some(true);
        m.data_mut().exclude = Some(true);
        assert_eq!(
            check_exclusion(&m, false, &s, || 3),
            Some(Exclusion::SystemMemory)
        );
        m.data_mut().is_auto_recap_system_memory = None;
        assert_eq!(
            check_exclusion(&m, false, &s, || 3),
            Some(Exclusion::Excluded)
        );

        let off = |patch: SettingsPatch| s.with(&patch);
        let mut user = plain.clone();
        user.is_user = true;
        assert_eq!(check_exclusion(&user, false, &s, || 3), None);
        let no_users = off(SettingsPatch {
            include_user_messages: Some(false),
            ..Default::default()
        });
        assert_eq!(
            check_exclusion(&user, false, &no_users, || 3),
            Some(Exclusion::UserMessage)
        );

        let mut thoughts = plain.clone();
        thoughts.is_thoughts = true;
        assert_eq!(
            check_exclusion(&thoughts, false, &s, || 3),
            Some(Exclusion::Thoughts)
        );

        let no_hidden = off(SettingsPatch {
            include_system_messages: Some(false),
            ..Default::default()
        });
        assert_eq!(check_exclusion(&plain, true, &s, || 3), None);
        assert_eq!(
            check_exclusion(&plain, true, &no_hidden, || 3),
            Some(Exclusion::Hidden)
        );

        let mut narrator = plain.clone();
        narrator.is_narrator = true;
        let no_narrator = off(SettingsPatch {
            include_narrator_messages: Some(false),
            ..Default::default()
        });
        assert_eq!(
            check_exclusion(&narrator, false, &no_narrator, || 3),
            Some(Exclusion::Narrator)
        );

        let mut bob = plain.clone();
        bob.character_key = "bob.png".into();
        let no_bob = off(SettingsPatch {
            disabled_character_keys: Some(vec!["bob.png".into()]),
            ..Default::default()
        });
        assert_eq!(
            check_exclusion(&bob, false, &no_bob, || 3),
            Some(Exclusion::CharacterDisabled)
        );
        assert_eq!(check_exclusion(&plain, false, &no_bob, || 3), None);

        let threshold = off(SettingsPatch {
            message_length_threshold: Some(4),
            ..Default::default()
        });
        assert_eq!(
            check_exclusion(&plain, false, &threshold, || 3),
            Some(Exclusion::BelowLengthThreshold)
        );
        assert_eq!(check_exclusion(&plain, false, &threshold, || 4), None);
    }

    #[test]
    fn without_a_limit_every_eligible_memory_is_included() {
        let c = chat(
            vec![msg("a", "x"), msg("b", "y"), msg("c", "z")],
            &[("a", "recap a"), ("c", "recap c")],
        );
        let lines = compute_inclusion(&c, &Settings::default());
        assert_eq!(reasons(&lines), ["included", "no_memory", "included"]);
        assert_eq!(lines[0].message_id, "a");
    }

    #[test]
    fn a_shown_prefill_without_memory_counts_as_the_memory() {
        let mut c = chat(vec![msg("a", "x"), msg("b", "y")], &[]);
        let prefill = MessageData {
            prefill: Some("Alice left.".into()),
            ..Default::default()
        };
        c.set_message_data("a", &prefill).unwrap();
        let hidden_prefill = Settings::default();
        assert_eq!(
            reasons(&compute_inclusion(&c, &hidden_prefill)),
            ["no_memory", "no_memory"]
        );
        let shown = hidden_prefill.with(&SettingsPatch {
            show_prefill: Some(true),
            ..Default::default()
        });
        assert_eq!(
            reasons(&compute_inclusion(&c, &shown)),
            ["included", "no_memory"]
        );
    }

    #[test]
    fn the_budget_stops_at_the_first_memory_that_would_exceed_it() {
        // Each memory "alpha beta gamma" is 3 tokens; joined with \n, two are 7.
        let memories = [
            ("a", "alpha beta gamma"),
            ("b", "alpha beta gamma"),
            ("c", "one"),
            ("d", "alpha beta gamma"),
        ];
        let c = chat(
            vec![msg("a", "1"), msg("b", "2"), msg("c", "3"), msg("d", "4")],
            &memories,
        );
        let three = "alpha beta gamma\none\nalpha beta gamma";
        let budget = u64::from(tokens::count(TokenizerKind::O200kBase, three));
        let s = Settings::default().with(&SettingsPatch {
            message_recap_context_limit: Some(budget),
            ..Default::default()
        });
        let lines = compute_inclusion(&c, &s);
        // d, c, b fit exactly; a would exceed.
        assert_eq!(
            reasons(&lines),
            ["token_limit", "included", "included", "included"]
        );
        let tight = s.with(&SettingsPatch {
            message_recap_context_limit: Some(budget - 1),
            ..Default::default()
        });
        // b exceeds; a would fit on its own but comes after the limit was hit.
        assert_eq!(
            reasons(&compute_inclusion(&c, &tight)),
            ["token_limit", "token_limit", "included", "included"]
        );
        let percent = s.with(&SettingsPatch {
            message_recap_context_limit: Some(0),
            message_recap_context_type: Some(ContextType::Percent),
            max_context_tokens: Some(8000),
            ..Default::default()
        });
        assert_eq!(
            reasons(&compute_inclusion(&c, &percent)),
            ["token_limit"; 4]
        );
    }

    #[test]
    fn hidden_counts_hand_hides_and_auto_hide_and_token_count_is_the_text() {
        let mut hand = msg("h", "hidden by hand");
        hand.hidden = true;
        let mut c = chat(
            vec![
                msg("a", "one two"),
                msg("b", "x"),
                hand,
                msg("d", "y"),
                msg("e", "z"),
            ],
            &[],
        );
        for id in ["a", "d"] {
            let data = MessageData {
                scene_break: Some(true),
                ..Default::default()
            };
            c.set_message_data(id, &data).unwrap();
        }
        count_texts(&mut c, TokenizerKind::O200kBase);
        let lines = compute_inclusion(&c, &Settings::default());
        let hidden: Vec<bool> = lines.iter().map(|l| l.hidden).collect();
        assert_eq!(hidden, [true, false, true, false, false]);
        assert_eq!(lines[0].token_count, 2);
    }
}
