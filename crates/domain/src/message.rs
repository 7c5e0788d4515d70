//! One chat message, its swipes, and the ST-Auto-Recap data each swipe carries.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use super::tokens::CounterKey;
use super::verbatim::{StMessage, StSwipe, has, swipe_has};
use super::{DomainError, Limits, ids};

mod scene_versions;
mod swipes;

pub use scene_versions::MAX_SCENE_RECAP_VERSIONS;
use scene_versions::SceneRecapUpdate;

pub use swipes::Swipes;

/// ST-Auto-Recap's data on one swipe of a message. Every field has presence:
/// `None` is "never set", which differs from an empty string or `false`.
/// Stored rows leave out the fields never set (rows that spell them out as
/// `null`, as recapd wrote them before, read the same).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)] // each field is the API's MessageData field of the same name
pub struct MessageData {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclude: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edited: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_break: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_break_visible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_break_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_recap_memory: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_auto_recap_system_memory: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_recap_versions: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scene_recap_current_index: Option<u32>,
}

impl MessageData {
    /// Sets every field that is present in `update`, or none when the
    /// scene-recap fields are refused (see
    /// [`MessageData::merge_scene_recap`]'s rules: a scene recap that
    /// differs from the current one is a new version).
    pub fn merge(&mut self, update: &MessageData) -> Result<(), DomainError> {
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
        } = update;
        self.merge_scene_recap(SceneRecapUpdate {
            versions: scene_recap_versions.as_ref(),
            index: *scene_recap_current_index,
            memory: scene_recap_memory.as_ref(),
        })?;
        macro_rules! take {
            ($($field:ident),*) => { $(if $field.is_some() { self.$field = $field.clone(); })* };
        }
        take!(
            memory,
            prefill,
            exclude,
            error,
            reasoning,
            edited,
            scene_break,
            scene_break_visible,
            scene_break_name,
            is_auto_recap_system_memory
        );
        Ok(())
    }

    /// ST-Auto-Recap's `edit_memory`, a memory edited by hand: nothing when
    /// `text` is the memory already; else the memory becomes `text`, the
    /// error, reasoning and prefill are unset, `edited` says whether the
    /// text is non-empty, and `exclude` is cleared when the new or the old
    /// memory is empty.
    pub fn edit_memory(&mut self, text: &str) {
        let old = self.memory.as_deref().unwrap_or("");
        if old == text {
            return;
        }
        if old.is_empty() || text.is_empty() {
            self.exclude = Some(false);
        }
        self.memory = Some(text.to_owned());
        self.error = None;
        self.reasoning = None;
        self.prefill = None;
        self.edited = Some(!text.is_empty());
    }

    /// ST-Auto-Recap's `clear_memory`: unsets memory, error, reasoning and
    /// prefill; sets edited and exclude to false.
    pub fn clear_memory(&mut self) {
        self.memory = None;
        self.error = None;
        self.reasoning = None;
        self.prefill = None;
        self.edited = Some(false);
        self.exclude = Some(false);
    }

    /// The data a new swipe of this message starts with: a copy of this
    /// (the current swipe's) data with [`MessageData::clear_memory`] applied,
    /// as SillyTavern keeps the message's data on a new swipe and the
    /// extension then clears only the memory fields. Scene-break fields,
    /// the scene recap and the system-memory flag carry over.
    pub fn for_new_swipe(&self) -> MessageData {
        let mut data = self.clone();
        data.clear_memory();
        data
    }

    /// A scene break that counts for auto-hide: the flag is set and its
    /// visibility is not explicitly false.
    pub fn is_visible_scene_break(&self) -> bool {
        self.scene_break == Some(true) && self.scene_break_visible != Some(false)
    }

    /// Whether the swipe carries a non-empty scene recap.
    pub fn has_scene_recap(&self) -> bool {
        self.scene_recap_memory
            .as_deref()
            .is_some_and(|m| !m.is_empty())
    }

    /// `get_memory`: the memory, with `prefill` in front only when
    /// `show_prefill` is on; `None` when that text is empty. With
    /// `show_prefill` on, a prefill alone (no memory) is the memory text.
    pub fn memory_text(&self, show_prefill: bool) -> Option<String> {
        let memory = self.memory.as_deref().unwrap_or("");
        let text = match (show_prefill, self.prefill.as_deref()) {
            (true, Some(prefill)) => format!("{prefill}{memory}"),
            _ => memory.to_owned(),
        };
        (!text.is_empty()).then_some(text)
    }

    /// Refuses text fields over the configured maximum.
    pub fn check(&self, limits: &Limits) -> Result<(), DomainError> {
        let fields = [
            ("data.memory", &self.memory),
            ("data.prefill", &self.prefill),
            ("data.error", &self.error),
            ("data.reasoning", &self.reasoning),
            ("data.scene_break_name", &self.scene_break_name),
            ("data.scene_recap_memory", &self.scene_recap_memory),
        ];
        for (field, value) in fields {
            if let Some(text) = value {
                limits.check_text(field, text)?;
            }
        }
        if let Some(versions) = &self.scene_recap_versions {
            if versions.len() > MAX_SCENE_RECAP_VERSIONS {
                return Err(DomainError::invalid(
                    "data.scene_recap_versions",
                    format!(
                        "{} versions is over the maximum of {MAX_SCENE_RECAP_VERSIONS}",
                        versions.len()
                    ),
                ));
            }
            for text in versions {
                limits.check_text("data.scene_recap_versions[]", text)?;
            }
        }
        Ok(())
    }
}

