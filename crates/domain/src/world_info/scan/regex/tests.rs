//! Regex keys: which keys are regexes (world-info.js:2821-2846) and what
//! they match (ECMAScript semantics, checked against Node's RegExp).

use super::*;

const LIMIT: usize = 100_000;

fn test(key: &str, hay: &str) -> Option<Result<bool, Overrun>> {
    parse_key_regex(key, LIMIT).map(|re| re.test(hay))
}

#[test]
fn only_slash_delimited_keys_with_known_flags_are_regexes() {
    // world-info.js:2823: /^\/([\w\W]+?)\/([gimsuy]*)$/.
    assert!(parse_key_regex("/dragon/", LIMIT).is_some());
    assert!(parse_key_regex("/dragon/gi", LIMIT).is_some());
    assert!(parse_key_regex("dragon", LIMIT).is_none());
    assert!(
        parse_key_regex("//", LIMIT).is_none(),
        "the pattern needs a character"
    );
    assert!(
        parse_key_regex("/dragon/x", LIMIT).is_none(),
        "unknown flag"
    );
    assert!(
        parse_key_regex("/dragon/ii", LIMIT).is_none(),
        "new RegExp throws on a repeated flag"
    );
    // world-info.js:2833: an unescaped `/` inside is no regex.
    assert!(parse_key_regex("/a/b/", LIMIT).is_none());
    assert!(parse_key_regex(r"/a\/b/", LIMIT).is_some());
    // world-info.js:2840-2844: invalid syntax is no regex (a plain key).
    assert!(parse_key_regex("/a(/", LIMIT).is_none());
    assert!(parse_key_regex("/*a/", LIMIT).is_none());
}

#[test]
fn patterns_mean_what_they_mean_in_javascript() {
    // Each expected value is Node's `new RegExp(p, f).test(s)`.
    let cases: &[(&str, &str, bool)] = &[
        ("/drag(on|oness)/i", "A DRAGONESS", true),
        (r"/\bcat\b/", "concatenate", false),
        (r"/\bcat\b/", "a cat!", true),
        (r"/\w+é/", "café", true),
        (r"/^\d+$/", "١٢٣", false), // \d is ASCII only
        (r"/^\d+$/", "123", true),
        (r"/a.b/", "a\rb", false), // . stops at \r
        (r"/a.b/s", "a\rb", true),
        (r"/^b/m", "a\rb", true), // ^ after \r with m
        (r"/^b/", "a\nb", false),
        (r"/a$/", "a\n", false), // $ only at the very end without m
        (r"/a{/", "a{", true),   // a lone { is literal (Annex B)
        (r"/x{2}/", "xx", true),
        (r"/[^]/", "\n", true),
        (r"/[]/", "anything", false),
        (r"/\u0041/", "A", true),
        (r"/\x41/", "A", true),
        (r"/[\w-]+x/", "-x", true),  // - next to a class escape is literal
        (r"/\s/", "\u{feff}", true), // JS \s includes U+FEFF
        (r"/(a)\1/", "aa", true),
        (r"/(?<=a)b/", "ab", true),
        (r"/b/y", "ab", false), // sticky: only at index 0
        (r"/a/y", "ab", true),
        (r"/\/x/", "/x", true),
        // Without `u`, `i` never folds a non-ASCII letter onto ASCII.
        ("/ſ/i", "so", false),
        ("/s/i", "ſ", false),
        ("/S+/i", "sS", true),
        ("/k/i", "\u{212a}", false),
        ("/ſ/iu", "so", true),
        ("/ß/i", "\u{1e9e}", false), // toUpperCase("ß") is "SS": no fold
        ("/É/i", "é", true),
        (r"/\w/i", "\u{17f}", false), // ſ is no word character without u
        ("/[a-z]/i", "\u{17f}", false),
        ("/[a-z]/i", "Q", true),
        ("/[^a-z]/i", "Q", false),
        ("/[^a-z]/i", "\u{212a}", true),
        ("/[é-ë]+/i", "ÉÊË", true),
        ("/[\\w-]/i", "-", true),
        ("/[a-z]/iu", "\u{17f}", true),
        (r"/\w/iu", "\u{17f}", true),
        (r"/a\b/i", "a\u{212a}", true),
        ("/k/iu", "\u{212a}", true),
        // Backreferences to a group that has not matched match empty.
        (r"/(x)?y\1z/", "yz", true),
        (r"/\1(w)q/", "wq", true),
        (r"/\8/", "8", true), // past the group count: the digit (Annex B)
        (r"/(?<n>a)\k<n>/", "aa", true),
        (r"/\k<n>/", "k<n>", true), // no named group: the letter k
    ];
    for &(key, hay, want) in cases {
        assert_eq!(test(key, hay), Some(Ok(want)), "{key} on {hay:?}");
    }
}

#[test]
fn a_hostile_pattern_is_stopped_and_reported() {
    // Catastrophic backtracking: the bound gives up (only that it is
    // reported is asserted, never a time).
    let hay = format!("{}!", "a".repeat(64));
    let re = parse_key_regex(r"/^((a|aa)+)\1?$/", LIMIT).expect("a valid JavaScript regex");
    assert_eq!(re.test(&hay), Err(Overrun));
}

#[test]
fn a_pattern_javascript_accepts_but_recapd_cannot_run_reports_an_overrun() {
    // A repetition count past what the regex crate compiles (its size
    // limit): valid JavaScript, never run.
    let re = parse_key_regex(r"/a{4294967295}/", LIMIT).expect("valid JavaScript");
    assert_eq!(re.test("a"), Err(Overrun));
}

proptest::proptest! {
    /// No key, however malformed, makes parsing or testing panic.
    #[test]
    fn any_key_parses_and_tests_without_panicking(
        pattern in r"[\\\[\]\(\)\{\}\^\$\.\*\+\?\|/a-zA-Z0-9 ,<>=!:ſK\-_uxkcpPbBdDwWsS]{0,24}",
        flags in "[gimsuy]{0,3}",
        hay in ".{0,40}",
    ) {
        if let Some(re) = parse_key_regex(&format!("/{pattern}/{flags}"), 10_000) {
            let _ = re.test(&hay);
        }
    }
}
