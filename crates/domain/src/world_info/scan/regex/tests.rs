//! Regex keys: which keys are regexes (world-info.js:2821-2846) and what
//! they match (ECMAScript semantics, checked against Node's RegExp).

use super::*;

const LIMIT: usize = 100_000;
const WORK: u64 = crate::world_info::scan::DEFAULT_REGEX_WORK_LIMIT;

fn test(key: &str, hay: &str) -> Option<Result<bool, Overrun>> {
    parse_key_regex(key, LIMIT).map(|re| re.test(hay, WORK))
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
    assert_eq!(re.test(&hay, WORK), Err(Overrun));
}

#[test]
fn a_pattern_javascript_accepts_but_recapd_cannot_run_reports_an_overrun() {
    // A repetition count past what the regex crate compiles (its size
    // limit): valid JavaScript, never run.
    let re = parse_key_regex(r"/a{4294967295}/", LIMIT).expect("valid JavaScript");
    assert_eq!(re.test("a", WORK), Err(Overrun));
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
            let _ = re.test(&hay, WORK);
        }
    }
}

/// Calibration of the work limit (run by hand, in release:
/// `cargo test -p recapd-domain --release calibrate_work -- --ignored --nocapture`):
/// prints each key's estimate and the time its test takes when run.
#[test]
#[ignore = "a measurement, run by hand"]
fn calibrate_work() {
    let a = |n: usize| format!("{}!", "a".repeat(n));
    let words = |n: usize| "the dragon flew over the hills ".repeat(n / 31 + 1);
    let cases: Vec<(&str, String)> = vec![
        ("/(?=(a+)+$)a/", a(5_000)),
        ("/(?=(a+)+$)a/", a(10_000)),
        ("/(?<=(a+)+)b/", a(5_000)),
        ("/(?<=(a+)+)b/", a(10_000)),
        ("/(?=a*$)b/", a(5_000)),
        ("/(?=a*$)b/", a(10_000)),
        (r"/(?<=\bthe\s+)dragon/", words(100_000)),
        ("/(?=.*dragon)(?=.*castle)/s", words(2_000)),
        ("/(?=.*dragon)(?=.*castle)/s", words(5_000)),
        ("/(?=.*dragon)(?=.*castle)/s", words(10_000)),
        ("/(?=.*castle)(?=.*dragon)/", words(5_000)),
        (r"/\bdragons?\b/i", words(1_000_000)),
        (r"/\b\w+ing\b/", words(100_000)),
        (r"/\b\w+ing\b/", a(100_000)),
        (r"/(\w+)\s\1/", words(5_000)),
        (r"/(\w+)\s\1x/", words(5_000)),
        (r"/(\w+)\s\1x/", words(20_000)),
        (r"/^(?:\w+\s)+castle$/m", words(20_000)),
    ];
    for (key, hay) in cases {
        let re = parse_key_regex(key, 1_000_000).expect("a regex key");
        let estimate = re
            .cost
            .as_ref()
            .map_or(0.0, |c| c.estimate(hay.len(), 1_000_000));
        // This thread's CPU time (Linux), so that other load on the
        // machine does not count.
        let cpu_ns = || {
            std::fs::read_to_string("/proc/thread-self/schedstat")
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let started = std::time::Instant::now();
        let cpu = cpu_ns();
        let result = re.test(&hay, u64::MAX);
        let cpu = cpu_ns() - cpu;
        let took = started.elapsed();
        println!(
            "{key:32} n={:8} estimate={estimate:14.0} wall={:9.3} ms cpu={:9.3} ms  cpu ns/unit={:.4} {result:?}",
            hay.len(),
            took.as_secs_f64() * 1e3,
            cpu / 1e6,
            cpu / estimate.max(1.0)
        );
    }
}

/// One piece of a simple pattern: literals, classes, anchors, `\b`, with
/// an optional quantifier on what consumes.
fn simple_atom() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let consuming = prop_oneof![
        "[abAB1_ .-]".prop_map(|c| if c == "." || c == "-" {
            format!("\\{c}")
        } else {
            c
        }),
        Just("[ab]".to_string()),
        Just("[^a]".to_string()),
        Just("[a-c1]".to_string()),
        Just(r"\d".to_string()),
        Just(r"\w".to_string()),
        Just(r"\W".to_string()),
        Just(r"\s".to_string()),
        Just(".".to_string()),
    ];
    let quantified = (
        consuming,
        prop_oneof![Just(""), Just("?"), Just("*"), Just("+")],
    )
        .prop_map(|(a, q)| format!("{a}{q}"));
    prop_oneof![
        4 => quantified,
        1 => Just(r"\b".to_string()),
        1 => Just(r"\B".to_string()),
        1 => Just("^".to_string()),
        1 => Just("$".to_string()),
    ]
}

/// A simple pattern: one to three alternatives of one to four atoms.
fn simple_pattern() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(proptest::collection::vec(simple_atom(), 1..5), 1..4).prop_map(
        |alts| {
            alts.iter()
                .map(|seq| seq.concat())
                .collect::<Vec<_>>()
                .join("|")
        },
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::tests::proptest_cases(128)))]

    /// For simple patterns, the bounded matcher answers what ECMAScript
    /// does (regress, an ECMAScript engine, decides), on random text.
    #[test]
    fn simple_patterns_agree_with_an_ecmascript_engine(
        pattern in simple_pattern(),
        flags in proptest::sample::subsequence(vec!['i', 'm', 's'], 0..=3),
        hay in "[abAB1_ .\n\r\u{2028}é-]{0,16}",
    ) {
        let flags: String = flags.into_iter().collect();
        let Ok(js) = regress::Regex::with_flags(&pattern, flags.as_str()) else {
            return Ok(());
        };
        let want = js.find(&hay).is_some();
        let re = parse_key_regex(&format!("/{pattern}/{flags}"), LIMIT)
            .expect("a pattern regress takes is a regex key");
        proptest::prop_assert_eq!(re.test(&hay, WORK), Ok(want), "/{}/{} on {:?}", pattern, flags, hay);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::tests::proptest_cases(48)))]

    /// Any key, on a long repetitive text, answers (a match, no match or
    /// an overrun) without hanging: the step and work limits bound it.
    #[test]
    fn any_key_on_a_long_text_answers_within_its_bounds(
        pattern in r"[\(\)\*\+\?\|a\\1=!<:\$\^\.]{1,16}",
        flags in "[imsu]{0,2}",
        unit in "[ab!]{1,3}",
    ) {
        let hay = unit.repeat(3_000 / unit.len());
        if let Some(re) = parse_key_regex(&format!("/{pattern}/{flags}"), 10_000) {
            let started = std::time::Instant::now();
            let _ = re.test(&hay, 5_000_000);
            let took = started.elapsed();
            proptest::prop_assert!(
                took < std::time::Duration::from_secs(10),
                "/{}/{} took {:?}", pattern, flags, took
            );
        }
    }
}
