//! Conversions between the wire types (`pb`) and the domain. Wire-to-domain
//! conversions destructure every field, so a field added to the proto does
//! not compile until it is handled here.

use crate::domain::time::{UnixMicros, UnixMillis};
use prost_types::Timestamp;

use super::pb;
use crate::domain::chat::ChatEvent;
use crate::domain::inclusion::MessageInclusion;
use crate::domain::message::{Message, MessageData, NewMessage};
use crate::domain::recaps::{NewRecap, RecapVersion};
use crate::domain::refresh::Injection;
use crate::domain::{DomainError, Limits, ids};
use crate::engine::RecapList;

mod chats;
mod enums;
mod jobs;
pub mod prompt;
mod settings;
pub mod world_info;

pub use chats::{chat_page_after, chat_page_token};
pub use jobs::{
    DEFAULT_PAGE_SIZE, MAX_MESSAGE_IDS, MAX_PAGE_SIZE, job_id, job_kind, job_state, job_states,
    page_after, page_size, page_token, unique_ids,
};
/// Page tokens' hex form, shared with the lorebook service's tokens.
pub(crate) use jobs::{hex, unhex};
pub use settings::{patch_settings, settings_patch};

/// The wire timestamp of an instant stored in milliseconds.
pub fn timestamp(at: UnixMillis) -> Timestamp {
    timestamp_us(at.to_micros())
}

/// The wire timestamp of an instant stored in microseconds.
pub fn timestamp_us(at: UnixMicros) -> Timestamp {
    let us = at.0;
    Timestamp {
        seconds: us.div_euclid(1_000_000),
        nanos: i32::try_from(us.rem_euclid(1_000_000) * 1000).unwrap_or(0),
    }
}

/// Checks a request's `chat_id`.
pub fn chat_id(id: &str) -> Result<(), DomainError> {
    ids::check_chat_id("chat_id", id)
}

/// Checks a request's `message_id`.
pub fn message_id(id: &str) -> Result<(), DomainError> {
    ids::check_message_id("message_id", id)
}

fn new_message(message: pb::Message, field: &str, limits: &Limits) -> Result<Message, DomainError> {
    let pb::Message {
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
    } = message;
    NewMessage {
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
    }
    .build(field, limits)
}

fn new_messages(
    messages: Vec<pb::Message>,
    field: &str,
    limits: &Limits,
) -> Result<Vec<Message>, DomainError> {
    messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| new_message(m, &format!("{field}[{i}]"), limits))
        .collect()
}

fn required_message(
    message: Option<pb::Message>,
    field: &str,
    limits: &Limits,
) -> Result<Message, DomainError> {
    let message = message.ok_or_else(|| DomainError::invalid(field, "is required"))?;
    new_message(message, field, limits)
}

/// What a `ChatChanged` event says of its chat's character and group
/// (each `None` when empty: left as it is), checked; `(None, None)` for
/// any other event.
pub fn chat_identity(
    event: Option<&pb::Event>,
) -> Result<(Option<String>, Option<String>), DomainError> {
    let Some(pb::Event {
        kind: Some(pb::event::Kind::ChatChanged(changed)),
        ..
    }) = event
    else {
        return Ok((None, None));
    };
    let given = |field: &str, value: &str| -> Result<Option<String>, DomainError> {
        if value.is_empty() {
            return Ok(None);
        }
        ids::check_chat_id(field, value)?;
        Ok(Some(value.to_owned()))
    };
    Ok((
        given("event.chat_changed.character_key", &changed.character_key)?,
        given("event.chat_changed.group_id", &changed.group_id)?,
    ))
}

/// A `Publish` event: its chat id and the checked domain event.
pub fn event(
    event: Option<pb::Event>,
    limits: &Limits,
) -> Result<(String, ChatEvent), DomainError> {
    use pb::event::Kind;
    let pb::Event { chat_id, kind } =
        event.ok_or_else(|| DomainError::invalid("event", "is required"))?;
    ids::check_chat_id("event.chat_id", &chat_id)?;
    let kind = kind.ok_or_else(|| DomainError::invalid("event.kind", "is required (one of chat_changed, message_sent, message_received, message_edited, message_deleted, message_swiped, more_messages_loaded, refresh_requested)"))?;
    let event =
        match kind {
            // The chat's character and group are read by `chat_identity`.
            Kind::ChatChanged(pb::ChatChanged {
                messages,
                character_key: _,
                group_id: _,
            }) => ChatEvent::ChatChanged(new_messages(
                messages,
                "event.chat_changed.messages",
                limits,
            )?),
            Kind::MessageSent(pb::MessageSent { message }) => ChatEvent::MessageSent(
                required_message(message, "event.message_sent.message", limits)?,
            ),
            Kind::MessageReceived(pb::MessageReceived { message }) => ChatEvent::MessageReceived(
                required_message(message, "event.message_received.message", limits)?,
            ),
            Kind::MessageEdited(pb::MessageEdited { message_id, text }) => {
                ids::check_message_id("event.message_edited.message_id", &message_id)?;
                limits.check_text("event.message_edited.text", &text)?;
                ChatEvent::MessageEdited { message_id, text }
            }
            Kind::MessageDeleted(pb::MessageDeleted { message_id }) => {
                ids::check_message_id("event.message_deleted.message_id", &message_id)?;
                ChatEvent::MessageDeleted { message_id }
            }
            Kind::MessageSwiped(pb::MessageSwiped {
                message_id,
                swipe_id,
                text,
            }) => {
                ids::check_message_id("event.message_swiped.message_id", &message_id)?;
                limits.check_text("event.message_swiped.text", &text)?;
                ChatEvent::MessageSwiped {
                    message_id,
                    swipe_id,
                    text,
                }
            }
            Kind::MoreMessagesLoaded(pb::MoreMessagesLoaded { messages }) => {
                ChatEvent::MoreMessagesLoaded(new_messages(
                    messages,
                    "event.more_messages_loaded.messages",
                    limits,
                )?)
            }
            Kind::RefreshRequested(pb::RefreshRequested {}) => ChatEvent::RefreshRequested,
        };
    Ok((chat_id, event))
}

