//! Recall out of the box: no embeddings endpoint, keyword search (BM25)
//! alone. The tier finds the early passage the conversation comes back
//! to and leaves the recent window out; Recall answers without vectors;
//! the tier sits where its settings say, counts its own revisions, and
//! empties once when turned off; its budget bounds it; RenderPrompt
//! places it.

use recapd::grpc::pb;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;

use super::*;
use crate::common::api::o200k;
use crate::common::{message_sent, trigger};

#[tokio::test]
async fn out_of_the_box_the_tier_recalls_the_early_passage_the_conversation_returns_to() {
    let (_dir, mut server) = start_keyword().await;
    open(&mut server, "story", story(), recall_on()).await;

    let injection = tier(&mut server, "story").await;
    assert_eq!(injection.key, KEY);
    assert_eq!(
        injection.text,
        format!("{HEADER}{}\n\n{}", said(1), said(3)),
        "the key passage first, then the other one sharing a word with the query"
    );
    for recent in &STORY[6..] {
        assert!(
            !injection.text.contains(recent),
            "the recent window is in the prompt already: {recent:?} in {:?}",
            injection.text
        );
    }
    // The defaults: IN_CHAT at depth 2, as a system message, not scanned.
    assert_eq!(
        (
            injection.position,
            injection.depth,
            injection.role,
            injection.scan
        ),
        (
            pb::InjectionPosition::InChat as i32,
            2,
            pb::InjectionRole::System as i32,
            false
        )
    );
    assert!(injection.enabled);
    assert_eq!(injection.token_count, o200k(&injection.text));

    let found = recall(&server, "story", FISH_QUERY).await;
    assert!(!found.used_vectors, "no endpoint: keyword search alone");
    let best = found.hits.first().expect("a hit");
    assert_eq!(
        (
            best.message_id.as_str(),
            best.text.as_str(),
            best.chat_id.as_str()
        ),
        ("m1", KEY_PASSAGE, "story")
    );
    assert_eq!((best.scene_recap, best.part), (false, 0));
    assert_eq!(best.vector_score, None);
    assert!(best.keyword_score > 0.0, "{best:?}");
    assert!(
        (best.score - 1.0).abs() < 1e-6,
        "first in the only ranking: {best:?}"
    );
    assert_eq!(best.tokens, o200k(KEY_PASSAGE));
    for hit in &found.hits {
        assert!(hit.vector_score.is_none(), "{hit:?}");
        assert!(hit.score <= best.score, "best first: {:?}", found.hits);
    }

    // An empty query is the chat's current moment, as the tier sees it.
    let moment = recall(&server, "story", "").await;
    assert_eq!(texts(&moment), [KEY_PASSAGE, BUCKLE_PASSAGE]);
    server.stop().await;
}

#[tokio::test]
async fn the_tier_is_placed_as_set_counts_its_own_revisions_and_empties_once_when_turned_off() {
    let (_dir, mut server) = start_keyword().await;
    let placed = pb::Settings {
        recall_enabled: Some(true),
        recall_position: Some(pb::InjectionPosition::InChat as i32),
        recall_depth: Some(4),
        recall_role: Some(pb::InjectionRole::Assistant as i32),
        recall_scan: Some(true),
        recall_template: Some("Remember: {{recall}}".into()),
        ..Default::default()
    };
    open(&mut server, "story", story(), placed).await;
    let first = tier(&mut server, "story").await;
    assert_eq!(first.text, format!("Remember: {}\n\n{}", said(1), said(3)));
    assert_eq!(
        (first.position, first.depth, first.role, first.scan),
        (
            pb::InjectionPosition::InChat as i32,
            4,
            pb::InjectionRole::Assistant as i32,
            true
        )
    );
    let scene_before = server.injection("story").await.revision;
    assert!(first.revision >= 1);

    // Every refresh refreshes the tier once more, on a count of its own.
    let mut stream = crate::common::api::subscribe(&mut server, &["story"], 0).await;
    let mut snapshot = Vec::new();
    while snapshot.len() < 2 {
        let item = crate::common::next_within(&mut stream, 5)
            .await
            .expect("the snapshot of both keys");
        snapshot.push(item.key);
    }
    server
        .publish("story", message_sent("m16", "Ann tries the lock."))
        .await
        .expect("published");
    let pushed = next_push(&mut stream, |item| item.key == KEY).await;
    let second = tier(&mut server, "story").await;
    assert_eq!(
        pushed, second,
        "Subscribe pushes the tier GetInjection holds"
    );
    assert_eq!(second.revision, first.revision + 1);
    assert_eq!(trigger(&second), pb::RefreshTrigger::MessageSent);
    let scene = server.injection("story").await;
    assert_eq!(scene.revision, scene_before + 1);

    // Off: one last, empty tier so clients drop it; then no more.
    server
        .update_settings(
            "story",
            pb::Settings {
                recall_enabled: Some(false),
                ..Default::default()
            },
        )
        .await;
    let off = tier(&mut server, "story").await;
    assert_eq!((off.revision, off.text.as_str()), (second.revision + 1, ""));
    server
        .publish("story", message_sent("m17", "The lock holds."))
        .await
        .expect("published");
    let still = tier(&mut server, "story").await;
    assert_eq!(still, off, "an off tier is not refreshed again");
    assert!(server.injection("story").await.revision > scene.revision);
    server.stop().await;
}

