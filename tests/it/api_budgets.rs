//! Token budgets over the API: absolute and percent budgets, exact
//! counting with every tokenizer, prefill and per-chat tokenizers.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;

/// Tokens of `text` with cl100k_base.
fn cl100k(text: &str) -> u32 {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len() as u32
}

/// Tokens of `text` with the vocabulary `tokenizer` names.
fn tokens_with(tokenizer: pb::Tokenizer, text: &str) -> u32 {
    let bpe = match tokenizer {
        pb::Tokenizer::O200kBase | pb::Tokenizer::Unspecified => {
            tiktoken_rs::o200k_base_singleton()
        }
        pb::Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        pb::Tokenizer::P50kBase => tiktoken_rs::p50k_base_singleton(),
        pb::Tokenizer::R50kBase => tiktoken_rs::r50k_base_singleton(),
        pb::Tokenizer::HuggingFace => panic!("a model's tokenizer: see api_tokenizers"),
        pb::Tokenizer::LlmEndpoint => panic!("the LLM's tokenizer: see api_endpoint_tokenizer"),
    };
    bpe.encode_ordinary(text).len() as u32
}

#[tokio::test]
async fn the_absolute_token_budget_stops_at_the_first_memory_that_would_exceed_it() {
    let (_dir, mut s) = start().await;
    let messages = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|id| message(id, "text"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let (a, b, d, e) = (
        "Ann.",
        "Bob walked all the way to the old mill by the river.",
        "Dora found a map.",
        "Eve lit the lamp.",
    );
    for (id, memory) in [("a", a), ("b", b), ("d", d), ("e", e)] {
        set_memory(&mut s, "c", id, memory).await;
    }
    let limit = |n: u32| pb::Settings {
        message_recap_context_limit: Some(i64::from(n)),
        ..Default::default()
    };
    // Enough for e, d and a (newest first, joined by \n), not for b: a is
    // left out too, because b came first.
    let with_a = o200k(&format!("{e}\n{d}\n{a}"));
    let with_b = o200k(&format!("{e}\n{d}\n{b}"));
    assert!(with_b > with_a);
    update(&mut s, "c", limit(with_a), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    // Exactly the joined count of e, d, b: b fits; a no longer does.
    update(&mut s, "c", limit(with_b), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "included"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    update(
        &mut s,
        "c",
        limit(o200k(&format!("{e}\n{d}\n{b}\n{a}"))),
        &[],
    )
    .await
    .unwrap();
    assert!(
        inclusion(&mut s, "c")
            .await
            .iter()
            .filter(|l| l.message_id != "c")
            .all(|l| l.included)
    );
    // Not even the newest fits: nothing is included.
    update(&mut s, "c", limit(o200k(e) - 1), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "no_memory"),
            ("d", "token_limit"),
            ("e", "token_limit"),
        ])
    );
    // ABSOLUTE is what an unset type means; setting it explicitly is the same.
    update(
        &mut s,
        "c",
        pb::Settings {
            message_recap_context_type: Some(pb::RecapContextType::Absolute as i32),
            ..limit(with_a)
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(reasons(&mut s, "c").await[3].1, "included");
    assert_eq!(reasons(&mut s, "c").await[1].1, "token_limit");
    // No limit: every memory is included.
    update(
        &mut s,
        "c",
        pb::Settings::default(),
        &["message_recap_context_limit"],
    )
    .await
    .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "included"),
            ("b", "included"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    s.stop().await;
}

#[tokio::test]
async fn the_budget_counts_the_joined_memories_exactly_with_every_tokenizer() {
    let (_dir, mut s) = start().await;
    // Memories whose ends interact with the "\n" that joins them.
    let memories = [
        "ends with spaces   ",
        "  starts with spaces",
        "line one\nline two\n",
        "\n\nleading newlines",
        "it's John's 'quoted' thing",
        "numbers 1234567 and 3.14159",
        "日本語の文章です。",
        "emoji 😀🎉 mixed",
        "CamelCaseWordsTogether",
        "tabs\tand\tmore ",
        "ÀÉÎÕÜ accents",
        "a",
        "trailing newline\n",
        " ",
        "終わり。",
        "次の場面",
        "Ⓐⓑ circled",
        "नमस्ते दुनिया",
        "path/to/",
        "3.",
        "42 is the answer",
        "Ünïcödé",
        "x'll",
        "'s start",
        "the end of the story",
    ];
    let messages = (0..memories.len())
        .map(|i| message(&format!("m{i:02}"), memories[i]))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    for (i, memory) in memories.iter().enumerate() {
        set_memory(&mut s, "c", &format!("m{i:02}"), memory).await;
    }
    for tokenizer in [
        pb::Tokenizer::O200kBase,
        pb::Tokenizer::Cl100kBase,
        pb::Tokenizer::P50kBase,
        pb::Tokenizer::R50kBase,
    ] {
        // Every message's token_count is its text's count.
        update(
            &mut s,
            "c",
            pb::Settings {
                tokenizer: Some(tokenizer as i32),
                ..Default::default()
            },
            &["message_recap_context_limit"],
        )
        .await
        .unwrap();
        let counts: Vec<u32> = inclusion(&mut s, "c")
            .await
            .iter()
            .map(|l| l.token_count)
            .collect();
        let expected: Vec<u32> = memories.iter().map(|m| tokens_with(tokenizer, m)).collect();
        assert_eq!(counts, expected, "{tokenizer:?}");
        // For each k, a limit of exactly the newest k memories joined.
        let newest_first: Vec<&str> = memories.iter().rev().copied().collect();
        for k in 1..=newest_first.len() {
            let limit = tokens_with(tokenizer, &newest_first[..k].join("\n"));
            update(
                &mut s,
                "c",
                pb::Settings {
                    message_recap_context_limit: Some(i64::from(limit)),
                    ..Default::default()
                },
                &[],
            )
            .await
            .unwrap();
            // The rule, written out: newest first, stop at the first that exceeds.
            let mut included = vec![false; memories.len()];
            let mut joined: Vec<&str> = Vec::new();
            for (back, memory) in newest_first.iter().enumerate() {
                joined.push(memory);
                if tokens_with(tokenizer, &joined.join("\n")) > limit {
                    break;
                }
                included[memories.len() - 1 - back] = true;
            }
            let got: Vec<bool> = inclusion(&mut s, "c")
                .await
                .iter()
                .map(|l| l.included)
                .collect();
            assert_eq!(got, included, "{tokenizer:?}, limit {limit} (newest {k})");
        }
    }
    s.stop().await;
}

#[tokio::test]
async fn a_percent_budget_is_the_floored_share_of_max_context_tokens() {
    let (_dir, mut s) = start().await;
    let messages = ["a", "b", "c"]
        .iter()
        .map(|id| message(id, "text"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let (a, b, c) = ("Ann slept.", "Bob cooked dinner.", "Cid sang a song.");
    for (id, memory) in [("a", a), ("b", b), ("c", c)] {
        set_memory(&mut s, "c", id, memory).await;
    }
    let two = o200k(&format!("{c}\n{b}"));
    let percent = |limit: i64, context: u32| pb::Settings {
        message_recap_context_limit: Some(limit),
        message_recap_context_type: Some(pb::RecapContextType::Percent as i32),
        max_context_tokens: Some(i64::from(context)),
        ..Default::default()
    };
    // floor((2 * two + 1) * 50 / 100) = two: c and b fit.
    update(&mut s, "c", percent(50, 2 * two + 1), &[])
        .await
        .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[("a", "token_limit"), ("b", "included"), ("c", "included")])
    );
    // floor((100 * two - 1) * 1 / 100) = two - 1: only c fits.
    update(&mut s, "c", percent(1, 100 * two - 1), &[])
        .await
        .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "included")
        ])
    );
    // floor((100 * two + 99) / 100) = two again.
    update(&mut s, "c", percent(1, 100 * two + 99), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[1].1, "included");
    s.stop().await;
}

