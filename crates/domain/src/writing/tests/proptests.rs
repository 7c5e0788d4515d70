//! Property tests of the writing rules: on random chats and settings
//! the candidates keep their invariants and every prompt is prepared
//! without a panic; on random answers parsing never panics; macros are
//! replaced as a plain left-to-right replacement would when no value
//! holds braces.

use proptest::prelude::*;

use super::test_chat::chat;
use crate::jobs::JobKind;
use crate::lore::prepare::LoreInput;
use crate::settings::Settings;
use crate::writing::answer::parse_answer;
use crate::writing::candidates::{detection_candidates, detection_ready};
use crate::writing::macros::expand;
use crate::writing::prepare::prepare;

/// What each message of a random chat is: 0 plain, 1 hidden, 2 a thought,
/// 3 a visible break, 4 an invisible break.
fn chat_of(kinds: &[u8]) -> crate::chat::Chat {
    let pick = |k: u8| -> Vec<usize> {
        kinds
            .iter()
            .enumerate()
            .filter(|(_, kind)| **kind == k)
            .map(|(i, _)| i)
            .collect()
    };
    let mut builder = chat(kinds.len())
        .hidden(&pick(1))
        .thoughts(&pick(2))
        .breaks(&pick(3))
        .invisible_breaks(&pick(4));
    for i in pick(3) {
        builder = builder.scene_recap(i, "a scene");
    }
    builder.build()
}

fn settings_of(offset: u32, min: u32, auto_hide: u32, limit: Option<u64>) -> Settings {
    {
        let mut settings = Settings::default();
        settings.writing.scene_break_offset = offset;
        settings.writing.scene_break_min_messages = min;
        settings.inclusion.auto_hide_scene_count = auto_hide;
        settings.inclusion.max_context_tokens = limit;
        settings.writing.llm_max_tokens = 10;
        settings
    }
}

proptest! {
    #[test]
    fn candidates_keep_their_invariants(
        kinds in prop::collection::vec(0u8..5, 0..40),
        offset in 0u32..10,
        min in 1u32..10,
        auto_hide in 0u32..3,
    ) {
        let c = chat_of(&kinds);
        let s = settings_of(offset, min, auto_hide, None);
        let candidates = detection_candidates(&c, &s);
        prop_assert_eq!(candidates.ready(&s), detection_ready(&c, &s));
        let indexes: Vec<usize> = candidates.list.iter().map(|c| c.index).collect();
        prop_assert!(indexes.windows(2).all(|w| w[0] < w[1]));
        for candidate in &candidates.list {
            let kind = kinds[candidate.index];
            prop_assert!(kind != 1 && kind != 2, "hidden or thought: {candidate:?}");
            prop_assert!(!kinds[candidate.index..].contains(&3), "before a visible break");
        }
        let eligible = candidates.eligible_count();
        prop_assert_eq!(eligible, candidates.list.len().saturating_sub(offset as usize));
        for n in 0..kinds.len() + 1 {
            if let Some(candidate) = candidates.valid_break(n) {
                prop_assert!(candidate.eligible);
                prop_assert_eq!(candidate.index, n);
                prop_assert!(candidates.earliest_allowed_break.is_some_and(|e| n >= e));
            }
        }
        prop_assert_eq!(candidates.valid_breaks().next().is_some(), candidates.ready(&s));
    }

    #[test]
    fn every_kind_prepares_without_panicking(
        kinds in prop::collection::vec(0u8..5, 0..30),
        offset in 0u32..6,
        min in 1u32..6,
        limit in prop::option::of(0u64..400),
        target in 0usize..30,
    ) {
        let c = chat_of(&kinds);
        let s = settings_of(offset, min, 2, limit);
        let count = |text: &str| text.split_whitespace().count();
        let id = format!("m{target}");
        for kind in JobKind::ALL {
            if let Ok(prepared) = prepare(kind, &c, &s, &id, &LoreInput::default(), &count) {
                if let Some(max) = limit {
                    prop_assert!(count(&prepared.request) as u64 <= max.saturating_sub(10));
                }
                if let Some(candidates) = &prepared.candidates {
                    prop_assert!(candidates.valid_breaks().next().is_some());
                    prop_assert_eq!(prepared.read.messages.len(), candidates.list.len());
                }
            }
        }
    }

    #[test]
    fn parsing_any_answer_never_panics(
        text in r#"[{}\[\]":, 0-9a-z_#\-.\\`\n]{0,80}"#,
        kinds in prop::collection::vec(0u8..5, 0..20),
    ) {
        let c = chat_of(&kinds);
        let candidates = detection_candidates(&c, &settings_of(2, 2, 2, None));
        for kind in JobKind::ALL {
            let _ = parse_answer(kind, &text, Some(&candidates));
            let _ = parse_answer(kind, &format!("{{\"scene_break_at\": {text}}}"), Some(&candidates));
            let _ = parse_answer(kind, &format!("{{\"recap\": {text}}}"), None);
        }
    }

    #[test]
    fn without_braces_in_values_expansion_is_plain_replacement(
        template in "[{}a-c ]{0,40}",
        a in "[a-z ]{0,5}",
        b in "[a-z ]{0,5}",
    ) {
        let expanded = expand(&template, &[("a", &a), ("b", &b)]);
        // Splitting on "{{a}}" first and "{{b}}" inside the pieces is the
        // same left-to-right replacement, as no value holds a brace.
        let plain: Vec<String> = template
            .split("{{a}}")
            .map(|piece| piece.replace("{{b}}", &b))
            .collect();
        prop_assert_eq!(expanded, plain.join(&a));
    }
}
