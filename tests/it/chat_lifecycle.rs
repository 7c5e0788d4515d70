//! The chat lifecycle over a real socket (issue 16), on the embedded store
//! and, with RECAPD_TEST_STORE=postgres, on PostgreSQL: DeleteChat erases a
//! chat (every read of it is then NOT_FOUND, its subscribers get a last
//! `deleted` injection, its content is in no file of the data directory),
//! a re-created chat continues its revisions (also across a restart),
//! ListChats pages a tenant's chats, --chat-retention deletes only quiet
//! chats, --max-chats counts live chats, and kill -9 during a burst of
//! deletions leaves each chat whole or gone.

use std::time::Duration;

use crate::common::api::*;
use crate::common::process::Recapd;
use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::Code;
use tonic::transport::Channel;

async fn delete(server: &mut Server, chat: &str) -> Result<u64, tonic::Status> {
    delete_with(&mut server.memory, chat).await
}

async fn delete_with(
    memory: &mut MemoryServiceClient<Channel>,
    chat: &str,
) -> Result<u64, tonic::Status> {
    memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: chat.into(),
        })
        .await
        .map(|r| r.into_inner().revision)
}

/// Every chat ListChats shows, page after page of `page_size`, and how
/// many pages it took.
async fn list_all(
    memory: &mut MemoryServiceClient<Channel>,
    page_size: u32,
) -> (Vec<pb::ChatSummary>, usize) {
    let (mut chats, mut pages, mut page_token) = (Vec::new(), 0, String::new());
    loop {
        let page = memory
            .list_chats(pb::ListChatsRequest {
                page_size,
                page_token,
            })
            .await
            .expect("list chats")
            .into_inner();
        pages += 1;
        let limit = if page_size == 0 {
            100
        } else {
            page_size as usize
        };
        assert!(page.chats.len() <= limit);
        chats.extend(page.chats);
        if page.next_page_token.is_empty() {
            return (chats, pages);
        }
        page_token = page.next_page_token;
    }
}

fn ids(chats: &[pb::ChatSummary]) -> Vec<&str> {
    chats.iter().map(|c| c.chat_id.as_str()).collect()
}

/// A chat with two messages and a current running recap: the usual state
/// a backend deletes.
async fn a_chat_with_content(server: &mut Server, chat: &str, text: &str) -> u64 {
    server
        .publish(
            chat,
            chat_changed(vec![message("m1", text), message("m2", "and then")]),
        )
        .await
        .unwrap();
    add_recap(server, chat, &format!("recap of {text}")).await;
    server.injection(chat).await.revision
}

#[tokio::test]
async fn a_deleted_chat_is_unknown_to_every_read_and_listed_no_more() {
    let (_dir, mut server) = start().await;
    a_chat_with_content(&mut server, "gone", "hello").await;
    a_chat_with_content(&mut server, "kept", "other").await;
    set_enabled(&mut server, "gone", false).await;
    let before = server.injection("gone").await.revision;

    let revision = delete(&mut server, "gone").await.unwrap();
    assert_eq!(
        revision,
        before + 1,
        "the deletion's injection is the next revision"
    );

    let chat = || "gone".to_owned();
    let reads: Vec<(&str, Result<(), tonic::Status>)> = vec![
        (
            "GetInjection",
            server
                .injections
                .get_injection(pb::GetInjectionRequest {
                    chat_id: chat(),
                    key: None,
                })
                .await
                .map(drop),
        ),
        ("Refresh", refresh(&mut server, "gone").await.map(drop)),
        (
            "GetInclusion",
            try_inclusion(&mut server, "gone").await.map(drop),
        ),
        (
            "GetMessageData",
            try_data(&mut server, "gone", "m1").await.map(drop),
        ),
        (
            "ListRunningRecaps",
            server
                .memory
                .list_running_recaps(pb::ListRunningRecapsRequest { chat_id: chat() })
                .await
                .map(drop),
        ),
        (
            "ExportChat",
            server
                .memory
                .export_chat(pb::ExportChatRequest { chat_id: chat() })
                .await
                .map(drop),
        ),
        (
            "MessageEdited",
            server
                .publish("gone", edited("m1", "again"))
                .await
                .map(drop),
        ),
        (
            "DeleteChat again",
            delete(&mut server, "gone").await.map(drop),
        ),
    ];
    for (call, result) in reads {
        let status = result.expect_err(call);
        assert_eq!(status.code(), Code::NotFound, "{call}: {status:?}");
    }
    let (listed, _) = list_all(&mut server.memory, 10).await;
    assert_eq!(ids(&listed), ["kept"]);
    // Its own settings went with it: a re-created chat follows the defaults.
    server.publish("gone", refresh_requested()).await.unwrap();
    assert!(server.injection("gone").await.enabled);
    server.stop().await;
}

