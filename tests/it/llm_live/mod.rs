//! recapd against a real OpenAI-compatible endpoint (llama.cpp's server,
//! Ollama, OpenAI...), only when `RECAPD_TEST_LLM_URL` names one: its base
//! URL, e.g. `http://127.0.0.1:11434/v1`. `RECAPD_TEST_LLM_MODEL` picks the
//! model (default `qwen2.5:1.5b`, the one deploy/docker-compose.ollama.yml
//! uses) and `RECAPD_TEST_LLM_API_KEY` the key, if the endpoint needs one.
//!
//! CI runs them against SmolLM2-135M-Instruct on llama.cpp's server
//! (`scripts/local-llm.sh`, called by `.ci/run`). They assert recapd's
//! guarantees with what a real server answers, never the model's wisdom:
//! a 135M-parameter model writes poor recaps, and recapd must still end
//! every job SUCCEEDED or FAILED with a reason and never store an answer
//! its checks refuse.

mod conversation;
mod pipeline;
mod proxy;
mod recall;
mod tokenize;

use recapd::config::Cli;
use recapd::domain::settings::{MaxTokensField, StructuredOutput};
use recapd::llm::{CompletionRequest, LlmClient};

/// The endpoint and model under test, or `None` (the test is skipped)
/// when `RECAPD_TEST_LLM_URL` is not set.
pub fn endpoint() -> Option<(String, String)> {
    let Ok(url) = std::env::var("RECAPD_TEST_LLM_URL") else {
        println!("skipped: RECAPD_TEST_LLM_URL is not set");
        return None;
    };
    let model =
        std::env::var("RECAPD_TEST_LLM_MODEL").unwrap_or_else(|_| "qwen2.5:1.5b".to_owned());
    Some((url, model))
}

/// The endpoint's setup and client, read the way recapd reads --llm-url.
pub fn client_of(url: &str, model: &str) -> (recapd::llm::LlmSetup, LlmClient) {
    let options = Cli::from_args(["recapd", "--llm-url", url, "--llm-model", model])
        .expect("the options parse")
        .config
        .llm;
    let setup = options
        .setup(std::env::var("RECAPD_TEST_LLM_API_KEY").ok())
        .expect("the setup is valid")
        .expect("--llm-url is set");
    let client = LlmClient::new(&setup).expect("the client builds");
    (setup, client)
}

#[tokio::test]
async fn a_real_llm_answers_a_short_prompt() {
    let Some((url, model)) = endpoint() else {
        return;
    };
    let (setup, client) = client_of(&url, &model);
    let answer = client
        .complete(&CompletionRequest {
            model: setup.model.clone(),
            prompt: "Reply with one short sentence about the sea.".into(),
            max_tokens: 64,
            temperature: Some(0.0),
            answer_schema: None,
            structured_output: StructuredOutput::Auto,
            max_tokens_field: MaxTokensField::Auto,
            purpose: "test",
        })
        .await
        .unwrap_or_else(|e| panic!("{url} ({model}) failed: {e}"));
    println!(
        "{model} answered {:?} (usage: {:?} in, {:?} out)",
        answer.text, answer.prompt_tokens, answer.completion_tokens
    );
    assert!(!answer.text.trim().is_empty());
}
