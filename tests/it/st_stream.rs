//! SillyTavern chat files of any size: ImportChatStream and
//! ExportChatStream over a socket, `recapd import` / `recapd export` on
//! them (and their fallback to the unary calls), and the server's peak
//! memory for a large chat.

use std::time::Duration;

use crate::common::api::*;
use crate::common::process::Recapd;
use crate::common::unary_only::UnaryOnly;
use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::memory_service_server::MemoryServiceServer;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic::{Code, Response, Status};

/// A SillyTavern chat file of `messages` messages whose texts are about
/// `text_bytes` bytes each (a line holds its text twice, as `mes` and as
/// its one swipe), in the shape SillyTavern writes (a header line
/// with `chat_metadata`, where ST-Auto-Recap keeps its running-recap
/// versions, then one line per message with `name`, `is_user`, `mes`,
/// `swipes`, `swipe_id` and the extension's `extra.auto_recap_memory`).
/// Texts mix in multi-byte UTF-8 so chunk boundaries fall inside
/// characters.
fn chat_file(messages: usize, text_bytes: usize) -> Vec<u8> {
    let mut out = json!({
        "user_name": "User",
        "character_name": "Bob",
        "chat_metadata": {
            "auto_recap_running_scene_recaps": {
                "chat_id": "big",
                "current_version": 0,
                "versions": [{
                    "version": 0, "timestamp": 1, "content": "So far: Bob — 日本.",
                    "scene_count": 1, "excluded_count": 0,
                    "prev_scene_index": 0, "new_scene_index": 1,
                }],
            }
        }
    })
    .to_string();
    out.push('\n');
    let unit = "Bob walks the harbour — café, 日本語, 🙂. ";
    let text = unit.repeat(text_bytes.div_ceil(unit.len()).max(1));
    for i in 0..messages {
        let is_user = i % 2 == 0;
        let mes = format!("{i}: {text}");
        let line = json!({
            "name": if is_user { "User" } else { "Bob" },
            "is_user": is_user,
            "mes": mes,
            "swipes": [mes],
            "swipe_id": 0,
            "extra": { "auto_recap_memory": { "memory": format!("memory {i} — é") } },
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

fn lines(jsonl: &[u8]) -> Vec<Value> {
    std::str::from_utf8(jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The texts (`mes`) of a file's messages.
fn texts(jsonl: &[u8]) -> Vec<String> {
    lines(jsonl)
        .iter()
        .filter_map(|l| l.get("mes").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// ImportChatStream with `file` cut into chunks of `chunk` bytes.
async fn import_stream(
    memory: &mut MemoryServiceClient<Channel>,
    chat_id: &str,
    file: &[u8],
    chunk: usize,
) -> Result<pb::ImportChatResponse, Status> {
    let mut requests: Vec<pb::ImportChatStreamRequest> = file
        .chunks(chunk)
        .map(|c| pb::ImportChatStreamRequest {
            chat_id: String::new(),
            chunk: c.to_vec(),
            ..Default::default()
        })
        .collect();
    if requests.is_empty() {
        requests.push(pb::ImportChatStreamRequest::default());
    }
    requests[0].chat_id = chat_id.into();
    memory
        .import_chat_stream(tokio_stream::iter(requests))
        .await
        .map(Response::into_inner)
}

/// ExportChatStream, its chunks joined.
async fn export_stream(
    memory: &mut MemoryServiceClient<Channel>,
    chat_id: &str,
) -> Result<Vec<u8>, Status> {
    let mut chunks = memory
        .export_chat_stream(pb::ExportChatStreamRequest {
            chat_id: chat_id.into(),
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(next) = chunks.message().await? {
        assert!(next.chunk.len() <= 1 << 20, "a chunk over 1 MiB");
        out.extend_from_slice(&next.chunk);
    }
    Ok(out)
}

#[tokio::test]
async fn chunks_split_inside_lines_and_characters_import_as_the_whole_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let file = chat_file(12, 40);
    let whole = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "whole".into(),
            jsonl: file.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let expected = export_stream(&mut server.memory, "whole").await.unwrap();
    // Chunk sizes of 1, 2, 3, 5 and 7 bytes cut every multi-byte
    // character and every line somewhere.
    for chunk in [1, 2, 3, 5, 7, 4096] {
        let chat = format!("split{chunk}");
        let done = import_stream(&mut server.memory, &chat, &file, chunk)
            .await
            .unwrap();
        assert_eq!(done.chat_id, chat);
        assert_eq!(done.message_count, whole.message_count);
        assert_eq!(done.running_recap_count, 1);
        let exported = export_stream(&mut server.memory, &chat).await.unwrap();
        let mut exported = lines(&exported);
        let mut expected = lines(&expected);
        // The header names its chat.
        exported[0]["chat_metadata"]["auto_recap_running_scene_recaps"]["chat_id"] = json!("");
        expected[0]["chat_metadata"]["auto_recap_running_scene_recaps"]["chat_id"] = json!("");
        assert_eq!(exported, expected, "chunks of {chunk} bytes");
    }
    assert_eq!(texts(&expected), texts(&file));
    server.stop().await;
}

#[tokio::test]
async fn an_error_names_its_line_counted_across_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let mut file = chat_file(6, 30);
    // Line 5 (the fourth message) loses its closing brace.
    let text = String::from_utf8(file.clone()).unwrap();
    let mut broken: Vec<String> = text.lines().map(str::to_owned).collect();
    broken[4].pop();
    file = (broken.join("\n") + "\n").into_bytes();
    let err = import_stream(&mut server.memory, "bad", &file, 3)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("line 5"), "{err:?}");
    // Invalid UTF-8 split across two chunks, on line 3.
    let mut file = chat_file(4, 30);
    let third = file
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(1)
        .unwrap()
        .0;
    file.splice(third + 20..third + 20, [0xE6, 0x97]);
    let err = import_stream(&mut server.memory, "bad", &file, 1)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("line 3: not UTF-8"), "{err:?}");
    // A stream whose first message has no chat id.
    let err = import_stream(&mut server.memory, "", &chat_file(1, 10), 64)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    assert!(err.message().contains("chat_id"), "{err:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_import_keeps_the_old_chat_and_creates_no_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_chats = 2;
    let mut server = Server::start_with(config).await;
    let old = chat_file(5, 50);
    import_stream(&mut server.memory, "kept", &old, 100)
        .await
        .unwrap();
    let before = export_stream(&mut server.memory, "kept").await.unwrap();
    let mut bad = chat_file(8, 50);
    bad.extend_from_slice(b"{not json\n");
    for chat in ["kept", "new"] {
        let err = import_stream(&mut server.memory, chat, &bad, 64)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains("line 10"), "{err:?}");
    }
    // A client that goes away mid-stream.
    for chat in ["kept", "new"] {
        let (sender, receiver) = tokio::sync::mpsc::channel(4);
        let mut memory = server.memory.clone();
        let call = tokio::spawn(async move {
            memory
                .import_chat_stream(tokio_stream::wrappers::ReceiverStream::new(receiver))
                .await
        });
        let file = chat_file(20, 50);
        sender
            .send(pb::ImportChatStreamRequest {
                chat_id: chat.into(),
                chunk: file[..file.len() / 2].to_vec(),
                ..Default::default()
            })
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        call.abort();
        let _ = call.await;
        drop(sender);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        export_stream(&mut server.memory, "kept").await.unwrap(),
        before
    );
    let err = export_stream(&mut server.memory, "new").await.unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    // None of the failures took the second place under --max-chats.
    import_stream(&mut server.memory, "second", &old, 1 << 16)
        .await
        .unwrap();
    let err = import_stream(&mut server.memory, "third", &old, 1 << 16)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_sees_the_old_chat_or_the_new_one_never_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    import_stream(&mut server.memory, "c", &chat_file(10, 50), 1 << 16)
        .await
        .unwrap();
    let (started, reader_started) = tokio::sync::oneshot::channel();
    let reading = {
        let mut injections = server.injections.clone();
        tokio::spawn(async move {
            let mut started = Some(started);
            let mut seen = std::collections::BTreeSet::new();
            while seen.len() < 2 {
                let count = injections
                    .get_inclusion(pb::GetInclusionRequest {
                        chat_id: "c".into(),
                    })
                    .await
                    .unwrap()
                    .into_inner()
                    .messages
                    .len();
                assert!(
                    count == 10 || count == 3000,
                    "a reader saw {count} messages"
                );
                seen.insert(count);
                if let Some(started) = started.take() {
                    let _ = started.send(());
                }
            }
        })
    };
    reader_started.await.unwrap();
    import_stream(&mut server.memory, "c", &chat_file(3000, 500), 1 << 16)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(60), reading)
        .await
        .expect("the reader saw the new chat")
        .unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_over_the_unary_limit_round_trips_through_the_streams() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    // About 6 MiB: over the default --max-request-bytes (4 MiB), which
    // the unary ImportChat cannot take.
    let file = chat_file(2000, 3000);
    assert!(file.len() > 6 << 20);
    let err = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "big".into(),
            jsonl: file.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    let done = import_stream(&mut server.memory, "big", &file, 1 << 20)
        .await
        .unwrap();
    assert_eq!(done.message_count, 2000);
    let exported = export_stream(&mut server.memory, "big").await.unwrap();
    assert!(exported.len() > 4 << 20);
    assert_eq!(texts(&exported), texts(&file));
    // It survives a restart: it was stored, not only held in memory.
    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    let again = export_stream(&mut server.memory, "big").await.unwrap();
    assert_eq!(again, exported);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_is_one_snapshot_while_writes_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    // Far more than the chunks the server and the connection buffer.
    let file = chat_file(4000, 3000);
    import_stream(&mut server.memory, "c", &file, 1 << 20)
        .await
        .unwrap();
    let mut chunks = server
        .memory
        .export_chat_stream(pb::ExportChatStreamRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut exported = chunks.message().await.unwrap().unwrap().chunk;
    // While the export is under way (and its reader stalls), writes go on
    // and are not in it.
    let last = "m3999";
    tokio::time::timeout(Duration::from_secs(20), async {
        server
            .publish("c", edited(last, "edited during the export"))
            .await
            .unwrap();
        server
            .publish("c", message_sent("new", "sent during the export"))
            .await
            .unwrap();
    })
    .await
    .expect("writes are not held up by an export");
    while let Some(next) = chunks.message().await.unwrap() {
        exported.extend_from_slice(&next.chunk);
    }
    assert_eq!(texts(&exported), texts(&file));
    let after = texts(&export_stream(&mut server.memory, "c").await.unwrap());
    assert_eq!(after.len(), 4001);
    assert_eq!(after[3999], "edited during the export");
    assert_eq!(after[4000], "sent during the export");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_cut_by_shutdown_ends_with_an_error_not_a_short_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    import_stream(&mut server.memory, "c", &chat_file(3000, 3000), 1 << 20)
        .await
        .unwrap();
    let mut chunks = server
        .memory
        .export_chat_stream(pb::ExportChatStreamRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut got = chunks.message().await.unwrap().unwrap().chunk.len();
    let app = server.app.take().unwrap();
    let stopping = tokio::spawn(app.shutdown());
    let end = loop {
        match chunks.message().await {
            Ok(Some(next)) => got += next.chunk.len(),
            other => break other,
        }
    };
    // UNAVAILABLE, or the connection's reset when the server closes it
    // first: never a clean end after part of the file.
    let err = end.expect_err("an export cut short ends with an error");
    assert!(
        matches!(err.code(), Code::Unavailable | Code::Unknown),
        "{err:?}"
    );
    assert!(got < 3000 * 3000, "the export was cut short");
    tokio::time::timeout(Duration::from_secs(20), stopping)
        .await
        .expect("the server stops")
        .unwrap();
}

/// `recapd ARGS`, its output.
async fn recapd_command(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_recapd"))
            .args(args)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_stream_and_fall_back_to_unary_calls_on_an_older_server() {
    let dir = tempfile::tempdir().unwrap();
    let file = chat_file(1500, 3000);
    assert!(file.len() > 4 << 20);
    let path = dir.path().join("large.jsonl");
    std::fs::write(&path, &file).unwrap();
    let path = path.to_str().unwrap().to_owned();

    // recapd: a file over the unary limit goes through the streams.
    let server = Server::start(&dir.path().join("data")).await;
    let addr = server.app.as_ref().unwrap().local_addr().to_string();
    let out = recapd_command(args(&["import", "--addr", &addr, &path])).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("chat \"large\", 1500 messages"));
    let out = recapd_command(args(&["export", "--addr", &addr, "large"])).await;
    assert!(out.status.success());
    assert_eq!(texts(&out.stdout), texts(&file));
    server.stop().await;

    // A server without the streams: the unary calls.
    let older = UnaryOnly::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let serving = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(
                MemoryServiceServer::new(older.clone())
                    .max_decoding_message_size(usize::MAX)
                    .max_encoding_message_size(usize::MAX),
            )
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let out = recapd_command(args(&["import", "--addr", &addr, &path])).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(older.files.lock().unwrap()["large"], file);
    let out = recapd_command(args(&["export", "--addr", &addr, "large"])).await;
    assert!(out.status.success());
    assert_eq!(out.stdout, file);
    serving.abort();
}

/// The peak resident memory (VmHWM) of a process, in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("Linux reports VmHWM");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_chat_imports_and_exports_in_less_than_three_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    // About 45 MB: 8,000 messages of about 3 KB of text.
    let file = chat_file(8_000, 3000);
    let path = dir.path().join("large.jsonl");
    std::fs::write(&path, &file).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let recapd = Recapd::start(&dir.path().join("data"));
    let channel = recapd.channel().await;
    let mut memory = MemoryServiceClient::new(channel);
    let _ = memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: "warm-up".into(),
        })
        .await;
    let pid = recapd.child.id();
    let before = peak_memory(pid);
    let out = recapd_command(args(&["import", "--addr", &recapd.addr, &path])).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = recapd_command(args(&["export", "--addr", &recapd.addr, "large"])).await;
    assert!(out.status.success());
    assert_eq!(texts(&out.stdout).len(), 8_000);
    let grown = peak_memory(pid).saturating_sub(before);
    let size = file.len() as u64;
    eprintln!(
        "file {} MB, peak memory grew by {} MB",
        size >> 20,
        grown >> 20
    );
    assert!(
        grown < 3 * size,
        "peak memory grew by {grown} bytes for a file of {size} bytes"
    );
}
