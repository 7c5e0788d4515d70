//! Which entries ScanWorldInfo activates: real books by their keys within
//! the scan depth, hidden messages left out, recapd's own injections and
//! the caller's prompts scanned when flagged, seeds, generation types and
//! the character book of a real card.

use super::*;

/// The Eldoria chat of these cases: the glade in the newest message, a
/// Shadowfang only three messages back.
fn eldoria_chat() -> Vec<pb::Message> {
    vec![
        said("m1", "User", "Tell me about the Shadowfang."),
        said("m2", "Seraphina", "Later. Rest now."),
        said("m3", "User", "Fine."),
        said("m4", "Seraphina", "We are safe here, in the glade."),
    ]
}

#[tokio::test]
async fn eldoria_activates_by_key_within_the_scan_depth_and_never_from_hidden_messages() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    global_books(&mut server, "", &["Eldoria"]).await;
    set_chat(&mut server, "sera", eldoria_chat()).await;

    // world_info_depth 2 (WI:69-82, §2 "Global settings"): the newest two
    // messages are scanned (SC:4565, WI:279-297), so the glade (uid 2) is
    // found and the Shadowfang (uid 1), three messages back, is not.
    let answer = scan(&server, scan_request("sera")).await;
    assert_eq!(activated(&answer), [("Eldoria".into(), "2".into())]);
    let entry = &answer.activated[0];
    // Eldoria.json's entry 2: position 0, order 100 (README of the
    // fixtures); content macro-substituted at activation (WI:4939) with
    // the chat's user and character names.
    assert_eq!(entry.position, 0);
    assert_eq!(entry.order, 100.0);
    let content = eldoria_content("2", "User", "Seraphina");
    assert_eq!(entry.content, content);
    // Position 0 goes to worldInfoBefore, joined with "\n" (WI:5146).
    assert_eq!(answer.before, content);
    assert_eq!(answer.after, "");
    assert!(answer.depth.is_empty());

    // Four messages deep: the Shadowfang too.
    server
        .update_settings(
            "sera",
            pb::Settings {
                world_info_depth: Some(4),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(uids(&scan(&server, scan_request("sera")).await), ["1", "2"]);

    // A hidden (is_system) message is not in the scan list (SC:4437): its
    // "magic" (uid 3) and "forest" (uid 0) activate nothing, and it does
    // not count towards the depth (the glade stays in the window).
    server
        .update_settings(
            "sera",
            pb::Settings {
                world_info_depth: Some(2),
                ..Default::default()
            },
        )
        .await;
    let mut hidden = said("m5", "User", "Show me the magic of the forest.");
    hidden.hidden = true;
    add_message(&mut server, "sera", hidden).await;
    assert_eq!(uids(&scan(&server, scan_request("sera")).await), ["2"]);

    // The same through a caller's history: a hidden entry is not scanned.
    let mut request = scan_request("sera");
    request.history = vec![
        pb::PromptMessage {
            role: pb::InjectionRole::User as i32,
            name: "User".into(),
            content: "What are your powers?".into(),
            ..Default::default()
        },
        pb::PromptMessage {
            role: pb::InjectionRole::Assistant as i32,
            name: "Seraphina".into(),
            content: "Beasts roam the wood.".into(),
            hidden: true,
            ..Default::default()
        },
    ];
    assert_eq!(uids(&scan(&server, request).await), ["3"]);
    server.stop().await;
}

#[tokio::test]
async fn a_book_named_in_settings_that_does_not_exist_is_skipped() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    // A name no stored book has applies nothing (docs/settings.md "World
    // Info settings"; SillyTavern skips a missing world, WI:4363-4413).
    global_books(&mut server, "", &["No such book", "Eldoria"]).await;
    server
        .update_settings(
            "sera",
            pb::Settings {
                world_info_chat_book: Some("Also missing".into()),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "sera", eldoria_chat()).await;
    let answer = scan(&server, scan_request("sera")).await;
    assert_eq!(activated(&answer), [("Eldoria".into(), "2".into())]);
    server.stop().await;
}

#[tokio::test]
async fn the_seraphina_cards_book_activates_as_a_character_book() {
    let (_dir, mut server) = start().await;
    let card = std::fs::read(fixture("default_Seraphina.png")).unwrap();
    let stored = lorebooks(&server)
        .import_character_book(pb::ImportCharacterBookRequest {
            name: String::new(),
            card,
        })
        .await
        .expect("imports the card's book")
        .into_inner();
    // Named after character_book.name (WI:5612-5651), 4 entries (README).
    assert_eq!((stored.name.as_str(), stored.entry_count), ("Eldoria", 4));
    server
        .update_settings(
            "sera",
            pb::Settings {
                world_info_character_books: names(&["Eldoria"]),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "sera", eldoria_chat()).await;
    let answer = scan(&server, scan_request("sera")).await;
    assert_eq!(activated(&answer), [("Eldoria".into(), "2".into())]);
    // `before_char` with extensions.position 0 is position 0
    // (convertCharacterBook, WI:5498-5555); the content as SillyTavern's
    // own conversion wrote it (Seraphina_converted.json).
    let converted: Value = serde_json::from_str(&fixture_text("Seraphina_converted.json")).unwrap();
    let content = converted["entries"]["2"]["content"]
        .as_str()
        .unwrap()
        .replace("{{user}}", "User")
        .replace("{{char}}", "Seraphina");
    assert_eq!(answer.activated[0].position, 0);
    assert_eq!(answer.before, content);
    // Another chat whose settings do not name it: nothing.
    set_chat(&mut server, "other", eldoria_chat()).await;
    assert!(
        scan(&server, scan_request("other"))
            .await
            .activated
            .is_empty()
    );
    server.stop().await;
}

/// A book whose entries are keyed on words only recapd's injections or the
/// caller's prompts hold.
fn injected_words_book() -> String {
    book(&[
        (
            "0",
            json!({"key": ["zeppelin"], "content": "Zeppelins are banned."}),
        ),
        (
            "1",
            json!({"key": ["obelisk"], "content": "The obelisk hums."}),
        ),
        (
            "2",
            json!({"key": ["kraken"], "content": "The kraken sleeps."}),
        ),
    ])
}

#[tokio::test]
async fn recapds_own_injections_and_extra_prompts_are_scanned_only_when_flagged() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Words", &injected_words_book()).await;
    global_books(&mut server, "", &["Words"]).await;
    set_chat(
        &mut server,
        "c",
        vec![
            said("m1", "User", "Hello."),
            said("m2", "Seraphina", "Welcome."),
        ],
    )
    .await;
    add_recap(&mut server, "c", "A zeppelin drifts over the town.").await;
    injection_holds(&mut server, "c", "auto_recap_scene", "zeppelin").await;
    // `scan` is off by default (docs/settings.md): the running recap is not
    // scanned.
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    // On: every extension prompt flagged `scan` is added to the haystack
    // (WI:4607-4614, §2 "Buffer"; the recap injection is named there).
    server
        .update_settings(
            "c",
            pb::Settings {
                scan: Some(true),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);

    // The message-recap tier, with message_recaps_scan.
    server
        .update_settings(
            "c",
            pb::Settings {
                scan: Some(false),
                message_recaps_enabled: Some(true),
                ..Default::default()
            },
        )
        .await;
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "c".into(),
            message_id: "m1".into(),
            data: Some(pb::MessageData {
                memory: Some("An obelisk rose.".into()),
                ..Default::default()
            }),
        })
        .await
        .unwrap();
    injection_holds(&mut server, "c", "auto_recap_messages", "obelisk").await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    server
        .update_settings(
            "c",
            pb::Settings {
                message_recaps_scan: Some(true),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["1"]);
    server
        .update_settings(
            "c",
            pb::Settings {
                message_recaps_scan: Some(false),
                ..Default::default()
            },
        )
        .await;

    // The caller's extra prompts: scanned when flagged, whatever their
    // position (§2 "Buffer": regardless of position or depth).
    let extra = |scan: bool| pb::ExtensionPrompt {
        key: "lore_hint".into(),
        value: "Beware the kraken.".into(),
        position: pb::InjectionPosition::None as i32,
        depth: 0,
        role: pb::InjectionRole::System as i32,
        scan,
    };
    let mut request = scan_request("c");
    request.extra = vec![extra(false)];
    assert!(scan(&server, request.clone()).await.activated.is_empty());
    request.extra = vec![extra(true)];
    assert_eq!(uids(&scan(&server, request).await), ["2"]);
    server.stop().await;
}

#[tokio::test]
async fn the_same_seed_gives_the_same_probability_rolls() {
    let (_dir, mut server) = start().await;
    // Twelve constants of probability 50: each is rolled (useProbability,
    // probability != 100, WI:4909-4935).
    let entries: Vec<(String, Value)> = (0..12)
        .map(|i| {
            (
                i.to_string(),
                json!({"constant": true, "probability": 50, "content": format!("Rolled {i}.")}),
            )
        })
        .collect();
    let entries: Vec<(&str, Value)> = entries
        .iter()
        .map(|(uid, v)| (uid.as_str(), v.clone()))
        .collect();
    import_book(&server, "Dice", &book(&entries)).await;
    global_books(&mut server, "", &["Dice"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Roll.")]).await;
    let seeded = |seed: u64| pb::ScanWorldInfoRequest {
        seed,
        ..scan_request("c")
    };
    let mut outcomes = Vec::new();
    for seed in [1_u64, 2, 3, 4, 5] {
        let first = uids(&scan(&server, seeded(seed)).await);
        let again = uids(&scan(&server, seeded(seed)).await);
        assert_eq!(first, again, "seed {seed} gives one activation");
        outcomes.push(first);
    }
    // The seed decides: five seeds do not all roll the same twelve coins.
    assert!(
        outcomes.iter().any(|o| o != &outcomes[0]),
        "every seed rolled {:?}",
        outcomes[0]
    );
    server.stop().await;
}

#[tokio::test]
async fn an_entrys_triggers_name_the_generation_types_it_activates_on() {
    let (_dir, mut server) = start().await;
    // `triggers` not containing the generation type skips the entry
    // (WI:4673-4878, §2 "Per-entry gates"); none listed: every type.
    import_book(
        &server,
        "Triggers",
        &book(&[
            ("0", json!({"constant": true, "content": "Always."})),
            (
                "1",
                json!({"constant": true, "triggers": ["continue"], "content": "On continue."}),
            ),
            (
                "2",
                json!({"constant": true, "triggers": ["swipe", "regenerate"], "content": "On a retry."}),
            ),
        ]),
    )
    .await;
    global_books(&mut server, "", &["Triggers"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Go on.")]).await;
    let typed = |generation_type: &str| pb::ScanWorldInfoRequest {
        generation_type: generation_type.into(),
        ..scan_request("c")
    };
    // Empty is normal (proto ScanWorldInfoRequest.generation_type).
    for (kind, expected) in [
        ("", vec!["0"]),
        ("normal", vec!["0"]),
        ("continue", vec!["0", "1"]),
        ("swipe", vec!["0", "2"]),
        ("regenerate", vec!["0", "2"]),
        ("quiet", vec!["0"]),
        ("impersonate", vec!["0"]),
    ] {
        assert_eq!(
            uids(&scan(&server, typed(kind)).await),
            expected,
            "{kind:?}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_book_named_twice_applies_once() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    // Chat book, persona book, global and character book all "Eldoria":
    // each book is loaded once (WI:4363-4476, §4).
    server
        .update_settings(
            "sera",
            pb::Settings {
                world_info_chat_book: Some("Eldoria".into()),
                world_info_persona_book: Some("Eldoria".into()),
                world_info_global_books: names(&["Eldoria", "Eldoria"]),
                world_info_character_books: names(&["Eldoria"]),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "sera", eldoria_chat()).await;
    let answer = scan(&server, scan_request("sera")).await;
    assert_eq!(activated(&answer), [("Eldoria".into(), "2".into())]);
    assert_eq!(answer.before, eldoria_content("2", "User", "Seraphina"));
    server.stop().await;
}

#[tokio::test]
async fn character_and_persona_texts_are_scanned_for_entries_that_ask() {
    let (_dir, mut server) = start().await;
    import_book(
        &server,
        "Texts",
        &book(&[
            (
                "0",
                json!({"key": ["lighthouse"], "matchCharacterDescription": true, "content": "The lighthouse."}),
            ),
            ("1", json!({"key": ["harbor"], "content": "The harbor."})),
            (
                "2",
                json!({"key": ["violin"], "matchPersonaDescription": true, "content": "The violin."}),
            ),
            (
                "3",
                json!({"constant": true, "characterFilter": {"isExclude": false, "names": ["Seraphina"], "tags": []}, "content": "Only hers."}),
            ),
        ]),
    )
    .await;
    global_books(&mut server, "", &["Texts"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Hello.")]).await;
    // The global texts are appended only for entries with the matching
    // `match*` flag (WI:299-327, §2 "Buffer"); a character filter lets an
    // entry in for the named character only (WI:4673-4878).
    let texts = |character: &str| pb::WorldInfoTexts {
        character_description: "Keeps the lighthouse by the harbor.".into(),
        persona_description: "Plays the violin.".into(),
        character_name: character.into(),
        ..Default::default()
    };
    let request = |character: &str| pb::ScanWorldInfoRequest {
        texts: Some(texts(character)),
        ..scan_request("c")
    };
    assert_eq!(
        uids(&scan(&server, request("Seraphina")).await),
        ["0", "2", "3"]
    );
    assert_eq!(uids(&scan(&server, request("Lilith")).await), ["0", "2"]);
    server.stop().await;
}

#[tokio::test]
async fn a_history_entry_linked_to_a_hidden_message_is_not_scanned() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Eldoria", &fixture_text("Eldoria.json")).await;
    global_books(&mut server, "", &["Eldoria"]).await;
    let mut hidden = said("m1", "User", "What are your powers?");
    hidden.hidden = true;
    set_chat(
        &mut server,
        "sera",
        vec![hidden, said("m2", "Seraphina", "Rest.")],
    )
    .await;
    // A caller's history entry linked by message_id takes the stored
    // message's hidden state (ScanWorldInfoRequest.history, as
    // RenderPromptRequest.history), and hidden messages are not scanned
    // (SC:4437).
    let entry = |message_id: &str| pb::PromptMessage {
        role: pb::InjectionRole::User as i32,
        name: "User".into(),
        content: "What are your powers?".into(),
        hidden: false,
        message_id: message_id.into(),
    };
    let mut request = scan_request("sera");
    request.history = vec![entry("m1")];
    assert!(scan(&server, request.clone()).await.activated.is_empty());
    request.history = vec![entry("")];
    assert_eq!(uids(&scan(&server, request.clone()).await), ["3"]);
    // An id the chat does not hold names the entry (NOT_FOUND).
    request.history = vec![entry("m9")];
    let status = try_scan(&server, request).await.expect_err("unknown id");
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    assert!(status.message().contains("history[0]"), "{status:?}");
    server.stop().await;
}
