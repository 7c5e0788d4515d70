//! World Info end to end over a real socket (issue 29), on the store the
//! harness selects (`RECAPD_TEST_STORE=postgres` runs every case on
//! PostgreSQL): books imported through LorebookService, named in a chat's
//! settings, activated by ScanWorldInfo and placed by RenderPrompt, as a
//! SillyTavern user would see them.
//!
//! Expected results cite SillyTavern 1.18.0 (commit 51ad27f):
//! `world-info.js:N` (WI) or `script.js:N` (SC).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tonic::transport::Channel;

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Status};

mod activation;
mod books;
mod hostile;
mod placement;
mod prompt_size;
mod replicas;
mod scan_bounds;
mod settings;
mod timed;

/// A fixture's path (tests/fixtures/world_info/README.md says where each
/// comes from).
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/world_info")
        .join(name)
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The `content` of Eldoria.json's entry `uid`, with `{{user}}` and
/// `{{char}}` substituted as the scan does at activation (WI:4939).
fn eldoria_content(uid: &str, user: &str, char: &str) -> String {
    let book: Value = serde_json::from_str(&fixture_text("Eldoria.json")).unwrap();
    book["entries"][uid]["content"]
        .as_str()
        .unwrap()
        .replace("{{user}}", user)
        .replace("{{char}}", char)
}

fn lorebooks(server: &Server) -> LorebookServiceClient<Channel> {
    LorebookServiceClient::new(server.channel.clone())
}

fn prompts(server: &Server) -> PromptServiceClient<Channel> {
    PromptServiceClient::new(server.channel.clone())
}

/// A fresh server where every refresh is immediate.
async fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

async fn import_book(server: &Server, name: &str, json: &str) {
    lorebooks(server)
        .import_lorebook(pb::ImportLorebookRequest {
            name: name.into(),
            json: json.into(),
        })
        .await
        .unwrap_or_else(|e| panic!("importing {name}: {e}"));
}

/// A book of `entries` (uid, fields), each filled with what the scan needs
/// beyond the fields given (SillyTavern's editor defaults, WI:4002-4045).
fn book(entries: &[(&str, Value)]) -> String {
    let mut all = serde_json::Map::new();
    for (uid, fields) in entries {
        let mut entry = json!({
            "uid": uid.parse::<u64>().unwrap(),
            "key": [],
            "keysecondary": [],
            "comment": "",
            "content": "",
            "constant": false,
            "selective": true,
            "selectiveLogic": 0,
            "order": 100,
            "position": 0,
            "disable": false,
            "probability": 100,
            "useProbability": true,
            "depth": 4,
            "role": 0,
        });
        for (k, v) in fields.as_object().unwrap() {
            entry[k] = v.clone();
        }
        all.insert((*uid).to_owned(), entry);
    }
    json!({ "entries": all }).to_string()
}

fn names(names: &[&str]) -> Option<pb::StringList> {
    Some(pb::StringList {
        values: names.iter().map(|n| (*n).to_owned()).collect(),
    })
}

/// Names `books` as the global books of `chat` ("" = every chat).
async fn global_books(server: &mut Server, chat: &str, books: &[&str]) {
    server
        .update_settings(
            chat,
            pb::Settings {
                world_info_global_books: names(books),
                ..Default::default()
            },
        )
        .await;
}

/// One chat message: `(id, speaker, text)`; the speaker "User" is the user.
fn said(id: &str, speaker: &str, text: &str) -> pb::Message {
    pb::Message {
        id: id.into(),
        name: speaker.into(),
        text: text.into(),
        is_user: speaker == "User",
        ..Default::default()
    }
}

/// Replaces `chat`'s messages.
async fn set_chat(server: &mut Server, chat: &str, messages: Vec<pb::Message>) {
    server
        .publish(chat, chat_changed(messages))
        .await
        .expect("publish");
}

/// Adds one message at the end of `chat`.
async fn add_message(server: &mut Server, chat: &str, message: pb::Message) {
    let kind = if message.is_user {
        pb::event::Kind::MessageSent(pb::MessageSent {
            message: Some(message),
        })
    } else {
        pb::event::Kind::MessageReceived(pb::MessageReceived {
            message: Some(message),
        })
    };
    server.publish(chat, kind).await.expect("publish");
}

fn scan_request(chat: &str) -> pb::ScanWorldInfoRequest {
    pb::ScanWorldInfoRequest {
        chat_id: chat.into(),
        ..Default::default()
    }
}

async fn try_scan(
    server: &Server,
    request: pb::ScanWorldInfoRequest,
) -> Result<pb::ScanWorldInfoResponse, tonic::Status> {
    lorebooks(server)
        .scan_world_info(request)
        .await
        .map(tonic::Response::into_inner)
}

async fn scan(server: &Server, request: pb::ScanWorldInfoRequest) -> pb::ScanWorldInfoResponse {
    try_scan(server, request).await.expect("scan")
}

/// `(book, uid)` of each activated entry, in the answer's order.
fn activated(response: &pb::ScanWorldInfoResponse) -> Vec<(String, String)> {
    response
        .activated
        .iter()
        .map(|e| (e.book.clone(), e.uid.clone()))
        .collect()
}

/// The activated uids, sorted (for sets whose order is not the point).
fn uids(response: &pb::ScanWorldInfoResponse) -> Vec<String> {
    let mut uids: Vec<String> = response.activated.iter().map(|e| e.uid.clone()).collect();
    uids.sort();
    uids
}

/// Waits until the chat's `key` injection holds `needle` (refreshes run
/// after the call that causes them answers).
async fn injection_holds(server: &mut Server, chat: &str, key: &str, needle: &str) {
    for _ in 0..100 {
        let injection = server
            .injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat.into(),
                key: Some(key.into()),
            })
            .await
            .expect("get injection")
            .into_inner();
        if injection.text.contains(needle) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the {key} injection of {chat} never held {needle:?}");
}

/// Adds a tenant's bearer token to each call (cloned with its client).
#[derive(Clone)]
struct Auth(&'static str);

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", self.0).parse().unwrap(),
        );
        Ok(request)
    }
}

/// One tenant's clients, for the tests of one tenant's cost against
/// another's (each test module sets up its chats in an `impl Tenant` of
/// its own).
struct Tenant {
    events: EventServiceClient<InterceptedService<Channel, Auth>>,
    settings: SettingsServiceClient<InterceptedService<Channel, Auth>>,
    books: LorebookServiceClient<InterceptedService<Channel, Auth>>,
}

impl Tenant {
    fn new(channel: &Channel, token: &'static str) -> Tenant {
        Tenant {
            events: EventServiceClient::with_interceptor(channel.clone(), Auth(token)),
            settings: SettingsServiceClient::with_interceptor(channel.clone(), Auth(token)),
            books: LorebookServiceClient::with_interceptor(channel.clone(), Auth(token)),
        }
    }
}
