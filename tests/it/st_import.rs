//! SillyTavern chat files through the API: ImportChat, ExportChat, and a
//! round trip, with generated fixtures (tests/fixtures/make_fixtures.py) and
//! hand-made ones reproducing shapes real files have
//! (tests/fixtures/README.md says where each shape comes from).

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use serde_json::Value;
use tonic::Code;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn lines(jsonl: &[u8]) -> Vec<Value> {
    std::str::from_utf8(jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn a_sillytavern_chat_imports_with_its_recaps_and_exports_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let file = fixture("bob-harbour");
    let source = lines(&file);
    let imported = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "harbour".into(),
            jsonl: file.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let versions = source[0]["chat_metadata"]["auto_recap_running_scene_recaps"]["versions"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(imported.message_count as usize, source.len() - 1);
    assert_eq!(imported.running_recap_count as usize, versions);

    // Messages, flags and per-message data as the file has them.
    let inclusion = server
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: "harbour".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .messages;
    assert_eq!(inclusion.len(), source.len() - 1);
    for (i, (line, m)) in source[1..].iter().zip(&inclusion).enumerate() {
        assert_eq!(m.message_id, format!("m{i}"));
        if line["is_system"] == Value::Bool(true) {
            assert!(m.hidden, "m{i} was hidden by hand");
        }
        let data = server
            .memory
            .get_message_data(pb::GetMessageDataRequest {
                swipe_id: None,
                chat_id: "harbour".into(),
                message_id: m.message_id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            data.memory.as_deref(),
            line["extra"]["auto_recap_memory"]["memory"].as_str(),
            "m{i} memory"
        );
        assert_eq!(
            data.scene_recap_memory.as_deref(),
            line["extra"]["auto_recap_memory"]["scene_recap_memory"].as_str()
        );
    }
    // Running recaps: the current version is injected; scene indices are message ids.
    let list = server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: "harbour".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let meta = &source[0]["chat_metadata"]["auto_recap_running_scene_recaps"];
    let current = meta["current_version"].as_u64().unwrap() as u32;
    assert_eq!(list.current_version, Some(current));
    let first = &meta["versions"][0];
    assert_eq!(
        list.versions[0].new_scene_message_id,
        format!("m{}", first["new_scene_index"])
    );
    let injection = server.injection("harbour").await;
    let content = meta["versions"][current as usize]["content"]
        .as_str()
        .unwrap();
    assert!(injection.text.contains(content), "{}", injection.text);
    assert!(
        injection.auto_hidden_count > 0,
        "the file's scene breaks drive auto-hide"
    );

    // Export, import as another chat, export again: the same file.
    let exported = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "harbour".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .jsonl;
    server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "copy".into(),
            jsonl: exported.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    let again = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "copy".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .jsonl;
    let (a, b) = (lines(&exported), lines(&again));
    assert_eq!(a[1..], b[1..], "messages survive the round trip");
    assert_eq!(
        a[0]["chat_metadata"]["auto_recap_running_scene_recaps"]["versions"],
        b[0]["chat_metadata"]["auto_recap_running_scene_recaps"]["versions"]
    );
    // And the export says what the source said.
    for (src, out) in source[1..].iter().zip(&a[1..]) {
        assert_eq!(src["mes"], out["mes"]);
        assert_eq!(src["name"], out["name"]);
        assert_eq!(
            src.get("swipes")
                .cloned()
                .unwrap_or(Value::Null)
                .as_array()
                .map(|s| s.len()),
            out["swipes"].as_array().map(|s| s.len()).filter(|n| *n > 1)
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn importing_replaces_a_chat_and_a_bad_file_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("old", "old text")]))
        .await
        .unwrap();
    let imported = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "c".into(),
            jsonl: fixture("bob-short"),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(imported.message_count, 60);
    let err = server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: "c".into(),
            message_id: "old".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "the old transcript is replaced");
    let before = server.injection("c").await;

    let mut broken = fixture("bob-short");
    broken.extend_from_slice(b"{not json\n");
    let err = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "c".into(),
            jsonl: broken,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("line 62"), "{}", err.message());
    assert_eq!(
        server.injection("c").await,
        before,
        "nothing of a bad file is stored"
    );
    let err = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "d".into(),
            jsonl: vec![0xff, 0xfe],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "nobody".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_and_export_commands_talk_to_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let addr = server.app.as_ref().unwrap().local_addr().to_string();
    let path = format!(
        "{}/tests/fixtures/bob-short.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_recapd"))
                .args(args)
                .output()
                .unwrap()
        })
    };
    let out = run(vec!["import".into(), "--addr".into(), addr.clone(), path])
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("chat \"bob-short\", 60 messages"));
    let out = run(vec![
        "export".into(),
        "--addr".into(),
        addr.clone(),
        "bob-short".into(),
    ])
    .await
    .unwrap();
    assert!(out.status.success());
    assert_eq!(lines(&out.stdout).len(), 61);
    let out = run(vec![
        "export".into(),
        "--addr".into(),
        addr,
        "nobody".into(),
    ])
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    server.stop().await;
}

