//! BranchChat over a real socket (issue 45): issue 45's story of 36
//! messages with scene breaks at m11, m23 and m35, a running-recap version
//! after each and a chat book, branched at m25, injects the second
//! version, holds the first two scene recaps and a copy of the book of its
//! own; the two chats change apart, the branch outlives its parent, and
//! ListChats names the parent.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use tonic::Code;

/// A book of one entry, in SillyTavern's World Info format.
const BOOK: &str = r#"{"entries":{"0":{"uid":0,"key":["lighthouse"],"content":"The lighthouse has been dark for years.","comment":"Lighthouse"}}}"#;

/// The story: m0..m35, scene recaps at m11, m23 and m35, a running-recap
/// version after each break, and the chat book "Harbour".
async fn story(server: &mut Server) {
    let messages = (0..36)
        .map(|i| message(&format!("m{i}"), &format!("line {i} of the story")))
        .collect();
    server
        .publish("story", chat_changed(messages))
        .await
        .expect("the story is published");
    let mut previous = String::new();
    for (n, at) in ["m11", "m23", "m35"].into_iter().enumerate() {
        set_data(
            server,
            "story",
            at,
            pb::MessageData {
                scene_break: Some(true),
                scene_recap_memory: Some(format!("scene recap {n}")),
                ..Default::default()
            },
        )
        .await;
        server
            .memory
            .add_running_recap(pb::AddRunningRecapRequest {
                chat_id: "story".into(),
                content: format!("running recap through scene {n}"),
                scene_count: n as u32 + 1,
                prev_scene_message_id: previous.clone(),
                new_scene_message_id: at.into(),
                ..Default::default()
            })
            .await
            .expect("a version");
        previous = at.into();
    }
    LorebookServiceClient::new(server.channel.clone())
        .import_lorebook(pb::ImportLorebookRequest {
            name: "Harbour".into(),
            json: BOOK.into(),
        })
        .await
        .expect("the book is imported");
    server
        .update_settings(
            "story",
            pb::Settings {
                world_info_chat_book: Some("Harbour".into()),
                ..Default::default()
            },
        )
        .await;
}

