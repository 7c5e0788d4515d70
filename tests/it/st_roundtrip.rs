//! SillyTavern gets its file back: import then export is JSON-equal line by
//! line for files imported without warnings (hand-made fixtures reproducing
//! real shapes, tests/fixtures/README.md), API calls change only the
//! members they own (the ownership table of docs/sillytavern.md), chats
//! made through the API keep their message ids, and `is_system` is written
//! as hidden by hand or by auto-hide.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use serde_json::{Value, json};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The JSON lines of a chat file (a byte-order mark and blank lines left out).
pub fn lines(jsonl: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(jsonl).unwrap();
    text.strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn assert_same_lines(what: &str, expected: &[Value], got: &[Value]) {
    assert_eq!(expected.len(), got.len(), "{what}: number of lines");
    for (i, (e, g)) in expected.iter().zip(got).enumerate() {
        assert_eq!(e, g, "{what}: line {}", i + 1);
    }
}

/// Imports `jsonl` as `chat`.
pub async fn import(server: &mut Server, chat: &str, jsonl: Vec<u8>) -> pb::ImportChatResponse {
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

/// Exports `chat`: its JSON lines.
pub async fn export(server: &mut Server, chat: &str) -> Vec<Value> {
    lines(&exported(server, chat).await)
}

async fn hide_count(server: &mut Server, chat: &str, count: i32) {
    update(
        server,
        chat,
        pb::Settings {
            auto_hide_scene_count: Some(count),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn each_real_file_shape_exports_as_it_was_imported() {
    let (_dir, mut server) = start().await;
    for name in [
        "st-verbatim",
        "st-swipe-in-progress",
        "st-group-backup",
        "st-bom",
    ] {
        let file = fixture(name);
        let done = import(&mut server, name, file.clone()).await;
        assert!(done.warnings.is_empty(), "{name}: {:?}", done.warnings);
        assert_same_lines(name, &lines(&file), &export(&mut server, name).await);
    }
    // Still so once the chats are read back from the store.
    let dir = _dir;
    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    for name in ["st-verbatim", "st-group-backup"] {
        assert_same_lines(
            name,
            &lines(&fixture(name)),
            &export(&mut server, name).await,
        );
    }
    // A header-less file gets a header once it has running recaps.
    add_recap(&mut server, "st-group-backup", "They ride to the inn.").await;
    let out = export(&mut server, "st-group-backup").await;
    assert_eq!(out.len(), 4);
    let store = &out[0]["chat_metadata"]["auto_recap_running_scene_recaps"];
    assert_eq!(store["versions"][0]["content"], "They ride to the inn.");
    assert_same_lines("messages", &lines(&fixture("st-group-backup")), &out[1..]);
    server.stop().await;
}

#[tokio::test]
async fn a_generated_chat_exports_equal_but_for_what_auto_hide_hides() {
    let (_dir, mut server) = start().await;
    let file = fixture("bob-harbour");
    import(&mut server, "harbour", file.clone()).await;
    let hidden = server.injection("harbour").await.auto_hidden_count as usize;
    assert!(hidden > 0);
    let mut expected = lines(&file);
    for line in &mut expected[1..=hidden] {
        line["is_system"] = Value::Bool(true);
    }
    assert_same_lines(
        "bob-harbour",
        &expected,
        &export(&mut server, "harbour").await,
    );
    server.stop().await;
}

#[tokio::test]
async fn is_system_in_the_auto_hide_prefix_follows_auto_hide_after_import() {
    let (_dir, mut server) = start().await;
    // Default count 2: the fixture's m0 and m1 are the prefix the
    // extension hides; m5 is hidden by hand.
    import(&mut server, "auto", fixture("st-verbatim")).await;
    hide_count(&mut server, "auto", 5).await;
    let flags = |out: &[Value]| -> Vec<bool> {
        out[1..]
            .iter()
            .map(|l| l["is_system"].as_bool().unwrap())
            .collect()
    };
    let out = export(&mut server, "auto").await;
    assert_eq!(
        flags(&out),
        [false, false, false, false, false, true, false],
        "fewer breaks than the count: the auto-hidden show again"
    );
    // Imported while the chat's own count is 0, every is_system is a hand hide.
    hide_count(&mut server, "by-hand", 0).await;
    import(&mut server, "by-hand", fixture("st-verbatim")).await;
    hide_count(&mut server, "by-hand", 5).await;
    let out = export(&mut server, "by-hand").await;
    assert_eq!(flags(&out), [true, true, false, false, false, true, false]);
    server.stop().await;
}

fn pb_message(id: &str, text: &str, edit: impl FnOnce(&mut pb::Message)) -> pb::Message {
    let mut m = pb::Message {
        id: id.into(),
        text: text.into(),
        ..Default::default()
    };
    edit(&mut m);
    m
}

#[tokio::test]
async fn after_api_calls_only_the_members_they_own_differ() {
    let (_dir, mut server) = start().await;
    let file = fixture("st-verbatim");
    import(&mut server, "calls", file.clone()).await;
    let mut expected = lines(&file);

    // message_edited owns `mes` (and the current swipe's text).
    server
        .publish("calls", edited("m2", "Race you up the stairs!"))
        .await
        .unwrap();
    expected[3]["mes"] = json!("Race you up the stairs!");
    assert_same_lines("edit", &expected, &export(&mut server, "calls").await);

    // message_swiped owns `mes`, `swipe_id` (and `swipes`, `swipe_info`
    // for a new swipe); the recap data follows the swipes.
    server.publish("calls", swiped("m6", 0, "")).await.unwrap();
    let m6 = &mut expected[7];
    m6["mes"] = json!("Stay a while longer.");
    m6["swipe_id"] = json!(0);
    m6["extra"]["auto_recap_memory"] = m6["swipe_info"][0]["extra"]["auto_recap_memory"].clone();
    assert_same_lines("swipe", &expected, &export(&mut server, "calls").await);

    // SetMessageData owns the recap fields of `extra.auto_recap_memory`
    // (on swipe 0 the extension leaves `swipe_info[0]` alone).
    set_data(
        &mut server,
        "calls",
        "m3",
        pb::MessageData {
            memory: Some("Bob wins, out of breath.".into()),
            ..Default::default()
        },
    )
    .await;
    expected[4]["extra"]["auto_recap_memory"]["memory"] = json!("Bob wins, out of breath.");
    assert_same_lines("set data", &expected, &export(&mut server, "calls").await);

    // ClearMemory: the extension's clear_memory fields.
    server
        .memory
        .clear_memory(pb::ClearMemoryRequest {
            chat_id: "calls".into(),
            message_id: "m0".into(),
        })
        .await
        .unwrap();
    let data = &mut expected[1]["extra"]["auto_recap_memory"];
    data["edited"] = json!(false);
    data["exclude"] = json!(false);
    assert_same_lines("clear", &expected, &export(&mut server, "calls").await);

    // chat_changed re-sending the known ids owns name, flags, text and
    // swipes: here it hides m2 by hand and changes nothing else.
    let transcript = vec![
        pb_message("m0", "Shall we walk to the harbour?", |m| {
            m.name = "Ann".into();
            m.is_user = true;
        }),
        pb_message("m1", "", |m| {
            m.name = "Bob".into();
            m.swipes = vec![
                "Of course, Ann. The boats are in.".into(),
                "Later, perhaps.".into(),
            ];
        }),
        pb_message("m2", "Race you up the stairs!", |m| {
            m.name = "Ann".into();
            m.is_user = true;
            m.hidden = true;
        }),
        pb_message("m3", "He wins, laughing, at the top of the stairs.", |m| {
            m.name = "Bob".into();
        }),
        pb_message("m4", "The lamp turns slowly above them.", |m| {
            m.name = "Narrator".into();
            m.is_narrator = true;
        }),
        pb_message("m5", "(a note Ann hid)", |m| {
            m.name = "Bob".into();
            m.hidden = true;
        }),
        pb_message("m6", "", |m| {
            m.name = "Bob".into();
            m.swipes = vec![
                "Stay a while longer.".into(),
                "We should head back before the tide.".into(),
            ];
        }),
    ];
    server
        .publish("calls", chat_changed(transcript))
        .await
        .unwrap();
    expected[3]["is_system"] = json!(true);
    assert_same_lines("hide", &expected, &export(&mut server, "calls").await);

    // A new swipe: appended to `swipes` and `swipe_info`, current.
    server
        .publish("calls", swiped("m3", 1, "He lets her win."))
        .await
        .unwrap();
    let m3 = &mut expected[4];
    m3["mes"] = json!("He lets her win.");
    m3["swipe_id"] = json!(1);
    m3["swipes"]
        .as_array_mut()
        .unwrap()
        .push(json!("He lets her win."));
    let new_data = json!({
        "edited": false,
        "exclude": false,
        "scene_break": true,
        "scene_recap_memory": "They climb the lighthouse.",
        "scene_break_recap": "They climb the lighthouse.",
        "scene_recap_versions": ["They climb the lighthouse."],
        "scene_recap_current_index": 0
    });
    // The message keeps the members recapd does not interpret, and the
    // new swipe's entry repeats them.
    m3["extra"]["auto_recap_memory"] = new_data.clone();
    // The swipe it leaves gets the message's data, as SillyTavern copies it.
    m3["swipe_info"][0]["extra"]["auto_recap_memory"] = json!({
        "memory": "Bob wins, out of breath.",
        "scene_break": true,
        "scene_recap_memory": "They climb the lighthouse.",
        "scene_break_recap": "They climb the lighthouse.",
        "scene_recap_versions": ["They climb the lighthouse."],
        "scene_recap_current_index": 0
    });
    m3["swipe_info"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "extra": { "auto_recap_memory": new_data } }));
    assert_same_lines("new swipe", &expected, &export(&mut server, "calls").await);
    server.stop().await;
}

#[tokio::test]
async fn a_chat_made_through_the_api_round_trips_with_its_ids() {
    let (_dir, mut server) = start().await;
    server
        .publish(
            "made",
            chat_changed(vec![
                pb_message("hello", "Hello there.", |m| {
                    m.name = "Ann".into();
                    m.is_user = true;
                }),
                pb_message("m1", "Hi!", |m| m.name = "Bob".into()),
                pb_message("night", "Night falls.", |m| {
                    m.name = "Narrator".into();
                    m.is_narrator = true;
                }),
                pb_message("b-2", "", |m| {
                    m.name = "Bob".into();
                    m.swipes = vec!["One way.".into(), "Another way.".into()];
                    m.swipe_id = 1;
                }),
            ]),
        )
        .await
        .unwrap();
    set_memory(&mut server, "made", "b-2", "Bob picks a way.").await;
    let first = export(&mut server, "made").await;
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&first[1]),
        ["extra", "is_system", "is_user", "mes", "name"]
    );
    assert_eq!(first[1]["extra"], json!({ "recapd_message_id": "hello" }));
    assert_eq!(first[2]["extra"], json!({}), "m1 is its own index");
    assert_eq!(first[3]["extra"]["type"], "narrator");
    assert_eq!(
        keys(&first[4]),
        [
            "extra",
            "is_system",
            "is_user",
            "mes",
            "name",
            "swipe_id",
            "swipe_info",
            "swipes"
        ]
    );
    assert_eq!(
        first[4]["extra"]["auto_recap_memory"]["memory"],
        "Bob picks a way."
    );

    let jsonl: String = first.iter().map(|l| format!("{l}\n")).collect();
    let done = import(&mut server, "copy", jsonl.into_bytes()).await;
    assert!(done.warnings.is_empty());
    assert_eq!(
        order(&mut server, "copy").await,
        ["hello", "m1", "night", "b-2"]
    );
    assert_eq!(
        data(&mut server, "copy", "b-2").await.memory.as_deref(),
        Some("Bob picks a way.")
    );
    assert_same_lines("again", &first, &export(&mut server, "copy").await);
    server.stop().await;
}

#[tokio::test]
async fn an_id_used_twice_refuses_the_file_naming_the_line() {
    let (_dir, mut server) = start().await;
    let file = "{}\n{\"mes\":\"a\",\"extra\":{\"recapd_message_id\":\"x\"}}\n{\"mes\":\"b\",\"extra\":{\"recapd_message_id\":\"x\"}}\n";
    let err = server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "dup".into(),
            jsonl: file.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("line 3"), "{}", err.message());
    server.stop().await;
}

