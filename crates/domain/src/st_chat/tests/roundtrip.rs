//! A file comes back as it went in: kept members at every level, only the
//! members the file had, the file's own swipes, ids of API-made messages,
//! and `is_system` as hand-hidden or auto-hidden.

use crate::time::UnixMillis;
use serde_json::Value;

use crate::Limits;
use crate::chat::ChatEvent;
use crate::message::{MessageData, NewMessage};
use crate::recaps::NewRecap;
use crate::st_chat::*;

/// A file with members of every level recapd does not interpret (shapes
/// from SillyTavern's saveChat and the extension's data).
const RICH: &str = r#"{"user_name":"Ann","character_name":"Bob","create_date":"2024-05-02@10h11m12s","chat_metadata":{"note_prompt":"","timedWorldInfo":{"sticky":{}},"auto_recap_running_scene_recaps":{"chat_id":"Bob - 2024-05-02@10h11m12s","current_version":0,"versions":[{"version":0,"timestamp":1714644672000,"content":"They met.","scene_count":1,"excluded_count":0,"prev_scene_index":null,"new_scene_index":1,"event_keys":["meeting"]}]}}}
{"name":"Ann","is_user":true,"is_system":false,"send_date":"May 2, 2024 10:11am","mes":"Hello","extra":{"auto_recap_memory":{"memory":"Ann greets.","include":"Recap of message(s)","hash":12345678901234567890,"memory_weight":1.50}}}
{"name":"Bob","is_user":false,"is_system":false,"is_name":true,"force_avatar":"bob.png","send_date":"May 2, 2024 10:12am","gen_started":"2024-05-02T10:12:00.000Z","gen_finished":"2024-05-02T10:12:05.000Z","title":"","mes":"Hi Ann","swipes":["Hi {{user}}","Hey"],"swipe_id":0,"swipe_info":[{"send_date":"May 2, 2024 10:12am","gen_started":"2024-05-02T10:12:00.000Z","extra":{"api":"openai","auto_recap_memory":{"memory":"stale"}}},{"send_date":"May 2, 2024 10:13am","extra":{"api":"openai","token_count":1e3,"auto_recap_memory":{"memory":"Bob waves."}}}],"extra":{"api":"openai","model":"gpt-4o","token_count":12,"auto_recap_memory":{"memory":"Bob answers.","scene_break":true,"scene_recap_memory":"They met.","scene_recap_versions":["They met."],"scene_recap_current_index":0,"scene_recap_hash":"abc","scene_recap_metadata":{"model":"x"},"scene_break_collapsed":false,"auto_scene_break_checked":true,"error":null}}}
"#;

fn limits() -> Limits {
    Limits::default()
}

fn chat_of(file: &str, auto_hide: u32) -> Chat {
    let imported = parse_st_chat(file, &limits()).unwrap();
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    imported.into_chat(auto_hide)
}

