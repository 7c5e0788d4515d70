//! SillyTavern World Info state moving in and out with chats and settings:
//! `chat_metadata.world_info` becomes the chat's own `world_info_chat_book`
//! and `chat_metadata.timedWorldInfo` its timed-effect state, and an
//! export writes back what the chat holds then (JSON-equal when nothing
//! changed, across a restart); `ImportSettings` reads SillyTavern's own
//! World Info settings from its settings.json.
//!
//! Shapes: the header is SillyTavern's saveChat header (user_name,
//! character_name, create_date, chat_metadata), `world_info` a book name
//! (world-info.js:5858 at 51ad27f) and `timedWorldInfo` objects `sticky`
//! and `cooldown` of `{hash, start, end, protected}` (world-info.js:604-611).

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use serde_json::{Value, json};

const HEADER: &str = concat!(
    r#"{"user_name":"User","character_name":"Seraphina","create_date":"2025-11-02@10h11m12s","#,
    r#""chat_metadata":{"note_prompt":"","world_info":"Eldoria","#,
    r#""timedWorldInfo":{"sticky":{"Eldoria.3":{"hash":1234567890,"start":2,"end":7.0,"protected":false}},"#,
    r#""cooldown":{"Eldoria.1":{"hash":42,"start":1,"end":3,"protected":true}}}}}"#
);

fn chat_file(header: &str) -> Vec<u8> {
    format!(
        "{header}\n{}\n{}\n",
        r#"{"name":"User","is_user":true,"is_system":false,"mes":"Where is the forest?","extra":{}}"#,
        r#"{"name":"Seraphina","is_user":false,"is_system":false,"mes":"Past the river.","extra":{}}"#,
    )
    .into_bytes()
}

