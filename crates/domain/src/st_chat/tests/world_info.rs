//! The chat's World Info state in its file: `chat_metadata.world_info`
//! (the chat's lorebook, set by world-info.js:5858 and deleted, never
//! emptied to null, at :5861, at 51ad27f) and `chat_metadata.timedWorldInfo`
//! (objects `sticky` and `cooldown` of effects `{hash, start, end,
//! protected}`, world-info.js:556-577 and :604-611), read apart from the
//! chat and written back from what the caller holds.

use serde_json::Value;

use crate::Limits;
use crate::st_chat::*;

/// A header as SillyTavern's saveChat writes it for a chat with a chat
/// lorebook and a running sticky effect, another extension's metadata
/// beside them, and one message.
const WITH_WORLD_INFO: &str = concat!(
    r#"{"user_name":"User","character_name":"Seraphina","create_date":"2025-11-02@10h11m12s","#,
    r#""chat_metadata":{"note_prompt":"","world_info":"Eldoria","#,
    r#""timedWorldInfo":{"sticky":{"Eldoria.3":{"hash":1234567890,"start":4,"end":6.0,"protected":false}},"cooldown":{}},"#,
    r#""tainted":true}}"#,
    "\n",
    r#"{"name":"User","is_user":true,"mes":"Where is the forest?"}"#,
    "\n"
);

fn header_of(jsonl: &str) -> Value {
    serde_json::from_str(jsonl.lines().next().unwrap()).unwrap()
}

