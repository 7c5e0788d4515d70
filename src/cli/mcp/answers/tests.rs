//! The tools' answers: the prompt cut to fit, enum values as words.

use rmcp::model::CallToolResult;

use super::*;

#[test]
fn a_prompt_too_large_loses_its_oldest_messages_and_says_how_many() {
    let messages = (0..100)
        .map(|i| pb::PromptMessage {
            role: pb::InjectionRole::User.into(),
            // Quotes: escaped once in the JSON, twice in its text copy.
            content: format!("message {i} {}", "\"x".repeat(50)),
            ..Default::default()
        })
        .collect();
    let answer = prompt(
        pb::RenderPromptResponse {
            messages,
            ..Default::default()
        },
        4_000,
    );
    // What is sent: the JSON and the same as text.
    let sent = serde_json::to_string(&CallToolResult::structured(answer.clone()))
        .unwrap()
        .len();
    assert!(sent <= 4_000, "{sent}");
    let kept = answer["messages"].as_array().unwrap();
    assert!(!kept.is_empty());
    assert_eq!(
        answer["omitted_messages"].as_u64().unwrap() as usize + kept.len(),
        100
    );
    assert!(
        kept.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .starts_with("message 99 ")
    );
}

#[test]
fn enum_values_read_as_short_words() {
    assert_eq!(position(pb::InjectionPosition::InChat.into()), "IN_CHAT");
    assert_eq!(role(pb::InjectionRole::Assistant.into()), "ASSISTANT");
    assert_eq!(role(99), "UNKNOWN");
}
