//! SillyTavern's branch and checkpoint files (issue 45): an imported one
//! names its parent; a branch exports its parent as `main_chat`; with
//! `branch_from_main_chat` a branch file of a known chat is made a branch
//! of it, its memory coming along, and any other file is imported as it
//! is, with the reason.

use super::{branch, chats_of, import, import_request, story, summary_of};
use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

/// Chat `chat`'s SillyTavern file, as text.
async fn export(server: &mut Server, chat: &str) -> String {
    String::from_utf8(exported(server, chat).await).expect("UTF-8")
}

/// A file's header line as JSON.
fn header_of(file: &str) -> serde_json::Value {
    serde_json::from_str(file.lines().next().expect("a header line")).expect("JSON")
}

/// Imports `jsonl` as `chat` with `branch_from_main_chat`.
async fn import_as_branch(
    server: &mut Server,
    chat: &str,
    jsonl: &str,
) -> Result<pb::ImportChatResponse, tonic::Status> {
    import_request(
        server,
        pb::ImportChatRequest {
            chat_id: chat.into(),
            jsonl: jsonl.as_bytes().to_vec(),
            branch_from_main_chat: true,
            ..Default::default()
        },
    )
    .await
}

/// Asserts that `chat` injects the story's running recap as it stood at
/// m25: the second version, not the third.
async fn injects_the_story_through_m25(server: &mut Server, chat: &str) {
    let injection = server.injection(chat).await;
    assert!(
        injection.text.contains("running recap through scene 1")
            && !injection.text.contains("scene 2"),
        "{chat}: {}",
        injection.text
    );
}

/// What SillyTavern 1.18.0's "Create branch" writes for a chat at its
/// message `through` (public/scripts/bookmarks.js: a header of its own
/// naming the parent as `main_chat`, then the parent's lines up to the
/// message, copied): here the lines of recapd's export of the parent.
fn sillytavern_branch_file(parent: &str, parent_file: &str, through: usize) -> String {
    let header = format!(
        r#"{{"user_name":"User","character_name":"Alice","create_date":"2026-11-30@11h00m00s","chat_metadata":{{"note_prompt":"","main_chat":{parent:?}}}}}"#
    );
    let mut file = header + "\n";
    for line in parent_file.lines().skip(1).take(through + 1) {
        file.push_str(line);
        file.push('\n');
    }
    file
}

#[tokio::test]
async fn a_branch_exports_its_parent_as_main_chat_and_comes_back_as_a_branch() {
    let (_dir, mut server) = start().await;
    story(&mut server).await;
    branch(&mut server, "story", "m25", "fork").await.unwrap();
    let file = export(&mut server, "fork").await;
    assert_eq!(header_of(&file)["chat_metadata"]["main_chat"], "story");

    // Taken back as a branch of the story: the memory comes along.
    let again = import_as_branch(&mut server, "fork again", &file)
        .await
        .expect("imported");
    assert_eq!(again.branched_from_chat_id, "story");
    assert_eq!(again.not_branched_reason, "");
    assert_eq!((again.message_count, again.running_recap_count), (26, 2));
    injects_the_story_through_m25(&mut server, "fork again").await;
    let row = summary_of(&mut server, "fork again").await;
    assert_eq!(
        (row.parent_chat_id.as_str(), row.parent_message_id.as_str()),
        ("story", "m25")
    );
}

#[tokio::test]
async fn a_sillytavern_branch_file_of_a_known_chat_brings_the_memory_of_that_point() {
    let (_dir, mut server) = start().await;
    story(&mut server).await;
    let parent_file = export(&mut server, "story").await;
    let file = sillytavern_branch_file("story", &parent_file, 25);

    // Without the flag: the file alone, so no running recap.
    let plain = import(&mut server, "Alice - Branch #1", file.clone().into_bytes())
        .await
        .expect("imported");
    assert_eq!((plain.message_count, plain.running_recap_count), (26, 0));
    assert_eq!(plain.branched_from_chat_id, "");

    let made = import_as_branch(&mut server, "Alice - Branch #2", &file)
        .await
        .expect("imported");
    assert_eq!(made.branched_from_chat_id, "story");
    assert_eq!((made.message_count, made.running_recap_count), (26, 2));
    injects_the_story_through_m25(&mut server, "Alice - Branch #2").await;
    assert_eq!(
        data(&mut server, "Alice - Branch #2", "m23")
            .await
            .scene_recap_memory,
        Some("scene recap 1".into())
    );
    // Its own copy of the story's book, as BranchChat makes.
    let book = settings_of(&mut server, "Alice - Branch #2")
        .await
        .world_info_chat_book
        .expect("a chat book");
    assert_ne!(book, "Harbour");
    // The export writes the file's own header back, naming the parent.
    let header = header_of(&export(&mut server, "Alice - Branch #2").await);
    assert_eq!(header["create_date"], "2026-11-30@11h00m00s");
    assert_eq!(header["chat_metadata"]["main_chat"], "story");
    assert_eq!(header["chat_metadata"]["note_prompt"], "");

    // A branch is only ever a new chat.
    assert_code(
        import_as_branch(&mut server, "Alice - Branch #2", &file).await,
        Code::AlreadyExists,
        "Alice - Branch #2",
    );
    assert_code(
        import_as_branch(&mut server, "Alice - Branch #1", &file).await,
        Code::AlreadyExists,
        "Alice - Branch #1",
    );
}

