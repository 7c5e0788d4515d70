//! Writing a chat as a SillyTavern chat file, whole or line by line.
//!
//! What a file had is written back as it was: the members recapd does not
//! interpret, and of those it does only the ones the file had (or that an
//! API call gave a value). Messages made through the API are written with
//! `name`, `is_user`, `is_system`, `mes` and `extra`, and, with more than
//! one swipe, `swipes`, `swipe_id` and `swipe_info`. The chat's World
//! Info state (`chat_metadata.world_info` and `timedWorldInfo`) is written
//! from what the caller gives, which is what recapd holds now.

use std::collections::HashMap;

use super::verbatim::{
    FileSwipe, Kept, Obj, OwnData, StFile, StHeader, StMessage, has, header_has, json, swipe_has,
    version_lacks,
};
use super::world_info::{BOOK_KEY, ChatWorldInfo, TIMED_KEY};
use super::{DATA_KEY, ID_KEY, MAIN_CHAT_KEY, RECAPS_KEY, message_id};
use crate::autohide::auto_hide;
use crate::chat::Chat;
use crate::message::{Message, MessageData, Swipe};
use crate::recaps::RecapVersion;

/// `extra.auto_recap_memory`: the fields that are set, then the kept ones.
/// Destructured whole, so a new field breaks the build until it is written.
///
/// Scene-recap versions are written where the extension keeps them. Data
/// that has a scene recap but never had versions (recapd's rows from
/// before it kept versions) gets the recap as its one version, unless the
/// data came from a file that had it that way (`from_file`): the extension
/// would otherwise empty the scene recap when it first shows the message.
/// The extension's older mirror `scene_break_recap`, kept from a file, is
/// written as the current scene recap.
fn data_json(data: &MessageData, kept: Option<&Kept>, from_file: bool) -> String {
    let MessageData {
        memory,
        prefill,
        exclude,
        error,
        reasoning,
        edited,
        scene_break,
        scene_break_visible,
        scene_break_name,
        scene_recap_memory,
        is_auto_recap_system_memory,
        scene_recap_versions,
        scene_recap_current_index,
    } = data;
    let mut obj = Obj::new();
    macro_rules! put {
        ($($field:ident),*) => {
            $(if let Some(value) = $field {
                obj.put(stringify!($field), value);
            })*
        };
    }
    put!(
        memory,
        prefill,
        exclude,
        error,
        reasoning,
        edited,
        scene_break,
        scene_break_visible,
        scene_break_name,
        scene_recap_memory,
        is_auto_recap_system_memory,
        scene_recap_versions,
        scene_recap_current_index
    );
    if scene_recap_versions.is_none() && !from_file && data.has_scene_recap() {
        obj.put("scene_recap_versions", &data.scene_recap_version_list());
        obj.put("scene_recap_current_index", &0u32);
    }
    match (kept, scene_recap_versions.is_some()) {
        (Some(kept), true) => {
            let members = kept.members();
            let mut rest = Vec::with_capacity(members.len());
            for (key, value) in members {
                if key == SCENE_BREAK_RECAP_KEY {
                    obj.put(
                        SCENE_BREAK_RECAP_KEY,
                        scene_recap_memory.as_deref().unwrap_or(""),
                    );
                } else {
                    rest.push((key, value));
                }
            }
            obj.kept(Kept::object(&rest).as_ref());
        }
        (kept, _) => obj.kept(kept),
    }
    obj.finish()
}

/// The extension's older copy of a scene recap, kept in step with the
/// current version on export.
const SCENE_BREAK_RECAP_KEY: &str = "scene_break_recap";

fn has_data(data: &MessageData) -> bool {
    data != &MessageData::default()
}