fn parsed(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn assert_json_equal(file: &str, written: &str) {
    let (a, b) = (parsed(file), parsed(written));
    assert_eq!(a.len(), b.len(), "{written}");
    for (line, (a, b)) in a.iter().zip(&b).enumerate() {
        assert_eq!(a, b, "line {}", line + 1);
    }
}

#[test]
fn every_member_comes_back_at_its_level() {
    let imported = parse_st_chat(RICH, &limits()).unwrap();
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    let world_info = imported.world_info.clone();
    let chat = imported.into_chat(0);
    let written = write_st_chat("ignored", &chat, 0, &world_info);
    assert_json_equal(RICH, &written);
    // Raw JSON text, not re-encoded numbers.
    for number in [
        "12345678901234567890",
        "\"memory_weight\":1.50",
        "\"token_count\":1e3",
    ] {
        assert!(written.contains(number), "{number} in {written}");
    }
    // The file's chat_id stays, not the id the chat is exported under.
    assert!(written.contains("\"chat_id\":\"Bob - 2024-05-02@10h11m12s\""));
}

#[test]
fn only_what_the_file_had_is_written() {
    let file = "{\"chat_metadata\":{}}\n{\"name\":\"Ann\",\"is_user\":true,\"mes\":\"Hi\"}\n{\"name\":\"Bob\",\"mes\":\"Yo\",\"extra\":{}}\n";
    let chat = chat_of(file, 0);
    let written = write_st_chat("c", &chat, 0, &ChatWorldInfo::default());
    assert_json_equal(file, &written);
    for absent in [
        "swipes",
        "swipe_id",
        "swipe_info",
        "is_system",
        "is_thoughts",
        "original_avatar",
        "auto_recap_memory",
    ] {
        assert!(!written.contains(absent), "{absent} in {written}");
    }
}

#[test]
fn the_files_own_swipes_survive_until_the_message_text_changes() {
    // SillyTavern keeps a placeholder in the swipe while `mes` has the
    // name, and saves `swipe_id == swipes.length` while generating.
    let file = r#"{}
{"name":"Bob","mes":"Hi Ann","swipes":["Hi <user>"],"swipe_id":0}
{"name":"Bob","mes":"Third, in progress","swipes":["One","Two"],"swipe_id":2,"swipe_info":[{},{},{"gen_started":"x"}]}
"#;
    let mut chat = chat_of(file, 0);
    assert_eq!(chat.message("m0").unwrap().1.text(), "Hi Ann");
    assert_json_equal(
        file,
        &write_st_chat("c", &chat, 0, &ChatWorldInfo::default()),
    );
    chat.apply(ChatEvent::MessageEdited {
        message_id: "m0".into(),
        text: "Hello Ann".into(),
    })
    .unwrap();
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "m1".into(),
        swipe_id: 0,
        text: String::new(),
    })
    .unwrap();
    let after = parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()));
    assert_eq!(after[1]["swipes"], serde_json::json!(["Hello Ann"]));
    assert_eq!(after[1]["mes"], "Hello Ann");
    assert_eq!(
        after[2]["swipes"],
        serde_json::json!(["One", "Two", "Third, in progress"])
    );
    assert_eq!(
        (after[2]["swipe_id"].as_u64(), after[2]["mes"].as_str()),
        (Some(0), Some("One"))
    );
    assert_eq!(after[2]["swipe_info"][2]["gen_started"], "x");
}

#[test]
fn set_data_reaches_the_current_swipe_info_entry_only_off_swipe_zero() {
    // The extension copies a message's data into `swipe_info[swipe_id]`
    // only when `swipe_id` is not 0.
    let mut chat = chat_of(RICH, 0);
    let update = MessageData {
        memory: Some("new".into()),
        ..Default::default()
    };
    chat.set_message_data("m1", &update).unwrap();
    let after = parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()));
    assert_eq!(after[2]["extra"]["auto_recap_memory"]["memory"], "new");
    assert_eq!(
        after[2]["swipe_info"][0]["extra"]["auto_recap_memory"]["memory"],
        "stale"
    );
    // Everything else of the line is as the file had it.
    let mut expected = parsed(RICH)[2].clone();
    expected["extra"]["auto_recap_memory"]["memory"] = "new".into();
    assert_eq!(after[2], expected);

    chat.apply(ChatEvent::MessageSwiped {
        message_id: "m1".into(),
        swipe_id: 1,
        text: String::new(),
    })
    .unwrap();
    chat.set_message_data("m1", &update).unwrap();
    let after = parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()));
    assert_eq!(
        after[2]["swipe_info"][1]["extra"]["auto_recap_memory"]["memory"],
        "new"
    );
    assert_eq!(after[2]["swipe_info"][1]["extra"]["token_count"], 1000.0);
}

