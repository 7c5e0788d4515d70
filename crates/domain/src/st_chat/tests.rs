//! SillyTavern chat files: reading, writing, repairing what can be repaired
//! (reported as warnings), and rejecting the rest whole.

use super::*;
use crate::Limits;
use crate::chat::Chat;
use crate::time::UnixMillis;

const SMALL: &str = r#"{"user_name":"Ann","character_name":"Bob","create_date":"2024-01-01","chat_metadata":{"auto_recap_running_scene_recaps":{"chat_id":"Bob - 2024","current_version":0,"versions":[{"version":0,"timestamp":1700000000000,"content":"They met.","scene_count":1,"excluded_count":0,"prev_scene_index":null,"new_scene_index":1},{"version":1,"timestamp":1700000001000,"content":"They met and left.","scene_count":2,"excluded_count":0,"prev_scene_index":1,"new_scene_index":2}]}}}
{"name":"Ann","is_user":true,"is_system":false,"send_date":"x","mes":"Hello","extra":{"auto_recap_memory":{"memory":"Ann greets.","include":"Recap of message(s)"}}}
{"name":"Bob","is_user":false,"is_system":true,"mes":"Hi","swipes":["Hey","Hi"],"swipe_id":1,"swipe_info":[{"extra":{"auto_recap_memory":{"memory":"old swipe"}}},{"extra":{}}],"extra":{"auto_recap_memory":{"memory":"Bob answers.","scene_break":true,"scene_recap_memory":"They met."}}}
{"name":"Narrator","is_user":false,"mes":"Night falls.","extra":{"type":"narrator","auto_recap_memory":{"scene_break":true,"scene_break_visible":false,"scene_recap_memory":"Night."}}}
"#;

#[test]
fn a_chat_file_becomes_messages_swipes_data_and_versions() {
    let chat = parse_st_chat(SMALL, &Limits::default()).unwrap();
    assert_eq!(chat.messages.len(), 3);
    let (_, ann) = &chat.messages[0];
    assert_eq!(
        (ann.id.as_str(), ann.text(), ann.is_user),
        ("m0", "Hello", true)
    );
    assert_eq!(ann.data().memory.as_deref(), Some("Ann greets."));
    let (_, bob) = &chat.messages[1];
    assert!(bob.hidden, "is_system is a hide made by hand");
    assert_eq!((bob.swipe_id, bob.swipes.len(), bob.text()), (1, 2, "Hi"));
    assert_eq!(bob.swipes[0].data.memory.as_deref(), Some("old swipe"));
    assert_eq!(bob.data().memory.as_deref(), Some("Bob answers."));
    assert!(bob.data().is_visible_scene_break());
    let (_, narrator) = &chat.messages[2];
    assert!(narrator.is_narrator);
    assert!(!narrator.data().is_visible_scene_break());
    assert_eq!(chat.current, Some(0));
    assert_eq!(chat.recaps.len(), 2);
    assert_eq!(chat.recaps[0].new_scene_message_id.as_deref(), Some("m1"));
    assert_eq!(chat.recaps[1].prev_scene_message_id.as_deref(), Some("m1"));
    assert_eq!(chat.recaps[1].new_scene_message_id.as_deref(), Some("m2"));
    assert_eq!(chat.recaps[1].created_at_ms, UnixMillis(1_700_000_001_000));
}

#[test]
fn writing_then_reading_gives_the_same_chat() {
    let first = parse_st_chat(SMALL, &Limits::default()).unwrap();
    let chat = Chat::from_parts(first.messages.clone(), first.recaps.clone(), first.current);
    let written = write_st_chat("Bob - 2024", &chat, 0, &ChatWorldInfo::default());
    let again = parse_st_chat(&written, &Limits::default()).unwrap();
    assert_eq!(again.messages, first.messages);
    assert_eq!(again.recaps, first.recaps);
    assert_eq!(again.current, first.current);
}