impl From<pb::MessageData> for MessageData {
    fn from(data: pb::MessageData) -> Self {
        let pb::MessageData {
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
        MessageData {
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
            // A repeated field has no presence: an empty list is "not
            // given" (an empty list cannot be set; an empty scene recap
            // can).
            scene_recap_versions: (!scene_recap_versions.is_empty())
                .then_some(scene_recap_versions),
            scene_recap_current_index,
        }
    }
}

impl From<MessageData> for pb::MessageData {
    fn from(data: MessageData) -> Self {
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
        pb::MessageData {
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
            scene_recap_versions: scene_recap_versions.unwrap_or_default(),
            scene_recap_current_index,
        }
    }
}

fn optional_id(field: &str, id: String) -> Result<Option<String>, DomainError> {
    if id.is_empty() {
        return Ok(None);
    }
    ids::check_message_id(field, &id)?;
    Ok(Some(id))
}

/// An `AddRunningRecap` request: its chat id and the new version.
pub fn new_recap(request: pb::AddRunningRecapRequest) -> Result<(String, NewRecap), DomainError> {
    let pb::AddRunningRecapRequest {
        chat_id,
        content,
        scene_count,
        excluded_count,
        prev_scene_message_id,
        new_scene_message_id,
    } = request;
    self::chat_id(&chat_id)?;
    let recap = NewRecap {
        content,
        scene_count,
        excluded_count,
        prev_scene_message_id: optional_id("prev_scene_message_id", prev_scene_message_id)?,
        new_scene_message_id: optional_id("new_scene_message_id", new_scene_message_id)?,
    };
    Ok((chat_id, recap))
}

impl From<&RecapVersion> for pb::RunningRecapVersion {
    fn from(v: &RecapVersion) -> Self {
        pb::RunningRecapVersion {
            version: v.version,
            created_at: Some(timestamp(v.created_at_ms)),
            content: v.content.clone(),
            scene_count: v.scene_count,
            excluded_count: v.excluded_count,
            prev_scene_message_id: v.prev_scene_message_id.clone().unwrap_or_default(),
            new_scene_message_id: v.new_scene_message_id.clone().unwrap_or_default(),
            carried_from_chat_id: v.carried_from.clone().unwrap_or_default(),
        }
    }
}

impl From<&RecapList> for pb::ListRunningRecapsResponse {
    fn from(list: &RecapList) -> Self {
        pb::ListRunningRecapsResponse {
            current_version: list.current,
            versions: list.versions.iter().map(Into::into).collect(),
        }
    }
}

fn enum_value<E: TryFrom<i32>>(field: &str, value: i32) -> Result<E, DomainError> {
    if value == 0 {
        return Err(DomainError::invalid(field, "must not be UNSPECIFIED"));
    }
    E::try_from(value)
        .map_err(|_| DomainError::invalid(field, format!("{value} is not a known value")))
}

impl From<&Injection> for pb::Injection {
    fn from(i: &Injection) -> Self {
        pb::Injection {
            chat_id: i.chat.id.clone(),
            key: i.key.as_str().to_owned(),
            text: i.text.clone(),
            position: pb::InjectionPosition::from(i.position).into(),
            depth: i32::try_from(i.depth).unwrap_or(i32::MAX),
            role: pb::InjectionRole::from(i.role).into(),
            scan: i.scan,
            enabled: i.enabled,
            revision: i.revision,
            running_recap_version: i.running_recap_version,
            token_count: i.token_count,
            auto_hidden_count: i.auto_hidden_count,
            trigger: i
                .trigger
                .map_or(pb::RefreshTrigger::Unspecified, pb::RefreshTrigger::from)
                .into(),
            refreshed_at: (i.refreshed_at_us != UnixMicros::EPOCH)
                .then(|| timestamp_us(i.refreshed_at_us)),
            deleted: i.deleted,
        }
    }
}

impl From<&MessageInclusion> for pb::MessageInclusion {
    fn from(m: &MessageInclusion) -> Self {
        pb::MessageInclusion {
            message_id: m.message_id.clone(),
            included: m.included,
            hidden: m.hidden,
            token_count: m.token_count,
            excluded_reason: m
                .excluded
                .map(|e| e.reason().to_owned())
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests;
