//! The message-recap tier (`auto_recap_messages`): off by default; when on,
//! a second injection with its own revision, in the same Subscribe stream,
//! by key in GetInjection, and placed by RenderPrompt.

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;
use tonic::Code;

async fn set_memory(server: &mut Server, id: &str, memory: &str) {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "c".into(),
            message_id: id.into(),
            data: Some(pb::MessageData {
                memory: Some(memory.into()),
                ..Default::default()
            }),
        })
        .await
        .unwrap();
}

async fn tier(server: &mut Server) -> Result<pb::Injection, tonic::Status> {
    server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: Some("auto_recap_messages".into()),
        })
        .await
        .map(|r| r.into_inner())
}

#[tokio::test]
async fn the_tier_is_a_second_injection_with_its_own_revision() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    server
        .publish(
            "c",
            chat_changed(vec![
                message("m1", "one"),
                message("m2", "two"),
                message("m3", "three"),
            ]),
        )
        .await
        .unwrap();
    set_memory(&mut server, "m1", "Ann arrives.").await;
    set_memory(&mut server, "m3", "Bob leaves.").await;
    // Off by default: nothing under the tier's key.
    let off = tier(&mut server).await.unwrap();
    assert_eq!(
        (off.key.as_str(), off.revision, off.text.as_str()),
        ("auto_recap_messages", 0, "")
    );

    let mut stream = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["c".into()],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let snapshot = next_within(&mut stream, 5).await.unwrap();
    assert_eq!(snapshot.key, "auto_recap_scene");

    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c".into(),
            settings: Some(pb::Settings {
                message_recaps_enabled: Some(true),
                message_recaps_template: Some("Recent events:\n{{message_recaps}}".into()),
                message_recaps_position: Some(pb::InjectionPosition::InChat as i32),
                message_recaps_depth: Some(1),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    // One refresh, two pushes: the scene injection and the tier, each with its key.
    let mut pushed = [
        next_within(&mut stream, 5).await.unwrap(),
        next_within(&mut stream, 5).await.unwrap(),
    ];
    pushed.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(pushed[0].key, "auto_recap_messages");
    assert_eq!(
        (pushed[0].revision, pushed[0].text.as_str()),
        (1, "Recent events:\nAnn arrives.\nBob leaves.")
    );
    assert_eq!(pushed[1].key, "auto_recap_scene");
    assert!(
        pushed[1].revision > 1,
        "the scene injection keeps its own count"
    );
    assert_eq!(tier(&mut server).await.unwrap(), pushed[0]);
    let scene = server.injection("c").await;
    assert_eq!(
        scene.key, "auto_recap_scene",
        "the default key stays the scene's"
    );

    // RenderPrompt places it like any extension prompt.
    let rendered = PromptServiceClient::new(server.channel.clone())
        .render_prompt(pb::RenderPromptRequest {
            chat_id: "c".into(),
            mode: pb::PromptMode::TextCompletion as i32,
            story_string: "S".into(),
            history: vec![
                pb::PromptMessage {
                    role: pb::InjectionRole::User as i32,
                    name: "Ann".into(),
                    content: "a".into(),
                    hidden: false,
                    message_id: String::new(),
                },
                pb::PromptMessage {
                    role: pb::InjectionRole::Assistant as i32,
                    name: "Bob".into(),
                    content: "b".into(),
                    hidden: false,
                    message_id: String::new(),
                },
            ],
            continue_last: false,
            extra: vec![],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let contents: Vec<&str> = rendered
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        contents,
        ["a", "Recent events:\nAnn arrives.\nBob leaves.", "b"]
    );

    // Turned off: one last, empty tier injection so clients drop it.
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c".into(),
            settings: Some(pb::Settings {
                message_recaps_enabled: Some(false),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    let last = tier(&mut server).await.unwrap();
    assert_eq!((last.revision, last.text.as_str()), (2, ""));

    let err = server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: Some("auto_recap_lore".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    server.stop().await;
}
