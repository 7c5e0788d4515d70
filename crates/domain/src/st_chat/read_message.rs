//! Reading one message line of a SillyTavern chat file: what recapd
//! interprets, and what it keeps as the file had it.

use compact_str::CompactString;
use serde_json::value::RawValue;

use super::read::{bad, checked_text, object, read};
use super::verbatim::{FileSwipe, Kept, OwnData, StMessage, StSwipe, has, members, swipe_has};
use super::{DATA_KEY, ID_KEY, message_id};
use crate::message::{MAX_SCENE_RECAP_VERSIONS, Message, MessageData, Swipe, Swipes};
use crate::{DomainError, Limits, ids};

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
            "scene_recap_versions" => {
                data.scene_recap_versions = versions_of(line, &what, value, limits)?;
                data.scene_recap_versions.is_some()
            }
            "scene_recap_current_index" => {
                data.scene_recap_current_index =
                    read::<u32>(line, &what, value, "a version index")?;
                data.scene_recap_current_index.is_some()
            }
            _ => false,
        };
        if !known {
            kept.push((key, value));
        }
    }
    Ok((data, Kept::object(&kept)))
}

/// `scene_recap_versions`: every version's text checked, and at most
/// [`MAX_SCENE_RECAP_VERSIONS`] of them.
fn versions_of(
    line: usize,
    what: &str,
    value: &RawValue,
    limits: &Limits,
) -> Result<Option<Vec<String>>, DomainError> {
    let versions: Option<Vec<String>> = read(line, what, value, "an array of strings")?;
    if let Some(versions) = &versions {
        if versions.len() > MAX_SCENE_RECAP_VERSIONS {
            return Err(bad(
                line,
                format!(
                    "{what} has {} versions, over the maximum of {MAX_SCENE_RECAP_VERSIONS}",
                    versions.len()
                ),
            ));
        }
        let total: usize = versions.iter().map(String::len).sum();
        if total > limits.max_text_bytes {
            return Err(bad(
                line,
                format!(
                    "{what} totals {total} bytes, over the text limit of {} bytes",
                    limits.max_text_bytes
                ),
            ));
        }
    }
    Ok(versions)
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
pub(super) fn message(
    line: usize,
    index: usize,
    members: Vec<(String, &RawValue)>,
    limits: &Limits,
) -> Result<Message, DomainError> {
    let mut st = StMessage::default();
    let mut kept = Vec::new();
    let mut m = Message {
        id: message_id(index).into(),
        name: CompactString::default(),
        is_user: false,
        hidden: false,
        is_narrator: false,
        is_thoughts: false,
        character_key: CompactString::default(),
        swipes: Swipes::default(),
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
            "name" => string(has::NAME, &mut st)?
                .map(|v| m.name = v.into())
                .is_some(),
            "mes" => string(has::MES, &mut st)?.map(|v| text = v).is_some(),
            "original_avatar" => string(has::ORIGINAL_AVATAR, &mut st)?
                .map(|v| m.character_key = v.into())
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
        st.has |= has::ID;
        m.id = id.into();
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
        swipes[swipe_id].data = data.into();
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
                swipe.data = data.into();
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
    m.swipe_id = u32::try_from(swipe_id)
        .map_err(|_| bad(line, format!("swipe_id {swipe_id} is over 2^32")))?;
    m.swipes = swipes.into();
    m.st = Some(Box::new(st));
    Ok(m)
}
