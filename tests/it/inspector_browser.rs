//! The inspector in a real browser: headless Chromium, driven by
//! `inspector/tests/browser.mjs` (Playwright), against a live recapd with
//! tokens on, the inspector on, and a fake LLM this test holds and
//! releases. Runs only when `RECAPD_TEST_CHROMIUM` names the browser
//! (`scripts/test.sh` installs Debian's `chromium` and the script's npm
//! packages, then sets it); screenshots of the main views go to
//! `RECAPD_TEST_SCREENSHOTS` (default `target/inspector-screenshots`).
//!
//! The script asks this test to act by printing `STEP <name> [detail]`
//! and reads one JSON line back: `ready` (the seeded chat and what the page
//! must show of it), `publish` (an event changes the injection: the page
//! must follow without a reload), `job` and `release` (a recap job whose
//! LLM call is held, then let go: PENDING or RUNNING, then SUCCEEDED),
//! `edited <text>` (the page added a running-recap version: checked here
//! through gRPC), `data <id>` (a message's data as GetMessageData answers
//! it, for the script to compare with what the page did: a scene marked,
//! renamed and its recap versions flipped; a recap edited by hand) and
//! `recaps` (the running-recap versions, around the page's deletion),
//! `group` (a group listing the chat, imported here), `group-state` and
//! `chat-profile` (the group and the chat's profile through gRPC, after the
//! page made a profile, gave it to the chat and disabled a member), and
//! `branch <chat id>` (the chat the page's "Branch here" made, through
//! ListChats and ListRunningRecaps: `family.rs`). It prints `DONE` at the
//! end.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use recapd::app::App;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::common::fake_llm::{FakeLlm, Reply};
use crate::common::*;
use crate::recap_jobs::{scripted_prompts, story};

mod family;

const TOKEN: &str = "inspector-test-token-0123456789";
const CHAT: &str = "tavern-1";
const FIRST_RECAP: &str = "Night one: the party reached the Gilded Goose at dusk.";
const SECOND_RECAP: &str = "Day two: Mara hid the letter under the floorboard.";
/// The error of m1's last recap attempt: the page's hand edit removes it.
const RECAP_ERROR: &str = "The LLM timed out.";
/// How long the whole browser session may take.
const SESSION: Duration = Duration::from_secs(240);

type Auth = Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;
type Authed = InterceptedService<Channel, Auth>;

fn bearer() -> Auth {
    Box::new(|mut request: tonic::Request<()>| {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
        Ok(request)
    })
}

/// The tenant's clients, with its token.
struct Clients {
    events: EventServiceClient<Authed>,
    memory: MemoryServiceClient<Authed>,
    settings: SettingsServiceClient<Authed>,
    injections: InjectionServiceClient<Authed>,
    recaps: RecapServiceClient<Authed>,
    channel: Channel,
}

impl Clients {
    async fn connect(app: &App) -> Clients {
        let channel = Channel::from_shared(format!("http://{}", app.local_addr()))
            .unwrap()
            .connect()
            .await
            .expect("connects");
        let with = |c: &Channel| InterceptedService::new(c.clone(), bearer());
        Clients {
            events: EventServiceClient::new(with(&channel)),
            memory: MemoryServiceClient::new(with(&channel)),
            settings: SettingsServiceClient::new(with(&channel)),
            injections: InjectionServiceClient::new(with(&channel)),
            recaps: RecapServiceClient::new(with(&channel)),
            channel,
        }
    }

    /// The connection with the tenant's token, for another service's client.
    fn authed(&self) -> Authed {
        InterceptedService::new(self.channel.clone(), bearer())
    }

    async fn publish(&mut self, kind: pb::event::Kind) {
        self.events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: CHAT.into(),
                    kind: Some(kind),
                }),
            })
            .await
            .expect("published");
    }

    /// The text of every tier of the chat's injection, one after another.
    async fn injected(&mut self) -> String {
        let mut text = String::new();
        for key in ["auto_recap_scene", "auto_recap_messages"] {
            let injection = self
                .injections
                .get_injection(pb::GetInjectionRequest {
                    chat_id: CHAT.into(),
                    key: Some(key.into()),
                })
                .await
                .expect("injection")
                .into_inner();
            text.push_str(&injection.text);
            text.push('\n');
        }
        text
    }

    /// Waits until the injection holds `wanted`; false after 10 s.
    async fn injects(&mut self, wanted: &str) -> bool {
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while tokio::time::Instant::now() < until {
            if self.injected().await.contains(wanted) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    }
}

