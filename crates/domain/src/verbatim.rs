//! What recapd keeps of a SillyTavern chat file without interpreting it,
//! so that an export gives SillyTavern back the file it read: the members
//! it does not read, at every level, as the JSON text the file had (never
//! re-encoded: numbers keep their spelling), and which of the members it
//! does read the file had at all (a user message without `swipes` gets
//! none back).
//!
//! Everything here is `None` or zero for what the API made, so such
//! messages pay one pointer each.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// JSON text kept as the file had it. For the members of an object, the
/// text of an object holding just those members.
#[derive(Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Kept(Box<RawValue>);

impl Kept {
    /// The JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Its size in bytes (what counts against the text limit).
    pub fn len(&self) -> usize {
        self.0.get().len()
    }

    /// Whether the text is empty (never, for kept JSON).
    pub fn is_empty(&self) -> bool {
        self.0.get().is_empty()
    }

    /// One JSON value as it is.
    pub(super) fn value(raw: &RawValue) -> Kept {
        Kept(raw.to_owned())
    }

    /// An object of `members`; `None` when there are none.
    pub(super) fn object(members: &[(String, &RawValue)]) -> Option<Kept> {
        if members.is_empty() {
            return None;
        }
        let mut text = String::from("{");
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&json(key));
            text.push(':');
            text.push_str(value.get());
        }
        text.push('}');
        // Keys are JSON strings and values were read as JSON: valid JSON.
        RawValue::from_string(text).ok().map(Kept)
    }

    /// An array of `elements`; `None` when there are none.
    pub(super) fn array(elements: &[&RawValue]) -> Option<Kept> {
        if elements.is_empty() {
            return None;
        }
        RawValue::from_string(json(elements)).ok().map(Kept)
    }

    /// The members of a kept object (none for any other value).
    pub(super) fn members(&self) -> Vec<(String, &RawValue)> {
        members(self.get()).unwrap_or_default()
    }

    /// The elements of a kept array (none for any other value).
    pub(super) fn elements(&self) -> Vec<&RawValue> {
        serde_json::from_str(self.get()).unwrap_or_default()
    }
}

impl PartialEq for Kept {
    fn eq(&self, other: &Kept) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Kept {}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.get())
    }
}

/// The total size of some kept texts.
pub(super) fn kept_len<'a>(kept: impl IntoIterator<Item = Option<&'a Kept>>) -> usize {
    kept.into_iter().flatten().map(Kept::len).sum()
}

/// A value as JSON text. Serializing strings, numbers, booleans and JSON
/// values cannot fail; `null` stands in should it ever.
pub(super) fn json(value: &(impl Serialize + ?Sized)) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// The members of a JSON object, in file order, values as their text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// The members of the JSON object `text`; an error when it is not one.
pub(super) fn members(text: &str) -> Result<Vec<(String, &RawValue)>, serde_json::Error> {
    serde_json::from_str::<Members>(text).map(|m| m.0)
}

/// Which of the members recapd reads a message's line had
/// ([`StMessage::has`]).
#[allow(missing_docs)] // each is the member of the same name
pub mod has {
    pub const NAME: u16 = 1;
    pub const IS_USER: u16 = 1 << 1;
    pub const IS_SYSTEM: u16 = 1 << 2;
    pub const IS_THOUGHTS: u16 = 1 << 3;
    pub const ORIGINAL_AVATAR: u16 = 1 << 4;
    pub const MES: u16 = 1 << 5;
    pub const SWIPES: u16 = 1 << 6;
    pub const SWIPE_ID: u16 = 1 << 7;
    pub const SWIPE_INFO: u16 = 1 << 8;
    pub const EXTRA: u16 = 1 << 9;
    /// `extra.auto_recap_memory`.
    pub const DATA: u16 = 1 << 10;
    /// `extra.recapd_message_id` (written back even when it is `m<index>`).
    pub const ID: u16 = 1 << 11;
}