#[test]
fn a_bad_file_is_rejected_whole_naming_the_line() {
    let cases = [
        ("", "line 1"),
        ("not json\n", "line 1"),
        ("{}\n{\"mes\": 3}\n", "line 2"),
        ("{}\n{\"mes\": \"ok\"}\n{broken\n", "line 3"),
        (
            "{}\n{\"mes\": \"a\", \"swipes\": [\"a\"], \"swipe_id\": 4}\n",
            "line 2",
        ),
        ("{}\n[1]\n", "line 2"),
        (
            r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"versions":[{"version":-1}]}}}
"#,
            "line 1",
        ),
        (
            "{}\n{\"mes\": \"a\", \"swipes\": [\"a\"], \"swipe_id\": 2}\n",
            "line 2",
        ),
        (
            "{}\n{\"mes\":\"x\",\"extra\":{\"auto_recap_memory\":{\"memory\":7}}}\n",
            "line 2",
        ),
    ];
    for (file, line) in cases {
        let err = parse_st_chat(file, &Limits::default()).unwrap_err();
        assert!(err.to_string().contains(line), "{file:?}: {err}");
    }
    let tiny = Limits {
        max_messages_per_chat: 1,
        ..Limits::default()
    };
    assert!(parse_st_chat("{}\n{\"mes\":\"a\"}\n{\"mes\":\"b\"}\n", &tiny).is_err());
}

#[test]
fn swipe_id_equal_to_the_swipe_count_makes_the_text_one_more_current_swipe() {
    // SillyTavern saves this while a swipe is being generated.
    let file = r#"{}
{"name":"Bob","mes":"third, in progress","swipes":["first","second"],"swipe_id":2,"swipe_info":[{"extra":{"auto_recap_memory":{"memory":"one"}}},{}],"extra":{"auto_recap_memory":{"memory":"now"}}}
"#;
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    let (_, bob) = &chat.messages[0];
    assert_eq!(bob.swipes.len(), 3);
    assert_eq!((bob.swipe_id, bob.text()), (2, "third, in progress"));
    assert_eq!(bob.swipes[0].text, "first");
    assert_eq!(bob.swipes[0].data.memory.as_deref(), Some("one"));
    assert_eq!(bob.data().memory.as_deref(), Some("now"));
    assert!(chat.warnings.is_empty(), "{:?}", chat.warnings);
}

#[test]
fn a_file_starting_with_a_message_has_no_header_and_loses_nothing() {
    // Group chats of older SillyTavern versions and their backups.
    let file = r#"{"name":"Ann","is_user":true,"is_group":true,"mes":"Hello all"}
{"name":"Bob","is_user":false,"mes":"Hi"}
{"name":"Cid","is_user":false,"mes":"Hey"}
"#;
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    let texts: Vec<_> = chat.messages.iter().map(|(_, m)| m.text()).collect();
    assert_eq!(texts, ["Hello all", "Hi", "Hey"]);
    assert_eq!(chat.messages[0].1.id, "m0");
    assert!(chat.recaps.is_empty() && chat.current.is_none());
    let err = parse_st_chat("{\"mes\":\"a\"}\n{\"mes\":1}\n", &Limits::default()).unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
}

#[test]
fn a_byte_order_mark_is_skipped_and_bad_utf8_names_its_line() {
    let mut file = "\u{feff}".as_bytes().to_vec();
    file.extend_from_slice(SMALL.as_bytes());
    let chat = parse_st_chat_bytes(&file, &Limits::default()).unwrap();
    assert_eq!(chat.messages.len(), 3);
    assert_eq!(chat.recaps.len(), 2);
    let mut broken = b"{}\n{\"mes\":\"fine\"}\n{\"mes\":\"caf".to_vec();
    broken.extend_from_slice(&[0xe9, b'"', b'}', b'\n']);
    let err = parse_st_chat_bytes(&broken, &Limits::default()).unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
    assert!(err.to_string().contains("UTF-8"), "{err}");
}