#[tokio::test]
async fn show_prefill_puts_the_prefill_in_front_of_the_memory_it_counts() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("p", "text")]))
        .await
        .unwrap();
    let (prefill, memory) = ("In this scene, with many extra words: ", "Pat ran home.");
    set_data(
        &mut s,
        "c",
        "p",
        pb::MessageData {
            memory: Some(memory.into()),
            prefill: Some(prefill.into()),
            ..Default::default()
        },
    )
    .await;
    let limit = |n: u32, show: Option<bool>| pb::Settings {
        message_recap_context_limit: Some(i64::from(n)),
        show_prefill: show,
        ..Default::default()
    };
    // Off (the default): only the memory counts.
    update(&mut s, "c", limit(o200k(memory), None), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "included");
    // On: prefill + memory no longer fits ...
    update(&mut s, "c", limit(o200k(memory), Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "token_limit");
    // ... but fits exactly in its own count.
    let both = o200k(&format!("{prefill}{memory}"));
    update(&mut s, "c", limit(both, Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "included");
    update(&mut s, "c", limit(both - 1, Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "token_limit");
    s.stop().await;
}

#[tokio::test]
async fn token_counts_follow_the_chats_tokenizer() {
    let (_dir, mut s) = start().await;
    let text = "naïve café — 日本語のテキストを数える";
    assert_ne!(
        o200k(text),
        cl100k(text),
        "the text should tell the vocabularies apart"
    );
    s.publish("c", chat_changed(vec![message("m", text)]))
        .await
        .unwrap();
    let content = "Die Geschichte: 日本語の物語 und mehr.";
    add_recap(&mut s, "c", content).await;
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(text));
    let injection = s.injection("c").await;
    assert_eq!(injection.token_count, o200k(&injection.text));
    update(
        &mut s,
        "c",
        pb::Settings {
            tokenizer: Some(pb::Tokenizer::Cl100kBase as i32),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, cl100k(text));
    let injection = s.injection("c").await;
    assert_eq!(injection.token_count, cl100k(&injection.text));
    s.stop().await;
}
