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