#[test]
fn scene_indices_past_the_end_and_repeated_numbers_are_repaired_and_reported() {
    // Disabled chats skip the extension's cleanup; its edit path numbers a
    // new version `versions.length + 1`.
    let file = r#"

{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":2,"versions":[{"version":0,"content":"a","new_scene_index":0},{"version":2,"content":"b","prev_scene_index":0,"new_scene_index":9},{"version":2,"content":"c"},{"version":0,"content":"d"}]}}}
{"mes":"only one"}
"#;
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    let numbered: Vec<_> = chat
        .recaps
        .iter()
        .map(|v| (v.version, v.content.as_str()))
        .collect();
    assert_eq!(numbered, [(0, "a"), (2, "b"), (3, "c"), (4, "d")]);
    assert_eq!(chat.recaps[1].prev_scene_message_id.as_deref(), Some("m0"));
    assert_eq!(chat.recaps[1].new_scene_message_id, None);
    assert_eq!(chat.current, Some(2), "the first version 2 stays current");
    assert_eq!(chat.warnings.len(), 3, "{:?}", chat.warnings);
    assert!(
        chat.warnings.iter().all(|w| w.starts_with("line 3: ")),
        "the header is on line 3: {:?}",
        chat.warnings
    );
    assert!(chat.warnings[0].contains("new_scene_index 9"));
    // Named by its place in the file too: its number may be renumbered.
    assert!(chat.warnings[0].contains("(entry "), "{}", chat.warnings[0]);
    assert!(chat.warnings[1].contains("now version 3"));
    assert!(chat.warnings[2].contains("now version 4"));
}

#[test]
fn chunks_split_anywhere_read_as_the_whole_file() {
    let mut file = "\u{feff}".as_bytes().to_vec();
    file.extend_from_slice(SMALL.replace('\n', "\r\n").as_bytes());
    let whole = parse_st_chat_bytes(&file, &Limits::default()).unwrap();
    for size in [1, 2, 3, 7, 64] {
        let mut reader = ChatReader::new(Limits::default());
        for chunk in file.chunks(size) {
            reader.push(chunk).unwrap();
        }
        let chat = reader.finish().unwrap();
        assert_eq!(chat.messages, whole.messages, "chunks of {size} bytes");
        assert_eq!(chat.recaps, whole.recaps);
    }
}

#[test]
fn a_bad_line_is_numbered_across_chunks() {
    let file = "{}\n{\"mes\":\"a\"}\n\n{\"mes\":\"b\"\n";
    let mut reader = ChatReader::new(Limits::default());
    let mut err = None;
    for chunk in file.as_bytes().chunks(3) {
        if let Err(e) = reader.push(chunk) {
            err = Some(e);
            break;
        }
    }
    let err = err.expect("the broken fourth line fails as it completes");
    assert!(err.to_string().contains("line 4"), "{err}");
}

#[test]
fn written_lines_are_the_written_file() {
    let first = parse_st_chat(SMALL, &Limits::default()).unwrap();
    let chat = Chat::from_parts(first.messages, first.recaps, first.current);
    let joined: String = st_chat_lines("c", &chat, 0, &ChatWorldInfo::default())
        .map(|l| l + "\n")
        .collect();
    assert_eq!(
        joined,
        write_st_chat("c", &chat, 0, &ChatWorldInfo::default())
    );
}

#[test]
fn a_group_chat_made_through_the_api_gets_sillytaverns_group_header() {
    let chat = Chat::default();
    let header = |group_chat| {
        st_chat_lines_of("c", &chat, 0, &ChatWorldInfo::default(), group_chat, None)
            .next()
            .unwrap()
    };
    assert!(
        header(true)
            .starts_with(r#"{"user_name":"unused","character_name":"unused","chat_metadata":"#),
        "{}",
        header(true)
    );
    assert!(!header(false).contains("unused"), "{}", header(false));
}

/// The header of `chat` written as a branch of `parent`.
fn header_with_parent(chat: &Chat, parent: Option<&str>) -> String {
    st_chat_lines_of("c", chat, 0, &ChatWorldInfo::default(), false, parent)
        .next()
        .expect("a header line")
}

#[test]
fn a_branch_names_its_parent_as_sillytaverns_branch_files_do() {
    let made = Chat::default();
    let header: serde_json::Value =
        serde_json::from_str(&header_with_parent(&made, Some("Alice - 1"))).unwrap();
    assert_eq!(header["chat_metadata"]["main_chat"], "Alice - 1");
    assert!(!header_with_parent(&made, None).contains("main_chat"));

    // SillyTavern's branch file, its parent already named: written as the
    // file had it.
    let file = concat!(
        r#"{"user_name":"U","character_name":"Alice","chat_metadata":{"note_prompt":"","main_chat":"Alice - 1"}}"#,
        "\n",
        r#"{"name":"Alice","is_user":false,"mes":"The lighthouse was dark.","extra":{}}"#,
        "\n"
    );
    let imported = parse_st_chat(file, &Limits::default())
        .unwrap()
        .into_chat(0);
    assert_eq!(
        header_with_parent(&imported, Some("Alice - 1")),
        header_with_parent(&imported, None)
    );
    // A branch of it names its own parent, once.
    let branched = header_with_parent(&imported, Some("Alice - Branch #1"));
    assert_eq!(branched.matches("main_chat").count(), 1, "{branched}");
    let header: serde_json::Value = serde_json::from_str(&branched).unwrap();
    assert_eq!(header["chat_metadata"]["main_chat"], "Alice - Branch #1");
    assert_eq!(header["chat_metadata"]["note_prompt"], "");
}

/// The parent a reader takes from `chat` written as a branch of `parent`.
fn parent_read_back(chat: &Chat, parent: &str) -> Option<String> {
    let lines: Vec<String> =
        st_chat_lines_of("c", chat, 0, &ChatWorldInfo::default(), false, Some(parent)).collect();
    parse_st_chat(&lines.join("\n"), &Limits::default())
        .unwrap()
        .parent
}

#[test]
fn a_branch_of_a_header_less_file_still_names_its_parent() {
    let file = r#"{"name":"Alice","is_user":false,"mes":"The lighthouse was dark.","extra":{}}"#;
    let headerless = parse_st_chat(file, &Limits::default())
        .unwrap()
        .into_chat(0);
    assert_eq!(
        parent_read_back(&headerless, "Alice - 1").as_deref(),
        Some("Alice - 1")
    );
    // Not a branch: still no header.
    let lines: Vec<String> =
        st_chat_lines_of("c", &headerless, 0, &ChatWorldInfo::default(), false, None).collect();
    assert_eq!(lines, [file]);
}

#[test]
fn a_file_naming_main_chat_twice_is_read_back_with_the_branchs_parent() {
    // A reader takes the last member of a name: this file's parent is
    // "Alice - 1", though it names "Alice - 2" first.
    let file = concat!(
        r#"{"user_name":"U","character_name":"Alice","chat_metadata":{"main_chat":"Alice - 2","main_chat":"Alice - 1"}}"#,
        "\n",
        r#"{"name":"Alice","is_user":false,"mes":"The lighthouse was dark.","extra":{}}"#,
        "\n"
    );
    let imported = parse_st_chat(file, &Limits::default()).unwrap();
    assert_eq!(imported.parent.as_deref(), Some("Alice - 1"));
    let chat = imported.into_chat(0);
    assert_eq!(
        parent_read_back(&chat, "Alice - 1").as_deref(),
        Some("Alice - 1")
    );
    // Written as a branch of the chat the file named first.
    assert_eq!(
        parent_read_back(&chat, "Alice - 2").as_deref(),
        Some("Alice - 2")
    );
}

#[test]
fn a_line_that_never_ends_is_refused_once_it_passes_the_longest_line() {
    let limits = Limits {
        max_text_bytes: 16,
        ..Limits::default()
    };
    let mut reader = ChatReader::new(limits);
    let max = reader.max_line_bytes();
    reader.push(b"{}\n{\"mes\":\"").unwrap();
    let mut refused = None;
    for _ in 0..max {
        if let Err(e) = reader.push(b"aaaaaaaa") {
            refused = Some(e);
            break;
        }
    }
    let error = refused.expect("an endless line is refused, not held");
    assert!(error.to_string().contains("line 2"), "{error}");
    assert!(error.to_string().contains("longer than"), "{error}");
    // The same line whole, in one chunk, is refused the same way.
    let long = format!("{{}}\n{{\"mes\":\"{}\"}}\n", "a".repeat(max));
    let error = parse_st_chat(&long, &limits).unwrap_err();
    assert!(error.to_string().contains("line 2"), "{error}");
}

#[test]
fn scene_indices_name_the_ids_the_messages_carry() {
    // What an export writes for an API-made chat with ids a, b, c.
    let file = r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":0,"versions":[{"version":0,"content":"r","prev_scene_index":0,"new_scene_index":1}]}}}
{"mes":"x","extra":{"recapd_message_id":"a"}}
{"mes":"y","extra":{"recapd_message_id":"b"}}
{"mes":"z","extra":{"recapd_message_id":"c"}}
"#;
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    assert_eq!(chat.recaps[0].prev_scene_message_id.as_deref(), Some("a"));
    assert_eq!(chat.recaps[0].new_scene_message_id.as_deref(), Some("b"));
}

#[test]
fn a_position_id_taken_by_an_explicit_one_gets_a_fresh_id_and_a_warning() {
    // After a deletion through the API an export wrote `m1` on line 2;
    // SillyTavern then appended a message without an id at index 1.
    let file = r#"{"chat_metadata":{"auto_recap_running_scene_recaps":{"current_version":0,"versions":[{"version":0,"content":"r","new_scene_index":1}]}}}
{"mes":"a","extra":{"recapd_message_id":"m1"}}
{"mes":"b"}
"#;
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    let ids: Vec<&str> = chat.messages.iter().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["m1", "m1-1"]);
    assert_eq!(chat.warnings.len(), 1, "{:?}", chat.warnings);
    assert!(
        chat.warnings[0].starts_with("line 3: ") && chat.warnings[0].contains("line 2"),
        "{:?}",
        chat.warnings
    );
    // The scene index names the message at that index, renamed or not.
    assert_eq!(chat.recaps[0].new_scene_message_id.as_deref(), Some("m1-1"));
    // The other order: the explicit id comes after; the earlier message
    // is renamed.
    let file = "{}\n{\"mes\":\"a\"}\n{\"mes\":\"b\",\"extra\":{\"recapd_message_id\":\"m0\"}}\n";
    let chat = parse_st_chat(file, &Limits::default()).unwrap();
    let ids: Vec<&str> = chat.messages.iter().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["m0-1", "m0"]);
    assert!(
        chat.warnings.len() == 1 && chat.warnings[0].starts_with("line 2: "),
        "{:?}",
        chat.warnings
    );
    // Written back, the fresh id is explicit and reads back the same.
    let again = chat.into_chat(0);
    let written = write_st_chat("c", &again, 0, &ChatWorldInfo::default());
    let reread = parse_st_chat(&written, &Limits::default()).unwrap();
    assert!(reread.warnings.is_empty(), "{:?}", reread.warnings);
    let ids: Vec<&str> = reread.messages.iter().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["m0-1", "m0"]);
}

