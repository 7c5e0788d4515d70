//! Reading a SillyTavern chat file, whole or as chunks of bytes split
//! anywhere ([`ChatReader`]).

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::verbatim::{
    FileSwipe, Kept, OwnData, StFile, StHeader, StMessage, StSwipe, StVersion, has, header_has,
    members, swipe_has, version_lacks,
};
use super::{DATA_KEY, ID_KEY, ImportedChat, RECAPS_KEY, message_id};
use crate::domain::message::{Message, MessageData, Swipe};
use crate::domain::recaps::RecapVersion;
use crate::domain::{DomainError, Limits, ids};

fn bad(line: usize, reason: impl Into<String>) -> DomainError {
    DomainError::invalid("jsonl", format!("line {line}: {}", reason.into()))
}

/// Reads a member recapd interprets: `Ok(None)` for `null` (the member is
/// then kept as it is, and recapd treats it as absent).
fn read<'a, T: serde::Deserialize<'a>>(
    line: usize,
    what: &str,
    raw: &'a RawValue,
    expected: &str,
) -> Result<Option<T>, DomainError> {
    if raw.get() == "null" {
        return Ok(None);
    }
    serde_json::from_str(raw.get())
        .map(Some)
        .map_err(|_| bad(line, format!("{what} must be {expected}")))
}

fn checked_text(
    line: usize,
    what: &str,
    raw: &RawValue,
    limits: &Limits,
) -> Result<Option<String>, DomainError> {
    let text: Option<String> = read(line, what, raw, "a string")?;
    if let Some(text) = &text {
        limits
            .check_text("jsonl", text)
            .map_err(|_| bad(line, format!("{what} is over the text limit")))?;
    }
    Ok(text)
}

fn object<'a>(
    line: usize,
    what: &str,
    raw: &'a RawValue,
) -> Result<Vec<(String, &'a RawValue)>, DomainError> {
    members(raw.get()).map_err(|_| bad(line, format!("{what} must be an object")))
}

/// ST-Auto-Recap's data of one swipe (the members of
/// `extra.auto_recap_memory`): the fields recapd reads, and the rest (and
/// those given as `null`) kept.
fn data_of(
    line: usize,
    raw: &RawValue,
    limits: &Limits,
) -> Result<(MessageData, Option<Kept>), DomainError> {
    let mut data = MessageData::default();
    let mut kept = Vec::new();
    for (key, value) in object(line, &format!("extra.{DATA_KEY}"), raw)? {
        let what = format!("{DATA_KEY}.{key}");
        macro_rules! set {
            ($field:ident, text) => {{
                data.$field = checked_text(line, &what, value, limits)?;
                data.$field.is_some()
            }};
            ($field:ident, flag) => {{
                data.$field = read::<bool>(line, &what, value, "true or false")?;
                data.$field.is_some()
            }};
        }
        let known = match key.as_str() {
            "memory" => set!(memory, text),
            "prefill" => set!(prefill, text),
            "error" => set!(error, text),
            "reasoning" => set!(reasoning, text),
            "scene_break_name" => set!(scene_break_name, text),
            "scene_recap_memory" => set!(scene_recap_memory, text),
            "exclude" => set!(exclude, flag),
            "edited" => set!(edited, flag),
            "scene_break" => set!(scene_break, flag),
            "scene_break_visible" => set!(scene_break_visible, flag),
            "is_auto_recap_system_memory" => set!(is_auto_recap_system_memory, flag),
            _ => false,
        };
        if !known {
            kept.push((key, value));
        }
    }
    Ok((data, Kept::object(&kept)))
}

/// The members of a message's `extra`.
#[derive(Default)]
struct Extra {
    is_narrator: bool,
    id: Option<String>,
    /// `auto_recap_memory`, its text and what it held.
    data: Option<(String, MessageData, Option<Kept>)>,
    kept: Option<Kept>,
}

