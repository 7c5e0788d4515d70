//! SillyTavern chat files (JSONL) in and out: the first line holds the
//! chat's metadata, with ST-Auto-Recap's running-recap versions under
//! `chat_metadata.auto_recap_running_scene_recaps`; each further line is a
//! message, its swipes, and ST-Auto-Recap's per-message data under
//! `extra.auto_recap_memory` (per swipe under `swipe_info[i].extra`).
//!
//! SillyTavern messages have no ids: a message's id is `m<index>`, its
//! position in the file (`m0` is the first message), and the running-recap
//! versions' scene indices become those ids.

use serde_json::{Map, Value, json};

use super::chat::Chat;
use super::message::{Message, MessageData, Swipe};
use super::recaps::RecapVersion;
use super::{DomainError, Limits};

/// The namespace of ST-Auto-Recap's per-message data.
const DATA_KEY: &str = "auto_recap_memory";
/// The metadata key of ST-Auto-Recap's running-recap versions.
const RECAPS_KEY: &str = "auto_recap_running_scene_recaps";

/// A chat read from a file.
#[derive(Debug, Clone)]
pub struct ImportedChat {
    /// The messages, in order, with their position keys.
    pub messages: Vec<(i64, Message)>,
    /// The running-recap versions.
    pub recaps: Vec<RecapVersion>,
    /// The current version, as the file names it (it may name no version).
    pub current: Option<u32>,
}

fn bad(line: usize, reason: impl Into<String>) -> DomainError {
    DomainError::invalid("jsonl", format!("line {line}: {}", reason.into()))
}

/// The message id of position `index`.
pub fn message_id(index: usize) -> String {
    format!("m{index}")
}

fn text_field(
    line: usize,
    object: &Map<String, Value>,
    key: &str,
    limits: &Limits,
) -> Result<String, DomainError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => {
            limits
                .check_text("jsonl", s)
                .map_err(|_| bad(line, format!("{key} is over the text limit")))?;
            Ok(s.clone())
        }
        Some(_) => Err(bad(line, format!("{key} must be a string"))),
    }
}

fn flag(line: usize, object: &Map<String, Value>, key: &str) -> Result<bool, DomainError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(line, format!("{key} must be true or false"))),
    }
}

/// ST-Auto-Recap's data of one swipe (`extra.auto_recap_memory`).
fn data_of(
    line: usize,
    extra: Option<&Value>,
    limits: &Limits,
) -> Result<MessageData, DomainError> {
    let Some(data) = extra.and_then(|e| e.get(DATA_KEY)) else {
        return Ok(MessageData::default());
    };
    let Value::Object(data) = data else {
        return Err(bad(line, format!("extra.{DATA_KEY} must be an object")));
    };
    let text = |key: &str| -> Result<Option<String>, DomainError> {
        match data.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => {
                limits
                    .check_text("jsonl", s)
                    .map_err(|_| bad(line, format!("{key} is over the text limit")))?;
                Ok(Some(s.clone()))
            }
            Some(_) => Err(bad(line, format!("{DATA_KEY}.{key} must be a string"))),
        }
    };
    let boolean = |key: &str| -> Result<Option<bool>, DomainError> {
        match data.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(bad(line, format!("{DATA_KEY}.{key} must be true or false"))),
        }
    };
    Ok(MessageData {
        memory: text("memory")?,
        prefill: text("prefill")?,
        exclude: boolean("exclude")?,
        error: text("error")?,
        reasoning: text("reasoning")?,
        edited: boolean("edited")?,
        scene_break: boolean("scene_break")?,
        scene_break_visible: boolean("scene_break_visible")?,
        scene_break_name: text("scene_break_name")?,
        scene_recap_memory: text("scene_recap_memory")?,
        is_auto_recap_system_memory: boolean("is_auto_recap_system_memory")?,
    })
}

fn message(
    line: usize,
    index: usize,
    value: Value,
    limits: &Limits,
) -> Result<Message, DomainError> {
    let Value::Object(object) = value else {
        return Err(bad(line, "a message must be a JSON object"));
    };
    let text = text_field(line, &object, "mes", limits)?;
    let extra = object.get("extra");
    let mut swipes: Vec<Swipe> = match object.get("swipes") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(texts)) => texts
            .iter()
            .map(|t| match t {
                Value::String(s) => Ok(Swipe {
                    text: s.clone(),
                    data: MessageData::default(),
                }),
                _ => Err(bad(line, "swipes must hold strings")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => Err(bad(line, "swipes must be an array"))?,
    };
    if let Some(Value::Array(infos)) = object.get("swipe_info") {
        for (swipe, info) in swipes.iter_mut().zip(infos) {
            swipe.data = data_of(line, info.get("extra"), limits)?;
        }
    }
    let swipe_id = match object.get("swipe_id") {
        None | Some(Value::Null) => 0,
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(line, "swipe_id must be a swipe index"))?,
    };
    if swipes.is_empty() {
        swipes.push(Swipe {
            text: text.clone(),
            data: MessageData::default(),
        });
    }
    if swipe_id >= swipes.len() {
        return Err(bad(
            line,
            format!(
                "swipe_id {swipe_id} is not an index of the {} swipes",
                swipes.len()
            ),
        ));
    }
    // The message's own text and data are those of its current swipe.
    swipes[swipe_id].text = text;
    swipes[swipe_id].data = data_of(line, extra, limits)?;
    let is_narrator = extra.and_then(|e| e.get("type")).and_then(Value::as_str) == Some("narrator");
    Ok(Message {
        id: message_id(index),
        name: text_field(line, &object, "name", limits)?,
        is_user: flag(line, &object, "is_user")?,
        hidden: flag(line, &object, "is_system")?,
        is_narrator,
        is_thoughts: flag(line, &object, "is_thoughts")?,
        character_key: text_field(line, &object, "original_avatar", limits)?,
        swipes,
        swipe_id,
        text_tokens: None,
    })
}

