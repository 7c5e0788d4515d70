//! How the two rankings are fused, what the tier leaves out as said
//! already, and how exactly it fills its budget.

use super::super::search::RecallQuery;
use super::super::tier::{AlreadyInjected, MAX_TIER_CANDIDATES, TierLine, fill, tier_lines};
use super::super::{ChunkKey, Source, StoredVector};
use super::{ids, message, settings, story};
use crate::chat::{Chat, ChatEvent};
use crate::message::MessageData;
use crate::recall::index::RecallIndex;
use crate::recall::tier::moment_hits;
use crate::recaps::NewRecap;
use crate::time::UnixMillis;

/// A deterministic stream of numbers in -0.5..0.5.
fn noise(seed: u64) -> impl FnMut() -> f32 {
    let mut state = seed.max(1);
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 10_000) as f32 / 10_000.0 - 0.5
    }
}

fn vector_of(id: &str, text: &str, vector: Vec<f32>) -> StoredVector {
    StoredVector {
        key: ChunkKey {
            message_id: id.into(),
            source: Source::Message,
            part: 0,
        },
        fingerprint: crate::recall::input_fingerprint(Some("A"), text),
        model: "noise".into(),
        vector,
    }
}

/// Sixty passages, each naming one rare thing (`w{i}x`) beside a word
/// every passage shares, each with a random vector.
fn noisy_chat() -> (Chat, RecallIndex) {
    let mut chat = Chat::default();
    let mut stored = Vec::new();
    let mut next = noise(42);
    for i in 0..60 {
        let id = format!("m{i}");
        let lanterns = vec!["lantern"; 1 + i % 3].join(" ");
        let text = format!("The {lanterns} stood by the w{i}x near the door.");
        stored.push(vector_of(&id, &text, (0..64).map(|_| next()).collect()));
        chat.apply(ChatEvent::MessageSent(message(&id, "A", &text)))
            .expect("appends");
    }
    let index = RecallIndex::build(&chat, 1000, "noise", stored);
    (chat, index)
}

#[test]
fn hybrid_never_ranks_below_keyword_search_when_the_vectors_are_noise() {
    let (chat, index) = noisy_chat();
    let mut next = noise(7);
    let (mut keyword_first, mut hybrid_first) = (0, 0);
    for i in 0..60 {
        let text = format!("where is the lantern by the w{i}x");
        let direction: Vec<f32> = (0..64).map(|_| next()).collect();
        let query = |vector| RecallQuery {
            text: &text,
            vector,
            exclude_from_seq: None,
            exclude_ids: &[],
            limit: 5,
            min_score: 0.0,
            // The worst case: every random vector enters the ranking.
            min_similarity: -1.0,
        };
        let wanted = format!("m{i}");
        let keyword = index.search(&chat, &query(None));
        let hybrid = index.search(&chat, &query(Some(&direction)));
        assert!(hybrid[0].vector_score.is_some(), "the vectors took part");
        keyword_first += usize::from(ids(&keyword)[0] == wanted);
        hybrid_first += usize::from(ids(&hybrid)[0] == wanted);
    }
    assert_eq!(keyword_first, 60, "the rare word finds its passage");
    assert_eq!(
        hybrid_first, keyword_first,
        "noise in the vector ranking does not push keyword search's answer down"
    );
}

#[test]
fn vectors_still_decide_where_keywords_find_nothing() {
    let (chat, index) = noisy_chat();
    let direction = index.direction(["m17"]).expect("m17 has a vector");
    let hits = index.search(
        &chat,
        &RecallQuery {
            text: "a question sharing no word with any passage",
            vector: Some(&direction),
            exclude_from_seq: None,
            exclude_ids: &[],
            limit: 3,
            min_score: 0.0,
            min_similarity: 0.25,
        },
    );
    assert_eq!(ids(&hits)[0], "m17");
    assert!(
        (hits[0].score - 1.0).abs() < 1e-6,
        "the best of the only ranking used"
    );
}

/// The story, with five more messages all saying the same sentence.
fn repetitive_story() -> Chat {
    let mut chat = story();
    for (i, text) in [
        "The sealed letter is under the floorboard.",
        "The sealed letter is under the floorboard.",
        "the sealed  letter is under the floorboard.",
        "The sealed letter is under the floorboard.",
        "The sealed letter is under the floorboard.",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("r{i}");
        let name = if i % 2 == 0 { "Mira" } else { "Tomas" };
        chat.apply(ChatEvent::MessageSent(message(&id, name, text)))
            .expect("appends");
    }
    chat.apply(ChatEvent::MessageSent(message(
        "q",
        "Tomas",
        "Where did we hide the sealed letter?",
    )))
    .expect("appends");
    chat
}

#[test]
fn a_sentence_said_five_times_is_found_once() {
    let chat = repetitive_story();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let hits = moment_hits(&chat, &index, &settings(), 10);
    let copies = hits
        .iter()
        .filter(|h| h.text.to_lowercase().contains("floorboard"))
        .count();
    assert_eq!(copies, 1, "{:?}", ids(&hits));
    // The other passages about the letter are still there.
    assert!(ids(&hits).contains(&"m2") && ids(&hits).contains(&"m3"));
}

fn line(text: &str) -> TierLine {
    TierLine {
        score: 1.0,
        line: text.into(),
        passage: crate::recall::search::passage_key(text),
    }
}