/// Which of the members recapd reads a `swipe_info` entry had
/// ([`StSwipe::has`]).
pub mod swipe_has {
    /// The entry has `extra`.
    pub const EXTRA: u8 = 1;
    /// The entry has `extra.auto_recap_memory`.
    pub const DATA: u8 = 1 << 1;
    /// The entry is not an object: [`super::StSwipe::entry`] is the whole
    /// entry.
    pub const NOT_OBJECT: u8 = 1 << 2;
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// The file's `swipes[swipe_id]` where it was not the message's `mes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileSwipe {
    /// `swipe_id` was `swipes.length`: `mes` is a swipe the file's
    /// `swipes` does not hold yet.
    Missing,
    /// The text the file's swipe had (SillyTavern keeps a `<user>`
    /// placeholder there while `mes` has the name).
    Text(String),
}

/// What a message's line had that recapd does not interpret. Kept until
/// an API call changes what it covers (see the ownership table in
/// docs/sillytavern.md, "Importing and exporting chats").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StMessage {
    /// Which members recapd reads the line had ([`has`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub has: u16,
    /// The line's other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Kept>,
    /// `extra`'s other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Kept>,
    /// `extra.auto_recap_memory`'s other members (and known ones that were
    /// `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Kept>,
    /// The file's current swipe text, when it was not `mes`; dropped when
    /// an API call changes the message's text or swipes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_swipe: Option<FileSwipe>,
    /// How many swipes have a `swipe_info` entry (the first ones).
    #[serde(skip_serializing_if = "is_zero")]
    pub info_len: u32,
    /// `swipe_info` entries past the last swipe, as a JSON array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info_rest: Option<Kept>,
}

impl StMessage {
    /// Whether the line had the member `bit` ([`has`]).
    pub fn had(&self, bit: u16) -> bool {
        self.has & bit != 0
    }

    /// Bytes kept (what counts against the text limit).
    pub fn kept_len(&self) -> usize {
        let swipe = match &self.current_swipe {
            Some(FileSwipe::Text(t)) => t.len(),
            _ => 0,
        };
        swipe
            + kept_len([
                self.keys.as_ref(),
                self.extra.as_ref(),
                self.data.as_ref(),
                self.info_rest.as_ref(),
            ])
    }
}

/// The `extra.auto_recap_memory` of the current swipe's `swipe_info`
/// entry where it was not the message's (the extension copies the data
/// there only when `swipe_id` is not 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OwnData {
    /// The entry had none.
    Missing,
    /// The entry's object.
    Kept(Kept),
}

/// What a `swipe_info` entry had that recapd does not interpret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StSwipe {
    /// Which members recapd reads the entry had ([`swipe_has`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub has: u8,
    /// The entry's other members (the whole entry when not an object).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Kept>,
    /// The entry's `extra`'s other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<Kept>,
    /// The entry's `extra.auto_recap_memory`'s other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Kept>,
    /// The current swipe's entry data where it differed from the message's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_data: Option<OwnData>,
}

impl StSwipe {
    /// Whether the entry had the member `bit` ([`swipe_has`]).
    pub fn had(&self, bit: u8) -> bool {
        self.has & bit != 0
    }

    /// Bytes kept (what counts against the text limit).
    pub fn kept_len(&self) -> usize {
        let own = match &self.own_data {
            Some(OwnData::Kept(k)) => k.len(),
            _ => 0,
        };
        own + kept_len([self.entry.as_ref(), self.extra.as_ref(), self.data.as_ref()])
    }
}

/// Which members a running-recap version lacked or had in a form recapd
/// does not write back itself ([`StVersion::lacks`]).
#[allow(missing_docs)] // each is the member of the same name
pub mod version_lacks {
    pub const TIMESTAMP: u8 = 1;
    pub const CONTENT: u8 = 1 << 1;
    pub const SCENE_COUNT: u8 = 1 << 2;
    pub const EXCLUDED_COUNT: u8 = 1 << 3;
    pub const PREV_SCENE_INDEX: u8 = 1 << 4;
    pub const NEW_SCENE_INDEX: u8 = 1 << 5;
}

