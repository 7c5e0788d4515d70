//! Which chats a recall reads: its own, and the chats its `recall_chats`
//! lists, of the caller's tenant only.

use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;
use tonic::{Request, Status};

use super::*;

/// The new chat's messages: its last two come back to the brass key.
fn sequel() -> Vec<pb::Message> {
    vec![
        line(0, "A new day in the harbor town."),
        line(
            1,
            "Behind the inn stood a locked iron door covered in rust.",
        ),
        line(
            2,
            "Maybe the brass key from the lighthouse keeper opens it.",
        ),
    ]
}

fn listing(chats: &[&str]) -> pb::Settings {
    pb::Settings {
        recall_enabled: Some(true),
        recall_chats: Some(pb::StringList {
            values: chats.iter().map(|c| (*c).to_owned()).collect(),
        }),
        ..Default::default()
    }
}

#[tokio::test]
async fn recall_chats_bring_another_chats_passages_in_and_only_when_listed() {
    let (_dir, mut server) = start_keyword().await;
    open(&mut server, "old", story(), pb::Settings::default()).await;
    open(&mut server, "new", sequel(), listing(&["old"])).await;
    open(&mut server, "plain", sequel(), recall_on()).await;

    let found = recall(&server, "new", FISH_QUERY).await;
    let from_old = found
        .hits
        .iter()
        .find(|h| h.chat_id == "old" && h.message_id == "m1")
        .unwrap_or_else(|| panic!("old's passage is recalled: {:?}", found.hits));
    assert_eq!(from_old.text, KEY_PASSAGE);
    assert!(
        (from_old.score - 1.0).abs() < 1e-6,
        "the best of old: {from_old:?}"
    );
    let moment = recall(&server, "new", "").await;
    assert!(
        moment
            .hits
            .iter()
            .any(|h| h.chat_id == "old" && h.text == KEY_PASSAGE),
        "the moment reaches the listed chat: {:?}",
        moment.hits
    );
    // The tier reads the listed chat too (it is in memory).
    crate::common::api::refresh(&mut server, "new")
        .await
        .expect("refreshed");
    let injected = tier(&mut server, "new").await;
    assert!(
        injected.text.contains(&said(1)),
        "the tier of new recalls old's passage: {:?}",
        injected.text
    );

    // A chat that does not list it never sees it.
    let alone = recall(&server, "plain", FISH_QUERY).await;
    assert!(
        alone.hits.iter().all(|h| h.chat_id == "plain"),
        "{:?}",
        alone.hits
    );
    assert!(!tier(&mut server, "plain").await.text.contains(KEY_PASSAGE));

    // Nor does "new" once the list is emptied.
    server.update_settings("new", listing(&[])).await;
    let unlisted = recall(&server, "new", FISH_QUERY).await;
    assert!(
        unlisted.hits.iter().all(|h| h.chat_id == "new"),
        "{:?}",
        unlisted.hits
    );
    assert!(!tier(&mut server, "new").await.text.contains(KEY_PASSAGE));
    server.stop().await;
}

const ACME: &str = "acme-token-0123456789";
const GLOBEX: &str = "globex-token-9876543210";

type Auth = Box<dyn FnMut(Request<()>) -> Result<Request<()>, Status> + Send>;
type Authed = InterceptedService<Channel, Auth>;

fn bearer(token: &'static str) -> Auth {
    Box::new(move |mut request: Request<()>| {
        request.metadata_mut().insert(
            "authorization",
            format!("Bearer {token}").parse().expect("an ASCII token"),
        );
        Ok(request)
    })
}

/// One tenant's clients.
struct Tenant {
    events: EventServiceClient<Authed>,
    settings: SettingsServiceClient<Authed>,
    injections: InjectionServiceClient<Authed>,
    recall: RecallServiceClient<Authed>,
}