#[test]
fn a_headerless_file_exports_headerless_until_it_has_running_recaps() {
    let file = "{\"name\":\"Ann\",\"is_user\":true,\"is_group\":true,\"mes\":\"All here?\"}\n{\"name\":\"Bob\",\"is_group\":true,\"mes\":\"Yes\"}\n";
    let mut chat = chat_of(file, 0);
    assert_json_equal(
        file,
        &write_st_chat("g", &chat, 0, &ChatWorldInfo::default()),
    );
    chat.add_recap(
        NewRecap {
            content: "They gathered.".into(),
            ..Default::default()
        },
        UnixMillis(7),
    )
    .unwrap();
    let lines = parsed(&write_st_chat("g", &chat, 0, &ChatWorldInfo::default()));
    assert_eq!(lines.len(), 3);
    let store = &lines[0]["chat_metadata"][RECAPS_KEY];
    assert_eq!(store["chat_id"], "g");
    assert_eq!(store["versions"][0]["content"], "They gathered.");
}

fn api_message(id: &str, text: &str, edit: impl FnOnce(&mut NewMessage)) -> Message {
    let mut m = NewMessage {
        id: id.into(),
        name: "Bob".into(),
        text: text.into(),
        ..Default::default()
    };
    edit(&mut m);
    m.build("message", &limits()).unwrap()
}

#[test]
fn api_made_messages_are_written_in_sillytaverns_shape_and_keep_their_ids() {
    let mut chat = Chat::default();
    chat.apply(ChatEvent::ChatChanged(vec![
        api_message("m0", "Hello", |m| m.is_user = true),
        api_message("intro", "Night falls.", |m| m.is_narrator = true),
        api_message("b-7", "", |m| {
            m.swipes = vec!["One".into(), "Two".into()];
            m.swipe_id = 1;
        }),
    ]))
    .unwrap();
    chat.set_message_data(
        "b-7",
        &MessageData {
            memory: Some("Bob picks two.".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let written = write_st_chat("c", &chat, 0, &ChatWorldInfo::default());
    let lines = parsed(&written);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&lines[1]),
        ["extra", "is_system", "is_user", "mes", "name"]
    );
    assert_eq!(lines[1]["extra"], serde_json::json!({}));
    assert_eq!(lines[2]["extra"]["type"], "narrator");
    assert_eq!(lines[2]["extra"][ID_KEY], "intro");
    assert_eq!(
        keys(&lines[3]),
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
    assert_eq!(lines[3]["extra"][ID_KEY], "b-7");
    assert_eq!(lines[3]["extra"][DATA_KEY]["memory"], "Bob picks two.");
    assert_eq!(
        lines[3]["swipe_info"][1]["extra"][DATA_KEY]["memory"],
        "Bob picks two."
    );
    // Read back: the same ids, no kept `recapd_message_id`, and the same
    // export again.
    let again = chat_of(&written, 0);
    let ids: Vec<&str> = again.messages().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["m0", "intro", "b-7"]);
    assert!(
        again
            .messages()
            .all(|(_, m)| m.st.as_ref().is_none_or(|st| st.extra.is_none()))
    );
    assert_json_equal(
        &written,
        &write_st_chat("c", &again, 0, &ChatWorldInfo::default()),
    );
}

#[test]
fn an_explicit_id_used_twice_refuses_the_file_naming_both_lines() {
    let file = "{}\n{\"mes\":\"a\",\"extra\":{\"recapd_message_id\":\"m1\"}}\n{\"mes\":\"b\",\"extra\":{\"recapd_message_id\":\"m1\"}}\n";
    let err = parse_st_chat(file, &limits()).unwrap_err().to_string();
    assert!(err.contains("line 3") && err.contains("line 2"), "{err}");
    let bad = "{}\n{\"mes\":\"a\",\"extra\":{\"recapd_message_id\":\"\"}}\n";
    let err = parse_st_chat(bad, &limits()).unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn is_system_in_the_auto_hide_prefix_is_auto_hide_and_the_rest_hand_hides() {
    // Breaks at m1 and m3; with a count of 2 the extension hides m0..=m1.
    let line = |hidden: bool, brk: bool| {
        format!(
            "{{\"name\":\"Bob\",\"is_system\":{hidden},\"mes\":\"x\",\"extra\":{{\"auto_recap_memory\":{{\"scene_break\":{brk}}}}}}}\n"
        )
    };
    let file = format!(
        "{{}}\n{}{}{}{}{}",
        line(true, false),
        line(true, true),
        line(false, false),
        line(true, true),
        line(false, false)
    );
    let chat = chat_of(&file, 2);
    let by_hand: Vec<bool> = chat.messages().map(|(_, m)| m.hidden).collect();
    assert_eq!(by_hand, [false, false, false, true, false]);
    assert_json_equal(
        &file,
        &write_st_chat("c", &chat, 2, &ChatWorldInfo::default()),
    );
    // With auto-hide off they show again; the hand hide stays.
    let shown = parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()));
    let flags: Vec<bool> = shown[1..]
        .iter()
        .map(|l| l["is_system"].as_bool().unwrap())
        .collect();
    assert_eq!(flags, [false, false, false, true, false]);
    // With a count of 0 at import every is_system is a hand hide.
    let chat = chat_of(&file, 0);
    let by_hand: Vec<bool> = chat.messages().map(|(_, m)| m.hidden).collect();
    assert_eq!(by_hand, [true, true, false, true, false]);
}