#[tokio::test]
async fn a_file_that_cannot_be_a_branch_is_imported_as_it_is_with_the_reason() {
    let (_dir, mut server) = start().await;
    story(&mut server).await;
    let parent_file = export(&mut server, "story").await;
    let cases = [
        (
            "unknown parent",
            sillytavern_branch_file("no such chat", &parent_file, 5),
            "is no chat here",
        ),
        (
            "edited",
            sillytavern_branch_file("story", &parent_file, 5)
                .replace("line 3 of the story", "a line the story never had"),
            "message 3",
        ),
        (
            "no parent",
            sillytavern_branch_file("story", &parent_file, 5)
                .replace(r#","main_chat":"story""#, ""),
            "names no parent",
        ),
    ];
    for (chat, file, reason) in cases {
        let made = import_as_branch(&mut server, chat, &file)
            .await
            .expect("imported");
        assert_eq!(made.branched_from_chat_id, "", "{chat}");
        assert!(
            made.not_branched_reason.contains(reason),
            "{chat}: {}",
            made.not_branched_reason
        );
        assert_eq!(made.message_count, 6, "{chat}");
    }
}

#[tokio::test]
async fn a_main_chat_that_is_no_chat_id_is_neither_echoed_nor_recorded_but_exported() {
    let (_dir, mut server) = start().await;
    story(&mut server).await;
    let parent_file = export(&mut server, "story").await;
    let long = "x".repeat(100_000);
    let file = sillytavern_branch_file(&long, &parent_file, 5);
    let made = import_as_branch(&mut server, "long parent", &file)
        .await
        .expect("imported");
    assert_eq!(made.branched_from_chat_id, "");
    assert_eq!(made.message_count, 6);
    // The reason says why without repeating the file's text.
    let reason = &made.not_branched_reason;
    assert!(
        reason.contains("no valid chat id") && reason.len() < 300,
        "{} bytes: {}",
        reason.len(),
        &reason[..reason.len().min(300)]
    );
    // Not the chat's parent, so not in every ListChats answer...
    let chat = summary_of(&mut server, "long parent").await;
    assert_eq!(chat.parent_chat_id, "");
    // ...but the file's, written back as it came.
    let exported = export(&mut server, "long parent").await;
    assert_eq!(
        header_of(&exported)["chat_metadata"]["main_chat"],
        long.as_str()
    );
}

#[tokio::test]
async fn an_imported_sillytavern_branch_file_names_its_parent_and_exports_as_it_came() {
    // The header SillyTavern 1.18.0's "Create branch" writes
    // (public/scripts/bookmarks.js: the parent's metadata and `main_chat`).
    let file = concat!(
        r#"{"user_name":"User","character_name":"Alice","create_date":"2026-11-30@09h00m00s","chat_metadata":{"note_prompt":"","main_chat":"Alice - 2026-11-29@20h11m05s"}}"#,
        "\n",
        r#"{"name":"Alice","is_user":false,"mes":"The lighthouse was dark.","send_date":"2026-11-29@20h11m06s","extra":{}}"#,
        "\n"
    );
    let (_dir, mut server) = start().await;
    import(&mut server, "Alice - Branch #1", file.as_bytes().to_vec())
        .await
        .expect("imported");
    let branch = summary_of(&mut server, "Alice - Branch #1").await;
    assert_eq!(branch.parent_chat_id, "Alice - 2026-11-29@20h11m05s");
    assert_eq!(branch.parent_message_id, "");
    let header = header_of(&export(&mut server, "Alice - Branch #1").await);
    assert_eq!(
        header["chat_metadata"]["main_chat"],
        "Alice - 2026-11-29@20h11m05s"
    );

    // The same file without `main_chat` makes the chat no branch again.
    let plain = file.replace(r#","main_chat":"Alice - 2026-11-29@20h11m05s""#, "");
    import(&mut server, "Alice - Branch #1", plain.into_bytes())
        .await
        .expect("imported again");
    let chats = chats_of(&mut server).await;
    assert!(chats.iter().all(|c| c.parent_chat_id.is_empty()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recapd_import_branch_from_main_chat_says_what_it_made() {
    let (dir, mut server) = start().await;
    story(&mut server).await;
    let parent_file = export(&mut server, "story").await;
    let branch_file = dir.path().join("Alice - Branch #3.jsonl");
    std::fs::write(
        &branch_file,
        sillytavern_branch_file("story", &parent_file, 25),
    )
    .unwrap();
    let orphan_file = dir.path().join("Alice - Orphan.jsonl");
    std::fs::write(
        &orphan_file,
        sillytavern_branch_file("no such chat", &parent_file, 25),
    )
    .unwrap();
    let addr = server
        .app
        .as_ref()
        .expect("serving")
        .local_addr()
        .to_string();
    let (code, stdout, stderr) = crate::common::process::run_recapd(
        &[
            "import",
            "--addr",
            &addr,
            "--branch-from-main-chat",
            branch_file.to_str().unwrap(),
            orphan_file.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains(r#"chat "Alice - Branch #3", 26 messages, 2 running-recap versions, a branch of "story""#),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"chat "Alice - Orphan", 26 messages, 0 running-recap versions"#)
            && stderr.contains("not branched: its parent \"no such chat\" is no chat here"),
        "{stdout}\n{stderr}"
    );
}
