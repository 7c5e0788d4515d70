//! Scene-recap versions and the way back to SillyTavern, hand edits and
//! earlier swipes' data (issue 43, items 1 and 5).
//!
//! The extension-shaped file below reproduces what ST-Auto-Recap writes on
//! a scene break after the user regenerated its recap once:
//! `scene_recap_versions`, `scene_recap_current_index`, the copy of the
//! current version in `scene_recap_memory` and in the older mirror
//! `scene_break_recap`, a `scene_recap_hash` and `scene_recap_metadata`
//! keyed by version index (the keys its `saveSceneRecap` writes).

use crate::common::api::*;
use crate::common::fake_llm::FakeLlm;
use crate::common::*;
use crate::recap_jobs::{
    all_finished, open_chat, start_with_llm, story, story_chat, wait_for_jobs,
};
use crate::st_roundtrip::{export, jsonl_of};
use recapd::grpc::pb;
use serde_json::{Value, json};

async fn import(server: &mut Server, chat: &str, lines: &[Value]) {
    crate::st_roundtrip::import(server, chat, jsonl_of(lines)).await;
}

async fn data(
    server: &mut Server,
    chat: &str,
    message: &str,
    swipe: Option<u32>,
) -> pb::MessageData {
    server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            chat_id: chat.into(),
            message_id: message.into(),
            swipe_id: swipe,
        })
        .await
        .expect("message data")
        .into_inner()
}

async fn set(
    server: &mut Server,
    chat: &str,
    message: &str,
    data: pb::MessageData,
    edit: bool,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            chat_id: chat.into(),
            message_id: message.into(),
            data: Some(data),
            edit,
        })
        .await
        .map(|r| r.into_inner())
}

async fn select(
    server: &mut Server,
    chat: &str,
    message: &str,
    index: u32,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .select_scene_recap_version(pb::SelectSceneRecapVersionRequest {
            chat_id: chat.into(),
            message_id: message.into(),
            index,
        })
        .await
        .map(|r| r.into_inner())
}

/// The extension's data of the exported line of message `index` (after the
/// header line).
fn recap_data(lines: &[Value], index: usize) -> &Value {
    &lines[index + 1]["extra"]["auto_recap_memory"]
}

/// What the extension needs to show a scene recap and keep the running
/// recaps built on it: a versions list whose current entry is the scene
/// recap (without one, its first render sets `scene_recap_memory` to ""
/// and its cleanup then deletes those running recaps).
fn assert_extension_keeps(data: &Value, recap: &str) {
    let versions = data["scene_recap_versions"]
        .as_array()
        .unwrap_or_else(|| panic!("no scene_recap_versions in {data}"));
    let index = data["scene_recap_current_index"].as_u64().unwrap_or(0) as usize;
    assert_eq!(versions.get(index), Some(&json!(recap)), "{data}");
    assert_eq!(data["scene_recap_memory"], json!(recap), "{data}");
}

#[tokio::test]
async fn a_scene_recapd_recaps_exports_with_versions_the_extension_keeps() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "c", story_chat(6, &[])).await;
    let generate = |recaps: &mut pb::recap_service_client::RecapServiceClient<_>| {
        let mut recaps = recaps.clone();
        async move {
            recaps
                .generate_scene_recap(pb::GenerateSceneRecapRequest {
                    chat_id: "c".into(),
                    message_id: "m3".into(),
                })
                .await
                .expect("scene recap queued");
        }
    };
    generate(&mut recaps).await;
    wait_for_jobs(&mut recaps, "c", "the first scene recap", all_finished).await;
    let first = data(&mut server, "c", "m3", None).await;
    let first_recap = first.scene_recap_memory.clone().expect("a scene recap");
    assert_eq!(first.scene_recap_versions, vec![first_recap.clone()]);
    assert_extension_keeps(recap_data(&export(&mut server, "c").await, 3), &first_recap);

    // The scene changes and recapd recaps it again: a second version.
    server
        .publish(
            "c",
            pb::event::Kind::MessageEdited(pb::MessageEdited {
                message_id: "m3".into(),
                text: "line 3, said again".into(),
            }),
        )
        .await
        .unwrap();
    generate(&mut recaps).await;
    wait_for_jobs(&mut recaps, "c", "the second scene recap", |jobs| {
        all_finished(jobs) && jobs.len() >= 4
    })
    .await;
    let second = data(&mut server, "c", "m3", None).await;
    let second_recap = second.scene_recap_memory.clone().unwrap();
    assert_ne!(second_recap, first_recap);
    assert_eq!(
        second.scene_recap_versions,
        vec![first_recap.clone(), second_recap.clone()]
    );
    assert_eq!(second.scene_recap_current_index, Some(1));
    let exported = export(&mut server, "c").await;
    assert_extension_keeps(recap_data(&exported, 3), &second_recap);
}

