//! Helpers shared by the API contract tests (tests/api_*.rs), which check
//! the API contract of issue 3 behaviour by behaviour over a real socket, as
//! a client written only from the issue text sees it: a server where every
//! trigger refreshes at once, and one call per RPC.

use super::{Server, message};
use recapd::grpc::pb;
use tonic::Code;

pub const KEY: &str = "auto_recap_scene";

/// Tokens of `text` with o200k_base, the default vocabulary.
pub fn o200k(text: &str) -> u32 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as u32
}

/// A server on a fresh data directory where every trigger refreshes at once.
pub async fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

/// A message with one swipe, changed by `edit`.
pub fn msg_with(id: &str, text: &str, edit: impl FnOnce(&mut pb::Message)) -> pb::Message {
    let mut m = message(id, text);
    edit(&mut m);
    m
}

pub fn swiped(id: &str, swipe_id: u32, text: &str) -> pb::event::Kind {
    pb::event::Kind::MessageSwiped(pb::MessageSwiped {
        message_id: id.into(),
        swipe_id,
        text: text.into(),
    })
}

pub fn edited(id: &str, text: &str) -> pb::event::Kind {
    pb::event::Kind::MessageEdited(pb::MessageEdited {
        message_id: id.into(),
        text: text.into(),
    })
}

pub async fn try_inclusion(
    server: &mut Server,
    chat: &str,
) -> Result<Vec<pb::MessageInclusion>, tonic::Status> {
    server
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: chat.into(),
        })
        .await
        .map(|r| r.into_inner().messages)
}

pub async fn inclusion(server: &mut Server, chat: &str) -> Vec<pb::MessageInclusion> {
    try_inclusion(server, chat).await.expect("get inclusion")
}

/// The chat's message ids in chat order.
pub async fn order(server: &mut Server, chat: &str) -> Vec<String> {
    inclusion(server, chat)
        .await
        .into_iter()
        .map(|l| l.message_id)
        .collect()
}

/// Each message's `excluded_reason`, or "included".
pub async fn reasons(server: &mut Server, chat: &str) -> Vec<(String, String)> {
    inclusion(server, chat)
        .await
        .into_iter()
        .map(|l| {
            assert_eq!(
                l.included,
                l.excluded_reason.is_empty(),
                "included and excluded_reason disagree for {}: {l:?}",
                l.message_id
            );
            let reason = if l.included {
                "included".to_owned()
            } else {
                l.excluded_reason
            };
            (l.message_id, reason)
        })
        .collect()
}

pub fn expect_reasons(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(id, r)| ((*id).to_owned(), (*r).to_owned()))
        .collect()
}

pub async fn try_set_data(
    server: &mut Server,
    chat: &str,
    id: &str,
    data: pb::MessageData,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: chat.into(),
            message_id: id.into(),
            data: Some(data),
        })
        .await
        .map(|r| r.into_inner())
}

pub async fn set_data(
    server: &mut Server,
    chat: &str,
    id: &str,
    data: pb::MessageData,
) -> pb::MessageData {
    try_set_data(server, chat, id, data)
        .await
        .expect("set message data")
}

pub async fn set_memory(server: &mut Server, chat: &str, id: &str, memory: &str) {
    let data = pb::MessageData {
        memory: Some(memory.into()),
        ..Default::default()
    };
    set_data(server, chat, id, data).await;
}

pub async fn try_data(
    server: &mut Server,
    chat: &str,
    id: &str,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: chat.into(),
            message_id: id.into(),
        })
        .await
        .map(|r| r.into_inner())
}

pub async fn data(server: &mut Server, chat: &str, id: &str) -> pb::MessageData {
    try_data(server, chat, id).await.expect("get message data")
}

/// UpdateSettings for `chat` ("" = global): `clear` first, then `settings`.
pub async fn update(
    server: &mut Server,
    chat: &str,
    settings: pb::Settings,
    clear: &[&str],
) -> Result<pb::Settings, tonic::Status> {
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat.into(),
            settings: Some(settings),
            clear: clear.iter().map(|c| (*c).to_owned()).collect(),
        })
        .await
        .map(|r| r.into_inner())
}

/// GetSettings of `chat` ("" = global): the effective settings.
pub async fn settings_of(server: &mut Server, chat: &str) -> pb::Settings {
    server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("get settings")
        .into_inner()
}

pub async fn set_enabled(
    server: &mut Server,
    chat: &str,
    enabled: bool,
) -> pb::SetChatEnabledResponse {
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: chat.into(),
            enabled,
        })
        .await
        .expect("set chat enabled")
        .into_inner()
}

pub async fn refresh(server: &mut Server, chat: &str) -> Result<pb::Injection, tonic::Status> {
    server
        .injections
        .refresh(pb::RefreshRequest {
            chat_id: chat.into(),
        })
        .await
        .map(|r| r.into_inner())
}

pub async fn subscribe(
    server: &mut Server,
    chats: &[&str],
    max_updates: u32,
) -> tonic::Streaming<pb::Injection> {
    server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: chats.iter().map(|c| (*c).to_owned()).collect(),
            max_updates,
        })
        .await
        .expect("subscribe")
        .into_inner()
}

pub fn assert_code<T: std::fmt::Debug>(result: Result<T, tonic::Status>, code: Code, field: &str) {
    let status = result.expect_err("the request should be refused");
    assert_eq!(status.code(), code, "{status:?}");
    assert!(
        status.message().contains(field),
        "the status should name {field:?}: {:?}",
        status.message()
    );
}

/// The running-recap versions of `chat`.
pub async fn versions(server: &mut Server, chat: &str) -> pb::ListRunningRecapsResponse {
    server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("the chat's versions")
        .into_inner()
}

/// ExportChat's file of `chat`.
pub async fn exported(server: &mut Server, chat: &str) -> Vec<u8> {
    server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("exported")
        .into_inner()
        .jsonl
}