/// Each version's (number, prev scene, new scene), in the order listed.
async fn scenes(server: &mut Server, chat: &str) -> Vec<(u32, String, String)> {
    server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .versions
        .into_iter()
        .map(|v| (v.version, v.prev_scene_message_id, v.new_scene_message_id))
        .collect()
}

/// A chat file of `lines`.
pub fn jsonl_of(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Two scenes, ending at m1 and m3, each with its running-recap version
/// (the shape the extension writes: scene breaks with `scene_recap_memory`,
/// versions naming them by index).
const TWO_SCENES: &str = r#"{"user_name":"Ann","character_name":"Bob","chat_metadata":{"auto_recap_running_scene_recaps":{"chat_id":"Bob","current_version":1,"versions":[{"version":0,"timestamp":1,"content":"They meet.","scene_count":1,"excluded_count":0,"prev_scene_index":null,"new_scene_index":1},{"version":1,"timestamp":2,"content":"They meet and race.","scene_count":2,"excluded_count":0,"prev_scene_index":1,"new_scene_index":3}]}}}
{"name":"Ann","is_user":true,"mes":"Hello."}
{"name":"Bob","mes":"Hi.","extra":{"auto_recap_memory":{"scene_break":true,"scene_recap_memory":"They meet."}}}
{"name":"Ann","is_user":true,"mes":"Race you!"}
{"name":"Bob","mes":"He wins.","extra":{"auto_recap_memory":{"scene_break":true,"scene_recap_memory":"They race."}}}
{"name":"Ann","is_user":true,"mes":"Again?"}
"#;

#[tokio::test]
async fn running_recap_scenes_stay_on_their_messages_across_a_round_trip() {
    let (_dir, mut server) = start().await;
    // An API-made chat with ids a, b, c and a version whose scene is b.
    server
        .publish(
            "made",
            chat_changed(vec![
                message("a", "One."),
                message("b", "Two."),
                message("c", "Three."),
            ]),
        )
        .await
        .unwrap();
    server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "made".into(),
            content: "Up to two.".into(),
            prev_scene_message_id: "a".into(),
            new_scene_message_id: "b".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let file = jsonl_of(&export(&mut server, "made").await);
    import(&mut server, "made-copy", file).await;
    assert_eq!(
        scenes(&mut server, "made-copy").await,
        [(0, "a".to_owned(), "b".to_owned())]
    );

    // An imported file, a message before the second scene deleted: the
    // export names later messages by recapd_message_id and the scenes by
    // their new indices; read back, each version keeps its message.
    import(&mut server, "st", TWO_SCENES.into()).await;
    server.publish("st", message_deleted("m2")).await.unwrap();
    let kept = scenes(&mut server, "st").await;
    assert_eq!(
        kept,
        [
            (0, String::new(), "m1".to_owned()),
            (1, "m1".to_owned(), "m3".to_owned())
        ]
    );
    let out = export(&mut server, "st").await;
    assert_eq!(out[3]["extra"]["recapd_message_id"], "m3");
    let done = import(&mut server, "st-copy", jsonl_of(&out)).await;
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    assert_eq!(scenes(&mut server, "st-copy").await, kept);
    assert_eq!(
        order(&mut server, "st-copy").await,
        ["m0", "m1", "m3", "m4"]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_message_sillytavern_appends_after_a_deletion_gets_a_fresh_id() {
    let (_dir, mut server) = start().await;
    import(&mut server, "st", TWO_SCENES.into()).await;
    server.publish("st", message_deleted("m2")).await.unwrap();
    let mut out = export(&mut server, "st").await;
    // The last message, now at index 3, is written as `m4`; SillyTavern
    // then appends one without recapd_message_id, whose id by its
    // position (index 4) is `m4` as well.
    assert_eq!(out[4]["extra"]["recapd_message_id"], "m4");
    out.push(json!({"name": "Bob", "is_user": false, "mes": "Once more."}));
    let done = import(&mut server, "st-copy", jsonl_of(&out)).await;
    assert_eq!(done.warnings.len(), 1, "{:?}", done.warnings);
    assert!(
        done.warnings[0].starts_with("line 6: ") && done.warnings[0].contains("line 5"),
        "{:?}",
        done.warnings
    );
    assert_eq!(
        order(&mut server, "st-copy").await,
        ["m0", "m1", "m3", "m4", "m4-1"]
    );
    assert_eq!(
        scenes(&mut server, "st-copy").await,
        scenes(&mut server, "st").await
    );
    // Exported again, the fresh id is written and reads back the same.
    let again = export(&mut server, "st-copy").await;
    assert_eq!(again[5]["extra"]["recapd_message_id"], "m4-1");
    server.stop().await;
}