#[test]
fn kept_members_count_against_the_text_limit_together() {
    let small = Limits {
        max_text_bytes: 40,
        ..Limits::default()
    };
    let each_fits = "{}\n{\"mes\":\"x\",\"send_date\":\"0123456789012345678901\",\"extra\":{\"api\":\"0123456789012345678901\"}}\n";
    let err = parse_st_chat(each_fits, &small).unwrap_err().to_string();
    assert!(
        err.contains("line 2") && err.contains("text limit"),
        "{err}"
    );
    let fits = "{}\n{\"mes\":\"x\",\"send_date\":\"0123\",\"extra\":{\"api\":\"0123\"}}\n";
    assert!(parse_st_chat(fits, &small).is_ok());
}

#[test]
fn messages_without_kept_members_keep_nothing_but_their_shape() {
    let chat = chat_of("{}\n{\"name\":\"Ann\",\"mes\":\"Hi\"}\n", 0);
    let (_, m) = chat.messages().next().unwrap();
    let st = m.st.as_deref().unwrap();
    assert_eq!(st.kept_len(), 0);
    assert!(m.swipes.iter().all(|s| s.st.is_none()));
}

#[test]
fn nulls_and_odd_spellings_come_back_as_they_were() {
    let file = r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":null,"versions":[{"version":0,"timestamp":1.7e12,"content":null}]}}}
{"name":null,"mes":"x","extra":null,"swipe_info":[null]}
"#;
    let chat = chat_of(file, 0);
    assert_json_equal(
        file,
        &write_st_chat("c", &chat, 0, &ChatWorldInfo::default()),
    );
}

#[test]
fn chat_changed_keeps_kept_members_and_the_file_swipe_while_the_texts_stay() {
    let file = r#"{}
{"name":"Bob","send_date":"d","mes":"Hi Ann","swipes":["Hi <user>","Yo"],"swipe_id":0,"extra":{"api":"x"}}
"#;
    let mut chat = chat_of(file, 0);
    let resend = |text: &str| {
        api_message("m0", "", |m| {
            m.swipes = vec![text.into(), "Yo".into()];
        })
    };
    chat.apply(ChatEvent::ChatChanged(vec![resend("Hi Ann")]))
        .unwrap();
    assert_json_equal(
        file,
        &write_st_chat("c", &chat, 0, &ChatWorldInfo::default()),
    );
    chat.apply(ChatEvent::ChatChanged(vec![resend("Hello Ann")]))
        .unwrap();
    let line = &parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()))[1];
    assert_eq!(line["swipes"], serde_json::json!(["Hello Ann", "Yo"]));
    assert_eq!(
        (line["send_date"].as_str(), line["extra"]["api"].as_str()),
        (Some("d"), Some("x"))
    );
}

