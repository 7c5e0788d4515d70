//! Timed effects over a sequence of scans (world-info.js:479-793; facts §2
//! "Timed effects").

use super::tests::support::*;
use super::*;

/// Runs a scan of `n` messages that all say "dragon", with `timed`.
fn scan(entries: &[Entry], n: usize, timed: &TimedState, dry_run: bool) -> ScanOutcome {
    let msgs: Vec<(&str, &str)> = vec![("U", "dragon"); n];
    let mut run = Run::new(entries, &msgs);
    run.timed = timed.clone();
    run.dry_run = dry_run;
    run.go().expect("scan")
}

#[test]
fn sticky_then_a_protected_cooldown() {
    // Sticky 2, cooldown 3. Scan at 1 message: activates, both effects
    // start (world-info.js:734-747): sticky ends at 3, cooldown at 4.
    // At 2: sticky keeps it active through its cooldown. At 3: sticky
    // ends and starts a protected cooldown ending at 6 (world-info.js:
    // 518-529, 619-660), so it is held back at 3, 4, 5 even though its
    // key is present; at 6 the cooldown ends and it activates again.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","sticky":2,"cooldown":3}"#,
    )];
    let mut timed = TimedState::default();
    let mut seen = Vec::new();
    for n in 1..=6 {
        let out = scan(&entries, n, &timed, false);
        seen.push(!out.activated.is_empty());
        timed = out.timed;
    }
    assert_eq!(seen, [true, true, false, false, false, true]);
}

#[test]
fn a_sticky_entry_stays_without_its_key() {
    // world-info.js:4760-4764: an active sticky entry activates.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","sticky":3}"#,
    )];
    let first = scan(&entries, 1, &TimedState::default(), false);
    assert_eq!(first.activated.len(), 1);
    let mut run = Run::new(&entries, &[("U", "hello"), ("U", "no key here")]);
    run.timed = first.timed.clone();
    assert_eq!(run.uids(), ["0"]);
}

#[test]
fn an_effect_is_dropped_when_the_chat_did_not_advance() {
    // world-info.js:631-635: chat length <= start and not protected.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","cooldown":5}"#,
    )];
    let first = scan(&entries, 1, &TimedState::default(), false);
    assert!(!first.timed.is_empty());
    // A regenerate at the same length: the cooldown goes, it activates.
    let again = scan(&entries, 1, &first.timed, false);
    assert_eq!(again.activated.len(), 1);
}

#[test]
fn a_dry_run_reads_and_writes_no_sticky_or_cooldown() {
    // world-info.js:700-706, 735: dry runs skip both.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","cooldown":5}"#,
    )];
    let dry = scan(&entries, 1, &TimedState::default(), true);
    assert!(dry.timed.is_empty());
    let wet = scan(&entries, 1, &TimedState::default(), false);
    // On cooldown for a real scan at 2 messages, not for a dry one.
    assert!(scan(&entries, 2, &wet.timed, false).activated.is_empty());
    let dry = scan(&entries, 2, &wet.timed, true);
    assert_eq!(dry.activated.len(), 1);
    assert_eq!(dry.timed, wet.timed, "unchanged");
}

#[test]
fn an_edited_entry_no_longer_matches_its_effect() {
    // world-info.js:627: effects find their entry by hash.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","sticky":5}"#,
    )];
    let first = scan(&entries, 1, &TimedState::default(), false);
    let edited = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"edited","sticky":5}"#,
    )];
    let mut run = Run::new(&edited, &[("U", "a"), ("U", "b")]);
    run.timed = first.timed.clone();
    assert!(run.uids().is_empty(), "the old sticky does not apply");
    // Kept until its end (not found, interval not passed).
    assert_eq!(run.go().expect("scan").timed, first.timed);
}

#[test]
fn delay_holds_an_entry_back_until_the_chat_is_long_enough() {
    // world-info.js:666-677: chat length < delay; applies to dry runs too.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","delay":3}"#,
    )];
    assert!(
        scan(&entries, 2, &TimedState::default(), false)
            .activated
            .is_empty()
    );
    assert!(
        scan(&entries, 2, &TimedState::default(), true)
            .activated
            .is_empty()
    );
    assert_eq!(
        scan(&entries, 3, &TimedState::default(), false)
            .activated
            .len(),
        1
    );
}

#[test]
fn a_truthy_count_of_zero_still_starts_an_effect() {
    // world-info.js:730-736 tests `!entry[type]` (the string "0" is
    // truthy) and adds `Number(entry[type])` messages: a cooldown that
    // ends where it starts.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"x","sticky":"2","cooldown":"0"}"#,
    )];
    let out = scan(&entries, 1, &TimedState::default(), false);
    assert_eq!(
        out.timed.to_json(),
        format!(
            r#"{{"sticky":{{"B.0":{{"hash":{h},"start":1,"end":3,"protected":false}}}},"cooldown":{{"B.0":{{"hash":{h},"start":1,"end":1,"protected":false}}}}}}"#,
            h = entries[0].hash
        )
    );
}

#[test]
fn entries_are_named_by_their_own_uid_member() {
    // world-info.js:4386, 4682: `${world}.${uid}` with the entry's own
    // uid; two entries without one are both "B.undefined", and the later
    // one takes the first one's place in the activated map.
    let entries = [
        Entry::read(
            "0",
            "B",
            &raw(r#"{"uid":7,"constant":true,"content":"seven","order":60}"#),
        ),
        Entry::read(
            "1",
            "B",
            &raw(r#"{"constant":true,"content":"A","order":50}"#),
        ),
        Entry::read(
            "2",
            "B",
            &raw(r#"{"constant":true,"content":"B","order":40}"#),
        ),
    ];
    let out = Run::new(&entries, &[("U", "a")]).go().expect("scan");
    let got: Vec<(&str, &str)> = out
        .activated
        .iter()
        .map(|a| (a.uid.as_str(), a.content.as_str()))
        .collect();
    assert_eq!(got, [("7", "seven"), ("undefined", "B")]);
}

#[test]
fn a_null_entry_empties_the_whole_load() {
    // world-info.js:4386 destructures null and throws; getSortedEntries
    // then returns no entry (4525-4528).
    let entries = [
        Entry::read("0", "B", &raw(r#"{"uid":0,"constant":true,"content":"x"}"#)),
        Entry::read("1", "B", &raw("null")),
    ];
    assert!(Run::new(&entries, &[("U", "a")]).uids().is_empty());
    // So does a content that is truthy but no string (parseDecorators).
    let entries = [
        Entry::read("0", "B", &raw(r#"{"uid":0,"constant":true,"content":"x"}"#)),
        Entry::read("1", "B", &raw(r#"{"uid":1,"content":5}"#)),
    ];
    assert!(Run::new(&entries, &[("U", "a")]).uids().is_empty());
}

fn raw(json: &str) -> Box<serde_json::value::RawValue> {
    serde_json::value::RawValue::from_string(json.to_string()).expect("test JSON is valid")
}
