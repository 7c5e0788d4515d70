//! Regex keys under the scan's bounds: the work limit stops what the
//! backtrack limit does not see, and compiled keys live with their book
//! version.

use super::tests::support::*;
use super::*;
use crate::world_info::book::{Book, BookLimits};

/// Two chat messages of 200,000 `a` then `!` (issue 41's finding 1).
fn long_messages() -> String {
    format!("{}!", "a".repeat(200_000))
}

#[test]
fn a_lookaround_key_past_the_work_limit_is_not_run_and_is_reported() {
    // Finding 1: each of these took seconds to minutes per scan while the
    // backtrack counter stayed near zero; now none is run on this text.
    let text = long_messages();
    // The last is a lookahead of bounded but wide width: 20,000
    // characters at each start.
    for key in [
        r"/(?=(a+)+$)a/",
        r"/(?<=(a+)+)b/",
        r"/(?=a*$)b/",
        r"/(?=a{1,20000}!)b/",
    ] {
        let json = format!(
            r#"{{"uid":0,"key":[{}],"content":"hostile"}}"#,
            serde_json::to_string(key).expect("a string")
        );
        let entries = [entry(&json)];
        let run = Run::new(&entries, &[("u", text.as_str()), ("u", text.as_str())]);
        let started = std::time::Instant::now();
        let out = run.go().expect("the scan runs");
        assert!(out.activated.is_empty(), "{key} is taken as not matching");
        assert_eq!(
            out.regex_overruns,
            vec![("B".to_string(), "0".to_string(), key.to_string())],
            "{key} is reported"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{key}: the key was run (it takes minutes)"
        );
    }
}

#[test]
fn the_usual_lookahead_idiom_runs_on_a_few_thousand_characters() {
    // `(?=.*a)(?=.*b)`: both words anywhere, the common use of lookaheads
    // in keys; it must run (and match or not) on ordinary chat lengths.
    let filler = "the road went on ".repeat(150); // 2,550 bytes
    let with_both = format!("{filler} a dragon sat on the castle");
    let with_one = format!("{filler} a dragon sat on the hill");
    let entries = [entry(
        r#"{"uid":0,"key":["/(?=.*dragon)(?=.*castle)/s"],"content":"x"}"#,
    )];
    let both = Run::new(&entries, &[("u", with_both.as_str())])
        .go()
        .expect("runs");
    assert_eq!(both.activated.len(), 1);
    assert!(both.regex_overruns.is_empty());
    let one = Run::new(&entries, &[("u", with_one.as_str())])
        .go()
        .expect("runs");
    assert!(one.activated.is_empty());
    assert!(one.regex_overruns.is_empty(), "run, not refused");
}

#[test]
fn keys_without_lookarounds_are_never_refused_by_the_work_limit() {
    // Linear keys run whatever the length, even under the smallest limit.
    let text = format!("{} dragon", "word ".repeat(100_000));
    let entries = [entry(
        r#"{"uid":0,"key":["/drag(on|ons)$/"],"content":"x"}"#,
    )];
    let mut run = Run::new(&entries, &[("u", text.as_str())]);
    run.limits.regex_work_limit = 1;
    let out = run.go().expect("runs");
    assert_eq!(out.activated.len(), 1);
    assert!(out.regex_overruns.is_empty());
}

/// A book of `n` entries with two regex keys each.
fn regex_book(n: usize) -> Book {
    let entries: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""{i}":{{"uid":{i},"key":["/dragon{i}x/i","/\\bwyrm{i}\\b/"],"content":"c{i}"}}"#
            )
        })
        .collect();
    let json = format!(r#"{{"entries":{{{}}}}}"#, entries.join(","));
    let limits = BookLimits {
        max_entries: 100_000,
        max_key_bytes: 4096,
        max_content_bytes: 4096,
        max_book_bytes: 1 << 30,
    };
    Book::parse(&json, &limits).expect("a valid book")
}

#[test]
fn a_large_books_keys_are_compiled_once_per_version_not_once_per_scan() {
    // Finding 4: 10,000 entries with two regex keys each cleared the old
    // process-wide cache (4,096 keys) at every scan.
    let book = regex_book(10_000);
    let entries = book.scan_entries("B");
    let keys = book.compiled_keys();
    let mut run = Run::new(&entries, &[("u", "a dragon17x and a wyrm5 here")]);
    run.compiled = Some(keys);
    let first = run.go().expect("runs");
    assert_eq!(first.activated.len(), 2);
    // Every key is tested but entry 17's second (its first matched).
    let compiled = keys.compiled();
    assert_eq!(compiled, 19_999, "every key tested compiled once");
    assert!(keys.footprint_bytes() > 0, "their memory is estimated");
    let second = run.go().expect("runs");
    // (`order` is NaN for entries without one: compared by what they are.)
    let named = |out: &crate::world_info::scan::ScanOutcome| -> Vec<(String, String)> {
        out.activated
            .iter()
            .map(|a| (a.uid.clone(), a.content.clone()))
            .collect()
    };
    assert_eq!(named(&second), named(&first));
    assert_eq!(
        keys.compiled(),
        compiled,
        "nothing compiled the second time"
    );

    // A change of the book is a new version: its keys start empty.
    let mut changed = book.clone();
    changed.delete_entry("0").expect("the entry exists");
    assert_eq!(changed.compiled_keys().compiled(), 0);
}

#[test]
fn a_key_changed_by_macros_is_compiled_for_the_scan_not_kept_with_the_book() {
    let entries = [entry(r#"{"uid":0,"key":["/{{char}}s?/"],"content":"x"}"#)];
    let keys = CompiledKeys::default();
    let seraphina = |s: &str| s.replace("{{char}}", "Seraphina");
    let mut run = Run::new(&entries, &[("u", "hello Seraphina")]);
    run.substitute = &seraphina;
    run.compiled = Some(&keys);
    assert_eq!(run.uids(), vec!["0"]);
    assert_eq!(keys.compiled(), 0, "the substituted key is not the book's");
}

#[test]
fn an_overrun_is_news_once_per_book_version_and_key() {
    let keys = CompiledKeys::default();
    assert!(keys.first_overrun("/(?=a*$)b/"));
    assert!(!keys.first_overrun("/(?=a*$)b/"));
    assert!(keys.first_overrun("/(?=b*$)a/"));
}