/// No recap data: what a [`SwipeData`] without any reads as.
static NO_DATA: MessageData = MessageData {
    memory: None,
    prefill: None,
    exclude: None,
    error: None,
    reasoning: None,
    edited: None,
    scene_break: None,
    scene_break_visible: None,
    scene_break_name: None,
    scene_recap_memory: None,
    is_auto_recap_system_memory: None,
    scene_recap_versions: None,
    scene_recap_current_index: None,
};

/// A swipe's recap data, boxed and only when it holds something: most
/// swipes carry none, and a resident chat then pays one pointer for it
/// instead of the 184 bytes of a [`MessageData`]. Reads (and compares,
/// and is stored) as a [`MessageData`]; changing it through `DerefMut`
/// boxes it.
#[derive(Clone, Default)]
pub struct SwipeData(Option<Box<MessageData>>);

impl SwipeData {
    /// The data, by value.
    pub fn into_inner(self) -> MessageData {
        self.0.map(|data| *data).unwrap_or_default()
    }

    /// Whether no field is set.
    pub fn is_empty(&self) -> bool {
        **self == NO_DATA
    }

    /// Lets go of the box when the data holds nothing.
    pub fn compact(&mut self) {
        if self.0.as_deref().is_some_and(|data| *data == NO_DATA) {
            self.0 = None;
        }
    }

    /// The box, for counting what it holds.
    pub(crate) fn boxed(&self) -> &Option<Box<MessageData>> {
        &self.0
    }
}

impl From<MessageData> for SwipeData {
    fn from(data: MessageData) -> SwipeData {
        let mut boxed = SwipeData(Some(Box::new(data)));
        boxed.compact();
        boxed
    }
}

impl std::ops::Deref for SwipeData {
    type Target = MessageData;
    fn deref(&self) -> &MessageData {
        self.0.as_deref().unwrap_or(&NO_DATA)
    }
}

impl std::ops::DerefMut for SwipeData {
    fn deref_mut(&mut self) -> &mut MessageData {
        self.0.get_or_insert_with(Box::default)
    }
}

impl PartialEq for SwipeData {
    fn eq(&self, other: &SwipeData) -> bool {
        **self == **other
    }
}

impl Eq for SwipeData {}

impl PartialEq<MessageData> for SwipeData {
    fn eq(&self, other: &MessageData) -> bool {
        **self == *other
    }
}

impl std::fmt::Debug for SwipeData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for SwipeData {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SwipeData {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        MessageData::deserialize(deserializer).map(SwipeData::from)
    }
}

/// One alternative text of a message, with its own recap data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Swipe {
    /// The swipe's text.
    pub text: String,
    /// The swipe's recap data; left out of a stored row when nothing is
    /// set (most swipes).
    #[serde(default, skip_serializing_if = "SwipeData::is_empty")]
    pub data: SwipeData,
    /// What the swipe's `swipe_info` entry in a SillyTavern file had that
    /// recapd keeps as it was; `None` for swipes made through the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub st: Option<Box<StSwipe>>,
}

