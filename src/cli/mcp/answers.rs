//! What the MCP tools answer: recapd's messages as compact JSON for an
//! agent to read (enum values as short words, empty fields left out),
//! each shape destructured whole so that a new field in the API is a
//! decision here, not an omission.

use serde_json::{Map, Value, json};

use crate::grpc::pb;

/// An enum value's proto name without its type's prefix
/// (`INJECTION_POSITION_IN_CHAT` → `IN_CHAT`); `UNKNOWN` for a number the
/// API does not define.
fn word(name: Option<&'static str>, prefix: &str) -> &'static str {
    name.map_or("UNKNOWN", |name| name.strip_prefix(prefix).unwrap_or(name))
}

fn role(value: i32) -> &'static str {
    word(
        pb::InjectionRole::try_from(value)
            .ok()
            .map(|r| r.as_str_name()),
        "INJECTION_ROLE_",
    )
}

fn position(value: i32) -> &'static str {
    word(
        pb::InjectionPosition::try_from(value)
            .ok()
            .map(|p| p.as_str_name()),
        "INJECTION_POSITION_",
    )
}

/// `recall`: the passages, best first.
pub fn recall(found: pb::RecallResponse) -> Value {
    let pb::RecallResponse { hits, used_vectors } = found;
    let passages: Vec<Value> = hits
        .into_iter()
        .map(|hit| {
            let pb::RecallHit {
                message_id,
                text,
                keyword_score: _,
                vector_score: _,
                score,
                tokens: _,
                scene_recap,
                part: _,
                chat_id,
            } = hit;
            let mut passage = Map::new();
            passage.insert("chat_id".into(), chat_id.into());
            passage.insert("message_id".into(), message_id.into());
            passage.insert("text".into(), text.into());
            passage.insert("score".into(), json!((score * 1000.0).round() / 1000.0));
            if scene_recap {
                passage.insert("scene_recap".into(), true.into());
            }
            Value::Object(passage)
        })
        .collect();
    json!({ "passages": passages, "used_vectors": used_vectors })
}

/// `get_memory`: the injection's text and where it goes.
pub fn memory(injection: &pb::Injection) -> Value {
    let pb::Injection {
        chat_id,
        key: _,
        text,
        position: at,
        depth,
        role: as_role,
        scan: _,
        enabled,
        revision,
        running_recap_version,
        token_count,
        auto_hidden_count: _,
        trigger: _,
        refreshed_at: _,
        deleted,
    } = injection;
    let mut memory = Map::new();
    memory.insert("chat_id".into(), chat_id.as_str().into());
    memory.insert("text".into(), text.as_str().into());
    memory.insert("position".into(), position(*at).into());
    if position(*at) == "IN_CHAT" {
        memory.insert("depth".into(), (*depth).into());
    }
    memory.insert("role".into(), role(*as_role).into());
    memory.insert("enabled".into(), (*enabled).into());
    memory.insert("tokens".into(), (*token_count).into());
    memory.insert("revision".into(), (*revision).into());
    if let Some(version) = running_recap_version {
        memory.insert("running_recap_version".into(), (*version).into());
    }
    if *deleted {
        memory.insert("deleted".into(), true.into());
    }
    Value::Object(memory)
}

/// `list_chats`: one page.
pub fn chats(page: pb::ListChatsResponse) -> Value {
    let pb::ListChatsResponse {
        chats,
        next_page_token,
    } = page;
    let chats: Vec<Value> = chats
        .into_iter()
        .map(|summary| {
            let pb::ChatSummary {
                chat_id,
                message_count,
                revision: _,
                enabled,
                updated_at,
                character_key,
                group_id,
                parent_chat_id,
                parent_message_id: _,
            } = summary;
            let mut chat = Map::new();
            chat.insert("chat_id".into(), chat_id.into());
            chat.insert("messages".into(), message_count.into());
            chat.insert("enabled".into(), enabled.into());
            if let Some(at) = updated_at {
                chat.insert("updated_at_unix".into(), at.seconds.into());
            }
            for (name, value) in [
                ("character", character_key),
                ("group", group_id),
                ("branch_of", parent_chat_id),
            ] {
                if !value.is_empty() {
                    chat.insert(name.into(), value.into());
                }
            }
            Value::Object(chat)
        })
        .collect();
    let mut page = Map::new();
    page.insert("chats".into(), chats.into());
    if !next_page_token.is_empty() {
        page.insert("next_page_token".into(), next_page_token.into());
    }
    Value::Object(page)
}

/// `search_lore`: the activated entries, in activation order.
pub fn lore(scan: pb::ScanWorldInfoResponse) -> Value {
    let entries: Vec<Value> = scan
        .activated
        .into_iter()
        .map(|entry| {
            let pb::ActivatedEntry {
                book,
                uid,
                position: _,
                depth: _,
                role: _,
                order: _,
                content,
                outlet_name: _,
            } = entry;
            json!({ "book": book, "uid": uid, "content": content })
        })
        .collect();
    json!({ "entries": entries })
}

/// The bytes a tool result adds around its JSON and the JSON's text copy
/// (`{"content":[{"type":"text","text":…}],"structuredContent":…,…}`),
/// with room to spare.
const RESULT_OVERHEAD: usize = 256;

/// The bytes `value` takes in a tool's result: its JSON (the structured
/// content) and that JSON again as a JSON string (the text copy for
/// clients that read only text), where escapes can double it.
pub fn sent_size(value: &Value) -> usize {
    let json = value.to_string();
    let copy = serde_json::to_string(&json).map_or(json.len() * 6 + 2, |copy| copy.len());
    json.len() + copy
}

/// `render_prompt`: the prompt's text (text mode) and messages, the oldest
/// messages left out (and counted) until the tool's result (the JSON and
/// its text copy) fits in `max_bytes`.
pub fn prompt(prompt: pb::RenderPromptResponse, max_bytes: usize) -> Value {
    let pb::RenderPromptResponse {
        text,
        messages,
        world_info: _,
    } = prompt;
    let mut messages: Vec<Value> = messages
        .into_iter()
        .map(|message| {
            let pb::PromptMessage {
                role: as_role,
                name,
                content,
                hidden: _,
                message_id: _,
            } = message;
            let mut entry = Map::new();
            entry.insert("role".into(), role(as_role).into());
            if !name.is_empty() {
                entry.insert("name".into(), name.into());
            }
            entry.insert("content".into(), content.into());
            Value::Object(entry)
        })
        .collect();
    // Each message as sent (in the JSON and in its text copy, a comma
    // each); what is left fits, or only the text is kept.
    let sizes: Vec<usize> = messages.iter().map(sent_size).collect();
    let fixed = sent_size(&json!({ "text": text, "messages": [], "omitted_messages": usize::MAX }))
        + RESULT_OVERHEAD;
    let mut total: usize = fixed + sizes.iter().sum::<usize>();
    let mut omitted = 0;
    while total > max_bytes && omitted < sizes.len() {
        total -= sizes[omitted];
        omitted += 1;
    }
    messages.drain(..omitted);
    let mut answer = Map::new();
    if !text.is_empty() {
        answer.insert("text".into(), text.into());
    }
    answer.insert("messages".into(), messages.into());
    if omitted > 0 {
        answer.insert("omitted_messages".into(), omitted.into());
    }
    Value::Object(answer)
}

#[cfg(test)]
mod tests;