/// What a running-recap version read from a file had that recapd does not
/// interpret (`event_keys`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StVersion {
    /// Members recapd reads that the version lacked or had as `null`
    /// ([`version_lacks`]); those stay unwritten (or kept).
    #[serde(skip_serializing_if = "is_zero")]
    pub lacks: u8,
    /// The version's other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Kept>,
    /// Its place in the file's `versions` (0 for the first): an export
    /// writes the file's versions in this order, whatever their numbers,
    /// then those added through the API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u32>,
}

/// Which members the header had ([`StHeader::has`]).
pub mod header_has {
    /// `chat_metadata`.
    pub const METADATA: u8 = 1;
    /// `chat_metadata.auto_recap_running_scene_recaps`.
    pub const RECAPS: u8 = 1 << 1;
    /// Its `current_version`.
    pub const CURRENT: u8 = 1 << 2;
    /// Its `versions`.
    pub const VERSIONS: u8 = 1 << 3;
}

/// What a file's header line had that recapd does not interpret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct StHeader {
    /// Which members recapd reads the header had ([`header_has`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub has: u8,
    /// The header's other members (`user_name`, `character_name`,
    /// `create_date`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Kept>,
    /// `chat_metadata`'s other members.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Kept>,
    /// The running-recaps object's other members (its `chat_id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recaps: Option<Kept>,
}

impl StHeader {
    /// Whether the header had the member `bit` ([`header_has`]).
    pub fn had(&self, bit: u8) -> bool {
        self.has & bit != 0
    }
}

/// How a chat's file began.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StFile {
    /// No header line (group chats of older SillyTavern versions): an
    /// export writes none unless it has running recaps to write.
    Headerless,
    /// A header line.
    Header(StHeader),
}

/// Serde for the chat row's `Option<Arc<StFile>>` (shared between the
/// chat and its row, so a commit does not copy it).
pub mod shared_file {
    use super::*;

    /// Writes the file's header as [`StFile`].
    pub fn serialize<S: serde::Serializer>(
        file: &Option<Arc<StFile>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        file.as_deref().serialize(serializer)
    }

    /// Reads what [`serialize`] wrote.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Arc<StFile>>, D::Error> {
        Ok(Option::<StFile>::deserialize(deserializer)?.map(Arc::new))
    }
}

/// A JSON object written member by member: the members recapd writes
/// first, then kept members whose names it did not write.
pub(super) struct Obj {
    out: String,
    written: Vec<&'static str>,
}

impl Obj {
    pub fn new() -> Obj {
        Obj {
            out: String::from("{"),
            written: Vec::new(),
        }
    }

    fn key(&mut self, key: &str) {
        if self.out.len() > 1 {
            self.out.push(',');
        }
        self.out.push_str(&json(key));
        self.out.push(':');
    }

    /// A member recapd writes.
    pub fn put(&mut self, key: &'static str, value: &(impl Serialize + ?Sized)) {
        self.put_raw(key, &json(value));
    }

    /// A member recapd writes, given as JSON text.
    pub fn put_raw(&mut self, key: &'static str, json_text: &str) {
        self.key(key);
        self.out.push_str(json_text);
        self.written.push(key);
    }

    /// The kept members, but those already written.
    pub fn kept(&mut self, kept: Option<&Kept>) {
        let Some(kept) = kept else { return };
        for (key, value) in kept.members() {
            if !self.written.contains(&key.as_str()) {
                self.key(&key);
                self.out.push_str(value.get());
            }
        }
    }

    /// Whether no member was written.
    pub fn is_empty(&self) -> bool {
        self.out.len() == 1
    }

    /// The object's text.
    pub fn finish(mut self) -> String {
        self.out.push('}');
        self.out
    }
}
