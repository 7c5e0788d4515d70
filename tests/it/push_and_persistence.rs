//! Over a real socket: what a subscriber sees, debouncing, and what
//! survives a restart.

use std::time::Duration;

use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

#[tokio::test]
async fn a_subscriber_sees_publish_settings_and_recap_pushes_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server
        .publish("c1", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    let mut stream = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["c1".into()],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    // The snapshot first.
    let snapshot = next_within(&mut stream, 5).await.expect("snapshot");
    assert_eq!(
        (snapshot.revision, trigger(&snapshot)),
        (1, pb::RefreshTrigger::ChatChanged)
    );
    assert_eq!(snapshot.key, "auto_recap_scene");

    let version = add_recap(&mut server, "c1", "Alice met Bob.").await;
    assert_eq!(version.version, 0);
    let pushed = next_within(&mut stream, 5).await.expect("recap push");
    assert_eq!(
        (pushed.revision, trigger(&pushed)),
        (2, pb::RefreshTrigger::RunningRecapChanged)
    );
    assert!(pushed.text.contains("Alice met Bob."), "{}", pushed.text);
    assert!(pushed.text.starts_with("# Story Memory"));
    assert_eq!(pushed.running_recap_version, Some(0));
    assert!(pushed.token_count > 0);

    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c1".into(),
            settings: Some(pb::Settings {
                position: Some(pb::InjectionPosition::InChat as i32),
                depth: Some(4),
                role: Some(pb::InjectionRole::User as i32),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    let pushed = next_within(&mut stream, 5).await.expect("settings push");
    assert_eq!(
        (pushed.revision, trigger(&pushed)),
        (3, pb::RefreshTrigger::SettingsChanged)
    );
    assert_eq!(pushed.position, pb::InjectionPosition::InChat as i32);
    assert_eq!(
        (pushed.depth, pushed.role),
        (4, pb::InjectionRole::User as i32)
    );

    let revision = server.publish("c1", message_deleted("m1")).await.unwrap();
    assert_eq!(revision, 4);
    let pushed = next_within(&mut stream, 5).await.expect("delete push");
    assert_eq!(
        (pushed.revision, trigger(&pushed)),
        (4, pb::RefreshTrigger::MessageDeleted)
    );

    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "c1".into(),
            enabled: false,
        })
        .await
        .unwrap();
    let pushed = next_within(&mut stream, 5).await.expect("disable push");
    assert_eq!(
        (pushed.revision, pushed.enabled, pushed.text.as_str()),
        (5, false, "")
    );
    // A GetInjection after the answer sees what the stream saw.
    assert_eq!(server.injection("c1").await, pushed);
    server.stop().await;
}

#[tokio::test]
async fn a_debounced_burst_makes_exactly_one_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(200).await;
    server
        .publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    let mut stream = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["c".into()],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(next_within(&mut stream, 5).await.unwrap().revision, 1);
    for i in 1..=5 {
        let revision = server
            .publish("c", message_sent(&format!("u{i}"), "hi"))
            .await
            .unwrap();
        assert_eq!(revision, 1, "a debounced event answers before its refresh");
    }
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "c".into(),
            message_id: "u5".into(),
            data: Some(pb::MessageData {
                memory: Some("a recap".into()),
                ..Default::default()
            }),
        })
        .await
        .unwrap();
    let burst = next_within(&mut stream, 5)
        .await
        .expect("one refresh after the burst");
    assert_eq!(
        (burst.revision, trigger(&burst)),
        (2, pb::RefreshTrigger::MessageDataChanged)
    );
    assert!(
        next_within(&mut stream, 1).await.is_none(),
        "the burst refreshed more than once"
    );
    assert_eq!(server.injection("c").await.revision, 2);
    server.stop().await;
}

#[tokio::test]
async fn data_and_revisions_survive_a_restart_and_an_owed_refresh_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    // On PostgreSQL a starting replica cannot tell a stopped replica from a
    // running one, so an owed refresh runs when it is due (plus a grace),
    // by whichever replica gets there first: a short debounce lets the test
    // watch that happen once.
    let debounce = if on_postgres() { 3_000 } else { 60_000 };
    server.set_global_debounce(debounce).await;
    server
        .publish(
            "c",
            chat_changed(vec![message("m1", "one"), message("m2", "two")]),
        )
        .await
        .unwrap();
    add_recap(&mut server, "c", "first").await;
    add_recap(&mut server, "c", "second").await;
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "c".into(),
            message_id: "m2".into(),
            data: Some(pb::MessageData {
                memory: Some("m2 recap".into()),
                scene_break: Some(true),
                ..Default::default()
            }),
        })
        .await
        .unwrap();
    // An untouched chat keeps its revision across the restart.
    server.publish("quiet", refresh_requested()).await.unwrap();
    let before = server.injection("c").await;
    assert_eq!(before.revision, 3);
    // Leave without the graceful shutdown, which would run the owed refresh:
    // the old instance keeps its 60 s timer while a new one opens the data.
    let Server { app, .. } = server;
    drop(app);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut server = Server::start(dir.path()).await;
    let after = if on_postgres() {
        // Due 3 s after the last change; the old instance (still running
        // its timer) or the new one (adopting it 1 s later) runs it.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while server.injection("c").await.revision < 4 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the owed refresh never ran"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        tokio::time::sleep(Duration::from_millis(2_500)).await;
        let after = server.injection("c").await;
        assert!(
            [
                pb::RefreshTrigger::Startup,
                pb::RefreshTrigger::MessageDataChanged
            ]
            .contains(&trigger(&after))
        );
        after
    } else {
        let after = server.injection("c").await;
        assert_eq!(trigger(&after), pb::RefreshTrigger::Startup);
        after
    };
    assert_eq!(
        after.revision, 4,
        "the owed debounced refresh ran once at start-up"
    );
    assert_eq!(after.text, before.text);
    assert_eq!(server.injection("quiet").await.revision, 1);
    let data = server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: "c".into(),
            message_id: "m2".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(data.memory.as_deref(), Some("m2 recap"));
    let recaps = server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(recaps.current_version, Some(1));
    assert_eq!(recaps.versions.len(), 2);
    let settings = server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(settings.debounce_ms, Some(debounce));
    // Revisions keep counting up from where they were.
    assert_eq!(server.publish("c", refresh_requested()).await.unwrap(), 5);
    server.stop().await;

    let mut server = Server::start(dir.path()).await;
    assert_eq!(
        server.injection("c").await.revision,
        5,
        "nothing was owed this time"
    );
    server.stop().await;
}

#[tokio::test]
async fn unknown_chats_and_bad_requests_get_clear_codes() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let err = server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "nobody".into(),
            key: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = server.publish("", refresh_requested()).await.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("chat_id"), "{}", err.message());
    server
        .publish("c", chat_changed(vec![message("m1", "x")]))
        .await
        .unwrap();
    let err = server
        .publish("c", message_sent("m1", "again"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::AlreadyExists);
    let err = server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c".into(),
            settings: Some(pb::Settings {
                depth: Some(1001),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("depth"));
    // Nothing above changed the chat.
    assert_eq!(server.injection("c").await.revision, 1);
    server.stop().await;
}
