//! The `world_info_*` settings reach the scan: set with UpdateSettings or
//! read from SillyTavern's own settings.json by ImportSettings.

use super::*;

fn abc_book() -> String {
    book(&[
        (
            "0",
            json!({"key": ["Alpha"], "content": "It calls the beta."}),
        ),
        ("1", json!({"key": ["beta"], "content": "Beta answers."})),
    ])
}

async fn set(server: &mut Server, settings: pb::Settings) {
    server.update_settings("c", settings).await;
}

#[tokio::test]
async fn recursion_min_activations_case_and_whole_words_follow_the_settings() {
    let (_dir, mut server) = start().await;
    import_book(&server, "ABC", &abc_book()).await;
    global_books(&mut server, "", &["ABC"]).await;
    set_chat(
        &mut server,
        "c",
        vec![
            said("m1", "User", "alpha?"),
            said("m2", "Seraphina", "Hm."),
            said("m3", "User", "Well."),
        ],
    )
    .await;
    // "alpha" is three messages back: world_info_depth 2 misses it.
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    // world_info_min_activations: while fewer are active, one message
    // deeper (WI:4654-5070, §2 "Recursion and passes").
    set(
        &mut server,
        pb::Settings {
            world_info_min_activations: Some(1),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    set(
        &mut server,
        pb::Settings {
            world_info_min_activations: Some(0),
            world_info_depth: Some(3),
            ..Default::default()
        },
    )
    .await;
    // Case-insensitive by default: "Alpha" matches "alpha" (WI:337-365).
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    // Recursion: entry 0's content names "beta" (WI:5019-5025).
    set(
        &mut server,
        pb::Settings {
            world_info_recursive: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0", "1"]);
    // Case-sensitive: "Alpha" no longer matches "alpha".
    set(
        &mut server,
        pb::Settings {
            world_info_case_sensitive: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());

    // Whole words: a one-word key needs non-word characters around it
    // (WI:350-358).
    set(
        &mut server,
        pb::Settings {
            world_info_case_sensitive: Some(false),
            world_info_recursive: Some(false),
            ..Default::default()
        },
    )
    .await;
    add_message(&mut server, "c", said("m4", "Seraphina", "The alphabet.")).await;
    add_message(&mut server, "c", said("m5", "User", "Yes.")).await;
    set(
        &mut server,
        pb::Settings {
            world_info_depth: Some(2),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    set(
        &mut server,
        pb::Settings {
            world_info_match_whole_words: Some(true),
            ..Default::default()
        },
    )
    .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    server.stop().await;
}

#[tokio::test]
async fn sillytaverns_settings_json_selects_the_global_books_and_depth() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    set_chat(
        &mut server,
        "c",
        vec![
            said("m1", "User", "Tell me about the Shadowfang."),
            said("m2", "Seraphina", "Later."),
            said("m3", "User", "Fine."),
        ],
    )
    .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    // SillyTavern's settings.json keeps them under world_info_settings,
    // the selected books as world_info.globalSelect (§4; docs/settings.md
    // "Importing SillyTavern's settings").
    let settings = json!({
        "world_info_settings": {
            "world_info": {"globalSelect": ["Eldoria"]},
            "world_info_depth": 3,
        }
    });
    server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: String::new(),
            json: settings.to_string(),
        })
        .await
        .expect("import settings");
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["1"]);
    server.stop().await;
}

#[tokio::test]
async fn the_character_strategy_orders_character_and_global_books_after_the_chats() {
    let (_dir, mut server) = start().await;
    let one = |order: i64, content: &str| {
        book(&[(
            "0",
            json!({"constant": true, "order": order, "content": content}),
        )])
    };
    import_book(
        &server,
        "Global",
        &book(&[
            (
                "0",
                json!({"constant": true, "order": 30, "content": "G30."}),
            ),
            (
                "1",
                json!({"constant": true, "order": 10, "content": "G10."}),
            ),
        ]),
    )
    .await;
    import_book(&server, "Character", &one(20, "C20.")).await;
    import_book(&server, "Chat", &one(1, "Chat1.")).await;
    server
        .update_settings(
            "c",
            pb::Settings {
                world_info_global_books: names(&["Global"]),
                world_info_character_books: names(&["Character"]),
                world_info_chat_book: Some("Chat".into()),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Hi.")]).await;
    // Chat lore first whatever the strategy (WI:4513); then 1
    // character_first: character (by order, highest first) then global;
    // 2 global_first: the reverse; 0 evenly: both merged by order
    // (WI:4478-4530, §4). Activation follows that order.
    let order = |answer: pb::ScanWorldInfoResponse| -> Vec<String> {
        answer.activated.into_iter().map(|e| e.content).collect()
    };
    for (strategy, expected) in [
        (
            pb::WorldInfoCharacterStrategy::CharacterFirst,
            ["Chat1.", "C20.", "G30.", "G10."],
        ),
        (
            pb::WorldInfoCharacterStrategy::GlobalFirst,
            ["Chat1.", "G30.", "G10.", "C20."],
        ),
        (
            pb::WorldInfoCharacterStrategy::Evenly,
            ["Chat1.", "G30.", "C20.", "G10."],
        ),
    ] {
        set(
            &mut server,
            pb::Settings {
                world_info_character_strategy: Some(strategy as i32),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(
            order(scan(&server, scan_request("c")).await),
            expected,
            "{strategy:?}"
        );
    }
    server.stop().await;
}