#[test]
fn a_swipe_moves_the_kept_extension_data_as_sillytavern_moves_extra() {
    let file = r#"{}
{"name":"Bob","mes":"A","swipes":["A","B"],"swipe_id":0,"swipe_info":[{"extra":{"auto_recap_memory":{"memory":"a","hash":1}}},{"extra":{"auto_recap_memory":{"memory":"b","hash":2}}}],"extra":{"auto_recap_memory":{"memory":"a","hash":1}}}
"#;
    let mut chat = chat_of(file, 0);
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "m0".into(),
        swipe_id: 1,
        text: String::new(),
    })
    .unwrap();
    let line = &parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()))[1];
    assert_eq!(
        line["extra"][DATA_KEY],
        serde_json::json!({"memory":"b","hash":2})
    );
    assert_eq!(
        line["swipe_info"][0]["extra"][DATA_KEY],
        serde_json::json!({"memory":"a","hash":1})
    );
    // A new swipe keeps the message's kept members (memory cleared).
    chat.apply(ChatEvent::MessageSwiped {
        message_id: "m0".into(),
        swipe_id: 2,
        text: "C".into(),
    })
    .unwrap();
    let line = &parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()))[1];
    let cleared = serde_json::json!({"edited":false,"exclude":false,"hash":2});
    assert_eq!(line["extra"][DATA_KEY], cleared);
    assert_eq!(line["swipe_info"][2]["extra"][DATA_KEY], cleared);
    assert_eq!(line["swipes"], serde_json::json!(["A", "B", "C"]));
}

#[test]
fn versions_come_back_in_the_files_order_then_the_apis() {
    let file = r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":3,"versions":[{"version":4,"content":"d"},{"version":5,"content":"e"},{"version":3,"content":"c"}]}}}
{"mes":"x"}
"#;
    let mut chat = chat_of(file, 0);
    assert_json_equal(
        file,
        &write_st_chat("c", &chat, 0, &ChatWorldInfo::default()),
    );
    chat.add_recap(
        NewRecap {
            content: "f".into(),
            ..Default::default()
        },
        UnixMillis(1),
    )
    .unwrap();
    let header = &parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()))[0];
    let numbers: Vec<u64> = header["chat_metadata"][RECAPS_KEY]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [4, 5, 3, 6]);
}

#[test]
fn swipes_without_swipe_id_and_an_id_at_its_own_position_come_back() {
    // SillyTavern writes `swipes` without `swipe_id` on some lines (older
    // versions); an export wrote `recapd_message_id` "m1" for a message
    // then at index 1.
    let file = r#"{}
{"name":"Bob","mes":"A","swipes":["A","B"]}
{"name":"Bob","mes":"C","extra":{"recapd_message_id":"m1"}}
"#;
    let chat = chat_of(file, 0);
    assert_json_equal(
        file,
        &write_st_chat("c", &chat, 0, &ChatWorldInfo::default()),
    );
}

#[test]
fn kept_data_survives_a_swipe_away_from_a_swipe_without_an_entry() {
    // `swipes` but no `swipe_info` (older SillyTavern files).
    let file = r#"{}
{"name":"Bob","mes":"A","swipes":["A","B"],"swipe_id":0,"extra":{"auto_recap_memory":{"memory":"a","hash":1}}}
"#;
    let mut chat = chat_of(file, 0);
    for swipe_id in [1, 0] {
        chat.apply(ChatEvent::MessageSwiped {
            message_id: "m0".into(),
            swipe_id,
            text: String::new(),
        })
        .unwrap();
    }
    let line = &parsed(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()))[1];
    assert_eq!(
        line["extra"][DATA_KEY],
        serde_json::json!({"memory":"a","hash":1})
    );
}
