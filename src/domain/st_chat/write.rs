//! Writing a chat as a SillyTavern chat file, whole or line by line.

use serde_json::{Map, Value, json};

use super::{DATA_KEY, RECAPS_KEY};
use crate::domain::chat::Chat;
use crate::domain::message::{Message, MessageData};

fn data_json(data: &MessageData) -> Value {
    let mut map = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    };
    put("memory", data.memory.clone().map(Value::String));
    put("prefill", data.prefill.clone().map(Value::String));
    put("exclude", data.exclude.map(Value::Bool));
    put("error", data.error.clone().map(Value::String));
    put("reasoning", data.reasoning.clone().map(Value::String));
    put("edited", data.edited.map(Value::Bool));
    put("scene_break", data.scene_break.map(Value::Bool));
    put(
        "scene_break_visible",
        data.scene_break_visible.map(Value::Bool),
    );
    put(
        "scene_break_name",
        data.scene_break_name.clone().map(Value::String),
    );
    put(
        "scene_recap_memory",
        data.scene_recap_memory.clone().map(Value::String),
    );
    put(
        "is_auto_recap_system_memory",
        data.is_auto_recap_system_memory.map(Value::Bool),
    );
    Value::Object(map)
}

/// Writes a chat as a SillyTavern chat file. Scene references that name a
/// message become its index.
pub fn write_st_chat(chat_id: &str, chat: &Chat) -> String {
    let mut out = String::new();
    for line in st_chat_lines(chat_id, chat) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The lines of [`write_st_chat`], without their newlines, made one at a
/// time: the header first, then one line per message.
pub fn st_chat_lines<'a>(chat_id: &'a str, chat: &'a Chat) -> impl Iterator<Item = String> + 'a {
    std::iter::once_with(move || header_line(chat_id, chat))
        .chain(chat.messages().map(|(_, m)| message_line(m)))
}

fn header_line(chat_id: &str, chat: &Chat) -> String {
    let index_of: std::collections::HashMap<&str, usize> = chat
        .messages()
        .enumerate()
        .map(|(i, (_, m))| (m.id.as_str(), i))
        .collect();
    let versions: Vec<Value> = chat
        .recaps()
        .versions()
        .map(|v| {
            json!({
                "version": v.version,
                "timestamp": v.created_at_ms,
                "content": v.content,
                "scene_count": v.scene_count,
                "excluded_count": v.excluded_count,
                "prev_scene_index": v.prev_scene_message_id.as_deref().and_then(|id| index_of.get(id)),
                "new_scene_index": v.new_scene_message_id.as_deref().and_then(|id| index_of.get(id)),
            })
        })
        .collect();
    json!({
        "chat_metadata": {
            RECAPS_KEY: {
                "chat_id": chat_id,
                "current_version": chat.recaps().current_version(),
                "versions": versions,
            }
        }
    })
    .to_string()
}

fn message_line(m: &Message) -> String {
    let mut extra = Map::new();
    if m.is_narrator {
        extra.insert("type".into(), Value::String("narrator".into()));
    }
    extra.insert(DATA_KEY.into(), data_json(m.data()));
    json!({
        "name": m.name,
        "is_user": m.is_user,
        "is_system": m.hidden,
        "is_thoughts": m.is_thoughts,
        "original_avatar": m.character_key,
        "mes": m.text(),
        "extra": extra,
        "swipes": m.swipes.iter().map(|s| s.text.clone()).collect::<Vec<_>>(),
        "swipe_id": m.swipe_id,
        "swipe_info": m.swipes.iter().map(|s| json!({ "extra": { DATA_KEY: data_json(&s.data) } })).collect::<Vec<_>>(),
    })
    .to_string()
}