/// The chat the page is shown: eight messages, one hidden by hand, two
/// scene breaks with scene recaps, message recaps and recall on, a
/// lorebook that applies, and two running recap versions, the second
/// current (made at m5).
async fn seed(clients: &mut Clients) -> Value {
    // A lorebook in the shape SillyTavern exports World Info (an `entries`
    // object keyed by uid), so the page has activations to show.
    let book = json!({ "entries": { "0": {
        "uid": 0, "key": ["rider", "letter"], "keysecondary": [], "comment": "The letter",
        "content": "The letter carries the duke's seal.", "constant": false,
        "selective": true, "order": 100, "position": 0, "disable": false,
    }}});
    LorebookServiceClient::new(clients.authed())
        .import_lorebook(pb::ImportLorebookRequest {
            name: "Tavern lore".into(),
            json: book.to_string(),
        })
        .await
        .expect("lorebook imported");
    let mut settings = scripted_prompts();
    settings.message_recaps_enabled = Some(true);
    settings.world_info_global_books = Some(pb::StringList {
        values: vec!["Tavern lore".into()],
    });
    settings.recall_enabled = Some(true);
    // The scene recap the test's job writes is not merged on its own: a
    // merge running when the page adds its version would be redone on top
    // of it and replace it.
    settings.auto_running_recap = Some(false);
    settings.recall_exclude_recent = Some(2);
    clients
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: CHAT.into(),
            settings: Some(settings),
            clear: vec![],
        })
        .await
        .expect("chat settings");
    let lines = [
        ("Ann", true, "We made it to the inn before the storm."),
        ("Bob", false, "The Gilded Goose. Warm fire, cold ale."),
        ("Ann", true, "Ask the innkeeper about the cellar."),
        (
            "Bob",
            false,
            "He says the cellar is bricked up. He is lying.",
        ),
        ("Ann", true, "Mara, keep the letter safe."),
        (
            "Bob",
            false,
            "Mara slides the letter under a loose floorboard.",
        ),
        ("Ann", true, "Morning comes grey and quiet."),
        (
            "Bob",
            false,
            "A rider in black waits at the gate, asking for the letter.",
        ),
    ];
    let messages = lines
        .iter()
        .enumerate()
        .map(|(i, (name, is_user, text))| pb::Message {
            id: format!("m{i}"),
            name: (*name).into(),
            text: (*text).into(),
            is_user: *is_user,
            hidden: i == 3,
            ..Default::default()
        })
        .collect();
    clients.publish(chat_changed(messages)).await;
    let data = |memory: &str, scene: Option<(&str, &str)>| pb::MessageData {
        memory: Some(memory.into()),
        scene_break: scene.map(|_| true),
        scene_break_visible: scene.map(|_| true),
        scene_break_name: scene.map(|(name, _)| name.into()),
        scene_recap_memory: scene.map(|(_, recap)| recap.into()),
        ..Default::default()
    };
    for (id, memory, scene) in [
        (
            "m1",
            "Bob names the inn: the Gilded Goose.",
            Some(("Arrival", FIRST_RECAP)),
        ),
        ("m3", "The innkeeper lies about the cellar.", None),
        (
            "m5",
            "Mara hides the letter under a floorboard.",
            Some(("The letter", SECOND_RECAP)),
        ),
    ] {
        let error = (id == "m1").then(|| RECAP_ERROR.to_owned());
        clients
            .memory
            .set_message_data(pb::SetMessageDataRequest {
                edit: false,
                chat_id: CHAT.into(),
                message_id: id.into(),
                data: Some(pb::MessageData {
                    error,
                    ..data(memory, scene)
                }),
            })
            .await
            .expect("message data");
    }
    for (content, scene_count, at) in [(FIRST_RECAP, 1, "m1"), (SECOND_RECAP, 2, "m5")] {
        clients
            .memory
            .add_running_recap(pb::AddRunningRecapRequest {
                chat_id: CHAT.into(),
                content: content.into(),
                scene_count,
                new_scene_message_id: at.into(),
                ..Default::default()
            })
            .await
            .expect("running recap");
    }
    assert!(
        clients.injects(SECOND_RECAP).await,
        "the seeded recap is injected"
    );

    // What the page must show: read from the server, not assumed.
    let inclusion = clients
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("inclusion")
        .into_inner()
        .messages;
    let included = inclusion.iter().find(|m| m.included).expect("one included");
    let excluded = inclusion
        .iter()
        .find(|m| !m.included && !m.hidden)
        .expect("one excluded, not hidden");
    let hidden = inclusion.iter().find(|m| m.message_id == "m3").expect("m3");
    assert!(hidden.hidden, "m3 is hidden by hand: {hidden:?}");
    json!({
        "chatId": CHAT,
        "includedMessageId": included.message_id,
        "excludedMessageId": excluded.message_id,
        "excludedReason": excluded.excluded_reason,
        "hiddenMessageId": hidden.message_id,
        "injectionText": SECOND_RECAP,
        // No break, and none after the publish step deletes m5 and the job
        // step makes m7 one.
        "sceneMessageId": "m6",
        "editMessageId": "m1",
        "editError": RECAP_ERROR,
        // Still there after the publish step deletes m5: the branch holds
        // m0 to m4.
        "branchMessageId": "m4",
    })
}

