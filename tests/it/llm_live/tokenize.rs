//! The LLM_ENDPOINT tokenizer against a real server's `/tokenize`
//! (llama.cpp's in CI): a chat set to it ends up with injections whose
//! `token_count` is the server's own count of their text.

use recapd::grpc::pb;

use super::{client_of, endpoint};
use crate::common;
use crate::recap_jobs::start_with_llm;

#[tokio::test]
async fn a_chat_counts_its_injection_with_the_real_servers_tokenizer() {
    let Some((url, model)) = endpoint() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, _) = start_with_llm(dir.path(), &url, |config| {
        config.llm.llm_model = model.clone();
    })
    .await;
    server.set_global_debounce(0).await;
    let recap = "Seraphina led the travellers through Eldoria's forest at dusk; \
                 the wolves kept their distance, and nobody spoke of the burned village.";
    server
        .publish(
            "live-tokens",
            common::chat_changed(vec![common::message("m0", "We should rest here.")]),
        )
        .await
        .expect("chat opened");
    common::add_recap(&mut server, "live-tokens", recap).await;
    let mut pushes = common::api::subscribe(&mut server, &["live-tokens"], 0).await;
    let settings = pb::Settings {
        tokenizer: Some(pb::Tokenizer::LlmEndpoint as i32),
        ..Default::default()
    };
    common::api::update(&mut server, "live-tokens", settings, &[])
        .await
        .unwrap_or_else(|e| panic!("{url} ({model}) cannot count tokens: {e:?}"));
    let mut counted = None;
    while let Some(injection) = common::next_within(&mut pushes, 60).await {
        if injection.trigger == pb::RefreshTrigger::TokensCounted as i32 {
            counted = Some(injection);
            break;
        }
    }
    let counted = counted.expect("a refresh with the server's counts within 60 s");
    // The server's count of the same text, asked directly.
    let (_, client) = client_of(&url, &model);
    let direct = client
        .count_tokens(&model, &counted.text)
        .await
        .expect("the server counts");
    println!(
        "{model}: {direct} tokens for the {}-byte injection (o200k_base: {})",
        counted.text.len(),
        common::api::o200k(&counted.text)
    );
    assert_eq!(counted.token_count, direct);
}
