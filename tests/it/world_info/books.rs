//! What a user changes between generations: an edited, disabled, deleted
//! or re-imported book applies as it is now; the speaker's name is part of
//! what is scanned; the token budget keeps the higher-order entries; a
//! RenderPrompt that is not a dry run starts timed effects like a scan.

use super::*;

async fn put_entry(server: &Server, book: &str, uid: &str, fields: Value) {
    lorebooks(server)
        .put_lorebook_entry(pb::PutLorebookEntryRequest {
            name: book.into(),
            uid: uid.into(),
            fields: fields.to_string(),
        })
        .await
        .expect("put entry");
}

#[tokio::test]
async fn a_book_applies_as_it_is_now_after_edits_deletion_and_reimport() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    global_books(&mut server, "", &["Eldoria"]).await;
    set_chat(
        &mut server,
        "c",
        vec![
            said("m0", "Seraphina", "Welcome."),
            said("m1", "User", "Is the glade safe?"),
        ],
    )
    .await;
    let glade = eldoria_content("2", "User", "Seraphina");
    assert_eq!(scan(&server, scan_request("c")).await.before, glade);

    // An edited content is what activates next (the scan reads the book's
    // current entries, WI:4478-4530).
    put_entry(&server, "Eldoria", "2", json!({"content": "Edited glade."})).await;
    assert_eq!(
        scan(&server, scan_request("c")).await.before,
        "Edited glade."
    );
    // A new key on another entry.
    put_entry(&server, "Eldoria", "3", json!({"key": ["safe"]})).await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["2", "3"]);
    // `disable` skips the entry (WI:4673-4878, §2 "Per-entry gates").
    put_entry(&server, "Eldoria", "2", json!({"disable": true})).await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["3"]);
    // A deleted book stops applying; its name stays in the settings.
    lorebooks(&server)
        .delete_lorebook(pb::DeleteLorebookRequest {
            name: "Eldoria".into(),
        })
        .await
        .expect("delete");
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    // Imported again under that name, it applies again, as imported.
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    assert_eq!(scan(&server, scan_request("c")).await.before, glade);
    server.stop().await;
}

#[tokio::test]
async fn the_speakers_name_is_scanned_with_world_info_include_names() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    global_books(&mut server, "", &["Eldoria"]).await;
    set_chat(
        &mut server,
        "c",
        vec![said("m1", "Glade Keeper", "Welcome, traveller.")],
    )
    .await;
    // Each message is scanned as `name: mes` when world_info_include_names
    // (default true, WI:69-82; SC:4565).
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["2"]);
    server
        .update_settings(
            "c",
            pb::Settings {
                world_info_include_names: Some(false),
                ..Default::default()
            },
        )
        .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn the_token_budget_keeps_the_higher_order_entries() {
    let (_dir, mut server) = start().await;
    let long = "The long chronicle of the realm goes on. ".repeat(20);
    import_book(
        &server,
        "Budget",
        &book(&[
            (
                "0",
                json!({"constant": true, "order": 200, "content": "Short lore."}),
            ),
            (
                "1",
                json!({"constant": true, "order": 100, "content": long}),
            ),
            (
                "2",
                json!({"constant": true, "order": 50, "ignoreBudget": true, "content": "Always fits."}),
            ),
        ]),
    )
    .await;
    global_books(&mut server, "", &["Budget"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Hi.")]).await;
    // No context size: no practical budget, all three.
    assert_eq!(
        uids(&scan(&server, scan_request("c")).await),
        ["0", "1", "2"]
    );
    // 25% of 400 tokens = 100 (WI:4624-4629): entries go in by order,
    // highest first; the long one (about 180 tokens) overflows it and is
    // left out, and an ignoreBudget entry still goes in after the overflow
    // (WI:4898-4957, §2 "Budget").
    server
        .update_settings(
            "c",
            pb::Settings {
                max_context_tokens: Some(400),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0", "2"]);
    server.stop().await;
}

#[tokio::test]
async fn render_prompt_starts_timed_effects_unless_a_dry_run() {
    let (_dir, mut server) = start().await;
    import_book(
        &server,
        "Timed",
        &book(&[(
            "0",
            json!({"key": ["comet"], "sticky": 3, "content": "The comet burns."}),
        )]),
    )
    .await;
    global_books(&mut server, "", &["Timed"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "A comet!")]).await;
    let request = |dry_run: bool| pb::RenderPromptRequest {
        chat_id: "c".into(),
        mode: pb::PromptMode::TextCompletion as i32,
        story_string: "Story.".into(),
        dry_run,
        ..Default::default()
    };
    let timed = |server: &mut Server| {
        let mut memory = server.memory.clone();
        async move {
            let jsonl = memory
                .export_chat(pb::ExportChatRequest {
                    chat_id: "c".into(),
                })
                .await
                .unwrap()
                .into_inner()
                .jsonl;
            let header: Value =
                serde_json::from_str(std::str::from_utf8(&jsonl).unwrap().lines().next().unwrap())
                    .unwrap();
            header["chat_metadata"]["timedWorldInfo"].clone()
        }
    };
    // Placed before the story string both times (position 0).
    let dry = prompts(&server).render_prompt(request(true)).await.unwrap();
    assert_eq!(dry.into_inner().text, "The comet burns.\nStory.");
    assert_eq!(timed(&mut server).await, Value::Null);
    let wet = prompts(&server)
        .render_prompt(request(false))
        .await
        .unwrap();
    assert_eq!(wet.into_inner().text, "The comet burns.\nStory.");
    // RenderPrompt scans as ScanWorldInfo does, committing the effects
    // (RenderPromptRequest.dry_run; WI:730-736).
    let state = timed(&mut server).await;
    assert_eq!(state["sticky"]["Timed.0"]["start"], json!(1));
    assert_eq!(state["sticky"]["Timed.0"]["end"], json!(4));
    server.stop().await;
}