#[test]
fn the_tier_holds_a_passage_once_whatever_chat_it_comes_from() {
    // The same passage from two chats, the second spelled with other
    // spacing and case.
    let found = vec![
        line("The bridge fell in the storm."),
        line("Wolves howled."),
        line("the bridge  fell in the storm."),
    ];
    let mut words = |t: &str| t.split_whitespace().count() as u32;
    let (text, _) = fill(found, "{{recall}}", 500, &mut words);
    assert_eq!(text, "The bridge fell in the storm.\n\nWolves howled.");
}

fn scene_story() -> Chat {
    let mut chat = story();
    for (id, recap) in [
        ("m2", "Scene one: the letter with green wax."),
        ("m4", "Scene two: the road north and the sealed letter."),
    ] {
        chat.set_message_data(
            id,
            &MessageData {
                scene_break: Some(true),
                scene_recap_memory: Some(recap.into()),
                ..MessageData::default()
            },
        )
        .expect("sets data");
    }
    chat
}

fn scene_recaps(chat: &Chat, already: &AlreadyInjected) -> Vec<String> {
    let index = RecallIndex::build(chat, 1000, "", Vec::new());
    let hits = moment_hits(chat, &index, &settings(), 20);
    tier_lines(chat, hits, already)
        .into_iter()
        .map(|l| l.line)
        .filter(|l| l.starts_with("Scene"))
        .collect()
}

#[test]
fn scene_recaps_the_running_recap_carries_are_left_out() {
    let mut chat = scene_story();
    let counter = crate::tokens::Counter::default();
    let s = settings();
    let none = AlreadyInjected::of(&chat, &s, &counter);
    assert_eq!(
        scene_recaps(&chat, &none).len(),
        2,
        "no running recap yet: both scene recaps are recalled"
    );
    chat.add_recap(
        NewRecap {
            content: "The letter came with green wax.".into(),
            new_scene_message_id: Some("m2".into()),
            ..NewRecap::default()
        },
        UnixMillis(0),
    )
    .expect("adds a version");
    let already = AlreadyInjected::of(&chat, &s, &counter);
    assert_eq!(
        scene_recaps(&chat, &already),
        ["Scene two: the road north and the sealed letter."],
        "scene one is in the running recap"
    );
}

#[test]
fn messages_whose_recaps_the_message_tier_injects_are_left_out() {
    let mut chat = story();
    chat.set_message_data(
        "m2",
        &MessageData {
            memory: Some("Tomas got a letter.".into()),
            ..MessageData::default()
        },
    )
    .expect("sets data");
    let counter = crate::tokens::Counter::default();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let mut s = settings();
    let recalled = |s: &crate::settings::Settings| {
        let hits = moment_hits(&chat, &index, s, 10);
        tier_lines(&chat, hits, &AlreadyInjected::of(&chat, s, &counter))
            .into_iter()
            .map(|l| l.line)
            .collect::<Vec<_>>()
    };
    let innkeeper = "Tomas: The innkeeper gave me a letter sealed with green wax.";
    assert!(recalled(&s).contains(&innkeeper.to_owned()), "tier off");
    s.tier.enabled = true;
    assert!(!recalled(&s).contains(&innkeeper.to_owned()), "tier on");
}

#[test]
fn the_budget_is_met_exactly_template_included() {
    let passages: Vec<String> = (0..30)
        .map(|i| {
            let words = 1 + (i * 7) % 13;
            format!("p{i} {}", vec!["word"; words].join(" "))
        })
        .collect();
    let template = "Recalled passages from earlier:\n{{recall}}";
    let mut words = |t: &str| t.split_whitespace().count() as u32;
    for budget in [3, 10, 17, 40, 63] {
        let found: Vec<TierLine> = passages.iter().map(|p| line(p)).collect();
        let (text, tokens) = fill(found, template, budget, &mut words);
        assert_eq!(tokens, words(&text), "the count is the text's own");
        assert!(tokens <= budget, "budget {budget}: {tokens} tokens");
        // No passage looked at and left out would have fitted.
        let kept: Vec<&str> = text.lines().skip(1).filter(|l| !l.is_empty()).collect();
        for passage in passages.iter().take(MAX_TIER_CANDIDATES) {
            if kept.contains(&passage.as_str()) {
                continue;
            }
            let with = format!("{text}\n\n{passage}");
            let with = if text.is_empty() {
                template.replace("{{recall}}", passage)
            } else {
                with
            };
            assert!(
                words(&with) > budget,
                "budget {budget}: {passage:?} would have fitted in {text:?}"
            );
        }
    }
}

#[test]
fn the_budget_holds_with_a_real_tokenizer() {
    let chat = repetitive_story();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let counter = crate::tokens::Counter::default();
    let lines = tier_lines(
        &chat,
        moment_hits(&chat, &index, &settings(), 20),
        &AlreadyInjected::default(),
    );
    let template = settings().recall.template;
    for budget in [5, 20, 31, 60] {
        let (text, tokens) = fill(lines.clone(), &template, budget, &mut |t| counter.count(t));
        assert_eq!(tokens, counter.count(&text));
        assert!(
            tokens <= budget,
            "budget {budget}: {tokens} tokens: {text:?}"
        );
        assert!(
            text.matches("floorboard").count() <= 1,
            "budget {budget}: {text:?}"
        );
    }
}
