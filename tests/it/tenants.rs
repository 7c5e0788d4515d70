//! Authentication and tenants: bearer tokens from a file, every RPC kept
//! inside the caller's tenant, and TLS.

use std::time::Duration;

use crate::common::*;
use recapd::app::App;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

const ACME: &str = "acme-token-0123456789";
const GLOBEX: &str = "globex-token-9876543210";

type Auth = Box<dyn FnMut(Request<()>) -> Result<Request<()>, Status> + Send>;

fn bearer(token: &'static str) -> Auth {
    Box::new(move |mut request: Request<()>| {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        Ok(request)
    })
}

struct Clients {
    events: EventServiceClient<InterceptedService<Channel, Auth>>,
    memory: MemoryServiceClient<InterceptedService<Channel, Auth>>,
    settings: SettingsServiceClient<InterceptedService<Channel, Auth>>,
    injections: InjectionServiceClient<InterceptedService<Channel, Auth>>,
}

fn clients(channel: &Channel, token: &'static str) -> Clients {
    Clients {
        events: EventServiceClient::with_interceptor(channel.clone(), bearer(token)),
        memory: MemoryServiceClient::with_interceptor(channel.clone(), bearer(token)),
        settings: SettingsServiceClient::with_interceptor(channel.clone(), bearer(token)),
        injections: InjectionServiceClient::with_interceptor(channel.clone(), bearer(token)),
    }
}

impl Clients {
    async fn publish(&mut self, chat: &str, kind: pb::event::Kind) -> Result<u64, Status> {
        let event = pb::Event {
            chat_id: chat.into(),
            kind: Some(kind),
        };
        self.events
            .publish(pb::PublishRequest { event: Some(event) })
            .await
            .map(|r| r.into_inner().revision)
    }
    async fn injection(&mut self, chat: &str) -> Result<pb::Injection, Status> {
        self.injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat.into(),
                key: None,
            })
            .await
            .map(|r| r.into_inner())
    }
}

fn not_found<T>(result: Result<T, Status>) {
    match result {
        Ok(_) => panic!("another tenant's chat was reachable"),
        Err(status) => assert_eq!(status.code(), Code::NotFound, "{status:?}"),
    }
}

async fn server_with_tokens(dir: &std::path::Path) -> Server {
    let tokens = dir.join("tokens");
    std::fs::write(
        &tokens,
        format!("# tenants\nacme {ACME}\n\nglobex\t{GLOBEX}\n"),
    )
    .unwrap();
    let mut config = test_config(dir.join("data"));
    config.auth_tokens_file = Some(tokens);
    Server::start_with(config).await
}

#[tokio::test]
async fn calls_without_a_known_token_are_unauthenticated_but_health_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = server_with_tokens(dir.path()).await;
    let err = server.publish("c", refresh_requested()).await.unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated);
    let mut wrong = clients(&server.channel, "not-a-known-token-at-all");
    assert_eq!(
        wrong
            .publish("c", refresh_requested())
            .await
            .unwrap_err()
            .code(),
        Code::Unauthenticated
    );
    let health = tonic_health::pb::health_client::HealthClient::new(server.channel.clone())
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        health.status(),
        tonic_health::pb::health_check_response::ServingStatus::Serving
    );
    let mut acme = clients(&server.channel, ACME);
    assert_eq!(acme.publish("c", refresh_requested()).await.unwrap(), 1);
    server.stop().await;
}

