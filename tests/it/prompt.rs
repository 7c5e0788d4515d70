//! `PromptService.RenderPrompt` over a real socket: the chat's own
//! injection and the backend's prompts placed as SillyTavern would.

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;
use tonic::Code;

fn history(role: pb::InjectionRole, name: &str, content: &str, hidden: bool) -> pb::PromptMessage {
    pb::PromptMessage {
        role: role as i32,
        name: name.into(),
        content: content.into(),
        hidden,
        message_id: String::new(),
    }
}

#[tokio::test]
async fn a_chats_injection_and_extra_prompts_are_placed() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hi")]))
        .await
        .unwrap();
    add_recap(&mut server, "c", "They met.").await;
    // The chat's injection: IN_CHAT depth 1 as USER.
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c".into(),
            settings: Some(pb::Settings {
                position: Some(pb::InjectionPosition::InChat as i32),
                depth: Some(1),
                role: Some(pb::InjectionRole::User as i32),
                template: Some("Memory: {{running_recap}}".into()),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    let mut prompts = PromptServiceClient::new(server.channel.clone());
    let request = |mode: pb::PromptMode| pb::RenderPromptRequest {
        chat_id: "c".into(),
        mode: mode as i32,
        story_string: "You are Bob.".into(),
        history: vec![
            history(pb::InjectionRole::User, "Ann", "Hello", false),
            history(pb::InjectionRole::Assistant, "Bob", "(hidden)", true),
            history(pb::InjectionRole::Assistant, "Bob", "Hi Ann", false),
        ],
        continue_last: false,
        extra: vec![pb::ExtensionPrompt {
            key: "authors_note".into(),
            value: "Keep it short.".into(),
            position: pb::InjectionPosition::BeforePrompt as i32,
            depth: 0,
            role: pb::InjectionRole::System as i32,
            scan: false,
        }],
        ..Default::default()
    };
    let message =
        |role: pb::InjectionRole, name: &str, content: &str| history(role, name, content, false);

    let text = prompts
        .render_prompt(request(pb::PromptMode::TextCompletion))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(text.text, "Keep it short.\nYou are Bob.");
    assert_eq!(
        text.messages,
        [
            message(pb::InjectionRole::User, "Ann", "Hello"),
            message(pb::InjectionRole::User, "Ann", "Memory: They met."),
            message(pb::InjectionRole::Assistant, "Bob", "Hi Ann"),
        ]
    );
    let chat = prompts
        .render_prompt(request(pb::PromptMode::ChatCompletion))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(chat.text, "");
    assert_eq!(
        chat.messages,
        [
            message(pb::InjectionRole::System, "", "Keep it short."),
            message(pb::InjectionRole::System, "", "You are Bob."),
            message(pb::InjectionRole::User, "Ann", "Hello"),
            message(pb::InjectionRole::User, "Ann", "Memory: They met."),
            message(pb::InjectionRole::Assistant, "Bob", "Hi Ann"),
        ]
    );

    // Bad input is refused by field.
    let mut bad = request(pb::PromptMode::Unspecified);
    assert_eq!(
        prompts.render_prompt(bad.clone()).await.unwrap_err().code(),
        Code::InvalidArgument
    );
    bad.mode = pb::PromptMode::TextCompletion as i32;
    bad.extra[0].depth = 1001;
    let err = prompts.render_prompt(bad.clone()).await.unwrap_err();
    assert!(
        err.message().contains("extra[0].depth"),
        "{}",
        err.message()
    );
    bad.extra[0].depth = 0;
    bad.chat_id = "nobody".into();
    assert_eq!(
        prompts.render_prompt(bad).await.unwrap_err().code(),
        Code::NotFound
    );
    server.stop().await;
}

#[tokio::test]
async fn in_chat_depths_stay_separate_blocks_placed_as_sillytavern_does() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut prompts = PromptServiceClient::new(server.channel.clone());
    let extra = |key: &str, value: &str, depth: i32, role: pb::InjectionRole| pb::ExtensionPrompt {
        key: key.into(),
        value: value.into(),
        position: pb::InjectionPosition::InChat as i32,
        depth,
        role: role as i32,
        scan: false,
    };
    let request = |mode: pb::PromptMode| pb::RenderPromptRequest {
        chat_id: String::new(),
        mode: mode as i32,
        story_string: "You are Bob.".into(),
        history: vec![
            history(pb::InjectionRole::User, "Ann", "Hello", false),
            history(pb::InjectionRole::Assistant, "Bob", "Hi Ann", false),
            history(pb::InjectionRole::User, "Ann", "How are", false),
        ],
        continue_last: true,
        extra: vec![
            extra("a", "zero", 0, pb::InjectionRole::System),
            // A leading blank value leaves no empty line: the joined text is
            // trimmed at its start.
            extra("b0", "   ", 1, pb::InjectionRole::User),
            extra("b1", "one", 1, pb::InjectionRole::User),
            extra("c", "deep", 50, pb::InjectionRole::Assistant),
        ],
        ..Default::default()
    };
    let message =
        |role: pb::InjectionRole, name: &str, content: &str| history(role, name, content, false);
    // Continuing: depth 0 counts as 1, so depths 0 and 1 land at the same
    // place; they stay two blocks, the deeper first. Depth 50 is past the
    // history and goes first.
    let placed = [
        message(pb::InjectionRole::Assistant, "Bob", "deep"),
        message(pb::InjectionRole::User, "Ann", "Hello"),
        message(pb::InjectionRole::Assistant, "Bob", "Hi Ann"),
        message(pb::InjectionRole::User, "Ann", "one"),
        message(pb::InjectionRole::System, "", "zero"),
        message(pb::InjectionRole::User, "Ann", "How are"),
    ];
    let text = prompts
        .render_prompt(request(pb::PromptMode::TextCompletion))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(text.messages, placed);
    let chat = prompts
        .render_prompt(request(pb::PromptMode::ChatCompletion))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        chat.messages[0],
        message(pb::InjectionRole::System, "", "You are Bob.")
    );
    assert_eq!(chat.messages[1..], placed);
    server.stop().await;
}

