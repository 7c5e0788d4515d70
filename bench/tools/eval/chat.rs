//! A conversation written as a SillyTavern chat file (JSONL): a header line
//! naming `speaker_a` as the user and `speaker_b` as the character, then
//! one line per turn, `send_date` being its session's date. The file has
//! no `recapd_message_id`, so recapd names the messages `m0`, `m1`, ... by
//! position.

use serde_json::json;

use super::layout::Conversation;

/// The chat file's bytes.
pub fn sillytavern_jsonl(conversation: &Conversation) -> String {
    let create_date = conversation
        .sessions
        .first()
        .map(|s| s.date_time.clone())
        .unwrap_or_default();
    let mut out = json!({
        "user_name": conversation.speaker_a,
        "character_name": conversation.speaker_b,
        "create_date": create_date,
        "chat_metadata": {},
    })
    .to_string();
    out.push('\n');
    for (session, turn) in conversation.turns() {
        let line = json!({
            "name": turn.speaker,
            "is_user": turn.speaker == conversation.speaker_a,
            "is_system": false,
            "send_date": session.date_time,
            "mes": turn.text,
            "extra": {},
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// recapd's id of the message at chat index `index` of an imported file.
pub fn message_id(index: usize) -> String {
    format!("m{index}")
}

/// The true scene boundaries: the chat index of the last message of each
/// session but the last.
pub fn session_boundaries(conversation: &Conversation) -> Vec<usize> {
    let mut boundaries = Vec::new();
    let mut index = 0;
    for session in &conversation.sessions {
        index += session.turns.len();
        boundaries.push(index - 1);
    }
    boundaries.pop();
    boundaries
}

#[cfg(test)]
mod tests;