#[tokio::test]
async fn every_rpc_stays_inside_its_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_tokens(dir.path()).await;
    let mut acme = clients(&server.channel, ACME);
    let mut globex = clients(&server.channel, GLOBEX);
    let zero = pb::UpdateSettingsRequest {
        chat_id: String::new(),
        settings: Some(pb::Settings {
            debounce_ms: Some(0),
            ..Default::default()
        }),
        clear: vec![],
    };
    acme.settings.update_settings(zero.clone()).await.unwrap();

    // Acme's chat "shared-name", with data and a recap.
    acme.publish(
        "shared-name",
        chat_changed(vec![message("m1", "acme's secret")]),
    )
    .await
    .unwrap();
    acme.memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "shared-name".into(),
            content: "acme recap".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let acme_before = acme.injection("shared-name").await.unwrap();
    assert_eq!(
        acme_before.chat_id, "shared-name",
        "clients see their own chat ids"
    );

    // Globex's all-chats subscription sees none of Acme's refreshes.
    let mut globex_all = globex
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec![],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();

    // Globex cannot read, change, list or subscribe to Acme's chat.
    not_found(globex.injection("shared-name").await);
    not_found(
        globex
            .injections
            .refresh(pb::RefreshRequest {
                chat_id: "shared-name".into(),
            })
            .await,
    );
    not_found(
        globex
            .injections
            .get_inclusion(pb::GetInclusionRequest {
                chat_id: "shared-name".into(),
            })
            .await,
    );
    not_found(
        globex
            .memory
            .get_message_data(pb::GetMessageDataRequest {
                swipe_id: None,
                chat_id: "shared-name".into(),
                message_id: "m1".into(),
            })
            .await,
    );
    not_found(
        globex
            .memory
            .set_message_data(pb::SetMessageDataRequest {
                edit: false,
                chat_id: "shared-name".into(),
                message_id: "m1".into(),
                data: Some(pb::MessageData {
                    memory: Some("tampered".into()),
                    ..Default::default()
                }),
            })
            .await,
    );
    not_found(
        globex
            .memory
            .clear_memory(pb::ClearMemoryRequest {
                chat_id: "shared-name".into(),
                message_id: "m1".into(),
            })
            .await,
    );
    not_found(
        globex
            .memory
            .list_running_recaps(pb::ListRunningRecapsRequest {
                chat_id: "shared-name".into(),
            })
            .await,
    );
    not_found(
        globex
            .memory
            .select_running_recap(pb::SelectRunningRecapRequest {
                chat_id: "shared-name".into(),
                version: 0,
            })
            .await,
    );
    not_found(
        globex
            .memory
            .delete_running_recap(pb::DeleteRunningRecapRequest {
                chat_id: "shared-name".into(),
                version: 0,
            })
            .await,
    );
    not_found(
        globex
            .memory
            .add_running_recap(pb::AddRunningRecapRequest {
                chat_id: "shared-name".into(),
                content: "x".into(),
                ..Default::default()
            })
            .await,
    );
    let err = globex
        .publish(
            "shared-name",
            pb::event::Kind::MessageDeleted(pb::MessageDeleted {
                message_id: "m1".into(),
            }),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    // A named subscription to the same name is Globex's own (empty) chat.
    let mut globex_named = globex
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["shared-name".into()],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        next_within(&mut globex_named, 1).await.is_none(),
        "no snapshot of Acme's chat"
    );

    // Settings are per tenant, global ones included.
    let globex_global = globex
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        globex_global.debounce_ms,
        Some(300),
        "Acme's global change is Acme's"
    );
    globex
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: String::new(),
            settings: Some(pb::Settings {
                depth: Some(9),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    globex
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "shared-name".into(),
            enabled: false,
        })
        .await
        .unwrap();
    let acme_settings = acme
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: "shared-name".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(acme_settings.depth, Some(2));

    // Globex's own chat of the same name is separate.
    globex
        .publish("shared-name", chat_changed(vec![message("g1", "globex")]))
        .await
        .unwrap();
    let pushed = next_within(&mut globex_all, 5)
        .await
        .expect("Globex sees its own refresh");
    assert_eq!(pushed.chat_id, "shared-name");
    assert!(!pushed.enabled, "Globex's chat, disabled by Globex");
    // Acme's chat is exactly as it was, and Acme's refreshes reach no Globex stream.
    acme.injections
        .refresh(pb::RefreshRequest {
            chat_id: "shared-name".into(),
        })
        .await
        .unwrap();
    assert!(
        next_within(&mut globex_all, 1).await.is_none(),
        "no Acme refresh in Globex's all-chats stream"
    );
    let acme_after = acme.injection("shared-name").await.unwrap();
    assert_eq!(
        (acme_after.text.as_str(), acme_after.enabled),
        (acme_before.text.as_str(), true)
    );
    let data = acme
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: "shared-name".into(),
            message_id: "m1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        data.memory, None,
        "Globex's writes never reached Acme's message"
    );
    server.stop().await;
}