/// Writes a chat as a SillyTavern chat file (see [`st_chat_lines`]).
pub fn write_st_chat(
    chat_id: &str,
    chat: &Chat,
    auto_hide_scene_count: u32,
    world_info: &ChatWorldInfo,
) -> String {
    let mut out = String::new();
    for line in st_chat_lines(chat_id, chat, auto_hide_scene_count, world_info) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The lines of [`write_st_chat`], without their newlines, made one at a
/// time: the header first (none for a file that had none, unless there are
/// running recaps or World Info state to write), then one line per
/// message. Scene references that name a message become its index.
/// `is_system` is written for messages hidden by hand or by auto-hide with
/// `auto_hide_scene_count` (the chat's effective setting). `world_info`
/// is the chat's World Info state now (its own `world_info_chat_book`
/// override and its timed effects): each member present is written into
/// `chat_metadata`, and an absent one is not written.
pub fn st_chat_lines<'a>(
    chat_id: &'a str,
    chat: &'a Chat,
    auto_hide_scene_count: u32,
    world_info: &'a ChatWorldInfo,
) -> impl Iterator<Item = String> + 'a {
    st_chat_lines_of(
        chat_id,
        chat,
        auto_hide_scene_count,
        world_info,
        false,
        None,
    )
}

/// [`st_chat_lines`] of a chat that is a group chat when `group_chat`:
/// the header recapd writes of its own (for a chat made through the API)
/// then starts as SillyTavern's group chat files do, with `user_name` and
/// `character_name` both `"unused"`. An imported file's header is written
/// as the file had it either way.
///
/// `main_chat` is the chat's parent when it is a branch: written as
/// `chat_metadata.main_chat`, as SillyTavern's branch and checkpoint files
/// name theirs (a member of that name the file had gives way to it, and
/// stays where it was when it already names the parent).
pub fn st_chat_lines_of<'a>(
    chat_id: &'a str,
    chat: &'a Chat,
    auto_hide_scene_count: u32,
    world_info: &'a ChatWorldInfo,
    group_chat: bool,
    main_chat: Option<&'a str>,
) -> impl Iterator<Item = String> + 'a {
    let hidden = auto_hide(chat, auto_hide_scene_count);
    std::iter::once_with(move || header_line(chat_id, chat, world_info, group_chat, main_chat))
        .flatten()
        .chain(
            chat.messages()
                .enumerate()
                .map(move |(index, (seq, m))| message_line(m, index, hidden.hides(seq))),
        )
}

fn header_line(
    chat_id: &str,
    chat: &Chat,
    world_info: &ChatWorldInfo,
    group_chat: bool,
    main_chat: Option<&str>,
) -> Option<String> {
    let recaps = chat.recaps();
    let versions_exist = recaps.versions().next().is_some();
    let minimal = StHeader::default();
    // A chat made through the API (or a header-less file with running
    // recaps or World Info state) gets the header recapd writes of its own.
    let (header, imported) = match chat.st_file().map(|f| &**f) {
        Some(StFile::Headerless)
            if !versions_exist && world_info.is_empty() && main_chat.is_none() =>
        {
            return None;
        }
        Some(StFile::Header(header)) => (header, true),
        Some(StFile::Headerless) | None => (&minimal, false),
    };
    let needs_recaps = versions_exist || recaps.current_version().is_some();
    // The parent, unless the file's own `main_chat` already names it.
    let main_chat = main_chat.filter(|parent| !names_parent(header, parent));
    let mut top = Obj::new();
    if group_chat && !imported {
        top.put("user_name", "unused");
        top.put("character_name", "unused");
    }
    if header.had(header_has::METADATA)
        || needs_recaps
        || !imported
        || !world_info.is_empty()
        || main_chat.is_some()
    {
        let mut metadata = Obj::new();
        if header.had(header_has::RECAPS) || needs_recaps || !imported {
            let mut store = Obj::new();
            if !header.had(header_has::RECAPS) {
                store.put("chat_id", chat_id);
            }
            if header.had(header_has::CURRENT) || needs_recaps || !imported {
                store.put("current_version", &recaps.current_version());
            }
            if header.had(header_has::VERSIONS) || versions_exist || !imported {
                let index_of: HashMap<&str, usize> = chat
                    .messages()
                    .enumerate()
                    .map(|(i, (_, m))| (m.id.as_str(), i))
                    .collect();
                // The file's versions in the file's order, then those
                // added through the API (by number).
                let mut in_order: Vec<&RecapVersion> = recaps.versions().collect();
                in_order.sort_by_key(|v| {
                    let position = v.st.as_ref().and_then(|st| st.position);
                    (position.is_none(), position)
                });
                let versions: Vec<String> = in_order
                    .into_iter()
                    .map(|v| version_json(v, &index_of))
                    .collect();
                store.put_raw("versions", &format!("[{}]", versions.join(",")));
            }
            store.kept(header.recaps.as_ref());
            metadata.put_raw(RECAPS_KEY, &store.finish());
        }
        // Before the kept members, so that they win over a kept member of
        // the same name (the whole `chat_metadata` of a chat imported before
        // recapd read these is kept).
        if let Some(book) = &world_info.book {
            metadata.put(BOOK_KEY, book);
        }
        if let Some(timed) = &world_info.timed {
            metadata.put_raw(TIMED_KEY, timed);
        }
        if let Some(parent) = main_chat {
            metadata.put(MAIN_CHAT_KEY, parent);
        }
        metadata.kept(header.metadata.as_ref());
        top.put_raw("chat_metadata", &metadata.finish());
    }
    top.kept(header.keys.as_ref());
    Some(top.finish())
}