#[tokio::test]
async fn a_re_created_chat_continues_its_revisions_also_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    a_chat_with_content(&mut server, "c", "first life").await;
    let deleted = delete(&mut server, "c").await.unwrap();

    let revision = server
        .publish("c", chat_changed(vec![message("m1", "second life")]))
        .await
        .unwrap();
    assert!(revision > deleted, "{revision} after {deleted}");
    let injection = server.injection("c").await;
    assert!(!injection.deleted);
    assert_eq!(injection.revision, revision);
    let deleted_again = delete(&mut server, "c").await.unwrap();
    assert_eq!(deleted_again, revision + 1);
    server.stop().await;

    let mut server = Server::start(dir.path()).await;
    let (listed, _) = list_all(&mut server.memory, 10).await;
    assert!(listed.is_empty(), "{listed:?}");
    assert_eq!(
        delete(&mut server, "c").await.unwrap_err().code(),
        Code::NotFound
    );
    let revision = server.publish("c", refresh_requested()).await.unwrap();
    assert!(
        revision > deleted_again,
        "after a restart {revision} must still follow {deleted_again}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_re_created_chat_not_yet_refreshed_answers_the_deleted_revision_not_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    // A long debounce: the re-creating message_sent leaves the chat
    // unrefreshed for a while.
    server.set_global_debounce(60_000).await;
    a_chat_with_content(&mut server, "c", "first life").await;
    let deleted = delete(&mut server, "c").await.unwrap();
    server
        .publish("c", message_sent("n1", "again"))
        .await
        .unwrap();
    let injection = server.injection("c").await;
    assert_eq!(injection.revision, deleted, "{injection:?}");
    assert!(!injection.deleted && injection.text.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn subscribers_of_the_chat_and_of_all_chats_get_one_last_deleted_injection() {
    let (_dir, mut server) = start().await;
    a_chat_with_content(&mut server, "c", "watched").await;
    let mut named = subscribe(&mut server, &["c"], 0).await;
    let snapshot = next_within(&mut named, 5).await.expect("a snapshot");
    assert!(!snapshot.deleted);
    let mut all = subscribe(&mut server, &[], 0).await;

    let revision = delete(&mut server, "c").await.unwrap();
    for stream in [&mut named, &mut all] {
        let last = next_within(stream, 5).await.expect("the deletion is told");
        assert_eq!(last.chat_id, "c");
        assert!(last.deleted, "{last:?}");
        assert_eq!(last.revision, revision);
        assert!(last.text.is_empty());
        assert_eq!(trigger(&last), pb::RefreshTrigger::ChatDeleted);
        assert!(last.refreshed_at.is_some());
    }
    // The streams stay open: the next life of the chat reaches both.
    server.publish("c", refresh_requested()).await.unwrap();
    for stream in [&mut named, &mut all] {
        let next = next_within(stream, 5).await.expect("the stream stays open");
        assert!(!next.deleted);
        assert!(next.revision > revision);
    }
    server.stop().await;
}

/// The files under `dir` that hold `needle`.
fn found_in_files(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(found_in_files(&path, needle));
        } else {
            // The running server's SQLite may remove a file (a journal)
            // between the listing and the read: it holds nothing then.
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => panic!("{}: {e}", path.display()),
            };
            if bytes.windows(needle.len()).any(|w| w == needle) {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test]
async fn deleted_content_is_in_no_file_of_the_data_directory() {
    if on_postgres() {
        println!("skipped: the embedded store's files (PostgreSQL keeps its own, see docs/api.md)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    let marker = "MARKER-7f3c9a1e-erase-me";
    // Enough content that the chat spans many pages, overflow pages
    // included.
    let long = format!("{marker} {}", "lorem ipsum ".repeat(2000));
    let messages = (0..50)
        .map(|i| message(&format!("m{i}"), &format!("{marker} message {i}")))
        .chain([message("long", &long)])
        .collect();
    server
        .publish("secret", chat_changed(messages))
        .await
        .unwrap();
    add_recap(&mut server, "secret", &format!("the recap says {marker}")).await;
    a_chat_with_content(&mut server, "other", "unrelated").await;
    assert!(
        !found_in_files(dir.path(), marker.as_bytes()).is_empty(),
        "the marker is written before the deletion (else this test proves nothing)"
    );

    delete(&mut server, "secret").await.unwrap();
    server.stop().await;
    let found = found_in_files(dir.path(), marker.as_bytes());
    assert!(
        found.is_empty(),
        "the deleted chat is still readable in {found:?}"
    );

    // The other chat is intact.
    let mut server = Server::start(dir.path()).await;
    assert!(!server.injection("other").await.text.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn list_chats_pages_through_every_chat_in_id_order() {
    let (_dir, mut server) = start().await;
    let chats = ["b", "a", "C", "a_b", "ab", "é", "z9", "z10"];
    for (i, chat) in chats.iter().enumerate() {
        let messages = (0..=i).map(|m| message(&format!("m{m}"), "x")).collect();
        server.publish(chat, chat_changed(messages)).await.unwrap();
    }
    set_enabled(&mut server, "ab", false).await;
    let started = std::time::SystemTime::now() - Duration::from_secs(60);

    let (listed, pages) = list_all(&mut server.memory, 3).await;
    let mut expected: Vec<&str> = chats.to_vec();
    expected.sort_unstable(); // byte order
    assert_eq!(ids(&listed), expected);
    assert_eq!(pages, 3);
    for summary in &listed {
        let i = chats.iter().position(|c| *c == summary.chat_id).unwrap();
        assert_eq!(summary.message_count as usize, i + 1, "{summary:?}");
        assert_eq!(summary.enabled, summary.chat_id != "ab", "{summary:?}");
        assert_eq!(
            summary.revision,
            server.injection(&summary.chat_id).await.revision
        );
        let updated = summary.updated_at.expect("updated_at is set");
        assert!(
            updated.seconds
                >= started
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs() as i64
        );
    }
    // The default page and a bad token or size.
    let (all, pages) = list_all(&mut server.memory, 0).await;
    assert_eq!((all.len(), pages), (chats.len(), 1));
    let bad = server
        .memory
        .list_chats(pb::ListChatsRequest {
            page_size: 0,
            page_token: "not-a-token".into(),
        })
        .await;
    assert_code(bad, Code::InvalidArgument, "page_token");
    let big = server
        .memory
        .list_chats(pb::ListChatsRequest {
            page_size: 1001,
            page_token: String::new(),
        })
        .await;
    assert_code(big, Code::InvalidArgument, "page_size");
    server.stop().await;
}

#[tokio::test]
async fn max_chats_counts_live_chats_so_a_deletion_frees_a_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_chats = 2;
    let mut server = Server::start_with(config.clone()).await;
    server.publish("a", refresh_requested()).await.unwrap();
    server.publish("b", refresh_requested()).await.unwrap();
    let full = server.publish("c", refresh_requested()).await.unwrap_err();
    assert_eq!(full.code(), Code::ResourceExhausted, "{full:?}");
    delete(&mut server, "a").await.unwrap();
    server.publish("c", refresh_requested()).await.unwrap();
    server.stop().await;

    // Counted from the store at start-up: still two live chats.
    let mut server = Server::start_with(config).await;
    let full = server.publish("d", refresh_requested()).await.unwrap_err();
    assert_eq!(full.code(), Code::ResourceExhausted, "{full:?}");
    delete(&mut server, "b").await.unwrap();
    server.publish("d", refresh_requested()).await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn retention_deletes_only_the_chats_quiet_for_longer_than_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.chat_retention = Some(Duration::from_secs(2));
    let mut server = Server::start_with(config).await;
    server.set_global_debounce(0).await;
    a_chat_with_content(&mut server, "quiet", "old news").await;
    a_chat_with_content(&mut server, "busy", "ongoing").await;
    let mut named = subscribe(&mut server, &["quiet"], 0).await;
    next_within(&mut named, 5).await.expect("a snapshot");

    // "busy" changes every 400 ms; "quiet" not at all.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut n = 0;
    while tokio::time::Instant::now() < deadline {
        n += 1;
        server
            .publish("busy", message_sent(&format!("b{n}"), "still here"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let last = next_within(&mut named, 1)
        .await
        .expect("the deletion is told");
    assert!(last.deleted, "{last:?}");
    let (listed, _) = list_all(&mut server.memory, 10).await;
    assert_eq!(ids(&listed), ["busy"]);
    assert_eq!(
        refresh(&mut server, "quiet").await.unwrap_err().code(),
        Code::NotFound
    );
    server.stop().await;
}

#[tokio::test]
async fn kill_9_during_a_burst_of_deletions_leaves_each_chat_whole_or_gone() {
    const CHATS: usize = 40;
    const MESSAGES: usize = 5;
    let dir = tempfile::tempdir().unwrap();
    let mut recapd = Recapd::start(dir.path());
    let channel = recapd.channel().await;
    let mut server = Server::clients(channel.clone());
    for c in 0..CHATS {
        let messages = (0..MESSAGES)
            .map(|m| message(&format!("m{m}"), &format!("chat {c} message {m}")))
            .collect();
        server
            .publish(&format!("c{c}"), chat_changed(messages))
            .await
            .unwrap();
    }
    // Every chat deleted at once, from 8 clients; killed mid-burst.
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut clients = tokio::task::JoinSet::new();
    for k in 0..8 {
        let mut memory = MemoryServiceClient::new(channel.clone());
        let acked = acked.clone();
        clients.spawn(async move {
            for c in (k..CHATS).step_by(8) {
                let chat = format!("c{c}");
                if delete_with(&mut memory, &chat).await.is_ok() {
                    acked.lock().unwrap().push(chat);
                }
            }
        });
    }
    while acked.lock().unwrap().len() < CHATS / 4 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    recapd.kill9();
    while clients.join_next().await.is_some() {}
    drop(server);

    let recapd = Recapd::start(dir.path());
    let mut server = Server::clients(recapd.channel().await);
    let acked = acked.lock().unwrap().clone();
    let (listed, _) = list_all(&mut server.memory, 100).await;
    let (mut whole, mut gone) = (0, 0);
    for c in 0..CHATS {
        let chat = format!("c{c}");
        let exported = server
            .memory
            .export_chat(pb::ExportChatRequest {
                chat_id: chat.clone(),
            })
            .await;
        let in_list = listed.iter().find(|s| s.chat_id == chat);
        match exported {
            Ok(file) => {
                let jsonl = file.into_inner().jsonl;
                let messages = String::from_utf8(jsonl)
                    .unwrap()
                    .lines()
                    .filter(|line| line.contains("\"mes\":"))
                    .count();
                assert!(
                    !acked.contains(&chat),
                    "{chat}: its deletion was acknowledged"
                );
                assert_eq!(messages, MESSAGES, "{chat} is whole");
                assert_eq!(in_list.map(|s| s.message_count as usize), Some(MESSAGES));
                whole += 1;
            }
            Err(status) => {
                assert_eq!(status.code(), Code::NotFound, "{chat}: {status:?}");
                assert!(in_list.is_none(), "{chat} is gone from the list too");
                gone += 1;
            }
        }
    }
    assert!(
        gone >= acked.len(),
        "{gone} gone, {} acknowledged",
        acked.len()
    );
    println!(
        "after kill -9: {whole} whole, {gone} gone ({} acknowledged)",
        acked.len()
    );
}
