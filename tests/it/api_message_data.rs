//! Per-message data over the API: SetMessageData, ClearMemory, running
//! recap versions (add, select, delete) and the injection template.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

async fn recaps(server: &mut Server, chat: &str) -> pb::ListRunningRecapsResponse {
    server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("list running recaps")
        .into_inner()
}

fn version_numbers(list: &pb::ListRunningRecapsResponse) -> Vec<u32> {
    list.versions.iter().map(|v| v.version).collect()
}

async fn add_scene_recap(
    server: &mut Server,
    chat: &str,
    content: &str,
    prev: &str,
    new: &str,
) -> Result<pb::RunningRecapVersion, tonic::Status> {
    server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: chat.into(),
            content: content.into(),
            scene_count: 0,
            excluded_count: 0,
            prev_scene_message_id: prev.into(),
            new_scene_message_id: new.into(),
        })
        .await
        .map(|r| r.into_inner())
}

async fn select(
    server: &mut Server,
    chat: &str,
    version: u32,
) -> Result<pb::ListRunningRecapsResponse, tonic::Status> {
    server
        .memory
        .select_running_recap(pb::SelectRunningRecapRequest {
            chat_id: chat.into(),
            version,
        })
        .await
        .map(|r| r.into_inner())
}

async fn delete(
    server: &mut Server,
    chat: &str,
    version: u32,
) -> Result<pb::ListRunningRecapsResponse, tonic::Status> {
    server
        .memory
        .delete_running_recap(pb::DeleteRunningRecapRequest {
            chat_id: chat.into(),
            version,
        })
        .await
        .map(|r| r.into_inner())
}

fn full_data() -> pb::MessageData {
    pb::MessageData {
        memory: Some("Alice met Bob.".into()),
        prefill: Some("In this scene: ".into()),
        exclude: Some(true),
        error: Some("rate limited".into()),
        reasoning: Some("thinking".into()),
        edited: Some(true),
        scene_break: Some(true),
        scene_break_visible: Some(false),
        scene_break_name: Some("Chapter 1".into()),
        scene_recap_memory: Some("scene recap".into()),
        is_auto_recap_system_memory: Some(false),
        scene_recap_versions: vec!["scene recap".into()],
        scene_recap_current_index: Some(0),
    }
}