#[test]
fn two_explicit_ids_alike_refuse_the_file_naming_both_lines() {
    let file = "{}\n{\"mes\":\"a\",\"extra\":{\"recapd_message_id\":\"x\"}}\n{\"mes\":\"b\"}\n{\"mes\":\"c\",\"extra\":{\"recapd_message_id\":\"x\"}}\n";
    let err = parse_st_chat(file, &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("line 4") && err.contains("line 2"), "{err}");
}

#[test]
fn the_headers_kept_members_count_against_the_text_limit_together() {
    let small = Limits {
        max_text_bytes: 40,
        ..Limits::default()
    };
    // Other extensions' `chat_metadata` (SillyTavern's note_prompt, ...).
    let each_fits = "\n{\"user_name\":\"0123456789012345678901\",\"chat_metadata\":{\"note_prompt\":\"0123456789012345678901\"}}\n{\"mes\":\"x\"}\n";
    let err = parse_st_chat(each_fits, &small).unwrap_err().to_string();
    assert!(
        err.contains("line 2") && err.contains("text limit"),
        "{err}"
    );
    let fits = "{\"user_name\":\"0\",\"chat_metadata\":{\"note_prompt\":\"0\"}}\n{\"mes\":\"x\"}\n";
    assert!(parse_st_chat(fits, &small).is_ok());
}

mod roundtrip;
mod world_info;