fn extra_of(line: usize, raw: &RawValue, limits: &Limits) -> Result<Extra, DomainError> {
    let mut extra = Extra::default();
    let mut kept = Vec::new();
    for (key, value) in object(line, "extra", raw)? {
        match key.as_str() {
            "type" if value.get() == "\"narrator\"" => extra.is_narrator = true,
            ID_KEY => {
                let id: Option<String> = read(line, "extra.recapd_message_id", value, "a string")?;
                match id {
                    Some(id) => extra.id = Some(id),
                    None => kept.push((key, value)),
                }
            }
            DATA_KEY if value.get() != "null" => {
                let (data, unknown) = data_of(line, value, limits)?;
                extra.data = Some((value.get().to_owned(), data, unknown));
            }
            _ => kept.push((key, value)),
        }
    }
    extra.kept = Kept::object(&kept);
    Ok(extra)
}

/// One `swipe_info` entry: the swipe's data (when the entry has some) and
/// what is kept of it. `current_data` is the text of the message's own
/// `extra.auto_recap_memory` for the current swipe's entry.
fn swipe_info_of(
    line: usize,
    raw: &RawValue,
    current_data: Option<Option<&str>>,
    limits: &Limits,
) -> Result<(Option<MessageData>, StSwipe), DomainError> {
    let mut st = StSwipe::default();
    let Ok(entry) = members(raw.get()) else {
        st.has = swipe_has::NOT_OBJECT;
        st.entry = Some(Kept::value(raw));
        return Ok((None, st));
    };
    let mut data = None;
    let mut kept = Vec::new();
    let mut entry_data: Option<&RawValue> = None;
    for (key, value) in entry {
        if key != "extra" || value.get() == "null" {
            kept.push((key, value));
            continue;
        }
        st.has |= swipe_has::EXTRA;
        let mut kept_extra = Vec::new();
        for (key, value) in object(line, "swipe_info[].extra", value)? {
            if key == DATA_KEY && value.get() != "null" {
                st.has |= swipe_has::DATA;
                entry_data = Some(value);
                // The current swipe's data is the message's; the members
                // the entry's has beyond recapd's are kept for when
                // another swipe becomes current.
                let (read, unknown) = data_of(line, value, limits)?;
                if current_data.is_none() {
                    data = Some(read);
                }
                st.data = unknown;
            } else {
                kept_extra.push((key, value));
            }
        }
        st.extra = Kept::object(&kept_extra);
    }
    st.entry = Kept::object(&kept);
    if let Some(current) = current_data {
        // The current swipe's data is the message's; the entry's is kept
        // only where it differs (the extension copies the message's data
        // into its entry only when `swipe_id` is not 0).
        st.own_data = match (entry_data, current) {
            (None, None) => None,
            (Some(entry), Some(current)) if entry.get() == current => None,
            (None, Some(_)) => Some(OwnData::Missing),
            (Some(entry), _) => Some(OwnData::Kept(Kept::value(entry))),
        };
        if st.own_data.is_some() {
            st.has &= !swipe_has::DATA;
        }
    }
    Ok((data, st))
}