#[tokio::test]
async fn set_message_data_changes_only_the_present_fields() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let full = full_data();
    assert_eq!(set_data(&mut s, "c", "m", full.clone()).await, full);
    assert_eq!(data(&mut s, "c", "m").await, full);

    let answer = set_data(
        &mut s,
        "c",
        "m",
        pb::MessageData {
            memory: Some("Alice left.".into()),
            exclude: Some(false),
            ..Default::default()
        },
    )
    .await;
    let expected = pb::MessageData {
        memory: Some("Alice left.".into()),
        exclude: Some(false),
        ..full.clone()
    };
    assert_eq!(answer, expected);
    assert_eq!(data(&mut s, "c", "m").await, expected);

    // Nothing present: nothing changes.
    assert_eq!(
        set_data(&mut s, "c", "m", pb::MessageData::default()).await,
        expected
    );
    // An empty string is a value, not an unset.
    let answer = set_data(
        &mut s,
        "c",
        "m",
        pb::MessageData {
            error: Some(String::new()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(answer.error.as_deref(), Some(""));
    assert_eq!(answer.memory.as_deref(), Some("Alice left."));
    s.stop().await;
}

#[tokio::test]
async fn clear_memory_unsets_memory_error_reasoning_prefill_and_resets_edited_and_exclude() {
    let (_dir, mut s) = start().await;
    s.publish(
        "c",
        chat_changed(vec![message("m", "x"), message("bare", "y")]),
    )
    .await
    .unwrap();
    set_data(&mut s, "c", "m", full_data()).await;
    let expected = pb::MessageData {
        memory: None,
        prefill: None,
        error: None,
        reasoning: None,
        edited: Some(false),
        exclude: Some(false),
        ..full_data()
    };
    let answer = s
        .memory
        .clear_memory(pb::ClearMemoryRequest {
            chat_id: "c".into(),
            message_id: "m".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer, expected);
    assert_eq!(data(&mut s, "c", "m").await, expected);

    let answer = s
        .memory
        .clear_memory(pb::ClearMemoryRequest {
            chat_id: "c".into(),
            message_id: "bare".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        answer,
        pb::MessageData {
            edited: Some(false),
            exclude: Some(false),
            ..Default::default()
        }
    );
    assert_eq!(
        trigger(&s.injection("c").await),
        pb::RefreshTrigger::MessageDataChanged
    );
    s.stop().await;
}

#[tokio::test]
async fn running_recap_versions_count_from_zero_and_the_current_one_is_injected() {
    let (_dir, mut s) = start().await;
    s.publish(
        "c",
        chat_changed(vec![message("s1", "x"), message("s2", "y")]),
    )
    .await
    .unwrap();
    assert_eq!(
        recaps(&mut s, "c").await,
        pb::ListRunningRecapsResponse::default()
    );
    let before = s.injection("c").await.revision;
    let v0 = s
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "c".into(),
            content: "zero".into(),
            scene_count: 3,
            excluded_count: 1,
            prev_scene_message_id: "s1".into(),
            new_scene_message_id: "s2".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(v0.version, 0);
    assert_eq!(
        (v0.content.as_str(), v0.scene_count, v0.excluded_count),
        ("zero", 3, 1)
    );
    assert_eq!(
        (
            v0.prev_scene_message_id.as_str(),
            v0.new_scene_message_id.as_str()
        ),
        ("s1", "s2")
    );
    assert!(v0.created_at.is_some());
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, before + 1);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RunningRecapChanged);
    assert_eq!(injection.running_recap_version, Some(0));

    assert_eq!(add_recap(&mut s, "c", "one").await.version, 1);
    assert_eq!(add_recap(&mut s, "c", "two").await.version, 2);
    let list = recaps(&mut s, "c").await;
    assert_eq!(list.current_version, Some(2));
    assert_eq!(version_numbers(&list), [0, 1, 2]);
    assert_eq!(list.versions[0], v0);
    assert!(s.injection("c").await.text.contains("two"));

    // Select.
    let list = select(&mut s, "c", 0).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(0), vec![0, 1, 2])
    );
    let injection = s.injection("c").await;
    assert_eq!(injection.running_recap_version, Some(0));
    assert!(injection.text.contains("zero") && !injection.text.contains("two"));
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RunningRecapChanged);

    // Deleting the current one: the highest remaining becomes current.
    select(&mut s, "c", 1).await.unwrap();
    let list = delete(&mut s, "c", 1).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(2), vec![0, 2])
    );
    assert_eq!(s.injection("c").await.running_recap_version, Some(2));
    // Deleting another keeps the current one.
    let list = delete(&mut s, "c", 0).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(2), vec![2])
    );
    // New = highest existing + 1.
    assert_eq!(add_recap(&mut s, "c", "three").await.version, 3);

    // Unknown versions: NOT_FOUND, nothing changes.
    let revision = s.injection("c").await.revision;
    assert_code(select(&mut s, "c", 9).await, Code::NotFound, "9");
    assert_code(delete(&mut s, "c", 1).await, Code::NotFound, "1");
    assert_eq!(s.injection("c").await.revision, revision);
    // Unknown scene messages: NOT_FOUND, nothing added.
    assert_code(
        add_scene_recap(&mut s, "c", "x", "nope", "").await,
        Code::NotFound,
        "nope",
    );
    assert_code(
        add_scene_recap(&mut s, "c", "x", "", "nope").await,
        Code::NotFound,
        "nope",
    );
    assert_code(
        add_scene_recap(&mut s, "nochat", "x", "", "").await,
        Code::NotFound,
        "nochat",
    );
    assert_eq!(version_numbers(&recaps(&mut s, "c").await), [2, 3]);
    assert_eq!(s.injection("c").await.revision, revision);

    // No version left: empty text, no version.
    delete(&mut s, "c", 3).await.unwrap();
    let list = delete(&mut s, "c", 2).await.unwrap();
    assert_eq!(list, pb::ListRunningRecapsResponse::default());
    let injection = s.injection("c").await;
    assert_eq!(
        (
            injection.text.as_str(),
            injection.running_recap_version,
            injection.token_count
        ),
        ("", None, 0)
    );
    // And a new first version after that starts from 0 again.
    assert_eq!(add_recap(&mut s, "c", "again").await.version, 0);
    s.stop().await;
}