async fn import(server: &mut Server, chat: &str, jsonl: Vec<u8>) -> pb::ImportChatResponse {
    server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: chat.into(),
            jsonl,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test]
async fn real_file_shapes_import_whole_without_warnings() {
    let (_dir, mut server) = start().await;

    // A swipe being generated: `swipe_id` == swipes.length, `mes` is it.
    let done = import(&mut server, "swiping", fixture("st-swipe-in-progress")).await;
    assert_eq!((done.message_count, done.warnings.len()), (2, 0));
    let exported = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "swiping".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .jsonl;
    let bob = &lines(&exported)[2];
    assert_eq!(bob["mes"], "It has stood there for a century, and");
    // Written back as SillyTavern saved it: `swipes` without the swipe
    // being generated, `swipe_id` past them.
    assert_eq!(bob["swipes"].as_array().unwrap().len(), 2);
    assert_eq!(bob["swipes"][0], "It is old.");
    assert_eq!(bob["swipe_id"], 2, "the text being generated is current");
    let current = inclusion(&mut server, "swiping").await;
    assert_eq!(current.len(), 2);
    assert_eq!(
        bob["swipe_info"][0]["extra"]["auto_recap_memory"]["memory"],
        "Bob says it is old."
    );

    // An older group-chat backup: no header, the first line is a message.
    let done = import(&mut server, "group", fixture("st-group-backup")).await;
    assert_eq!((done.message_count, done.warnings.len()), (3, 0));
    let order: Vec<_> = inclusion(&mut server, "group")
        .await
        .into_iter()
        .map(|m| m.message_id)
        .collect();
    assert_eq!(order, ["m0", "m1", "m2"], "the first message is kept");
    assert_eq!(
        data(&mut server, "group", "m1").await.memory.as_deref(),
        Some("Bob follows Ann.")
    );

    // A byte-order mark in front, as Windows editors save.
    let file = fixture("st-bom");
    assert!(file.starts_with(&[0xef, 0xbb, 0xbf]));
    let done = import(&mut server, "bom", file).await;
    assert_eq!((done.message_count, done.running_recap_count), (2, 1));
    assert!(done.warnings.is_empty());
    let list = versions(&mut server, "bom").await;
    assert_eq!(list.current_version, Some(0));
    assert_eq!(list.versions[0].new_scene_message_id, "m1");
    server.stop().await;
}

#[tokio::test]
async fn invalid_utf8_is_refused_naming_its_line() {
    let (_dir, mut server) = start().await;
    let mut file = fixture("st-bom");
    let third_line = file
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .map(|(i, _)| i + 1)
        .unwrap();
    file[third_line + 10] = 0xff;
    let err = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "broken".into(),
            jsonl: file,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("line 3"), "{}", err.message());
    assert!(err.message().contains("UTF-8"), "{}", err.message());
    server.stop().await;
}

#[tokio::test]
async fn repaired_versions_are_kept_and_each_repair_is_reported() {
    let (_dir, mut server) = start().await;
    let done = import(&mut server, "repairs", fixture("st-repairs")).await;
    assert_eq!((done.message_count, done.running_recap_count), (3, 3));
    assert_eq!(done.warnings.len(), 2, "{:?}", done.warnings);
    assert!(
        done.warnings[0].starts_with("line 1: ") && done.warnings[0].contains("new_scene_index 7"),
        "{:?}",
        done.warnings
    );
    assert!(
        done.warnings[1].starts_with("line 1: ") && done.warnings[1].contains("now version 4"),
        "{:?}",
        done.warnings
    );
    let list = versions(&mut server, "repairs").await;
    let numbered: Vec<_> = list
        .versions
        .iter()
        .map(|v| {
            (
                v.version,
                v.content.as_str(),
                v.new_scene_message_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        numbered,
        [
            (2, "The storm begins.", "m1"),
            (3, "The storm ends at dawn.", ""),
            (4, "The storm ends; they rest.", "m2"),
        ]
    );
    assert_eq!(
        list.current_version,
        Some(3),
        "the first version 3 stays current"
    );
    let injection = refresh(&mut server, "repairs").await.unwrap();
    assert!(
        injection.text.contains("The storm ends at dawn."),
        "{injection:?}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_command_prints_repairs_on_stderr_and_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let addr = server.app.as_ref().unwrap().local_addr().to_string();
    let path = format!(
        "{}/tests/fixtures/st-repairs.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_recapd"))
            .args(["import", "--addr", &addr, &path])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains(": line 1: ")).count(),
        2,
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("chat \"st-repairs\", 3 messages"));
    server.stop().await;
}