#[test]
fn a_malformed_tokens_file_stops_start_up_with_64_and_its_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("acme {ACME}\n# fine\nglobex\n")).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_recapd"))
        .arg("--auth-tokens-file")
        .arg(&tokens)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(64));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3"), "{stderr}");
    assert!(!stderr.contains(ACME), "tokens are never printed: {stderr}");
    assert!(!dir.path().join("data").exists());
}

#[tokio::test]
async fn tls_with_a_certificate_made_here() {
    let dir = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert_pem = cert.cert.pem();
    std::fs::write(dir.path().join("cert.pem"), &cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), cert.signing_key.serialize_pem()).unwrap();
    let mut config = test_config(dir.path().join("data"));
    config.tls_cert = Some(dir.path().join("cert.pem"));
    config.tls_key = Some(dir.path().join("key.pem"));
    let app = App::build(config).await.unwrap();
    let port = app.local_addr().port();

    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(&cert_pem))
        .domain_name("localhost");
    let channel = Channel::from_shared(format!("https://localhost:{port}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let settings = SettingsServiceClient::new(channel)
        .get_settings(pb::GetSettingsRequest {
            chat_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(settings.depth, Some(2));
    // Plaintext gets nowhere.
    let plain = Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect()
        .await;
    if let Ok(plain) = plain {
        let mut client = SettingsServiceClient::new(plain);
        let call = client.get_settings(pb::GetSettingsRequest {
            chat_id: String::new(),
        });
        let result = tokio::time::timeout(Duration::from_secs(5), call).await;
        assert!(
            !matches!(result, Ok(Ok(_))),
            "a plaintext call must not succeed"
        );
    }
    app.shutdown().await;
}

#[tokio::test]
async fn listing_and_deleting_chats_stay_inside_the_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_tokens(dir.path()).await;
    let mut acme = clients(&server.channel, ACME);
    let mut globex = clients(&server.channel, GLOBEX);
    for chat in ["shared-name", "acme-only"] {
        acme.publish(chat, chat_changed(vec![message("m1", "acme's")]))
            .await
            .unwrap();
    }
    let list = |page_token: String| pb::ListChatsRequest {
        page_size: 0,
        page_token,
    };
    let globex_list = globex.memory.list_chats(list(String::new())).await.unwrap();
    assert!(
        globex_list.into_inner().chats.is_empty(),
        "Acme's chats are Acme's"
    );
    // A token naming Acme's first chat pages Globex's own chats only.
    let acme_page = acme.memory.list_chats(pb::ListChatsRequest {
        page_size: 1,
        page_token: String::new(),
    });
    let token = acme_page.await.unwrap().into_inner().next_page_token;
    let after = globex.memory.list_chats(list(token)).await.unwrap();
    assert!(after.into_inner().chats.is_empty());
    let delete = |chat: &str| pb::DeleteChatRequest {
        chat_id: chat.into(),
    };
    not_found(globex.memory.delete_chat(delete("acme-only")).await);

    // Globex deletes its own chat of the same name: Acme's stays, and
    // Acme's streams are told nothing.
    let mut acme_all = acme
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec![],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    globex
        .publish("shared-name", chat_changed(vec![message("g1", "globex")]))
        .await
        .unwrap();
    globex
        .memory
        .delete_chat(delete("shared-name"))
        .await
        .unwrap();
    assert!(
        next_within(&mut acme_all, 1).await.is_none(),
        "no Globex deletion in Acme's all-chats stream"
    );
    let acme_list = acme.memory.list_chats(list(String::new())).await.unwrap();
    let ids: Vec<String> = acme_list
        .into_inner()
        .chats
        .into_iter()
        .map(|c| c.chat_id)
        .collect();
    assert_eq!(ids, ["acme-only", "shared-name"]);
    acme.injection("shared-name").await.unwrap();
    server.stop().await;
}