/// A message's data as GetMessageData answers it, in the proto's JSON
/// names (an unset field is null).
async fn message_data(clients: &mut Clients, message_id: &str) -> Value {
    let d = clients
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            chat_id: CHAT.into(),
            message_id: message_id.into(),
            swipe_id: None,
        })
        .await
        .expect("message data")
        .into_inner();
    json!({
        "memory": d.memory,
        "error": d.error,
        "edited": d.edited,
        "prefill": d.prefill,
        "sceneBreak": d.scene_break,
        "sceneBreakVisible": d.scene_break_visible,
        "sceneBreakName": d.scene_break_name,
        "sceneRecapMemory": d.scene_recap_memory,
        "sceneRecapVersions": d.scene_recap_versions,
        "sceneRecapCurrentIndex": d.scene_recap_current_index,
    })
}

/// The running-recap versions' numbers and the current one.
async fn running_recaps(clients: &mut Clients) -> Value {
    let list = clients
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("running recaps")
        .into_inner();
    json!({
        "currentVersion": list.current_version,
        "versions": list.versions.iter().map(|v| v.version).collect::<Vec<_>>(),
    })
}

/// The group the settings view shows: two members, none disabled, listing the chat.
const GROUP: &str = "tavern-party";
const GROUP_MEMBERS: [&str; 2] = ["mara.png", "bob.png"];

/// Imports the group that lists the chat; answers its id and members.
async fn import_group(clients: &mut Clients) -> Value {
    let file = json!({
        "id": GROUP, "name": "The party", "members": GROUP_MEMBERS,
        "disabled_members": [], "chats": [CHAT],
    });
    let group = clients
        .settings
        .import_group(pb::ImportGroupRequest {
            json: file.to_string(),
        })
        .await
        .expect("the group imported")
        .into_inner();
    json!({ "groupId": group.id, "members": group.members })
}

/// The group as GetGroup answers it.
async fn group_state(clients: &mut Clients) -> Value {
    let group = clients
        .settings
        .get_group(pb::GetGroupRequest {
            group_id: GROUP.into(),
        })
        .await
        .expect("the group")
        .into_inner();
    json!({ "disabledMembers": group.disabled_members, "profile": group.profile })
}

/// The chat's effective `profile` setting.
async fn chat_profile(clients: &mut Clients) -> Value {
    let settings = clients
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: CHAT.into(),
        })
        .await
        .expect("the chat's settings")
        .into_inner();
    json!({ "profile": settings.profile })
}