#[tokio::test]
async fn the_budget_keeps_the_best_passage_that_fits_and_zero_injects_nothing() {
    let (_dir, mut server) = start_keyword().await;
    let best_line = said(1);
    // The budget is the whole text's, the template's header included.
    let budget = o200k(&format!("{HEADER}{best_line}"));
    assert!(
        o200k(&said(3)) > 0,
        "every other passage takes tokens, so none fits after the best"
    );
    let settings = pb::Settings {
        recall_enabled: Some(true),
        recall_max_tokens: Some(budget as i32),
        ..Default::default()
    };
    open(&mut server, "story", story(), settings).await;
    let fitted = tier(&mut server, "story").await;
    assert_eq!(fitted.text, format!("{HEADER}{best_line}"));
    assert_eq!(fitted.token_count, budget, "the budget is met exactly");

    server
        .update_settings(
            "story",
            pb::Settings {
                recall_max_tokens: Some(0),
                ..Default::default()
            },
        )
        .await;
    let empty = tier(&mut server, "story").await;
    assert_eq!(empty.text, "", "no passage fits: nothing is injected");
    assert_eq!(empty.token_count, 0);
    server.stop().await;
}

#[tokio::test]
async fn render_prompt_places_the_recall_tier_in_chat_at_its_depth() {
    let (_dir, mut server) = start_keyword().await;
    let settings = pb::Settings {
        recall_enabled: Some(true),
        recall_template: Some("Recalled:\n{{recall}}".into()),
        ..Default::default()
    };
    open(&mut server, "story", story(), settings).await;
    let text = tier(&mut server, "story").await.text;
    assert_eq!(text, format!("Recalled:\n{}\n\n{}", said(1), said(3)));
    let history: Vec<pb::PromptMessage> = ["a", "b", "c", "d"]
        .iter()
        .enumerate()
        .map(|(i, content)| pb::PromptMessage {
            role: if i % 2 == 0 {
                pb::InjectionRole::User
            } else {
                pb::InjectionRole::Assistant
            } as i32,
            name: if i % 2 == 0 { "Ann" } else { "Bob" }.into(),
            content: (*content).into(),
            hidden: false,
            message_id: String::new(),
        })
        .collect();
    let rendered = PromptServiceClient::new(server.channel.clone())
        .render_prompt(pb::RenderPromptRequest {
            chat_id: "story".into(),
            mode: pb::PromptMode::TextCompletion as i32,
            story_string: "S".into(),
            history,
            ..Default::default()
        })
        .await
        .expect("render prompt")
        .into_inner();
    let contents: Vec<&str> = rendered
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        contents,
        ["a", "b", text.as_str(), "c", "d"],
        "IN_CHAT at depth 2: before the last two messages"
    );
    let placed = &rendered.messages[2];
    assert_eq!(placed.role, pb::InjectionRole::System as i32);
    server.stop().await;
}