/// A chat as the extension saves it: message 1 ends a scene recapped twice
/// (the first version shown), message 2 is a plain message.
fn extension_file() -> Vec<Value> {
    vec![
        json!({"user_name": "Ann", "character_name": "Bob", "chat_metadata": {}}),
        json!({"name": "Ann", "is_user": true, "is_system": false, "mes": "Hello."}),
        json!({"name": "Bob", "is_user": false, "is_system": false, "mes": "We part here.",
        "extra": {"auto_recap_memory": {
            "scene_break": true,
            "scene_break_visible": true,
            "scene_break_name": "The harbour",
            "scene_recap_memory": "They met at the harbour.",
            "scene_break_recap": "They met at the harbour.",
            "scene_recap_versions": ["They met at the harbour.", "Ann met Bob by the boats."],
            "scene_recap_current_index": 0,
            "scene_recap_hash": "1k2j3h",
            "scene_recap_metadata": {
                "0": {"timestamp": 1700000000000_u64, "startIdx": 0, "endIdx": 1},
                "1": {"timestamp": 1700000100000_u64, "startIdx": 0, "endIdx": 1}
            }
        }}}),
        json!({"name": "Ann", "is_user": true, "is_system": false, "mes": "Goodbye."}),
    ]
}

#[tokio::test]
async fn versions_import_flip_and_go_back_to_sillytavern_json_equal() {
    let (_dir, mut s) = start().await;
    import(&mut s, "st", &extension_file()).await;
    let got = data(&mut s, "st", "m1", None).await;
    assert_eq!(
        got.scene_recap_versions,
        vec!["They met at the harbour.", "Ann met Bob by the boats."]
    );
    assert_eq!(got.scene_recap_current_index, Some(0));

    // Flip to the second version, as the extension's arrows do.
    let flipped = select(&mut s, "st", "m1", 1).await.unwrap();
    assert_eq!(
        flipped.scene_recap_memory.as_deref(),
        Some("Ann met Bob by the boats.")
    );
    let err = select(&mut s, "st", "m1", 2).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("index"), "{}", err.message());

    // A client (or recapd) writes a third recap: appended and current.
    let third = pb::MessageData {
        scene_recap_memory: Some("Ann and Bob met; he sails at dawn.".into()),
        ..Default::default()
    };
    let after = set(&mut s, "st", "m1", third, false).await.unwrap();
    assert_eq!(after.scene_recap_versions.len(), 3);
    assert_eq!(after.scene_recap_current_index, Some(2));

    let first_export = export(&mut s, "st").await;
    let exported = recap_data(&first_export, 1);
    assert_extension_keeps(exported, "Ann and Bob met; he sails at dawn.");
    assert_eq!(
        exported["scene_break_recap"],
        json!("Ann and Bob met; he sails at dawn.")
    );
    // What recapd does not read comes back as the file had it.
    assert_eq!(exported["scene_recap_hash"], json!("1k2j3h"));
    assert_eq!(
        exported["scene_recap_metadata"],
        extension_file()[2]["extra"]["auto_recap_memory"]["scene_recap_metadata"]
    );

    // Export, import, export: JSON-equal.
    import(&mut s, "again", &first_export).await;
    assert_eq!(export(&mut s, "again").await, first_export);
}

#[tokio::test]
async fn an_unchanged_extension_file_comes_back_as_it_was() {
    let (_dir, mut s) = start().await;
    import(&mut s, "st", &extension_file()).await;
    assert_eq!(export(&mut s, "st").await, extension_file());
}

#[tokio::test]
async fn an_edit_by_hand_clears_what_edit_memory_clears() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let written = pb::MessageData {
        memory: Some("The LLM's recap.".into()),
        prefill: Some("Recap: ".into()),
        error: Some("a retry failed".into()),
        reasoning: Some("thinking".into()),
        ..Default::default()
    };
    set(&mut s, "c", "m", written, false).await.unwrap();
    let edited = set(
        &mut s,
        "c",
        "m",
        pb::MessageData {
            memory: Some("Written by hand.".into()),
            ..Default::default()
        },
        true,
    )
    .await
    .unwrap();
    assert_eq!(edited.memory.as_deref(), Some("Written by hand."));
    assert_eq!(
        (edited.prefill, edited.error, edited.reasoning),
        (None, None, None)
    );
    assert_eq!(edited.edited, Some(true));
    // Without `edit` these fields could not be unset at all.
    let err = set(&mut s, "c", "m", pb::MessageData::default(), true)
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("data.memory"), "{}", err.message());
}

#[tokio::test]
async fn an_earlier_swipes_data_can_be_read() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "first take")]))
        .await
        .unwrap();
    let memory = |text: &str| pb::MessageData {
        memory: Some(text.into()),
        ..Default::default()
    };
    set(&mut s, "c", "m", memory("recap of the first take"), false)
        .await
        .unwrap();
    s.publish(
        "c",
        pb::event::Kind::MessageSwiped(pb::MessageSwiped {
            message_id: "m".into(),
            swipe_id: 1,
            text: "second take".into(),
        }),
    )
    .await
    .unwrap();
    assert_eq!(data(&mut s, "c", "m", None).await.memory, None);
    assert_eq!(
        data(&mut s, "c", "m", Some(0)).await.memory.as_deref(),
        Some("recap of the first take")
    );
    let err = s
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            chat_id: "c".into(),
            message_id: "m".into(),
            swipe_id: Some(2),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("swipe_id"), "{}", err.message());
}