#[test]
fn the_chat_book_and_timed_effects_are_read_apart_and_written_back_json_equal() {
    let imported = parse_st_chat(WITH_WORLD_INFO, &Limits::default()).unwrap();
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    let world_info = imported.world_info.clone();
    assert_eq!(world_info.book.as_deref(), Some("Eldoria"));
    // The object's text as written: `6.0` stays `6.0`.
    assert_eq!(
        world_info.timed.as_deref(),
        Some(
            r#"{"sticky":{"Eldoria.3":{"hash":1234567890,"start":4,"end":6.0,"protected":false}},"cooldown":{}}"#
        )
    );
    let chat = imported.into_chat(0);
    // The chat itself does not keep them: written without them, the header
    // lacks both members.
    let bare = write_st_chat("c", &chat, 0, &ChatWorldInfo::default());
    let metadata = &header_of(&bare)["chat_metadata"];
    assert!(metadata.get("world_info").is_none(), "{bare}");
    assert!(metadata.get("timedWorldInfo").is_none(), "{bare}");
    // Written with what was read, the file comes back JSON-equal, numbers
    // as written.
    let written = write_st_chat("c", &chat, 0, &world_info);
    for (a, b) in WITH_WORLD_INFO.lines().zip(written.lines()) {
        let (a, b): (Value, Value) = (
            serde_json::from_str(a).unwrap(),
            serde_json::from_str(b).unwrap(),
        );
        assert_eq!(a, b);
    }
    assert_eq!(written.lines().count(), 2);
    assert!(written.contains(r#""end":6.0"#), "{written}");
}

#[test]
fn absent_members_stay_absent_and_the_live_state_is_what_is_written() {
    let file =
        "{\"user_name\":\"User\",\"chat_metadata\":{\"note_prompt\":\"\"}}\n{\"mes\":\"a\"}\n";
    let imported = parse_st_chat(file, &Limits::default()).unwrap();
    assert_eq!(imported.world_info, ChatWorldInfo::default());
    let chat = imported.into_chat(0);
    let written = write_st_chat("c", &chat, 0, &ChatWorldInfo::default());
    assert_eq!(header_of(&written), header_of(file));

    // A chat book and effects set since are written into chat_metadata.
    let live = ChatWorldInfo {
        book: Some("Chat lore".into()),
        timed: Some(r#"{"sticky":{},"cooldown":{"Chat lore.0":{"hash":1,"start":2,"end":3,"protected":true}}}"#.into()),
    };
    let header = header_of(&write_st_chat("c", &chat, 0, &live));
    assert_eq!(header["chat_metadata"]["world_info"], "Chat lore");
    assert_eq!(
        header["chat_metadata"]["timedWorldInfo"]["cooldown"]["Chat lore.0"]["protected"],
        true
    );
    assert_eq!(header["chat_metadata"]["note_prompt"], "");
    assert_eq!(header["user_name"], "User");
}

#[test]
fn an_empty_chat_book_is_sillytaverns_none_and_comes_back_as_written() {
    // world-info.js:4433-4437: an empty name is falsy, no chat lore.
    let file = "{\"chat_metadata\":{\"world_info\":\"\"}}\n{\"mes\":\"a\"}\n";
    let imported = parse_st_chat(file, &Limits::default()).unwrap();
    assert!(imported.warnings.is_empty());
    assert_eq!(imported.world_info.book.as_deref(), Some(""));
    let world_info = imported.world_info.clone();
    let written = write_st_chat("c", &imported.into_chat(0), 0, &world_info);
    assert_eq!(header_of(&written), header_of(file));
}

#[test]
fn values_sillytavern_would_not_use_are_dropped_with_a_warning() {
    for (metadata, what) in [
        (
            r#"{"world_info":null}"#,
            "chat_metadata.world_info is not a string",
        ),
        (
            r#"{"world_info":7}"#,
            "chat_metadata.world_info is not a string",
        ),
        (
            r#"{"world_info":"a\u0007b"}"#,
            "chat_metadata.world_info is no usable name",
        ),
        (
            r#"{"timedWorldInfo":null}"#,
            "chat_metadata.timedWorldInfo is not a JSON object",
        ),
        (
            r#"{"timedWorldInfo":["sticky"]}"#,
            "chat_metadata.timedWorldInfo is not a JSON object",
        ),
    ] {
        let file = format!("{{\"chat_metadata\":{metadata}}}\n{{\"mes\":\"a\"}}\n");
        let imported = parse_st_chat(&file, &Limits::default()).unwrap();
        assert_eq!(imported.world_info, ChatWorldInfo::default(), "{metadata}");
        assert_eq!(imported.warnings.len(), 1, "{metadata}");
        assert!(
            imported.warnings[0].starts_with(&format!("line 1: {what}")),
            "{:?}",
            imported.warnings
        );
        // Dropped, not kept: the export does not write it back.
        let written = write_st_chat("c", &imported.into_chat(0), 0, &ChatWorldInfo::default());
        assert_eq!(header_of(&written)["chat_metadata"], serde_json::json!({}));
    }
}

#[test]
fn a_headerless_file_gets_a_header_only_for_world_info_to_write() {
    let file = "{\"name\":\"Ann\",\"mes\":\"a\"}\n";
    let chat = parse_st_chat(file, &Limits::default())
        .unwrap()
        .into_chat(0);
    assert_eq!(
        write_st_chat("g", &chat, 0, &ChatWorldInfo::default()),
        file
    );
    let live = ChatWorldInfo {
        book: Some("Group lore".into()),
        timed: None,
    };
    let written = write_st_chat("g", &chat, 0, &live);
    assert_eq!(written.lines().count(), 2);
    assert_eq!(
        header_of(&written)["chat_metadata"]["world_info"],
        "Group lore"
    );
}

#[test]
fn the_timed_state_counts_against_the_header_text_limit() {
    let limits = Limits {
        max_text_bytes: 64,
        ..Limits::default()
    };
    let padding = "x".repeat(60);
    let file = format!(
        "{{\"chat_metadata\":{{\"timedWorldInfo\":{{\"sticky\":{{\"{padding}\":{{}}}}}}}}}}\n{{\"mes\":\"a\"}}\n"
    );
    let error = parse_st_chat(&file, &limits).unwrap_err().to_string();
    assert!(error.contains("over the text limit"), "{error}");
}

#[test]
fn a_chat_kept_whole_before_recapd_read_these_writes_its_kept_members_until_it_has_its_own() {
    // A chat row written before: `chat_metadata.world_info` and
    // `timedWorldInfo` among the kept members.
    use crate::st_chat::verbatim::{StFile, StHeader, header_has};
    let imported = parse_st_chat(
        "{\"chat_metadata\":{\"note_prompt\":\"\"}}\n{\"mes\":\"a\"}\n",
        &Limits::default(),
    )
    .unwrap();
    let mut chat = imported.into_chat(0);
    let old: StHeader = serde_json::from_value(serde_json::json!({
        "has": header_has::METADATA,
        "metadata": {"world_info": "Old", "timedWorldInfo": {"sticky": {}}, "note_prompt": ""},
    }))
    .unwrap();
    chat.set_st_file(Some(std::sync::Arc::new(StFile::Header(old))));
    let header = header_of(&write_st_chat("c", &chat, 0, &ChatWorldInfo::default()));
    assert_eq!(header["chat_metadata"]["world_info"], "Old");
    // A value of the chat's own wins, written once.
    let live = ChatWorldInfo {
        book: Some("New".into()),
        timed: Some("{\"cooldown\":{}}".into()),
    };
    let line = write_st_chat("c", &chat, 0, &live);
    let first = line.lines().next().unwrap();
    assert_eq!(first.matches("\"world_info\"").count(), 1, "{first}");
    assert_eq!(first.matches("\"timedWorldInfo\"").count(), 1, "{first}");
    let header = header_of(&line);
    assert_eq!(header["chat_metadata"]["world_info"], "New");
    assert_eq!(
        header["chat_metadata"]["timedWorldInfo"],
        serde_json::json!({"cooldown": {}})
    );
    assert_eq!(header["chat_metadata"]["note_prompt"], "");
}