#[tokio::test]
async fn deleting_a_message_deletes_the_versions_whose_scene_is_no_longer_valid() {
    let (_dir, mut s) = start().await;
    let messages = ["s1", "s2", "s3", "x", "y"]
        .iter()
        .map(|id| message(id, "t"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let scene = |text: &str| pb::MessageData {
        scene_recap_memory: Some(text.into()),
        ..Default::default()
    };
    set_data(&mut s, "c", "s1", scene("scene one")).await;
    set_data(&mut s, "c", "s2", scene("")).await; // empty counts as none
    set_data(&mut s, "c", "x", scene("scene x")).await;
    // s3 never gets a scene recap.
    let v0 = add_scene_recap(&mut s, "c", "no scene", "", "")
        .await
        .unwrap();
    let v1 = add_scene_recap(&mut s, "c", "s1 is fine", "s2", "s1")
        .await
        .unwrap();
    let v2 = add_scene_recap(&mut s, "c", "s2 has an empty recap", "", "s2")
        .await
        .unwrap();
    let v3 = add_scene_recap(&mut s, "c", "s3 has no recap", "", "s3")
        .await
        .unwrap();
    let v4 = add_scene_recap(&mut s, "c", "x will be deleted", "s1", "x")
        .await
        .unwrap();
    assert_eq!(
        [v0.version, v1.version, v2.version, v3.version, v4.version],
        [0, 1, 2, 3, 4]
    );
    assert_eq!(recaps(&mut s, "c").await.current_version, Some(4));

    let revision = s.publish("c", message_deleted("x")).await.unwrap();
    let list = recaps(&mut s, "c").await;
    assert_eq!(version_numbers(&list), [0, 1]);
    assert_eq!(
        list.current_version,
        Some(1),
        "the highest remaining became current"
    );
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, revision);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::MessageDeleted);
    assert_eq!(injection.running_recap_version, Some(1));
    assert!(injection.text.contains("s1 is fine"));

    // The version's other scene reference (prev) going away is not a reason.
    s.publish("c", message_deleted("s2")).await.unwrap();
    assert_eq!(version_numbers(&recaps(&mut s, "c").await), [0, 1]);
    // Losing the recap of s1, then any deletion, removes v1.
    set_data(&mut s, "c", "s1", scene("")).await;
    s.publish("c", message_deleted("y")).await.unwrap();
    let list = recaps(&mut s, "c").await;
    assert_eq!(
        (version_numbers(&list), list.current_version),
        (vec![0], Some(0))
    );
    assert!(s.injection("c").await.text.contains("no scene"));
    s.stop().await;
}

#[tokio::test]
async fn the_template_replaces_every_placeholder_literally() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let template = |t: &str| pb::Settings {
        template: Some(t.into()),
        ..Default::default()
    };
    // No version yet: empty text whatever the template.
    update(&mut s, "c", template("A {{running_recap}}"), &[])
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.text, "");

    let content = "x$1 $0 \\n {{running_recap}} ${running_recap}";
    add_recap(&mut s, "c", content).await;
    update(
        &mut s,
        "c",
        template("A {{running_recap}} B {{running_recap}}"),
        &[],
    )
    .await
    .unwrap();
    let expected = format!("A {content} B {content}");
    let injection = s.injection("c").await;
    assert_eq!(injection.text, expected);
    assert_eq!(injection.token_count, o200k(&expected));

    update(&mut s, "c", template("No placeholder here."), &[])
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.text, "No placeholder here.");
    for blank in ["", " \n\t "] {
        update(&mut s, "c", template(blank), &[]).await.unwrap();
        assert_eq!(
            s.injection("c").await.text,
            content,
            "blank template {blank:?}"
        );
    }
    // Empty content gives empty text.
    add_recap(&mut s, "c", "").await;
    update(&mut s, "c", template("A {{running_recap}}"), &[])
        .await
        .unwrap();
    let injection = s.injection("c").await;
    assert_eq!((injection.text.as_str(), injection.token_count), ("", 0));
    s.stop().await;
}

#[tokio::test]
async fn an_imported_current_version_that_names_no_version_injects_nothing() {
    let (dir, mut s) = start().await;
    let file = concat!(
        r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":5,"versions":["#,
        r#"{"version":0,"content":"They met."},{"version":1,"content":"They met and left."}]}}}"#,
        "\n",
        r#"{"name":"Bob","is_user":false,"mes":"Hello."}"#,
        "\n",
    );
    s.memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "c".into(),
            jsonl: file.as_bytes().to_vec(),
            ..Default::default()
        })
        .await
        .unwrap();
    let check = |injection: pb::Injection| {
        assert_eq!(injection.text, "", "no fall-back to the highest version");
        assert_eq!(injection.running_recap_version, None);
    };
    check(s.injection("c").await);
    let listed = recaps(&mut s, "c").await;
    assert_eq!(listed.current_version, Some(5));
    assert_eq!(listed.versions.len(), 2);
    // Deleting another version leaves it as it is; so does a restart.
    delete(&mut s, "c", 0).await.unwrap();
    check(s.injection("c").await);
    s.stop().await;
    let mut s = Server::start(dir.path()).await;
    assert_eq!(recaps(&mut s, "c").await.current_version, Some(5));
    check(refresh(&mut s, "c").await.unwrap());
    // The export writes the number back as the file had it.
    let exported = s
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .jsonl;
    let header: serde_json::Value = serde_json::from_str(
        std::str::from_utf8(&exported)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        header["chat_metadata"]["auto_recap_running_scene_recaps"]["current_version"],
        5
    );
    // Selecting a version makes it current and injected.
    select(&mut s, "c", 1).await.unwrap();
    let injection = s.injection("c").await;
    assert!(
        injection.text.contains("They met and left."),
        "{injection:?}"
    );
    assert_eq!(injection.running_recap_version, Some(1));
    s.stop().await;
}
