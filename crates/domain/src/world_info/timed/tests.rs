//! Stored timed state: lenient reading, writing back.

use super::*;

#[test]
fn a_renamed_book_takes_its_effects_along() {
    let json = r#"{"sticky":{"Chat book.0":{"hash":1,"start":1,"end":3},"Other.0":{"hash":2,"start":1,"end":3}},"cooldown":{"Chat book.7":{"hash":3,"start":2,"end":9},"Chat bookX.1":{"hash":4,"start":2,"end":9}}}"#;
    let mut state = TimedState::from_json(json);
    state.rename_book("Chat book", "Branch book");
    assert_eq!(
        state.to_json(),
        r#"{"sticky":{"Branch book.0":{"hash":1,"start":1,"end":3},"Other.0":{"hash":2,"start":1,"end":3}},"cooldown":{"Branch book.7":{"hash":3,"start":2,"end":9},"Chat bookX.1":{"hash":4,"start":2,"end":9}}}"#
    );
}

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

#[test]
fn an_effect_of_a_missing_entry_stays_until_its_end() {
    // world-info.js:632-638: no entry has the hash; the effect is removed
    // only once `chat.length >= Number(value.end)`, which is false for an
    // end that is no number.
    let json = r#"{"sticky":{"B.0":{"hash":1,"start":1,"end":3,"protected":false},"B.1":{"hash":2,"start":1,"end":"soon","protected":false},"B.2":{"hash":3,"start":1,"end":9,"protected":false}}}"#;
    let mut state = TimedState::from_json(json);
    check(&mut state, 3, &[], false);
    assert_eq!(
        state.to_json(),
        r#"{"sticky":{"B.1":{"hash":2,"start":1,"end":"soon","protected":false},"B.2":{"hash":3,"start":1,"end":9,"protected":false}},"cooldown":{}}"#
    );
}

#[test]
fn a_large_book_of_sticky_entries_keeps_every_effect() {
    // world-info.js:619-660 and 734-747: each stored effect is matched to
    // its entry by hash; an activated entry whose effect is stored starts
    // none. With 5,000 entries this is one lookup per effect (a pass over
    // the book per effect made this take seconds).
    let raws: Vec<Box<serde_json::value::RawValue>> = (0..5_000)
        .map(|i| {
            serde_json::value::RawValue::from_string(format!(
                r#"{{"uid":{i},"sticky":10,"cooldown":20,"content":"x"}}"#
            ))
            .expect("json")
        })
        .collect();
    let read: Vec<Entry> = raws
        .iter()
        .enumerate()
        .map(|(i, raw)| Entry::read(&i.to_string(), "B", raw))
        .collect();
    let entries: Vec<TimedEntry<'_>> = read
        .iter()
        .map(|entry| TimedEntry {
            key: format!("B.{}", entry.uid_member),
            entry,
        })
        .collect();
    let mut state = TimedState::default();
    start_effects(&mut state, 1, &entries, false);
    let started = state.clone();
    assert_eq!(started.sticky.len(), 5_000);
    assert_eq!(started.cooldown.len(), 5_000);
    // Two messages later every sticky holds; starting again adds nothing.
    let active = check(&mut state, 3, &entries, false);
    assert!(read.iter().all(|e| active.is_sticky(e)));
    start_effects(&mut state, 3, &entries, false);
    assert_eq!(state, started);
    // At the sticky's end (1 + 10) each starts a protected cooldown in
    // place of the stored one (world-info.js:518-529).
    let active = check(&mut state, 11, &entries, false);
    assert!(
        read.iter()
            .all(|e| !active.is_sticky(e) && active.is_cooldown(e))
    );
    assert!(state.sticky.is_empty());
    assert_eq!(state.cooldown.len(), 5_000);
    assert!(
        state
            .cooldown
            .iter()
            .all(|(_, v)| v.get("protected").is_some_and(Js::truthy))
    );
}
