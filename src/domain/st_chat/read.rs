//! Reading a SillyTavern chat file, whole or as chunks of bytes split
//! anywhere ([`ChatReader`]).

use serde_json::{Map, Value};

use super::{DATA_KEY, ImportedChat, RECAPS_KEY, message_id};
use crate::domain::message::{Message, MessageData, Swipe};
use crate::domain::recaps::RecapVersion;
use crate::domain::{DomainError, Limits};

fn bad(line: usize, reason: impl Into<String>) -> DomainError {
    DomainError::invalid("jsonl", format!("line {line}: {}", reason.into()))
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
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Reads a SillyTavern chat file given in chunks of bytes, split anywhere
/// (a chunk may end inside a line or inside a UTF-8 character). Lines are
/// numbered across chunks. Each complete line is parsed as it arrives, so
/// a bad line is reported before the rest of the file is sent; the
/// running-recap versions (on the first line) are read at
/// [`ChatReader::finish`], once the number of messages is known.
///
/// A leading UTF-8 byte-order mark is skipped; bytes that are not UTF-8
/// are refused naming their line. Memory held: the parsed messages, the
/// header, and at most one incomplete line.
#[derive(Debug)]
pub struct ChatReader {
    limits: Limits,
    /// Bytes of the line not yet ended by a newline.
    partial: Vec<u8>,
    /// Number of the line `partial` belongs to (1-based).
    line: usize,
    /// Whether any byte was seen (the byte-order mark is only skipped first).
    started: bool,
    /// The header and its line, once the first non-blank line was read;
    /// `Value::Null` for a header-less file.
    header: Option<(usize, Value)>,
    messages: Vec<(i64, Message)>,
}

impl ChatReader {
    /// A reader for one file, checking texts and the message count against
    /// `limits`.
    pub fn new(limits: Limits) -> ChatReader {
        ChatReader {
            limits,
            partial: Vec::new(),
            line: 1,
            started: false,
            header: None,
            messages: Vec::new(),
        }
    }

    /// Number of the line being read (1-based): the next line to complete.
    pub fn line(&self) -> usize {
        self.line
    }

    /// Takes the next chunk of the file. Fails on the first line that
    /// cannot be read; the reader must then be dropped.
    pub fn push(&mut self, mut chunk: &[u8]) -> Result<(), DomainError> {
        if !self.started && !chunk.is_empty() {
            // The mark may itself be split across chunks.
            let have = self.partial.len();
            let want = BOM.len() - have;
            let take = want.min(chunk.len());
            if BOM[have..have + take] == chunk[..take] {
                self.partial.extend_from_slice(&chunk[..take]);
                chunk = &chunk[take..];
                if self.partial.len() < BOM.len() {
                    return Ok(());
                }
                self.partial.clear();
            }
            self.started = true;
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            let complete = if self.partial.is_empty() {
                self.take_line(&chunk[..end])
            } else {
                self.partial.extend_from_slice(&chunk[..end]);
                let line = std::mem::take(&mut self.partial);
                self.take_line(&line)
            };
            complete?;
            self.line += 1;
            chunk = &chunk[end + 1..];
        }
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// One complete line, without its newline.
    fn take_line(&mut self, bytes: &[u8]) -> Result<(), DomainError> {
        let line = self.line;
        let text = std::str::from_utf8(bytes).map_err(|e| {
            bad(
                line,
                format!("not UTF-8 (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(());
        }
        let value: Value =
            serde_json::from_str(text).map_err(|e| bad(line, format!("not JSON: {e}")))?;
        if self.header.is_none() {
            // Group chats of older SillyTavern versions (and their
            // backups) have no header: the first line is already a
            // message, read with the others.
            if !is_message_line(&value) {
                self.header = Some((line, value));
                return Ok(());
            }
            self.header = Some((line, Value::Null));
        }
        let index = self.messages.len();
        self.messages
            .push((index as i64, message(line, index, value, &self.limits)?));
        self.limits.check_chat_size(self.messages.len())
    }

    /// Ends the file: reads its last line (when it has no newline) and the
    /// running-recap versions, repairing what can be repaired.
    pub fn finish(mut self) -> Result<ImportedChat, DomainError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.take_line(&line)?;
        }
        let Some((header_line, metadata)) = self.header else {
            return Err(bad(1, "the file is empty"));
        };
        let mut warnings = Vec::new();
        let (recaps, current) = recaps(
            &metadata,
            header_line,
            self.messages.len(),
            &self.limits,
            &mut warnings,
        )?;
        Ok(ImportedChat {
            messages: self.messages,
            recaps,
            current,
            warnings,
        })
    }
}

/// Reads a SillyTavern chat file given as bytes: a leading UTF-8
/// byte-order mark is skipped; bytes that are not UTF-8 are refused naming
/// the line they are on. See [`ChatReader`].
pub fn parse_st_chat_bytes(bytes: &[u8], limits: &Limits) -> Result<ImportedChat, DomainError> {
    let mut reader = ChatReader::new(*limits);
    reader.push(bytes)?;
    reader.finish()
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
    parse_st_chat_bytes(jsonl.as_bytes(), limits)
}