/// Whether the file's kept `chat_metadata.main_chat` is the string
/// `parent`: its last member of that name, the one a reader takes (a file
/// may name it twice).
fn names_parent(header: &StHeader, parent: &str) -> bool {
    header.metadata.as_ref().is_some_and(|metadata| {
        metadata
            .members()
            .into_iter()
            .rfind(|(key, _)| key == MAIN_CHAT_KEY)
            .is_some_and(|(_, value)| {
                serde_json::from_str::<String>(value.get()).is_ok_and(|named| named == parent)
            })
    })
}

fn version_json(v: &RecapVersion, index_of: &HashMap<&str, usize>) -> String {
    use version_lacks::*;
    let lacks = v.st.as_ref().map_or(0, |st| st.lacks);
    let writes = |bit: u8| lacks & bit == 0;
    let index = |id: &Option<String>| id.as_deref().and_then(|id| index_of.get(id)).copied();
    let mut obj = Obj::new();
    obj.put("version", &v.version);
    if writes(TIMESTAMP) {
        obj.put("timestamp", &v.created_at_ms);
    }
    if writes(CONTENT) {
        obj.put("content", &v.content);
    }
    if writes(SCENE_COUNT) {
        obj.put("scene_count", &v.scene_count);
    }
    if writes(EXCLUDED_COUNT) {
        obj.put("excluded_count", &v.excluded_count);
    }
    if writes(PREV_SCENE_INDEX) {
        obj.put("prev_scene_index", &index(&v.prev_scene_message_id));
    }
    if writes(NEW_SCENE_INDEX) {
        obj.put("new_scene_index", &index(&v.new_scene_message_id));
    }
    obj.kept(v.st.as_ref().and_then(|st| st.keys.as_ref()));
    obj.finish()
}