/// A message of a chat. Invariant: `swipes` is never empty and
/// `swipe_id < swipes.len()`; the current text and data are those of
/// `swipes[swipe_id]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Client-chosen id, unique in the chat.
    pub id: CompactString,
    /// Speaker name.
    pub name: CompactString,
    /// Written by the user.
    pub is_user: bool,
    /// Hidden by hand.
    pub hidden: bool,
    /// A narrator message.
    pub is_narrator: bool,
    /// A thought message (Stepped Thinking).
    pub is_thoughts: bool,
    /// The writing character, for group chats.
    pub character_key: CompactString,
    /// All swipes; never empty. The only swipe (almost every message has
    /// one) is inline, more are one boxed slice; a new swipe goes through
    /// [`Message::push_swipe`].
    pub swipes: Swipes,
    /// Index of the current swipe ([`Message::current_swipe`] as a
    /// `usize`); 32 bits keep a message within 136 bytes.
    pub swipe_id: u32,
    /// Token count of the current text, cached per counter (by its key);
    /// cleared whenever the text changes.
    #[serde(skip)]
    pub text_tokens: Option<(CounterKey, u32)>,
    /// What the message's line in a SillyTavern file had that recapd keeps
    /// as it was, for the export; `None` for messages made through the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub st: Option<Box<StMessage>>,
}

/// Every resident message pays this inline in its chat's message list
/// (issue 15): a message over 136 bytes does not compile. 136 rather than
/// the 112 of a boxed swipe list: the only swipe moved inline (24 bytes
/// more than the list's pointer and length) and no longer costs its own
/// 48-byte chunk, a net 24 bytes less per one-swipe message.
const _: () = assert!(std::mem::size_of::<Message>() <= 136);

impl Message {
    /// The current swipe's text.
    pub fn text(&self) -> &str {
        self.current().map(|s| s.text.as_str()).unwrap_or("")
    }

    /// The current swipe's recap data.
    pub fn data(&self) -> &MessageData {
        self.current().map(|s| &*s.data).unwrap_or(&NO_DATA)
    }

    /// The current swipe's recap data, for changing it.
    pub fn data_mut(&mut self) -> &mut MessageData {
        // `Swipes` is never empty: no underflow.
        let last = self.swipes.len() - 1;
        let index = self.current_swipe().min(last);
        &mut self.swipes[index].data
    }

    /// Index of the current swipe.
    pub fn current_swipe(&self) -> usize {
        // Lossless: a usize holds every u32 on the targets recapd builds for.
        self.swipe_id as usize
    }

    fn current(&self) -> Option<&Swipe> {
        self.swipes.get(self.current_swipe())
    }

    /// Replaces the text, name and flags with those of `incoming`, keeping
    /// the recap data of every swipe index both have (new swipes start
    /// empty) and what a SillyTavern file had; the file's own current swipe
    /// text is dropped when the swipes' texts or the current swipe change.
    pub fn take_content_of(&mut self, incoming: Message) {
        let same_texts = self.swipe_id == incoming.swipe_id
            && self.swipes.len() == incoming.swipes.len()
            && self
                .swipes
                .iter()
                .zip(&incoming.swipes)
                .all(|(old, new)| old.text == new.text);
        let old_swipes = std::mem::take(&mut self.swipes);
        let mut swipes = incoming.swipes;
        for (swipe, old) in swipes.iter_mut().zip(old_swipes) {
            swipe.data = old.data;
            swipe.st = old.st;
        }
        let mut st = self.st.take();
        if !same_texts {
            forget_file_swipe(&mut st);
        }
        *self = Message {
            swipes,
            text_tokens: None,
            st,
            ..incoming
        };
    }

    /// The current swipe's text or the current swipe changed through the
    /// API: the file's own `swipes[swipe_id]` is no longer written back.
    pub fn text_changed(&mut self) {
        self.text_tokens = None;
        forget_file_swipe(&mut self.st);
    }

    /// Adds a swipe made through the API; it gets a `swipe_info` entry in
    /// an export when every earlier swipe has one.
    /// Its entry repeats the members of the message's
    /// `extra.auto_recap_memory` recapd keeps, as SillyTavern keeps the
    /// message's `extra` on a new swipe.
    pub fn push_swipe(&mut self, mut swipe: Swipe) {
        let count = self.swipes.len();
        if swipe.st.is_none()
            && let Some(kept) = self.st.as_deref().and_then(|st| st.data.clone())
        {
            swipe.st = Some(Box::new(StSwipe {
                has: swipe_has::EXTRA | swipe_has::DATA,
                data: Some(kept),
                ..StSwipe::default()
            }));
        }
        self.swipes.push(swipe);
        if let Some(st) = self.st.as_deref_mut()
            && st.had(has::SWIPE_INFO)
            && st.info_len as usize == count
        {
            st.info_len += 1;
        }
    }