#[tokio::test]
async fn st_auto_recap_settings_import_as_global_or_chat_settings() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let imported = server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: String::new(),
            json: r#"{"running_scene_recap_position": 1, "running_scene_recap_depth": 5,
                      "running_scene_recap_role": 1, "message_recap_context_type": "absolute",
                      "message_recap_context_limit": 300, "chats_enabled": {"x": false}}"#
                .into(),
        })
        .await
        .unwrap()
        .into_inner();
    let settings = imported.settings.unwrap();
    assert_eq!(
        settings.position,
        Some(pb::InjectionPosition::InChat as i32)
    );
    assert_eq!(
        (settings.depth, settings.role),
        (Some(5), Some(pb::InjectionRole::User as i32))
    );
    assert_eq!(settings.message_recap_context_limit, Some(300));
    assert!(imported.ignored_keys.is_empty(), "chats_enabled is used");
    // A chat import overrides only that chat.
    let chat = server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: "c".into(),
            json: r#"{"running_scene_recap_depth": 9}"#.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(chat.settings.unwrap().depth, Some(9));
    let global = server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(global.depth, Some(5));
    let err = server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: String::new(),
            json: r#"{"running_scene_recap_position": 7}"#.into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("json.running_scene_recap_position"),
        "{}",
        err.message()
    );
    server.stop().await;
}

/// Chat "c": u0 Ann, a1 Bob (two swipes, the second current), n2 a
/// narrator message, h3 hidden by hand, u4 Ann, a5 Bob, u6 Ann; scene
/// breaks on a1 and u4; auto-hide keeps the last 2 scenes (hides u0, a1);
/// the injection is IN_CHAT, depth 2, SYSTEM.
async fn stored_chat() -> (tempfile::TempDir, Server) {
    let (dir, mut server) = api::start().await;
    let user = |id: &str, text: &str| {
        api::msg_with(id, text, |m| {
            m.name = "Ann".into();
            m.is_user = true;
        })
    };
    let bob = |id: &str, text: &str| api::msg_with(id, text, |m| m.name = "Bob".into());
    let messages = vec![
        user("u0", "Hello"),
        api::msg_with("a1", "", |m| {
            m.name = "Bob".into();
            m.swipes = vec!["Hi (first swipe)".into(), "Hi Ann".into()];
            m.swipe_id = 1;
        }),
        api::msg_with("n2", "Night falls.", |m| {
            m.name = "Narrator".into();
            m.is_narrator = true;
        }),
        api::msg_with("h3", "(hidden by hand)", |m| {
            m.name = "Bob".into();
            m.hidden = true;
        }),
        user("u4", "Next day."),
        bob("a5", "Morning."),
        user("u6", "Bye"),
    ];
    server.publish("c", chat_changed(messages)).await.unwrap();
    for id in ["a1", "u4"] {
        let data = pb::MessageData {
            scene_break: Some(true),
            ..Default::default()
        };
        api::set_data(&mut server, "c", id, data).await;
    }
    let settings = pb::Settings {
        auto_hide_scene_count: Some(2),
        position: Some(pb::InjectionPosition::InChat as i32),
        depth: Some(2),
        role: Some(pb::InjectionRole::System as i32),
        template: Some("Memory: {{running_recap}}".into()),
        ..Default::default()
    };
    api::update(&mut server, "c", settings, &[]).await.unwrap();
    add_recap(&mut server, "c", "They met.").await;
    (dir, server)
}

fn stored(role: pb::InjectionRole, name: &str, content: &str, id: &str) -> pb::PromptMessage {
    pb::PromptMessage {
        message_id: id.into(),
        ..history(role, name, content, false)
    }
}

fn render_request(
    mode: pb::PromptMode,
    chat_id: &str,
    history: Vec<pb::PromptMessage>,
) -> pb::RenderPromptRequest {
    pb::RenderPromptRequest {
        chat_id: chat_id.into(),
        mode: mode as i32,
        story_string: "You are Bob.".into(),
        history,
        continue_last: false,
        extra: vec![],
        ..Default::default()
    }
}

