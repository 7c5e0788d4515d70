//! A conversation written as a SillyTavern chat file (JSONL): a header line
//! naming `speaker_a` as the user and `speaker_b` as the character, then
//! one line per turn, `send_date` being its session's date. The file of
//! the recap pipeline has no `recapd_message_id`, so recapd names the
//! messages `m0`, `m1`, ... by position; the retrieval check's names each
//! message by its turn's `dia_id` (`D1:3`), so that a question's evidence
//! names the messages it lies in.

use serde_json::json;

use super::layout::Conversation;

/// The chat file's bytes.
pub fn sillytavern_jsonl(conversation: &Conversation) -> String {
    jsonl(conversation, false)
}

/// The chat file's bytes, each message with its turn's `dia_id` as its
/// recapd id (`extra.recapd_message_id`; a turn without one, or repeating
/// an earlier one, keeps recapd's `m<index>`).
pub fn sillytavern_jsonl_with_ids(conversation: &Conversation) -> String {
    jsonl(conversation, true)
}

fn jsonl(conversation: &Conversation, ids: bool) -> String {
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
    let mut seen = std::collections::HashSet::new();
    for (session, turn) in conversation.turns() {
        let named = ids && !turn.dia_id.is_empty() && seen.insert(turn.dia_id.as_str());
        let extra = if named {
            json!({"recapd_message_id": turn.dia_id})
        } else {
            json!({})
        };
        let line = json!({
            "name": turn.speaker,
            "is_user": turn.speaker == conversation.speaker_a,
            "is_system": false,
            "send_date": session.date_time,
            "mes": turn.text,
            "extra": extra,
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