/// One message line, already split into its members.
fn message(
    line: usize,
    index: usize,
    members: Vec<(String, &RawValue)>,
    limits: &Limits,
) -> Result<Message, DomainError> {
    let mut st = StMessage::default();
    let mut kept = Vec::new();
    let mut m = Message {
        id: message_id(index),
        name: String::new(),
        is_user: false,
        hidden: false,
        is_narrator: false,
        is_thoughts: false,
        character_key: String::new(),
        swipes: Vec::new(),
        swipe_id: 0,
        text_tokens: None,
        st: None,
    };
    let mut text = String::new();
    let mut swipes: Option<Vec<String>> = None;
    let mut swipe_id: Option<usize> = None;
    let mut infos: Option<Vec<&RawValue>> = None;
    let mut extra = Extra::default();
    for (key, value) in members {
        let flag = |bit: u16, st: &mut StMessage| -> Result<Option<bool>, DomainError> {
            let read = read::<bool>(line, &key, value, "true or false")?;
            st.has |= if read.is_some() { bit } else { 0 };
            Ok(read)
        };
        let string = |bit: u16, st: &mut StMessage| -> Result<Option<String>, DomainError> {
            let read = checked_text(line, &key, value, limits)?;
            st.has |= if read.is_some() { bit } else { 0 };
            Ok(read)
        };
        let known = match key.as_str() {
            "name" => string(has::NAME, &mut st)?.map(|v| m.name = v).is_some(),
            "mes" => string(has::MES, &mut st)?.map(|v| text = v).is_some(),
            "original_avatar" => string(has::ORIGINAL_AVATAR, &mut st)?
                .map(|v| m.character_key = v)
                .is_some(),
            "is_user" => flag(has::IS_USER, &mut st)?
                .map(|v| m.is_user = v)
                .is_some(),
            "is_system" => flag(has::IS_SYSTEM, &mut st)?
                .map(|v| m.hidden = v)
                .is_some(),
            "is_thoughts" => flag(has::IS_THOUGHTS, &mut st)?
                .map(|v| m.is_thoughts = v)
                .is_some(),
            "swipes" => {
                swipes = read(line, "swipes", value, "an array of strings")?;
                st.has |= if swipes.is_some() { has::SWIPES } else { 0 };
                swipes.is_some()
            }
            "swipe_id" => {
                let id: Option<u64> = read(line, "swipe_id", value, "a swipe index")?;
                swipe_id = id.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                st.has |= if swipe_id.is_some() { has::SWIPE_ID } else { 0 };
                swipe_id.is_some()
            }
            "swipe_info" => {
                infos = serde_json::from_str::<Vec<&RawValue>>(value.get()).ok();
                st.has |= if infos.is_some() { has::SWIPE_INFO } else { 0 };
                infos.is_some()
            }
            "extra" if value.get().starts_with('{') => {
                st.has |= has::EXTRA;
                extra = extra_of(line, value, limits)?;
                true
            }
            _ => false,
        };
        if !known {
            kept.push((key, value));
        }
    }
    st.keys = Kept::object(&kept);
    st.extra = extra.kept;
    m.is_narrator = extra.is_narrator;
    if let Some(id) = extra.id {
        ids::check_message_id("extra.recapd_message_id", &id)
            .map_err(|e| bad(line, e.to_string()))?;
        m.id = id;
    }
    let swipe_id = swipe_id.unwrap_or(0);
    let mut swipes: Vec<Swipe> = swipes
        .unwrap_or_default()
        .into_iter()
        .map(|text| Swipe {
            text,
            ..Swipe::default()
        })
        .collect();
    // SillyTavern saves `swipe_id == swipes.length` while a new swipe is
    // being generated (and a message without swipes has `swipe_id` 0): the
    // message's text is then one more swipe, the current one.
    if swipe_id == swipes.len() {
        if st.had(has::SWIPES) {
            st.current_swipe = Some(FileSwipe::Missing);
        }
        swipes.push(Swipe::default());
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
    // The message's own text and data are those of its current swipe; the
    // file's current swipe text is kept where it differs.
    let file_text = std::mem::replace(&mut swipes[swipe_id].text, text);
    if st.current_swipe.is_none() && file_text != swipes[swipe_id].text {
        st.current_swipe = Some(FileSwipe::Text(file_text));
    }
    let mut current_data = None;
    if let Some((text, data, unknown)) = extra.data {
        st.has |= has::DATA;
        swipes[swipe_id].data = data;
        st.data = unknown;
        current_data = Some(text);
    }
    if let Some(infos) = infos {
        st.info_len = u32::try_from(infos.len().min(swipes.len())).unwrap_or(u32::MAX);
        st.info_rest = Kept::array(infos.get(swipes.len()..).unwrap_or_default());
        for (i, (swipe, info)) in swipes.iter_mut().zip(infos).enumerate() {
            let current = (i == swipe_id).then_some(current_data.as_deref());
            let (data, info_st) = swipe_info_of(line, info, current, limits)?;
            if let Some(data) = data {
                swipe.data = data;
            }
            swipe.st = Some(Box::new(info_st));
        }
    }
    let kept_len = st.kept_len()
        + swipes
            .iter()
            .filter_map(|s| s.st.as_deref())
            .map(StSwipe::kept_len)
            .sum::<usize>();
    if kept_len > limits.max_text_bytes {
        return Err(bad(
            line,
            format!(
                "the message's fields recapd keeps as they are (send_date, extra, swipe_info, ...) \
                 total {kept_len} bytes, over the text limit of {} bytes",
                limits.max_text_bytes
            ),
        ));
    }
    m.swipes = swipes;
    m.swipe_id = swipe_id;
    m.st = Some(Box::new(st));
    Ok(m)
}

/// The header at file line `line`: what is kept of it, the running-recap
/// versions and the current version; repairs go to `warnings`.
fn header(
    text: &str,
    line: usize,
    messages: usize,
    limits: &Limits,
    warnings: &mut Vec<String>,
) -> Result<(StHeader, Vec<RecapVersion>, Option<u32>), DomainError> {
    let top = members(text).map_err(|_| bad(line, "the header must be a JSON object"))?;
    let mut header = StHeader::default();
    let mut versions = Vec::new();
    let mut current = None;
    let mut kept = Vec::new();
    for (key, value) in top {
        if key != "chat_metadata" || !value.get().starts_with('{') {
            kept.push((key, value));
            continue;
        }
        header.has |= header_has::METADATA;
        let mut kept_metadata = Vec::new();
        for (key, value) in object(line, "chat_metadata", value)? {
            if key != RECAPS_KEY || !value.get().starts_with('{') {
                kept_metadata.push((key, value));
                continue;
            }
            header.has |= header_has::RECAPS;
            let mut kept_recaps = Vec::new();
            for (key, value) in object(line, RECAPS_KEY, value)? {
                match key.as_str() {
                    "current_version" => {
                        let number: Option<u64> =
                            read(line, "current_version", value, "a non-negative integer")?;
                        match number {
                            Some(number) => {
                                header.has |= header_has::CURRENT;
                                current = u32::try_from(number).ok();
                            }
                            None => kept_recaps.push((key, value)),
                        }
                    }
                    "versions" => {
                        let list: Option<Vec<&RawValue>> =
                            read(line, &format!("{RECAPS_KEY}.versions"), value, "an array")?;
                        match list {
                            Some(list) => {
                                header.has |= header_has::VERSIONS;
                                versions = read_versions(&list, line, messages, limits, warnings)?;
                            }
                            None => kept_recaps.push((key, value)),
                        }
                    }
                    _ => kept_recaps.push((key, value)),
                }
            }
            header.recaps = Kept::object(&kept_recaps);
        }
        header.metadata = Kept::object(&kept_metadata);
    }
    header.keys = Kept::object(&kept);
    renumber_duplicates(&mut versions, line, warnings)?;
    Ok((header, versions, current))
}

/// The running-recap versions of the header at file line `line`.
fn read_versions(
    list: &[&RawValue],
    line: usize,
    messages: usize,
    limits: &Limits,
    warnings: &mut Vec<String>,
) -> Result<Vec<RecapVersion>, DomainError> {
    use version_lacks::*;
    let mut versions = Vec::with_capacity(list.len());
    for (entry, v) in list.iter().enumerate() {
        let number = |value: &RawValue, what: &str| -> Result<Option<u64>, DomainError> {
            read(line, what, value, "a non-negative integer")
        };
        let mut lacks = TIMESTAMP | CONTENT | SCENE_COUNT | EXCLUDED_COUNT | PREV_SCENE_INDEX;
        lacks |= NEW_SCENE_INDEX;
        let mut version = None;
        let mut read_version = RecapVersion {
            version: 0,
            created_at_ms: 0,
            content: String::new(),
            scene_count: 0,
            excluded_count: 0,
            prev_scene_message_id: None,
            new_scene_message_id: None,
            st: None,
        };
        let mut scenes: [Option<u64>; 2] = [None, None];
        let mut kept = Vec::new();
        for (key, value) in object(line, "a running-recap version", v)? {
            let (bit, known) = match key.as_str() {
                "version" => {
                    version = number(value, "version")?;
                    (0, version.is_some())
                }
                "timestamp" => match serde_json::from_str::<i64>(value.get()) {
                    Ok(t) => {
                        read_version.created_at_ms = t;
                        (TIMESTAMP, true)
                    }
                    // Another spelling (a fraction, a string) is kept.
                    Err(_) => (0, false),
                },
                "content" => {
                    let content = read::<String>(line, "content", value, "a string")?;
                    let known = content.is_some();
                    read_version.content = content.unwrap_or_default();
                    limits
                        .check_text("jsonl", &read_version.content)
                        .map_err(|_| bad(line, "a running recap is over the text limit"))?;
                    (CONTENT, known)
                }
                "scene_count" | "excluded_count" => {
                    let count = number(value, &key)?;
                    let count = count.map(|c| c.min(u64::from(u32::MAX)) as u32);
                    if key == "scene_count" {
                        read_version.scene_count = count.unwrap_or(0);
                        (SCENE_COUNT, count.is_some())
                    } else {
                        read_version.excluded_count = count.unwrap_or(0);
                        (EXCLUDED_COUNT, count.is_some())
                    }
                }
                // `null` is what an export writes for no scene.
                "prev_scene_index" => {
                    scenes[0] = number(value, "prev_scene_index")?;
                    (PREV_SCENE_INDEX, true)
                }
                "new_scene_index" => {
                    scenes[1] = number(value, "new_scene_index")?;
                    (NEW_SCENE_INDEX, true)
                }
                _ => (0, false),
            };
            if known {
                lacks &= !bit;
            } else {
                kept.push((key, value));
            }
        }
        let version =
            version.ok_or_else(|| bad(line, "a running-recap version needs its number"))?;
        let version = u32::try_from(version).map_err(|_| bad(line, "version is too large"))?;
        // The extension skips its cleanup in disabled chats, so a version
        // can name a scene whose messages were deleted since: it is kept,
        // without the scene reference.
        let mut scene = |index: Option<u64>, what: &str| match index {
            None => None,
            Some(i) if (i as usize) < messages => Some(message_id(i as usize)),
            Some(i) => {
                warnings.push(format!(
                    "line {line}: running-recap version {version} (entry {} of versions): \
                     {what} {i} points past the last message ({messages} messages); kept \
                     with no scene reference",
                    entry + 1
                ));
                None
            }
        };
        read_version.prev_scene_message_id = scene(scenes[0], "prev_scene_index");
        read_version.new_scene_message_id = scene(scenes[1], "new_scene_index");
        read_version.version = version;
        let keys = Kept::object(&kept);
        if lacks != 0 || keys.is_some() {
            read_version.st = Some(Box::new(StVersion { lacks, keys }));
        }
        versions.push(read_version);
    }
    Ok(versions)
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
    /// The header's line and text, once the first non-blank line was
    /// read; no text for a header-less file.
    header: Option<(usize, Option<String>)>,
    messages: Vec<(i64, Message)>,
    /// The line of each message id, to refuse one used twice.
    ids: HashMap<String, usize>,
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
            ids: HashMap::new(),
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
        let members = members(text).map_err(|e| {
            if serde_json::from_str::<&RawValue>(text).is_ok() {
                bad(line, "a message must be a JSON object")
            } else {
                bad(line, format!("not JSON: {e}"))
            }
        })?;
        if self.header.is_none() {
            // Group chats of older SillyTavern versions (and their
            // backups) have no header: the first line is already a
            // message, read with the others. Messages always carry `mes`,
            // SillyTavern's header never does.
            if !members.iter().any(|(key, _)| key == "mes") {
                self.header = Some((line, Some(text.to_owned())));
                return Ok(());
            }
            self.header = Some((line, None));
        }
        let index = self.messages.len();
        let message = message(line, index, members, &self.limits)?;
        if let Some(other) = self.ids.insert(message.id.clone(), line) {
            return Err(bad(
                line,
                format!(
                    "message id {:?} is already the id of the message on line {other}",
                    message.id
                ),
            ));
        }
        self.messages.push((index as i64, message));
        self.limits.check_chat_size(self.messages.len())
    }

    /// Ends the file: reads its last line (when it has no newline) and the
    /// running-recap versions, repairing what can be repaired.
    pub fn finish(mut self) -> Result<ImportedChat, DomainError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.take_line(&line)?;
        }
        let mut warnings = Vec::new();
        let (file, recaps, current) = match self.header {
            None => return Err(bad(1, "the file is empty")),
            Some((_, None)) => (StFile::Headerless, Vec::new(), None),
            Some((line, Some(text))) => {
                let (header, recaps, current) = header(
                    &text,
                    line,
                    self.messages.len(),
                    &self.limits,
                    &mut warnings,
                )?;
                (StFile::Header(header), recaps, current)
            }
        };
        Ok(ImportedChat {
            messages: self.messages,
            recaps,
            current,
            warnings,
            file,
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

/// Reads a SillyTavern chat file. Anything that does not parse rejects the
/// whole file, naming the line; what can be repaired is, and reported in
/// [`ImportedChat::warnings`].
pub fn parse_st_chat(jsonl: &str, limits: &Limits) -> Result<ImportedChat, DomainError> {
    parse_st_chat_bytes(jsonl.as_bytes(), limits)
}
