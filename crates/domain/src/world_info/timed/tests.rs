//! Stored timed state: lenient reading, writing back.

use super::*;

#[test]
fn junk_reads_as_empty_state() {
    // world-info.js:572-592: non-objects are replaced or dropped.
    for json in [
        "",
        "nonsense",
        "[]",
        "3",
        r#"{"sticky":[1]}"#,
        r#"{"sticky":{"B.0":5}}"#,
    ] {
        assert!(TimedState::from_json(json).is_empty(), "{json}");
    }
}

#[test]
fn stored_effects_go_back_out_as_written() {
    let json = r#"{"sticky":{"B.0":{"hash":123,"start":1,"end":3,"protected":false}},"cooldown":{"B.1":{"hash":"45","start":2,"end":9,"protected":true,"extra":[1]}}}"#;
    let state = TimedState::from_json(json);
    assert!(!state.is_empty());
    assert_eq!(state.to_json(), json);
    assert_eq!(
        TimedState::default().to_json(),
        r#"{"sticky":{},"cooldown":{}}"#
    );
}

#[test]
fn a_stored_hash_written_as_a_string_still_names_its_entry() {
    // world-info.js:627: `String(hash) === String(value.hash)`.
    let raw = serde_json::value::RawValue::from_string(
        r#"{"uid":0,"sticky":4,"content":"x"}"#.to_string(),
    )
    .expect("json");
    let entry = Entry::read("0", "B", &raw);
    let json = format!(
        r#"{{"sticky":{{"B.0":{{"hash":"{}","start":1,"end":5,"protected":false}}}}}}"#,
        entry.hash
    );
    let mut state = TimedState::from_json(&json);
    let entries = [TimedEntry {
        key: "B.0".to_string(),
        entry: &entry,
    }];
    let active = check(&mut state, 2, &entries, false);
    assert!(active.is_sticky(&entry));
}
