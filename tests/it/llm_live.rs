//! One request to a real OpenAI-compatible endpoint (Ollama, OpenAI...),
//! only when `RECAPD_TEST_LLM_URL` names one: its base URL, e.g.
//! `http://127.0.0.1:11434/v1`. `RECAPD_TEST_LLM_MODEL` picks the model
//! (default `qwen2.5:1.5b`, the one deploy/docker-compose.ollama.yml
//! uses) and `RECAPD_TEST_LLM_API_KEY` the key, if the endpoint needs one.
//! Not part of CI.

use recapd::config::Cli;
use recapd::domain::settings::{MaxTokensField, StructuredOutput};
use recapd::llm::{CompletionRequest, LlmClient};

#[tokio::test]
async fn a_real_llm_answers_a_short_prompt() {
    let Ok(url) = std::env::var("RECAPD_TEST_LLM_URL") else {
        println!("skipped: RECAPD_TEST_LLM_URL is not set");
        return;
    };
    let model =
        std::env::var("RECAPD_TEST_LLM_MODEL").unwrap_or_else(|_| "qwen2.5:1.5b".to_owned());
    // The endpoint is read the way recapd reads --llm-url.
    let options = Cli::from_args(["recapd", "--llm-url", &url, "--llm-model", &model])
        .expect("the options parse")
        .config
        .llm;
    let setup = options
        .setup(std::env::var("RECAPD_TEST_LLM_API_KEY").ok())
        .expect("the setup is valid")
        .expect("--llm-url is set");
    let client = LlmClient::new(&setup).expect("the client builds");
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