fn message_line(m: &Message, index: usize, auto_hidden: bool) -> String {
    let st = m.st.as_deref();
    let imported = st.is_some();
    let had = |bit: u16| st.is_some_and(|st| st.had(bit));
    let mut obj = Obj::new();
    if had(has::NAME) || !imported || !m.name.is_empty() {
        obj.put("name", &m.name);
    }
    if had(has::IS_USER) || !imported || m.is_user {
        obj.put("is_user", &m.is_user);
    }
    let is_system = m.hidden || auto_hidden;
    if had(has::IS_SYSTEM) || !imported || is_system {
        obj.put("is_system", &is_system);
    }
    if had(has::IS_THOUGHTS) || m.is_thoughts {
        obj.put("is_thoughts", &m.is_thoughts);
    }
    if had(has::ORIGINAL_AVATAR) || !m.character_key.is_empty() {
        obj.put("original_avatar", &m.character_key);
    }
    if had(has::MES) || !imported || !m.text().is_empty() {
        obj.put("mes", m.text());
    }
    let many = m.swipes.len() > 1;
    let write_swipes = had(has::SWIPES) || many;
    if write_swipes {
        obj.put_raw("swipes", &swipes_json(m, st));
    }
    // A line with `swipes` but no `swipe_id` (SillyTavern reads it as 0)
    // gets none back unless another swipe is now current.
    if had(has::SWIPE_ID) || (write_swipes && (!had(has::SWIPES) || m.swipe_id != 0)) {
        obj.put("swipe_id", &m.swipe_id);
    }
    let write_info = had(has::SWIPE_INFO) || (many && !had(has::SWIPES));
    if write_info {
        obj.put_raw("swipe_info", &swipe_info_json(m, st));
    }
    let mut extra = Obj::new();
    if m.is_narrator {
        extra.put("type", "narrator");
    }
    if had(has::ID) || m.id != message_id(index) {
        extra.put(ID_KEY, &m.id);
    }
    let message_data = st.and_then(|st| st.data.as_ref());
    if had(has::DATA) || has_data(m.data()) || message_data.is_some() {
        extra.put_raw(DATA_KEY, &data_json(m.data(), message_data, had(has::DATA)));
    }
    extra.kept(st.and_then(|st| st.extra.as_ref()));
    if had(has::EXTRA) || !imported || !extra.is_empty() {
        obj.put_raw("extra", &extra.finish());
    }
    obj.kept(st.and_then(|st| st.keys.as_ref()));
    obj.finish()
}

/// `swipes`, with the file's own current swipe where it is still kept.
fn swipes_json(m: &Message, st: Option<&StMessage>) -> String {
    let texts = m.swipes.iter().enumerate().filter_map(|(i, s)| {
        if i != m.current_swipe() {
            return Some(s.text.as_str());
        }
        match st.and_then(|st| st.current_swipe.as_ref()) {
            None => Some(s.text.as_str()),
            Some(FileSwipe::Text(text)) => Some(text.as_str()),
            Some(FileSwipe::Missing) => None,
        }
    });
    json(&texts.collect::<Vec<_>>())
}

fn swipe_info_json(m: &Message, st: Option<&StMessage>) -> String {
    let entries = match st {
        Some(st) if st.had(has::SWIPE_INFO) => st.info_len as usize,
        _ => m.swipes.len(),
    };
    let mut out: Vec<String> = m
        .swipes
        .iter()
        .take(entries)
        .enumerate()
        .map(|(i, swipe)| swipe_entry(swipe, i == m.current_swipe()))
        .collect();
    if let Some(rest) = st.and_then(|st| st.info_rest.as_ref()) {
        out.extend(rest.elements().iter().map(|e| e.get().to_owned()));
    }
    format!("[{}]", out.join(","))
}

/// One `swipe_info` entry; the current swipe's may have its own data
/// from the file.
fn swipe_entry(swipe: &Swipe, current: bool) -> String {
    let st = swipe.st.as_deref();
    if let Some(st) = st
        && st.had(swipe_has::NOT_OBJECT)
        && let Some(entry) = &st.entry
    {
        return entry.get().to_owned();
    }
    let had = |bit: u8| st.is_some_and(|st| st.had(bit));
    let mut extra = Obj::new();
    let kept = st.and_then(|st| st.data.as_ref());
    match st.and_then(|st| st.own_data.as_ref()).filter(|_| current) {
        Some(OwnData::Missing) => {}
        Some(OwnData::Kept(own)) => extra.put_raw(DATA_KEY, own.get()),
        None => {
            if had(swipe_has::DATA) || has_data(&swipe.data) || kept.is_some() {
                extra.put_raw(
                    DATA_KEY,
                    &data_json(&swipe.data, kept, had(swipe_has::DATA)),
                );
            }
        }
    }
    extra.kept(st.and_then(|st| st.extra.as_ref()));
    let mut obj = Obj::new();
    if had(swipe_has::EXTRA) || st.is_none() || !extra.is_empty() {
        obj.put_raw("extra", &extra.finish());
    }
    obj.kept(st.and_then(|st| st.entry.as_ref()));
    obj.finish()
}
