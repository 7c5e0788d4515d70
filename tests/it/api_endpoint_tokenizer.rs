//! The LLM_ENDPOINT tokenizer over the API: a chat set to count with the
//! LLM endpoint's own tokenizer (llama.cpp's `POST /tokenize`, here the
//! fake LLM's, which counts one token per character) gets the endpoint's
//! counts in its injections and inclusion once they arrive, estimated with
//! o200k_base until then; each text is asked once; an endpoint without
//! `/tokenize`, or a server without an LLM, is refused by name; an endpoint
//! that goes away costs estimates, never an answer.

use std::time::Duration;

use crate::common::api::*;
use crate::common::fake_llm::FakeLlm;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

/// A server writing recaps with `fake`, every trigger at once.
async fn start_with(fake: &FakeLlm) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.llm.llm_url = Some(fake.url());
    config.llm.llm_model = "fake-model".into();
    let mut server = Server::start_with(config).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

fn llm_endpoint() -> pb::Settings {
    pb::Settings {
        tokenizer: Some(pb::Tokenizer::LlmEndpoint as i32),
        ..Default::default()
    }
}

/// Texts whose o200k_base counts differ from their characters.
const TEXTS: [&str; 3] = [
    "Alice met Bob at the harbour.",
    "They sailed north for three days.",
    "A storm broke the mast.",
];

#[tokio::test]
async fn a_chat_counting_with_the_llm_endpoint_gets_the_endpoints_counts() {
    let fake = FakeLlm::answering("unused").await;
    let (_dir, mut s) = start_with(&fake).await;
    let messages = TEXTS
        .iter()
        .enumerate()
        .map(|(i, text)| message(&format!("m{i}"), text))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let recap = "Alice and Bob sailed north; a storm broke their mast.";
    add_recap(&mut s, "c", recap).await;
    let mut updates = subscribe(&mut s, &["c"], 0).await;

    let answered = update(&mut s, "c", llm_endpoint(), &[]).await.unwrap();
    assert_eq!(answered.tokenizer, Some(pb::Tokenizer::LlmEndpoint as i32));
    assert_eq!(
        fake.tokenized().first().map(String::as_str),
        Some("recapd"),
        "the settings update asked the endpoint first"
    );

    // The settings change refreshes with estimates; the endpoint's counts
    // arrive and the chat is refreshed again, exact.
    let mut exact = None;
    while let Some(injection) = next_within(&mut updates, 10).await {
        if injection.trigger == pb::RefreshTrigger::TokensCounted as i32 {
            exact = Some(injection);
            break;
        }
    }
    let exact = exact.expect("a refresh once the counts arrived");
    assert!(exact.text.contains(recap), "{exact:?}");
    assert_eq!(exact.token_count, FakeLlm::token_count(&exact.text));
    assert_ne!(exact.token_count, o200k(&exact.text));

    // GetInclusion's message counts: estimated, then the endpoint's.
    let expected: Vec<u32> = TEXTS.iter().map(|t| FakeLlm::token_count(t)).collect();
    let mut counts = Vec::new();
    for _ in 0..100 {
        counts = inclusion(&mut s, "c")
            .await
            .iter()
            .map(|l| l.token_count)
            .collect();
        if counts == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(counts, expected);

    // Counted texts are remembered: a refresh asks nothing again.
    let asked = fake.tokenized().len();
    let again = refresh(&mut s, "c").await.unwrap();
    assert_eq!(again.token_count, exact.token_count);
    inclusion(&mut s, "c").await;
    assert_eq!(fake.tokenized().len(), asked, "{:?}", fake.tokenized());
    let injection_text_asks = fake
        .tokenized()
        .iter()
        .filter(|t| **t == exact.text)
        .count();
    assert_eq!(injection_text_asks, 1);
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
}

#[tokio::test]
async fn an_endpoint_that_cannot_count_is_refused_and_one_that_goes_away_costs_estimates() {
    let fake = FakeLlm::answering("unused").await;
    let (_dir, mut s) = start_with(&fake).await;
    s.publish("c", chat_changed(vec![message("m0", TEXTS[0])]))
        .await
        .unwrap();
    fake.refuse_tokenize();
    assert_code(
        update(&mut s, "c", llm_endpoint(), &[]).await,
        Code::FailedPrecondition,
        "/tokenize",
    );
    let settings = settings_of(&mut s, "c").await;
    assert_eq!(settings.tokenizer, Some(pb::Tokenizer::O200kBase as i32));

    // Accepted while the endpoint could count; then it goes away.
    let fake = FakeLlm::answering("unused").await;
    let (_dir, mut s) = start_with(&fake).await;
    s.publish("c", chat_changed(vec![message("m0", TEXTS[0])]))
        .await
        .unwrap();
    update(&mut s, "c", llm_endpoint(), &[]).await.unwrap();
    fake.stop().await;
    s.publish("c", message_sent("m1", TEXTS[1])).await.unwrap();
    add_recap(&mut s, "c", "A recap nobody counted yet.").await;
    let injection = refresh(&mut s, "c").await.unwrap();
    assert_eq!(injection.token_count, o200k(&injection.text));

    // Without an LLM endpoint the tokenizer is refused by name.
    let (_dir, mut plain) = start().await;
    assert_code(
        update(&mut plain, "c", llm_endpoint(), &[]).await,
        Code::FailedPrecondition,
        "--llm-url",
    );
}

#[tokio::test]
async fn a_settings_change_waits_for_a_stuck_endpoint_a_few_seconds_at_most() {
    // The probe of a change to LLM_ENDPOINT waits 5 s at most, not the
    // recap requests' --llm-timeout: an endpoint that does not answer is
    // accepted (its counts estimated until it answers).
    let fake = FakeLlm::answering("unused").await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.llm.llm_url = Some(fake.url());
    config.llm.llm_model = "fake-model".into();
    config.llm.llm_timeout = std::time::Duration::from_secs(120);
    let mut s = Server::start_with(config).await;
    s.publish("c", chat_changed(vec![message("m0", TEXTS[0])]))
        .await
        .unwrap();
    fake.delay_tokenize(std::time::Duration::from_secs(60));
    let started = std::time::Instant::now();
    let answered = update(&mut s, "c", llm_endpoint(), &[]).await.unwrap();
    assert_eq!(answered.tokenizer, Some(pb::Tokenizer::LlmEndpoint as i32));
    let waited = started.elapsed();
    assert!(
        waited < std::time::Duration::from_secs(15),
        "waited {waited:?}"
    );
    let injection = refresh(&mut s, "c").await.unwrap();
    assert_eq!(injection.token_count, o200k(&injection.text));
}