fn recaps(
    metadata: &Value,
    messages: usize,
    limits: &Limits,
) -> Result<(Vec<RecapVersion>, Option<u32>), DomainError> {
    let Some(store) = metadata
        .get("chat_metadata")
        .and_then(|m| m.get(RECAPS_KEY))
    else {
        return Ok((vec![], None));
    };
    let number = |v: Option<&Value>, what: &str| -> Result<Option<u64>, DomainError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| bad(1, format!("{what} must be a non-negative integer"))),
        }
    };
    let scene = |v: Option<&Value>, what: &str| -> Result<Option<String>, DomainError> {
        match number(v, what)? {
            None => Ok(None),
            Some(i) if (i as usize) < messages => Ok(Some(message_id(i as usize))),
            Some(i) => Err(bad(1, format!("{what} {i} is not a message index"))),
        }
    };
    let mut versions = Vec::new();
    if let Some(list) = store.get("versions") {
        let Value::Array(list) = list else {
            return Err(bad(1, format!("{RECAPS_KEY}.versions must be an array")));
        };
        for v in list {
            let version = number(v.get("version"), "version")?
                .ok_or_else(|| bad(1, "a running-recap version needs its number"))?;
            let content = match v.get("content") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(_) => return Err(bad(1, "content must be a string")),
            };
            limits
                .check_text("jsonl", &content)
                .map_err(|_| bad(1, "a running recap is over the text limit"))?;
            versions.push(RecapVersion {
                version: u32::try_from(version).map_err(|_| bad(1, "version is too large"))?,
                created_at_ms: v.get("timestamp").and_then(Value::as_i64).unwrap_or(0),
                content,
                scene_count: number(v.get("scene_count"), "scene_count")?
                    .unwrap_or(0)
                    .min(u64::from(u32::MAX)) as u32,
                excluded_count: number(v.get("excluded_count"), "excluded_count")?
                    .unwrap_or(0)
                    .min(u64::from(u32::MAX)) as u32,
                prev_scene_message_id: scene(v.get("prev_scene_index"), "prev_scene_index")?,
                new_scene_message_id: scene(v.get("new_scene_index"), "new_scene_index")?,
            });
        }
    }
    let mut numbers: Vec<u32> = versions.iter().map(|v| v.version).collect();
    numbers.sort_unstable();
    if numbers.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad(1, "two running-recap versions share a number"));
    }
    let current = number(store.get("current_version"), "current_version")?
        .and_then(|c| u32::try_from(c).ok());
    Ok((versions, current))
}

/// Reads a SillyTavern chat file. Anything that does not parse rejects the
/// whole file, naming the line.
pub fn parse_st_chat(jsonl: &str, limits: &Limits) -> Result<ImportedChat, DomainError> {
    let mut lines = jsonl
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, first)) = lines.next() else {
        return Err(bad(1, "the file is empty"));
    };
    let metadata: Value =
        serde_json::from_str(first).map_err(|e| bad(1, format!("not JSON: {e}")))?;
    let mut messages = Vec::new();
    for (number, line) in lines {
        let value: Value =
            serde_json::from_str(line).map_err(|e| bad(number + 1, format!("not JSON: {e}")))?;
        let index = messages.len();
        messages.push((index as i64, message(number + 1, index, value, limits)?));
    }
    limits.check_chat_size(messages.len())?;
    let (recaps, current) = recaps(&metadata, messages.len(), limits)?;
    Ok(ImportedChat {
        messages,
        recaps,
        current,
    })
}

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
    let metadata = json!({
        "chat_metadata": {
            RECAPS_KEY: {
                "chat_id": chat_id,
                "current_version": chat.recaps().current_version(),
                "versions": versions,
            }
        }
    });
    let mut out = metadata.to_string();
    out.push('\n');
    for (_, m) in chat.messages() {
        let mut extra = Map::new();
        if m.is_narrator {
            extra.insert("type".into(), Value::String("narrator".into()));
        }
        extra.insert(DATA_KEY.into(), data_json(m.data()));
        let line = json!({
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
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[path = "st_chat_tests.rs"]
mod tests;
