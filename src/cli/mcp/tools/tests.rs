//! The tools: their cost in tokens, their errors and the answer's bound.

use super::*;

/// Each tool as `tools/list` sends it, and its tokens (o200k_base):
/// what an agent pays for it on every turn.
fn tool_tokens() -> Vec<(String, usize)> {
    let bpe = tiktoken_rs::o200k_base_singleton();
    RecapdTools::tool_router()
        .list_all()
        .into_iter()
        .map(|tool| {
            let json = serde_json::to_string(&tool).expect("a tool serializes");
            (tool.name.to_string(), bpe.encode_ordinary(&json).len())
        })
        .collect()
}

#[test]
fn the_tools_cost_what_docs_mcp_md_says() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/mcp.md"))
        .unwrap_or_default();
    let counted = tool_tokens();
    let total: usize = counted.iter().map(|(_, tokens)| tokens).sum();
    let mut rows: Vec<String> = counted
        .iter()
        .map(|(name, tokens)| format!("| `{name}` | {tokens} |"))
        .collect();
    rows.push(format!("| all six | {total} |"));
    let missing: Vec<&String> = rows.iter().filter(|row| !docs.contains(*row)).collect();
    assert!(
        missing.is_empty(),
        "docs/mcp.md should have these rows:\n{}",
        rows.join("\n")
    );
    // A budget: the tools must stay small beside an agent's context.
    assert!(total < 1_500, "{total} tokens");
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

#[test]
fn recapds_statuses_answer_their_code_and_message_and_transport_failures_a_fixed_text() {
    let addr = "127.0.0.1:50051";
    let answered = Status::not_found("chat \"nope\"");
    assert_eq!(
        error_text(answered.into(), &addr),
        "NOT_FOUND: chat \"nope\""
    );
    // A status made on this side from a transport error (recapd went away
    // after the first call): its message would carry the cause.
    let broken = Status::from_error(Box::new(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        "tcp connect error: 10.1.2.3:50051: Connection refused",
    )));
    assert!(std::error::Error::source(&broken).is_some());
    let text = error_text(broken.into(), &addr);
    assert_eq!(
        text,
        "UNAVAILABLE: recapd at 127.0.0.1:50051 cannot be reached"
    );
}

#[test]
fn an_answer_over_the_bound_with_its_text_copy_is_refused() {
    // Under the bound as JSON, over it once the text copy (every quote
    // escaped again) is counted.
    let big = json!({ "text": "\"".repeat(MAX_ANSWER_BYTES / 3) });
    assert!(big.to_string().len() < MAX_ANSWER_BYTES);
    let refused = answer(Ok(big), &"addr").unwrap();
    assert_eq!(refused.is_error, Some(true));
    assert!(text_of(&refused).starts_with("RESOURCE_EXHAUSTED: "));
    let small = answer(Ok(json!({ "text": "fits" })), &"addr").unwrap();
    assert_eq!(small.is_error, Some(false));
}

#[test]
fn a_callers_token_is_not_shown_by_debug() {
    let token = CallerToken("secret-token-0123".into());
    assert!(!format!("{token:?}").contains("secret"));
}
