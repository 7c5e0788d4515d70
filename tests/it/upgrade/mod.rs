//! Upgrades of data written by a recapd of the first storage layout (issue
//! 12): a real recapd started on it must show each tenant exactly what it
//! had, and go on from there.
//!
//! The old layout is SQLite's schema version 1 and PostgreSQL's migrations
//! 1 and 2. A chat of tenant T was stored under ONE key, `T`, U+001F, then
//! the chat id (the default tenant's under the bare chat id); a tenant's
//! global settings in `kv` under `global_settings` (default tenant) or
//! `global_settings:T`; and on PostgreSQL the claim clock of a tenant's
//! global settings in `chat_clock`, under U+001E `global settings` U+001F T.
//! The rows below are crafted in that layout, since no recapd of it is at
//! hand to write them.
//!
//! With authentication on, every tenant comes from the tokens file, whose
//! names are never empty: the default tenant is reachable only with
//! authentication off. Each test therefore starts recapd twice on the same
//! data: without authentication for the default tenant, then with a tokens
//! file for "acme".
//!
//! This module holds the old data and the checks both stores share; each
//! store's own tests are in its submodule.

use std::path::Path;

use crate::common::*;
use recapd::config::Config;
use recapd::domain::Limits;
use recapd::domain::message::NewMessage;
use recapd::grpc::pb;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Status};

mod postgres;
mod sqlite;

/// The chat id both tenants use.
const CHAT: &str = "c";
/// Acme's token in the tokens file.
const ACME_TOKEN: &str = "acme-upgrade-token-0123456789";

/// One tenant's data in the old layout, and what it must look like after.
struct OldTenant {
    /// "" for the default tenant.
    name: &'static str,
    /// (message id, text), in chat order.
    messages: &'static [(&'static str, &'static str)],
    /// The content of the running recap (version 0, current).
    recap: &'static str,
    /// The text of the injection the old recapd stored (revision 4).
    injection_text: &'static str,
    /// Whether the chat is enabled (acme's was disabled by SetChatEnabled).
    enabled: bool,
    /// The tenant's global depth.
    depth: i32,
    /// The claim clock of the tenant's global-settings claim (PostgreSQL).
    settings_clock: i64,
}

const DEFAULT: OldTenant = OldTenant {
    name: "",
    messages: &[("m1", "the default tenant's first"), ("m2", "and second")],
    recap: "the default tenant's recap",
    injection_text: "the default tenant's old injection",
    enabled: true,
    depth: 3,
    settings_clock: 2,
};

const ACME: OldTenant = OldTenant {
    name: "acme",
    messages: &[("a1", "acme's only message")],
    recap: "acme's recap",
    injection_text: "acme's old injection",
    enabled: false,
    depth: 7,
    settings_clock: 5,
};

/// The revision of both chats in the old rows; the next refresh answers 5.
const OLD_REVISION: u64 = 4;
/// The claim clock of both chats' in `chat_clock` (PostgreSQL).
const OLD_CHAT_CLOCK: i64 = 9;

impl OldTenant {
    /// The one key the old layout stored the tenant's chat `chat` under.
    fn joined_key(&self, chat: &str) -> String {
        if self.name.is_empty() {
            chat.to_owned()
        } else {
            format!("{}\u{1f}{chat}", self.name)
        }
    }

    /// The `kv` key of the tenant's global settings in the old layout.
    fn settings_key(&self) -> String {
        if self.name.is_empty() {
            "global_settings".to_owned()
        } else {
            format!("global_settings:{}", self.name)
        }
    }

    /// The `chat_clock` key of the tenant's global-settings claim in the old
    /// PostgreSQL layout.
    fn settings_claim_key(&self) -> String {
        format!("\u{1e}global settings\u{1f}{}", self.name)
    }