/// Renders in both modes; checks that chat completion is the main prompt
/// followed by what text completion gives, and returns the latter.
async fn render_both(
    prompts: &mut PromptServiceClient<tonic::transport::Channel>,
    chat_id: &str,
    history: Vec<pb::PromptMessage>,
) -> Vec<pb::PromptMessage> {
    let text = prompts
        .render_prompt(render_request(
            pb::PromptMode::TextCompletion,
            chat_id,
            history.clone(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(text.text, "You are Bob.");
    let chat = prompts
        .render_prompt(render_request(
            pb::PromptMode::ChatCompletion,
            chat_id,
            history,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(chat.text, "");
    assert_eq!(
        chat.messages[0],
        history_message(pb::InjectionRole::System, "", "You are Bob.")
    );
    assert_eq!(chat.messages[1..], text.messages);
    text.messages
}

fn history_message(role: pb::InjectionRole, name: &str, content: &str) -> pb::PromptMessage {
    history(role, name, content, false)
}

#[tokio::test]
async fn with_a_chat_and_no_history_the_visible_stored_transcript_is_rendered() {
    use pb::InjectionRole::{Assistant, System, User};
    let (_dir, mut server) = stored_chat().await;
    let mut prompts = PromptServiceClient::new(server.channel.clone());
    // u0 and a1 are auto-hidden, h3 hidden by hand: the depth-2 memory goes
    // before the last two visible messages.
    assert_eq!(
        render_both(&mut prompts, "c", vec![]).await,
        [
            stored(System, "Narrator", "Night falls.", "n2"),
            stored(User, "Ann", "Next day.", "u4"),
            history_message(System, "", "Memory: They met."),
            stored(Assistant, "Bob", "Morning.", "a5"),
            stored(User, "Ann", "Bye", "u6"),
        ]
    );

    // Auto-hide follows the chat's current settings: with no scene kept
    // hidden, u0 and a1 (its current swipe's text) come back; the hand hide
    // stays.
    let settings = pb::Settings {
        auto_hide_scene_count: Some(0),
        ..Default::default()
    };
    api::update(&mut server, "c", settings, &[]).await.unwrap();
    let rendered = render_both(&mut prompts, "c", vec![]).await;
    let ids: Vec<&str> = rendered.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids, ["u0", "a1", "n2", "u4", "", "a5", "u6"]);
    assert_eq!(rendered[1], stored(Assistant, "Bob", "Hi Ann", "a1"));
    server.publish("c", api::swiped("a1", 0, "")).await.unwrap();
    let rendered = render_both(&mut prompts, "c", vec![]).await;
    assert_eq!(
        rendered[1],
        stored(Assistant, "Bob", "Hi (first swipe)", "a1")
    );

    // Without a chat, an empty history stays empty.
    assert_eq!(render_both(&mut prompts, "", vec![]).await, []);
    server.stop().await;
}

#[tokio::test]
async fn history_entries_linked_by_message_id_follow_the_stored_hidden_state() {
    use pb::InjectionRole::{Assistant, System, User};
    let (_dir, server) = stored_chat().await;
    let mut prompts = PromptServiceClient::new(server.channel.clone());
    let linked = |role, name: &str, content: &str, id: &str, hidden: bool| pb::PromptMessage {
        hidden,
        ..stored(role, name, content, id)
    };
    let given = vec![
        // Auto-hidden in the chat, although the entry says visible.
        linked(User, "Ann", "Hello", "u0", false),
        // Hidden by hand in the chat.
        linked(Assistant, "Bob", "(hidden by hand)", "h3", false),
        // Visible in the chat, although the entry says hidden.
        linked(User, "Ann", "Next day.", "u4", true),
        linked(Assistant, "Bob", "Morning.", "a5", false),
        // Not linked: its own flag applies.
        history(Assistant, "Bob", "(the backend's own hide)", true),
        history(User, "Ann", "What now?", false),
    ];
    assert_eq!(
        render_both(&mut prompts, "c", given.clone()).await,
        [
            stored(User, "Ann", "Next day.", "u4"),
            history_message(System, "", "Memory: They met."),
            stored(Assistant, "Bob", "Morning.", "a5"),
            history_message(User, "Ann", "What now?"),
        ]
    );

    // An id the chat does not hold names the entry.
    let mut unknown = given.clone();
    unknown[3].message_id = "gone".into();
    for mode in [
        pb::PromptMode::TextCompletion,
        pb::PromptMode::ChatCompletion,
    ] {
        let err = prompts
            .render_prompt(render_request(mode, "c", unknown.clone()))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::NotFound, "{}", err.message());
        assert!(
            err.message().contains(r#""gone""#) && err.message().contains("history[3].message_id"),
            "{}",
            err.message()
        );
    }
    // A message_id without a chat is refused, naming the entry.
    let err = prompts
        .render_prompt(render_request(pb::PromptMode::TextCompletion, "", given))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(
        err.message().contains("history[0].message_id"),
        "{}",
        err.message()
    );
    server.stop().await;
}