async fn branch(
    server: &mut Server,
    chat: &str,
    at: &str,
    new: &str,
) -> Result<pb::BranchChatResponse, tonic::Status> {
    server
        .memory
        .branch_chat(pb::BranchChatRequest {
            chat_id: chat.into(),
            message_id: at.into(),
            new_chat_id: new.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Every chat of the tenant (one page: these tests make few).
async fn chats_of(server: &mut Server) -> Vec<pb::ChatSummary> {
    server
        .memory
        .list_chats(pb::ListChatsRequest::default())
        .await
        .expect("the chats")
        .into_inner()
        .chats
}

async fn start_from(
    server: &mut Server,
    from: &str,
    new: &str,
) -> Result<pb::StartChatFromResponse, tonic::Status> {
    server
        .memory
        .start_chat_from(pb::StartChatFromRequest {
            from_chat_id: from.into(),
            new_chat_id: new.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn import(
    server: &mut Server,
    chat: &str,
    jsonl: Vec<u8>,
) -> Result<pb::ImportChatResponse, tonic::Status> {
    import_request(
        server,
        pb::ImportChatRequest {
            chat_id: chat.into(),
            jsonl,
            ..Default::default()
        },
    )
    .await
}

async fn import_request(
    server: &mut Server,
    request: pb::ImportChatRequest,
) -> Result<pb::ImportChatResponse, tonic::Status> {
    server
        .memory
        .import_chat(request)
        .await
        .map(tonic::Response::into_inner)
}

/// Chat `chat`'s entry in ListChats.
async fn summary_of(server: &mut Server, chat: &str) -> pb::ChatSummary {
    chats_of(server)
        .await
        .into_iter()
        .find(|c| c.chat_id == chat)
        .expect("listed")
}

#[tokio::test]
async fn a_branch_at_m25_remembers_what_happened_up_to_m25_and_no_more() {
    let (dir, mut server) = start().await;
    story(&mut server).await;

    let made = branch(&mut server, "story", "m25", "fork").await.unwrap();
    assert_eq!((made.message_count, made.running_recap_count), (26, 2));
    assert!(
        !made.chat_book.is_empty() && made.chat_book != "Harbour",
        "a book of its own: {:?}",
        made.chat_book
    );

    let injection = server.injection("fork").await;
    assert!(
        injection.text.contains("running recap through scene 1")
            && !injection.text.contains("scene 2"),
        "{}",
        injection.text
    );
    let listed = versions(&mut server, "fork").await;
    assert_eq!(listed.versions.len(), 2);
    assert_eq!(
        data(&mut server, "fork", "m11").await.scene_recap_memory,
        Some("scene recap 0".into())
    );
    assert_eq!(
        data(&mut server, "fork", "m23").await.scene_recap_memory,
        Some("scene recap 1".into())
    );
    assert_code(
        try_data(&mut server, "fork", "m26").await,
        Code::NotFound,
        "message",
    );
    assert_eq!(
        settings_of(&mut server, "fork").await.world_info_chat_book,
        Some(made.chat_book.clone())
    );
    // The copy is a book of its own, with the parent's entry.
    let mut books = LorebookServiceClient::new(server.channel.clone());
    let copy = books
        .export_lorebook(pb::ExportLorebookRequest {
            name: made.chat_book.clone(),
        })
        .await
        .expect("the copy exists")
        .into_inner();
    assert!(copy.json.contains("The lighthouse has been dark"));

    // Each chat changes alone.
    server
        .publish("fork", message_sent("f1", "only in the fork"))
        .await
        .unwrap();
    server
        .publish("story", message_sent("s1", "only in the story"))
        .await
        .unwrap();
    assert_code(
        try_data(&mut server, "story", "f1").await,
        Code::NotFound,
        "message",
    );
    assert_code(
        try_data(&mut server, "fork", "s1").await,
        Code::NotFound,
        "message",
    );
    assert_eq!(order(&mut server, "fork").await.len(), 27);

    // ListChats names the parent.
    let fork = summary_of(&mut server, "fork").await;
    assert_eq!(
        (
            fork.parent_chat_id.as_str(),
            fork.parent_message_id.as_str()
        ),
        ("story", "m25")
    );
    let parent = summary_of(&mut server, "story").await;
    assert!(parent.parent_chat_id.is_empty());

    // Deleting the parent leaves the branch whole, across a restart too.
    server
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "story".into(),
        })
        .await
        .unwrap();
    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    let injection = server.injection("fork").await;
    assert!(injection.text.contains("running recap through scene 1"));
    assert_eq!(versions(&mut server, "fork").await.versions.len(), 2);
    assert_eq!(order(&mut server, "fork").await.len(), 27);
}

#[tokio::test]
async fn a_branch_before_the_first_scene_has_no_running_recap_and_errors_are_precise() {
    let (dir, mut server) = start().await;
    story(&mut server).await;
    let early = branch(&mut server, "story", "m5", "early").await.unwrap();
    assert_eq!((early.message_count, early.running_recap_count), (6, 0));
    assert!(versions(&mut server, "early").await.versions.is_empty());

    // Settings stored for an id before it is a chat give way to the
    // parent's (here none), in memory and on disk alike.
    server
        .publish(
            "plain",
            chat_changed(vec![message("p0", "a"), message("p1", "b")]),
        )
        .await
        .unwrap();
    let default_depth = settings_of(&mut server, "plain").await.depth;
    server
        .update_settings(
            "pre",
            pb::Settings {
                depth: Some(7),
                ..Default::default()
            },
        )
        .await;
    branch(&mut server, "plain", "p1", "pre").await.unwrap();
    assert_eq!(settings_of(&mut server, "pre").await.depth, default_depth);
    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    assert_eq!(settings_of(&mut server, "pre").await.depth, default_depth);
    assert_ne!(default_depth, Some(7));

    assert_code(
        branch(&mut server, "story", "m25", "early").await,
        Code::AlreadyExists,
        "chat",
    );
    assert_code(
        branch(&mut server, "story", "m25", "story").await,
        Code::AlreadyExists,
        "chat",
    );
    assert_code(
        branch(&mut server, "nobody", "m1", "other").await,
        Code::NotFound,
        "chat",
    );
    assert_code(
        branch(&mut server, "story", "m99", "other").await,
        Code::NotFound,
        "message",
    );
    assert_code(
        branch(&mut server, "story", "m1", "").await,
        Code::InvalidArgument,
        "chat_id",
    );
    // A refused branch leaves nothing: "other" is no chat.
    assert_code(refresh(&mut server, "other").await, Code::NotFound, "chat");
}

/// How a branch of the story at m25 must read: whole, or not at all.
async fn whole_or_absent(server: &mut Server, chat: &str) -> bool {
    match try_data(server, chat, "m25").await {
        Err(status) => {
            assert_eq!(status.code(), Code::NotFound, "{status:?}");
            assert_code(refresh(server, chat).await, Code::NotFound, "chat");
            false
        }
        Ok(_) => {
            assert_eq!(order(server, chat).await.len(), 26, "{chat}'s messages");
            assert_eq!(versions(server, chat).await.versions.len(), 2, "{chat}");
            let book = settings_of(server, chat)
                .await
                .world_info_chat_book
                .expect("the branch names its book");
            LorebookServiceClient::new(server.channel.clone())
                .export_lorebook(pb::ExportLorebookRequest { name: book })
                .await
                .expect("the branch's book exists");
            true
        }
    }
}

#[tokio::test]
async fn a_kill_9_during_branches_leaves_each_branch_whole_or_absent() {
    use crate::common::process::Recapd;
    let dir = tempfile::tempdir().unwrap();
    let mut first = Recapd::start(dir.path());
    let mut server = Server::clients(first.channel().await);
    story(&mut server).await;
    // Branches one after the other until the kill.
    let mut memory = server.memory.clone();
    let branching = tokio::spawn(async move {
        let mut acknowledged = Vec::new();
        for i in 0.. {
            let made = memory
                .branch_chat(pb::BranchChatRequest {
                    chat_id: "story".into(),
                    message_id: "m25".into(),
                    new_chat_id: format!("b{i}"),
                })
                .await;
            match made {
                Ok(_) => acknowledged.push(i),
                Err(_) => return (acknowledged, i),
            }
        }
        unreachable!("the loop ends at the first refused call")
    });
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    first.kill9();
    let (acknowledged, tried) = branching.await.expect("the client ends");
    assert!(
        !acknowledged.is_empty(),
        "some branches were made before the kill"
    );
    eprintln!(
        "{} branches acknowledged before the kill, b{tried} refused",
        acknowledged.len()
    );

    let second = Recapd::start(dir.path());
    let mut server = Server::clients(second.channel().await);
    for i in 0..=tried {
        let exists = whole_or_absent(&mut server, &format!("b{i}")).await;
        if acknowledged.contains(&i) {
            assert!(exists, "acknowledged branch b{i} was lost");
        }
    }
}

#[tokio::test]
async fn two_replicas_branching_one_chat_to_one_id_make_one_branch() {
    use crate::common::replicas::{fresh_schema, replica_config, wait_for_debounce};
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let url = crate::common::config::test_database_url();
    let mut a = Server::start_with(replica_config(&dir.path().join("a"), &url, &schema)).await;
    let mut b = Server::start_with(replica_config(&dir.path().join("b"), &url, &schema)).await;
    b.set_global_debounce(0).await;
    wait_for_debounce(&mut a, 0).await;
    story(&mut a).await;

    let (on_a, on_b) = tokio::join!(
        branch(&mut a, "story", "m25", "fork"),
        branch(&mut b, "story", "m25", "fork")
    );
    let refused = match (&on_a, &on_b) {
        (Ok(_), Err(refused)) | (Err(refused), Ok(_)) => refused,
        other => panic!("exactly one replica must branch: {other:?}"),
    };
    assert!(
        matches!(refused.code(), Code::AlreadyExists | Code::Aborted),
        "{refused:?}"
    );
    eprintln!(
        "the other replica: {:?} {}",
        refused.code(),
        refused.message()
    );
    for server in [&mut a, &mut b] {
        assert!(whole_or_absent(server, "fork").await);
    }
    // One copy of the book: the tenant holds "Harbour" and the branch's.
    let books = LorebookServiceClient::new(a.channel.clone())
        .list_lorebooks(pb::ListLorebooksRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(books.lorebooks.len(), 2, "{books:?}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_chat_started_from_the_story_carries_its_running_recap_book_and_recall() {
    let (_dir, mut server) = start().await;
    story(&mut server).await;
    let started = start_from(&mut server, "story", "sequel")
        .await
        .expect("started");
    assert!(started.carried_recap);
    assert_eq!(started.chat_book, "Harbour");
    assert_eq!(started.recall_chats, ["story"]);

    let injection = server.injection("sequel").await;
    assert!(
        injection.text.contains("running recap through scene 2"),
        "{}",
        injection.text
    );
    let listed = versions(&mut server, "sequel").await;
    assert_eq!(listed.versions.len(), 1);
    assert_eq!(listed.versions[0].carried_from_chat_id, "story");
    let settings = settings_of(&mut server, "sequel").await;
    assert_eq!(settings.world_info_chat_book.as_deref(), Some("Harbour"));
    assert_eq!(
        settings.recall_chats.map(|list| list.values),
        Some(vec!["story".to_owned()])
    );
    assert!(order(&mut server, "sequel").await.is_empty());

    // The new chat's story goes on; recall reaches the old one's.
    server
        .publish("sequel", message_sent("s0", "Back at the harbour."))
        .await
        .unwrap();
    let hits =
        recapd::grpc::pb::recall_service_client::RecallServiceClient::new(server.channel.clone())
            .recall(pb::RecallRequest {
                chat_id: "sequel".into(),
                query: "line 17 of the story".into(),
                limit: 5,
                min_score: None,
            })
            .await
            .expect("recall")
            .into_inner()
            .hits;
    assert!(
        hits.iter().any(|h| h.chat_id == "story"),
        "the old chat's passages are reached: {hits:?}"
    );

    assert_code(
        start_from(&mut server, "story", "sequel").await,
        Code::AlreadyExists,
        "chat",
    );
    assert_code(
        start_from(&mut server, "nobody", "other").await,
        Code::NotFound,
        "chat",
    );
}

mod files;