    /// The tenant's rows in the old layout, as (table, key, other columns
    /// as text); each store writes them with its own column types.
    fn rows(&self) -> OldRows {
        let key = self.joined_key(CHAT);
        let messages = self
            .messages
            .iter()
            .zip(1..)
            .map(|(&(id, text), seq)| (key.clone(), id.to_owned(), seq, message_body(id, text)))
            .collect();
        // A chat's row as the old recapd wrote it: its revision, its
        // current recap, and the latest injection, whose `chat_id` was the
        // joined key (the new layout no longer stores it).
        let chat_body = serde_json::json!({
            "revision": OLD_REVISION,
            "current_recap": 0,
            "injection": {
                "chat_id": key,
                "text": self.injection_text,
                "position": if self.enabled { "BeforePrompt" } else { "InPrompt" },
                "depth": 2,
                "role": "System",
                "scan": false,
                "enabled": self.enabled,
                "revision": OLD_REVISION,
                "running_recap_version": 0,
                "token_count": 5,
                "auto_hidden_count": 0,
                "trigger": "RefreshRequested",
                "refreshed_at_us": 1_700_000_000_000_000_i64
            }
        });
        let recap_body = serde_json::json!({
            "version": 0,
            "created_at_ms": 1_700_000_000_000_i64,
            "content": self.recap,
            "scene_count": 1,
            "excluded_count": 0,
            "prev_scene_message_id": null,
            "new_scene_message_id": null
        });
        OldRows {
            chat: (key.clone(), chat_body.to_string()),
            messages,
            recap: (key.clone(), recap_body.to_string()),
            chat_settings: (!self.enabled).then(|| (key, r#"{"enabled":false}"#.to_owned())),
            global_settings: (
                self.settings_key(),
                format!(r#"{{"depth":{}}}"#, self.depth),
            ),
        }
    }
}

/// One tenant's rows in the old layout (keys joined).
struct OldRows {
    /// `chats`: (chat_id, body); needs_refresh is false.
    chat: (String, String),
    /// `messages`: (chat_id, message_id, seq, body).
    messages: Vec<(String, String, i64, String)>,
    /// `recaps`: (chat_id, body) of version 0.
    recap: (String, String),
    /// `chat_settings`: (chat_id, body), when the chat has settings.
    chat_settings: Option<(String, String)>,
    /// `kv`: (key, value) of the global settings.
    global_settings: (String, String),
}

/// A message's stored body: the JSON of recapd's domain message, which
/// the upgrade leaves as it is.
fn message_body(id: &str, text: &str) -> String {
    let message = NewMessage {
        id: id.into(),
        name: "Alice".into(),
        text: text.into(),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("a valid message");
    serde_json::to_string(&message).expect("a message serializes")
}

// ------------------------------------------------------------- the clients

type Auth = Box<dyn FnMut(Request<()>) -> Result<Request<()>, Status> + Send>;

/// One tenant's clients: with a bearer token, or none (authentication off,
/// the default tenant).
struct TenantClients {
    memory: MemoryServiceClient<InterceptedService<Channel, Auth>>,
    settings: SettingsServiceClient<InterceptedService<Channel, Auth>>,
    injections: InjectionServiceClient<InterceptedService<Channel, Auth>>,
}

impl TenantClients {
    fn new(channel: &Channel, token: Option<&'static str>) -> TenantClients {
        let auth = || -> Auth {
            Box::new(move |mut request: Request<()>| {
                if let Some(token) = token {
                    let value = format!("Bearer {token}").parse().expect("a valid header");
                    request.metadata_mut().insert("authorization", value);
                }
                Ok(request)
            })
        };
        TenantClients {
            memory: MemoryServiceClient::with_interceptor(channel.clone(), auth()),
            settings: SettingsServiceClient::with_interceptor(channel.clone(), auth()),
            injections: InjectionServiceClient::with_interceptor(channel.clone(), auth()),
        }
    }

    async fn global_depth(&mut self) -> Option<i32> {
        self.settings
            .get_settings(pb::GetSettingsRequest {
                chat_id: String::new(),
            })
            .await
            .expect("get global settings")
            .into_inner()
            .depth
    }
}

/// Checks through the API that `tenant` sees its own chat as the old
/// recapd left it, then that it goes on from there: a refresh answers the
/// next revision, and a change of global settings (which claims the
/// migrated settings clock on PostgreSQL) is kept. `other` is the other
/// tenant, whose data must stay out of sight.
async fn check_tenant(clients: &mut TenantClients, tenant: &OldTenant, other: &OldTenant) {
    let who = if tenant.name.is_empty() {
        "the default tenant"
    } else {
        tenant.name
    };
    assert_eq!(
        clients.global_depth().await,
        Some(tenant.depth),
        "{who}'s own global settings"
    );

    // The injection stored before the upgrade, under the chat id the
    // client knows (not the old joined key).
    let stored = clients
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: CHAT.into(),
            key: None,
        })
        .await
        .expect("get injection")
        .into_inner();
    assert_eq!(
        (
            stored.chat_id.as_str(),
            stored.revision,
            stored.text.as_str()
        ),
        (CHAT, OLD_REVISION, tenant.injection_text),
        "{who}'s stored injection"
    );

    // Its own messages, in order, and none of the other tenant's.
    let inclusion = clients
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("get inclusion")
        .into_inner()
        .messages;
    let ids: Vec<&str> = inclusion.iter().map(|m| m.message_id.as_str()).collect();
    let expected: Vec<&str> = tenant.messages.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, expected, "{who}'s messages");
    let export = clients
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("export chat")
        .into_inner()
        .jsonl;
    let export = String::from_utf8(export).expect("an export is UTF-8");
    for (_, text) in tenant.messages {
        assert!(
            export.contains(text),
            "{who}'s export lacks {text:?}: {export}"
        );
    }
    for (_, text) in other.messages {
        assert!(
            !export.contains(text),
            "{who}'s export has {text:?}: {export}"
        );
    }

    // Its own running recap, still current.
    let recaps = clients
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("list running recaps")
        .into_inner();
    let contents: Vec<&str> = recaps.versions.iter().map(|v| v.content.as_str()).collect();
    assert_eq!(contents, [tenant.recap], "{who}'s recaps");
    assert_eq!(recaps.current_version, Some(0), "{who}'s current recap");

    // The next refresh continues the stored revisions, with the chat's own
    // enabled state and, when enabled, its own recap.
    let refreshed = clients
        .injections
        .refresh(pb::RefreshRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("refresh")
        .into_inner();
    assert_eq!(refreshed.revision, OLD_REVISION + 1, "{who}'s revision");
    assert_eq!(refreshed.enabled, tenant.enabled, "{who}'s enabled state");
    if tenant.enabled {
        assert!(
            refreshed.text.contains(tenant.recap),
            "{who}'s refresh shows its recap: {:?}",
            refreshed.text
        );
    }

    // A change of the tenant's global settings is kept.
    let changed = tenant.depth + 10;
    clients
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: String::new(),
            settings: Some(pb::Settings {
                depth: Some(changed),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .expect("update global settings after the upgrade");
    assert_eq!(
        clients.global_depth().await,
        Some(changed),
        "{who}'s change"
    );
}

/// Starts recapd on `config` twice in turn, as the module comment says, and
/// checks each tenant: the default one without authentication, acme with a
/// tokens file written in `dir`.
async fn check_both_tenants(dir: &Path, config: &Config) {
    let server = Server::start_with(config.clone()).await;
    let mut default = TenantClients::new(&server.channel, None);
    check_tenant(&mut default, &DEFAULT, &ACME).await;
    server.stop().await;

    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("acme {ACME_TOKEN}\n")).expect("writes the tokens file");
    let mut with_auth = config.clone();
    with_auth.auth_tokens_file = Some(tokens);
    let server = Server::start_with(with_auth).await;
    let mut acme = TenantClients::new(&server.channel, Some(ACME_TOKEN));
    check_tenant(&mut acme, &ACME, &DEFAULT).await;
    server.stop().await;
}