#[tokio::test]
async fn the_inspector_shows_and_steers_recapd_in_a_real_browser() {
    let Ok(chromium) = std::env::var("RECAPD_TEST_CHROMIUM") else {
        println!("skipped: RECAPD_TEST_CHROMIUM is not set");
        return;
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let screenshots = std::env::var("RECAPD_TEST_SCREENSHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("target/inspector-screenshots"));
    std::fs::create_dir_all(&screenshots).unwrap();

    // The LLM answers 503 (retry in 1 s) until released.
    let released = Arc::new(AtomicBool::new(false));
    let gate = released.clone();
    let llm = FakeLlm::start(move |request| {
        if gate.load(Ordering::SeqCst) {
            story(request)
        } else {
            Reply::status(503, "held by the test").with_retry_after("1")
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("tavern {TOKEN}\n")).unwrap();
    let mut config = test_config(dir.path().join("data"));
    config.auth_tokens_file = Some(tokens);
    config.web.inspector_listen = Some("127.0.0.1:0".parse().unwrap());
    config.llm.llm_url = Some(llm.url());
    config.llm.llm_model = "fake-model".into();
    config.llm.llm_max_attempts = 1000;
    config.llm.llm_backoff_base = Duration::from_millis(10);
    let app = App::build(config).await.expect("recapd starts");
    let inspector = app.inspector_addr().expect("the inspector listens");
    let mut clients = Clients::connect(&app).await;
    let ready = seed(&mut clients).await;

    let mut browser = tokio::process::Command::new("node")
        .arg(root.join("inspector/tests/browser.mjs"))
        .env("INSPECTOR_URL", format!("http://{inspector}/"))
        .env("RECAPD_TOKEN", TOKEN)
        .env("CHROMIUM", &chromium)
        .env("SCREENSHOT_DIR", &screenshots)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs (scripts/test.sh installs it)");
    let mut to_browser = browser.stdin.take().unwrap();
    let mut from_browser = BufReader::new(browser.stdout.take().unwrap()).lines();
    let session = async {
        let mut done = false;
        while let Some(line) = from_browser.next_line().await.expect("the script's output") {
            let (step, detail) = line.split_once(' ').unwrap_or((line.as_str(), ""));
            let answer = match (
                step,
                detail.split_once(' ').map_or(detail, |(name, _)| name),
            ) {
                ("DONE", _) => {
                    done = true;
                    break;
                }
                ("STEP", "ready") => ready.clone(),
                ("STEP", "publish") => {
                    // Deleting m5 deletes the version made at it: the
                    // first one is injected again.
                    clients.publish(message_deleted("m5")).await;
                    assert!(
                        clients.injects(FIRST_RECAP).await,
                        "the delete changed the injection"
                    );
                    json!({ "injectionText": FIRST_RECAP })
                }
                ("STEP", "job") => {
                    let job = clients
                        .recaps
                        .generate_scene_recap(pb::GenerateSceneRecapRequest {
                            chat_id: CHAT.into(),
                            message_id: "m7".into(),
                        })
                        .await
                        .expect("a scene recap job")
                        .into_inner();
                    json!({ "jobId": job.job_id })
                }
                ("STEP", "data") => {
                    let id = detail.strip_prefix("data").unwrap_or_default().trim();
                    message_data(&mut clients, id).await
                }
                ("STEP", "recaps") => running_recaps(&mut clients).await,
                ("STEP", "group") => import_group(&mut clients).await,
                ("STEP", "group-state") => group_state(&mut clients).await,
                ("STEP", "chat-profile") => chat_profile(&mut clients).await,
                ("STEP", "branch") => {
                    let id = detail.strip_prefix("branch").unwrap_or_default().trim();
                    family::branch_summary(&mut clients, id).await
                }
                ("STEP", "release") => {
                    released.store(true, Ordering::SeqCst);
                    json!({})
                }
                ("STEP", "edited") => {
                    let text = detail.strip_prefix("edited").unwrap_or_default().trim();
                    if !text.is_empty() && clients.injects(text).await {
                        json!({ "ok": true })
                    } else {
                        json!({ "error": format!("the injection does not hold {text:?}: {}", clients.injected().await) })
                    }
                }
                _ => {
                    eprintln!("browser: {line}");
                    continue;
                }
            };
            to_browser
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .expect("the script reads its answer");
        }
        done
    };
    let done = tokio::time::timeout(SESSION, session)
        .await
        .expect("the browser session ends in time");
    let status = tokio::time::timeout(Duration::from_secs(30), browser.wait())
        .await
        .expect("the script exits")
        .unwrap();
    assert!(
        done && status.success(),
        "the browser script failed ({status}); screenshots in {}",
        screenshots.display()
    );
    assert!(llm.rejected().is_empty(), "{:?}", llm.rejected());
    for view in [
        "login-refused",
        "chats",
        "chat-timeline",
        "injection",
        "jobs",
        "running-recap",
        "scene-versions",
        "running-recap-deleted",
        "jobs-started",
        "branch-made",
        "branch-family",
        "chat-family",
    ] {
        assert!(
            screenshots.join(format!("{view}.png")).is_file(),
            "no screenshot of {view}"
        );
    }
    app.shutdown().await;
    llm.stop().await;
}
