use serde_json::Value;

use super::*;
use crate::eval::layout;

#[test]
fn writes_a_header_then_one_line_per_turn() {
    let text = r#"{"speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "day one", "session_1": [
            {"speaker": "Ann", "text": "Hi"}, {"speaker": "Bob", "text": "Hello"}],
        "session_2_date_time": "day two", "session_2": [{"speaker": "Ann", "text": "Back"}]}"#;
    let conversation = layout::parse(text, "c").unwrap().remove(0);
    let jsonl = sillytavern_jsonl(&conversation);
    let lines: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["user_name"], "Ann");
    assert_eq!(lines[0]["character_name"], "Bob");
    assert_eq!(lines[1]["is_user"], true);
    assert_eq!(lines[2]["is_user"], false);
    assert_eq!(lines[2]["mes"], "Hello");
    assert_eq!(lines[3]["send_date"], "day two");
    // The boundary after session 1 is its last message, index 1.
    assert_eq!(session_boundaries(&conversation), [1]);
    assert_eq!(message_id(1), "m1");
}

#[test]
fn the_retrieval_file_names_messages_by_their_dia_id() {
    let text = r#"{"speaker_a": "Ann", "speaker_b": "Bob", "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi"},
            {"speaker": "Bob", "text": "No id"},
            {"speaker": "Ann", "dia_id": "D1:1", "text": "Repeated id"}]}"#;
    let conversation = layout::parse(text, "c").unwrap().remove(0);
    let lines: Vec<Value> = sillytavern_jsonl_with_ids(&conversation)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[1]["extra"]["recapd_message_id"], "D1:1");
    assert_eq!(lines[2]["extra"], serde_json::json!({}));
    assert_eq!(lines[3]["extra"], serde_json::json!({}));
    let plain = sillytavern_jsonl(&conversation);
    assert!(!plain.contains("recapd_message_id"));
}
