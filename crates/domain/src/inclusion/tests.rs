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

    // A disabled group member: left out in the group's chats only (the
    // resolved settings carry the group's disabled members).
    let in_group = Settings {
        group_disabled_members: vec!["bob.png".into()],
        ..Settings::default()
    };
    assert_eq!(
        check_exclusion(&bob, false, &in_group, || 3),
        Some(Exclusion::DisabledGroupMember)
    );
    assert_eq!(
        Exclusion::DisabledGroupMember.reason(),
        "disabled_group_member"
    );
    assert_eq!(
        check_exclusion(&bob, false, &Settings::default(), || 3),
        None
    );
    assert_eq!(check_exclusion(&plain, false, &in_group, || 3), None);

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
    let lines = compute_inclusion(&c, &Settings::default(), &crate::tokens::Counter::default());
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
        reasons(&compute_inclusion(
            &c,
            &hidden_prefill,
            &crate::tokens::Counter::default()
        )),
        ["no_memory", "no_memory"]
    );
    let shown = hidden_prefill.with(&SettingsPatch {
        show_prefill: Some(true),
        ..Default::default()
    });
    assert_eq!(
        reasons(&compute_inclusion(
            &c,
            &shown,
            &crate::tokens::Counter::default()
        )),
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
    let budget = u64::from(crate::tokens::count(
        crate::settings::TokenizerKind::O200kBase,
        three,
    ));
    let s = Settings::default().with(&SettingsPatch {
        message_recap_context_limit: Some(budget),
        ..Default::default()
    });
    let lines = compute_inclusion(&c, &s, &crate::tokens::Counter::default());
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
        reasons(&compute_inclusion(
            &c,
            &tight,
            &crate::tokens::Counter::default()
        )),
        ["token_limit", "token_limit", "included", "included"]
    );
    let percent = s.with(&SettingsPatch {
        message_recap_context_limit: Some(0),
        message_recap_context_type: Some(ContextType::Percent),
        max_context_tokens: Some(8000),
        ..Default::default()
    });
    assert_eq!(
        reasons(&compute_inclusion(
            &c,
            &percent,
            &crate::tokens::Counter::default()
        )),
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
    count_texts(&mut c, &crate::tokens::Counter::default());
    let lines = compute_inclusion(&c, &Settings::default(), &crate::tokens::Counter::default());
    let hidden: Vec<bool> = lines.iter().map(|l| l.hidden).collect();
    assert_eq!(hidden, [true, false, true, false, false]);
    assert_eq!(lines[0].token_count, 2);
}

/// A loaded tokenizer: one token per word and per line break, and one
/// more for a text that starts with a line break (so counts are not a sum
/// over the joined parts).
struct Words;
impl crate::tokens::CountTokens for Words {
    fn count_final(&self, text: &str) -> (u32, bool) {
        let words = text.split_whitespace().count();
        let breaks = text.matches('\n').count();
        (
            (words + breaks + usize::from(text.starts_with('\n'))) as u32,
            true,
        )
    }
}

/// A tokenizer whose counts are estimates until it has its answer (as the
/// LLM endpoint's): one token per byte, never final.
struct Estimating;
impl crate::tokens::CountTokens for Estimating {
    fn count_final(&self, text: &str) -> (u32, bool) {
        (text.len() as u32, false)
    }
    fn estimated(&self) -> bool {
        true
    }
}

#[test]
fn an_estimated_count_is_not_kept_as_the_texts_count() {
    let mut c = chat(vec![msg("a", "hello there"), msg("b", "hi")], &[]);
    let estimating = Counter::loaded("estimating", std::sync::Arc::new(Estimating));
    count_texts(&mut c, &estimating);
    assert!(c.messages().all(|(_, m)| m.text_tokens.is_none()));
    assert!(estimating.estimated());
    // A final count is kept.
    let words = Counter::loaded("words", std::sync::Arc::new(Words));
    count_texts(&mut c, &words);
    assert!(c.messages().all(|(_, m)| m.text_tokens.is_some()));
    assert!(!words.estimated());
}

#[test]
fn with_a_loaded_tokenizer_the_budget_stops_where_counting_each_joined_text_does() {
    let counter = Counter::loaded("words", std::sync::Arc::new(Words));
    let texts = ["a", "b c", "d e f", "n\no", "g h i j", "k", "l m"];
    for n in [0, 1, 2, 3, 7, 20, 45] {
        let ids: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        let messages = ids.iter().map(|id| msg(id, "text")).collect();
        let memories: Vec<(&str, &str)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), texts[i % texts.len()]))
            .collect();
        let c = chat(messages, &memories);
        for limit in [0, 1, 2, 3, 5, 8, 13, 21, 40, 80, 1000] {
            let s = Settings::default().with(&SettingsPatch {
                message_recap_context_limit: Some(limit),
                ..Default::default()
            });
            // The extension's rule, counting every joined text whole.
            let mut joined: Vec<&str> = Vec::new();
            let mut expected = vec!["token_limit"; n];
            for (i, (_, memory)) in memories.iter().enumerate().rev() {
                joined.push(memory);
                if u64::from(counter.count(&joined.join("\n"))) > limit {
                    break;
                }
                expected[i] = "included";
            }
            let lines = compute_inclusion(&c, &s, &counter);
            assert_eq!(reasons(&lines), expected, "{n} memories, limit {limit}");
        }
    }
}