impl Tenant {
    fn of(channel: &Channel, token: &'static str) -> Tenant {
        Tenant {
            events: EventServiceClient::with_interceptor(channel.clone(), bearer(token)),
            settings: SettingsServiceClient::with_interceptor(channel.clone(), bearer(token)),
            injections: InjectionServiceClient::with_interceptor(channel.clone(), bearer(token)),
            recall: RecallServiceClient::with_interceptor(channel.clone(), bearer(token)),
        }
    }

    async fn open(&mut self, chat: &str, messages: Vec<pb::Message>, settings: pb::Settings) {
        self.events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: chat.into(),
                    kind: Some(crate::common::chat_changed(messages)),
                }),
            })
            .await
            .expect("published");
        self.settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: chat.into(),
                settings: Some(settings),
                clear: vec![],
            })
            .await
            .expect("settings");
    }

    async fn recall(&mut self, chat: &str, query: &str) -> pb::RecallResponse {
        self.recall
            .recall(pb::RecallRequest {
                chat_id: chat.into(),
                query: query.into(),
                limit: 100,
                min_score: Some(0.0),
            })
            .await
            .expect("recall")
            .into_inner()
    }

    async fn tier(&mut self, chat: &str) -> pb::Injection {
        self.injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat.into(),
                key: Some(KEY.into()),
            })
            .await
            .expect("the recall tier")
            .into_inner()
    }
}

#[tokio::test]
async fn another_tenants_chat_is_never_recalled_even_when_listed_by_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("acme {ACME}\nglobex {GLOBEX}\n")).expect("tokens file");
    let mut config = crate::common::test_config(dir.path().join("data"));
    config.auth_tokens_file = Some(tokens);
    let server = Server::start_with(config).await;
    let mut acme = Tenant::of(&server.channel, ACME);
    let mut globex = Tenant::of(&server.channel, GLOBEX);
    for tenant in [&mut acme, &mut globex] {
        tenant
            .settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: String::new(),
                settings: Some(pb::Settings {
                    debounce_ms: Some(0),
                    ..Default::default()
                }),
                clear: vec![],
            })
            .await
            .expect("global debounce");
    }
    acme.open("old", story(), pb::Settings::default()).await;
    // The same tenant may list it: the listing works in this setup.
    acme.open("new", sequel(), listing(&["old"])).await;
    let own = acme.recall("new", FISH_QUERY).await;
    assert!(
        own.hits
            .iter()
            .any(|h| h.chat_id == "old" && h.text == KEY_PASSAGE),
        "{:?}",
        own.hits
    );

    // Globex lists acme's chat id, and has no chat of that id itself.
    globex.open("new", sequel(), listing(&["old"])).await;
    for query in [FISH_QUERY, "brass key lighthouse", ""] {
        let found = globex.recall("new", query).await;
        for hit in &found.hits {
            assert_eq!(hit.chat_id, "new", "{query:?}: {:?}", found.hits);
            assert!(
                hit.text != KEY_PASSAGE && hit.text != BUCKLE_PASSAGE,
                "{query:?}: acme's passage reached globex: {hit:?}"
            );
        }
    }
    let injected = globex.tier("new").await;
    assert!(injected.revision >= 1, "{injected:?}");
    assert!(
        !injected.text.contains("fish"),
        "acme's passage in globex's tier: {:?}",
        injected.text
    );
    // A chat of that id in globex is globex's own, not acme's.
    globex
        .open(
            "old",
            vec![line(0, "Globex's own old chat: a fish market.")],
            pb::Settings::default(),
        )
        .await;
    let found = globex.recall("new", FISH_QUERY).await;
    assert!(
        found.hits.iter().all(|h| h.text != KEY_PASSAGE),
        "{:?}",
        found.hits
    );
    assert!(
        found
            .hits
            .iter()
            .any(|h| h.chat_id == "old" && h.text.contains("fish market")),
        "globex's own listed chat is read: {:?}",
        found.hits
    );
    server.stop().await;
}