    /// The current swipe goes from `from` to `to` through the API. As
    /// SillyTavern copies the message's `extra` into the swipe it leaves
    /// and the new swipe's into the message, the members of
    /// `extra.auto_recap_memory` recapd keeps follow the same way (recapd's
    /// own fields follow with the swipes' data).
    pub fn follow_swipe(&mut self, from: usize, to: usize) {
        let Some(st) = self.st.as_deref_mut() else {
            return;
        };
        // A new swipe keeps the message's `extra` (see [`Message::push_swipe`]).
        let new = to >= self.swipes.len();
        let message_kept = if new { st.data.clone() } else { st.data.take() };
        if let Some(swipe) = self.swipes.get_mut(from) {
            match swipe.st.as_deref_mut() {
                Some(entry) => {
                    entry.own_data = None;
                    entry.data = message_kept;
                }
                // The swipe left had no entry of its own (a file with
                // fewer `swipe_info` entries than swipes): it gets one, so
                // the kept members come back when it is current again.
                None if message_kept.is_some() => {
                    swipe.st = Some(Box::new(StSwipe {
                        has: swipe_has::EXTRA | swipe_has::DATA,
                        data: message_kept,
                        ..StSwipe::default()
                    }));
                }
                None => {}
            }
        }
        if !new {
            st.data = self
                .swipes
                .get(to)
                .and_then(|s| s.st.as_deref())
                .and_then(|entry| entry.data.clone());
        }
    }

    /// The current swipe's data was set through the API: as the extension
    /// copies a message's data into its current `swipe_info` entry when
    /// `swipe_id` is not 0, that entry's own data from the file is dropped
    /// then (and kept for swipe 0).
    pub fn data_changed(&mut self) {
        if self.swipe_id == 0 {
            return;
        }
        let current = self.current_swipe();
        if let Some(st) = self
            .swipes
            .get_mut(current)
            .and_then(|s| s.st.as_deref_mut())
        {
            st.own_data = None;
        }
    }
}

/// A message as a client describes it, before it is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(missing_docs)] // each field is the API's Message field of the same name
pub struct NewMessage {
    pub id: String,
    pub name: String,
    pub text: String,
    pub is_user: bool,
    pub hidden: bool,
    pub is_narrator: bool,
    pub is_thoughts: bool,
    pub character_key: String,
    pub swipes: Vec<String>,
    pub swipe_id: u32,
}

impl NewMessage {
    /// Checks the message and builds it. Without `swipes` the message has one
    /// swipe, `text`; with `swipes`, `swipe_id` must index them and a
    /// non-empty `text` replaces the current swipe's text. `field` prefixes
    /// field names in errors (e.g. `event.message_sent.message`).
    pub fn build(self, field: &str, limits: &Limits) -> Result<Message, DomainError> {
        let NewMessage {
            id,
            name,
            text,
            is_user,
            hidden,
            is_narrator,
            is_thoughts,
            character_key,
            swipes,
            swipe_id,
        } = self;
        // Field names are formatted only for an error.
        ids::check_message_id_in(format_args!("{field}.id"), &id)?;
        limits.check_text(format_args!("{field}.text"), &text)?;
        limits.check_text(format_args!("{field}.name"), &name)?;
        limits.check_text(format_args!("{field}.character_key"), &character_key)?;
        for swipe in &swipes {
            limits.check_text(format_args!("{field}.swipes"), swipe)?;
        }
        let (mut swipes, swipe_id) = if swipes.is_empty() {
            if swipe_id != 0 {
                return Err(DomainError::invalid(
                    format!("{field}.swipe_id"),
                    "must be 0 when swipes is empty",
                ));
            }
            (vec![text.clone()], 0)
        } else {
            let index = usize::try_from(swipe_id).unwrap_or(usize::MAX);
            if index >= swipes.len() {
                return Err(DomainError::invalid(
                    format!("{field}.swipe_id"),
                    format!("{swipe_id} is not an index of the {} swipes", swipes.len()),
                ));
            }
            (swipes, index)
        };
        let current = u32::try_from(swipe_id)
            .map_err(|_| DomainError::invalid(format!("{field}.swipe_id"), "too many swipes"))?;
        if !text.is_empty() {
            swipes[swipe_id] = text;
        }
        Ok(Message {
            id: id.into(),
            name: name.into(),
            is_user,
            hidden,
            is_narrator,
            is_thoughts,
            character_key: character_key.into(),
            swipes: swipes
                .into_iter()
                .map(|text| Swipe {
                    text,
                    data: SwipeData::default(),
                    st: None,
                })
                .collect(),
            swipe_id: current,
            text_tokens: None,
            st: None,
        })
    }
}

fn forget_file_swipe(st: &mut Option<Box<StMessage>>) {
    if let Some(st) = st.as_deref_mut() {
        st.current_swipe = None;
    }
}

#[cfg(test)]
mod tests;