fn lines(jsonl: &[u8]) -> Vec<Value> {
    std::str::from_utf8(jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
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

async fn export_stream(server: &mut Server, chat: &str) -> Vec<u8> {
    let mut stream = server
        .memory
        .export_chat_stream(pb::ExportChatStreamRequest {
            chat_id: chat.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let mut out = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        out.extend_from_slice(&chunk.chunk);
    }
    out
}

async fn settings_of(server: &mut Server, chat: &str) -> pb::Settings {
    server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat.into(),
        })
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test]
async fn the_chat_book_and_timed_effects_come_back_json_equal_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let file = chat_file(HEADER);
    let done = import(&mut server, "sera", file.clone()).await;
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    assert_eq!(
        settings_of(&mut server, "sera")
            .await
            .world_info_chat_book
            .as_deref(),
        Some("Eldoria")
    );
    // The global settings are untouched: the book is the chat's own.
    assert_eq!(
        server
            .global_settings()
            .await
            .world_info_chat_book
            .as_deref(),
        Some("")
    );
    assert_eq!(lines(&exported(&mut server, "sera").await), lines(&file));
    assert_eq!(
        lines(&export_stream(&mut server, "sera").await),
        lines(&file)
    );
    // The timed state as written, numbers included.
    let text = String::from_utf8(exported(&mut server, "sera").await).unwrap();
    assert!(text.contains(r#""end":7.0"#), "{text}");

    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    assert_eq!(lines(&exported(&mut server, "sera").await), lines(&file));
    assert_eq!(
        settings_of(&mut server, "sera")
            .await
            .world_info_chat_book
            .as_deref(),
        Some("Eldoria")
    );
    server.stop().await;
}

#[tokio::test]
async fn export_writes_the_chat_book_the_chat_has_now_and_the_file_decides_at_import() {
    let (_dir, mut server) = start().await;
    let file = chat_file(HEADER);
    import(&mut server, "sera", file.clone()).await;

    // Set through the API: the export names the new book.
    update(
        &mut server,
        "sera",
        pb::Settings {
            world_info_chat_book: Some("Forest lore".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let mut expected = lines(&file);
    expected[0]["chat_metadata"]["world_info"] = json!("Forest lore");
    assert_eq!(lines(&exported(&mut server, "sera").await), expected);

    // No override of its own: no `world_info` (a global value is not the
    // chat's book in SillyTavern's file).
    update(
        &mut server,
        "",
        pb::Settings {
            world_info_chat_book: Some("Global".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    update(
        &mut server,
        "sera",
        pb::Settings::default(),
        &["world_info_chat_book"],
    )
    .await
    .unwrap();
    let out = lines(&exported(&mut server, "sera").await);
    assert!(
        out[0]["chat_metadata"].get("world_info").is_none(),
        "{out:?}"
    );
    assert_eq!(
        out[0]["chat_metadata"]["timedWorldInfo"],
        expected[0]["chat_metadata"]["timedWorldInfo"]
    );

    // A file without them replaces the chat's: no override, no effects.
    update(
        &mut server,
        "sera",
        pb::Settings {
            world_info_chat_book: Some("Stale".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let plain = chat_file(r#"{"user_name":"User","chat_metadata":{"note_prompt":""}}"#);
    let done = import(&mut server, "sera", plain.clone()).await;
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    assert_eq!(lines(&exported(&mut server, "sera").await), lines(&plain));
    assert_eq!(
        settings_of(&mut server, "sera")
            .await
            .world_info_chat_book
            .as_deref(),
        Some("Global"),
        "the chat follows the global value again"
    );
    server.stop().await;
}

#[tokio::test]
async fn values_sillytavern_would_not_use_are_dropped_with_warnings() {
    let (_dir, mut server) = start().await;
    let file = chat_file(
        r#"{"user_name":"User","chat_metadata":{"world_info":7,"timedWorldInfo":"sticky"}}"#,
    );
    let done = import(&mut server, "odd", file).await;
    assert_eq!(done.warnings.len(), 2, "{:?}", done.warnings);
    assert!(done.warnings[0].contains("chat_metadata.world_info"));
    assert!(done.warnings[1].contains("chat_metadata.timedWorldInfo"));
    let out = lines(&exported(&mut server, "odd").await);
    assert_eq!(out[0]["chat_metadata"], json!({}));
    assert_eq!(
        settings_of(&mut server, "odd")
            .await
            .world_info_chat_book
            .as_deref(),
        Some("")
    );
    server.stop().await;
}

#[tokio::test]
async fn import_settings_reads_sillytaverns_world_info_settings() {
    let (_dir, mut server) = start().await;
    // The shape of SillyTavern's settings.json (default/content/settings.json
    // at 51ad27f, world_info_settings as getWorldInfoSettings saves it, the
    // persona's book in power_user), shortened.
    let answer = server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: String::new(),
            json: r#"{
                "firstRun": false,
                "max_context": 8192,
                "world_info_settings": {
                    "world_info": {"globalSelect": ["Eldoria", "ดาบ"]},
                    "world_info_depth": 4,
                    "world_info_min_activations": 0,
                    "world_info_min_activations_depth_max": 0,
                    "world_info_budget": 30,
                    "world_info_include_names": true,
                    "world_info_recursive": true,
                    "world_info_overflow_alert": false,
                    "world_info_case_sensitive": false,
                    "world_info_match_whole_words": true,
                    "world_info_character_strategy": 0,
                    "world_info_budget_cap": 1000,
                    "world_info_use_group_scoring": false,
                    "world_info_max_recursion_steps": 2
                },
                "power_user": {"persona_description": "", "persona_description_lorebook": "Me"}
            }"#
            .into(),
        })
        .await
        .unwrap()
        .into_inner();
    let s = answer.settings.unwrap();
    assert_eq!(s.world_info_depth, Some(4));
    assert_eq!(s.world_info_budget, Some(30));
    assert_eq!(s.world_info_budget_cap, Some(1000));
    assert_eq!(s.world_info_recursive, Some(true));
    assert_eq!(s.world_info_match_whole_words, Some(true));
    assert_eq!(s.world_info_max_recursion_steps, Some(2));
    assert_eq!(
        s.world_info_character_strategy,
        Some(pb::WorldInfoCharacterStrategy::Evenly as i32)
    );
    assert_eq!(
        s.world_info_global_books,
        Some(pb::StringList {
            values: vec!["Eldoria".into(), "ดาบ".into()]
        })
    );
    assert_eq!(s.world_info_persona_book.as_deref(), Some("Me"));
    assert_eq!(
        answer.ignored_keys,
        [
            "firstRun",
            "max_context",
            "power_user.persona_description",
            "world_info_settings.world_info_overflow_alert"
        ]
    );
    assert_eq!(server.global_settings().await, s);
    server.stop().await;
}

#[tokio::test]
async fn world_info_settings_are_set_per_chat_and_bad_values_refused_by_name() {
    let (_dir, mut server) = start().await;
    let set = update(
        &mut server,
        "c",
        pb::Settings {
            world_info_depth: Some(1000),
            world_info_character_strategy: Some(pb::WorldInfoCharacterStrategy::GlobalFirst as i32),
            world_info_character_books: Some(pb::StringList {
                values: vec!["Seraphina".into(), "森".into()],
            }),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(set.world_info_depth, Some(1000));
    assert_eq!(
        set.world_info_character_books.unwrap().values,
        ["Seraphina", "森"]
    );
    // The global settings are untouched.
    let global = server.global_settings().await;
    assert_eq!(global.world_info_depth, Some(2));
    assert_eq!(
        global.world_info_character_strategy,
        Some(pb::WorldInfoCharacterStrategy::CharacterFirst as i32)
    );
    // An empty list is a value: it replaces the chat's books.
    let emptied = update(
        &mut server,
        "c",
        pb::Settings {
            world_info_character_books: Some(pb::StringList { values: vec![] }),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(
        emptied.world_info_character_books.unwrap().values,
        Vec::<String>::new()
    );

    for (settings, field) in [
        (
            pb::Settings {
                world_info_depth: Some(1001),
                ..Default::default()
            },
            "settings.world_info_depth",
        ),
        (
            pb::Settings {
                world_info_character_strategy: Some(0),
                ..Default::default()
            },
            "settings.world_info_character_strategy",
        ),
        (
            pb::Settings {
                world_info_global_books: Some(pb::StringList {
                    values: vec!["ok".into(), "".into()],
                }),
                ..Default::default()
            },
            "settings.world_info_global_books[1]",
        ),
        (
            pb::Settings {
                world_info_persona_book: Some("x".repeat(257)),
                ..Default::default()
            },
            "settings.world_info_persona_book",
        ),
    ] {
        let status = update(&mut server, "c", settings, &[]).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert!(status.message().contains(field), "{}", status.message());
    }
    server.stop().await;
}
