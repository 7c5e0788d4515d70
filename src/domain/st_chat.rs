//! SillyTavern chat files (JSONL) in and out: the first line holds the
//! chat's metadata, with ST-Auto-Recap's running-recap versions under
//! `chat_metadata.auto_recap_running_scene_recaps`; each further line is a
//! message, its swipes, and ST-Auto-Recap's per-message data under
//! `extra.auto_recap_memory` (per swipe under `swipe_info[i].extra`).
//!
//! SillyTavern messages have no ids: a message's id is `m<index>`, its
//! position in the file (`m0` is the first message), and the running-recap
//! versions' scene indices become those ids.
//!
//! Reading follows what SillyTavern and the extension really write rather
//! than refusing it: a leading byte-order mark is skipped, a file whose
//! first line is already a message (older group chats and their backups)
//! has no header, `swipe_id` may equal the number of swipes (the message's
//! text is then a swipe being generated), and running-recap versions with a
//! scene index past the last message or a number used twice are repaired
//! and reported as warnings, one `line N: ...` each.

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
    /// What was repaired while reading, one `line N: what` each, in file
    /// order; empty for a file read as written.
    pub warnings: Vec<String>,
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
    // SillyTavern saves `swipe_id == swipes.length` while a new swipe is
    // being generated (and a message without swipes has `swipe_id` 0): the
    // message's text is then one more swipe, the current one.
    if swipe_id == swipes.len() {
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

/// The running-recap versions of the header at file line `line`, and the
/// current version; repairs go to `warnings`.
fn recaps(
    metadata: &Value,
    line: usize,
    messages: usize,
    limits: &Limits,
    warnings: &mut Vec<String>,
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
                .ok_or_else(|| bad(line, format!("{what} must be a non-negative integer"))),
        }
    };
    let mut versions = Vec::new();
    if let Some(list) = store.get("versions") {
        let Value::Array(list) = list else {
            return Err(bad(line, format!("{RECAPS_KEY}.versions must be an array")));
        };
        for (entry, v) in list.iter().enumerate() {
            let version = number(v.get("version"), "version")?
                .ok_or_else(|| bad(line, "a running-recap version needs its number"))?;
            let version = u32::try_from(version).map_err(|_| bad(line, "version is too large"))?;
            // The extension skips its cleanup in disabled chats, so a
            // version can name a scene whose messages were deleted since:
            // it is kept, without the scene reference.
            let mut scene =
                |v: Option<&Value>, what: &str| -> Result<Option<String>, DomainError> {
                    match number(v, what)? {
                        None => Ok(None),
                        Some(i) if (i as usize) < messages => Ok(Some(message_id(i as usize))),
                        Some(i) => {
                            warnings.push(format!(
                            "line {line}: running-recap version {version} (entry {} of versions): \
                             {what} {i} points past the last message ({messages} messages); kept \
                             with no scene reference",
                            entry + 1
                        ));
                            Ok(None)
                        }
                    }
                };
            let prev_scene_message_id = scene(v.get("prev_scene_index"), "prev_scene_index")?;
            let new_scene_message_id = scene(v.get("new_scene_index"), "new_scene_index")?;
            let content = match v.get("content") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(_) => return Err(bad(line, "content must be a string")),
            };
            limits
                .check_text("jsonl", &content)
                .map_err(|_| bad(line, "a running recap is over the text limit"))?;
            versions.push(RecapVersion {
                version,
                created_at_ms: v.get("timestamp").and_then(Value::as_i64).unwrap_or(0),
                content,
                scene_count: number(v.get("scene_count"), "scene_count")?
                    .unwrap_or(0)
                    .min(u64::from(u32::MAX)) as u32,
                excluded_count: number(v.get("excluded_count"), "excluded_count")?
                    .unwrap_or(0)
                    .min(u64::from(u32::MAX)) as u32,
                prev_scene_message_id,
                new_scene_message_id,
            });
        }
    }
    renumber_duplicates(&mut versions, line, warnings)?;
    let current = number(store.get("current_version"), "current_version")?
        .and_then(|c| u32::try_from(c).ok());
    Ok((versions, current))
}

/// The extension's edit path numbers a new version `versions.length + 1`,
/// which can repeat a number already used: every version whose number was
/// already seen, in file order, becomes the highest number so far + 1 (the
/// first one keeps its number, so `current_version` still names it).
fn renumber_duplicates(
    versions: &mut [RecapVersion],
    line: usize,
    warnings: &mut Vec<String>,
) -> Result<(), DomainError> {
    let mut highest = versions.iter().map(|v| v.version).max().unwrap_or(0);
    let mut seen = std::collections::HashSet::new();
    for v in versions.iter_mut() {
        if seen.insert(v.version) {
            continue;
        }
        let old = v.version;
        highest = highest
            .checked_add(1)
            .ok_or_else(|| bad(line, "version is too large to renumber a duplicate"))?;
        v.version = highest;
        seen.insert(highest);
        warnings.push(format!(
            "line {line}: running-recap version {old} appears more than once; \
             this one is now version {highest}"
        ));
    }
    Ok(())
}

/// The byte-order mark some editors (Windows Notepad, for one) put first.
const BOM: char = '\u{feff}';

/// Reads a SillyTavern chat file given as bytes: a leading UTF-8
/// byte-order mark is skipped; bytes that are not UTF-8 are refused naming
/// the line they are on. See [`parse_st_chat`].
pub fn parse_st_chat_bytes(bytes: &[u8], limits: &Limits) -> Result<ImportedChat, DomainError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let valid = &bytes[..e.valid_up_to()];
        let line = 1 + valid.iter().filter(|&&b| b == b'\n').count();
        bad(
            line,
            format!("not UTF-8 (byte {} of the file)", e.valid_up_to() + 1),
        )
    })?;
    parse_st_chat(text, limits)
}

/// Whether a first line is a message rather than the header: messages
/// always carry `mes`, SillyTavern's header never does.
fn is_message_line(value: &Value) -> bool {
    value.get("mes").is_some()
}

/// Reads a SillyTavern chat file. Anything that does not parse rejects the
/// whole file, naming the line; what can be repaired is, and reported in
/// [`ImportedChat::warnings`].
pub fn parse_st_chat(jsonl: &str, limits: &Limits) -> Result<ImportedChat, DomainError> {
    let jsonl = jsonl.strip_prefix(BOM).unwrap_or(jsonl);
    let mut lines = jsonl
        .lines()
        .enumerate()
        .map(|(number, l)| (number + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .peekable();
    let Some(&(header_line, first)) = lines.peek() else {
        return Err(bad(1, "the file is empty"));
    };
    let first: Value =
        serde_json::from_str(first).map_err(|e| bad(header_line, format!("not JSON: {e}")))?;
    // Group chats of older SillyTavern versions (and their backups) have no
    // header: the first line is already a message, read with the others.
    let metadata = if is_message_line(&first) {
        Value::Null
    } else {
        lines.next();
        first
    };
    let mut messages = Vec::new();
    for (line, text) in lines {
        let value: Value =
            serde_json::from_str(text).map_err(|e| bad(line, format!("not JSON: {e}")))?;
        let index = messages.len();
        messages.push((index as i64, message(line, index, value, limits)?));
    }
    limits.check_chat_size(messages.len())?;
    let mut warnings = Vec::new();
    let (recaps, current) = recaps(
        &metadata,
        header_line,
        messages.len(),
        limits,
        &mut warnings,
    )?;
    Ok(ImportedChat {
        messages,
        recaps,
        current,
        warnings,
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
