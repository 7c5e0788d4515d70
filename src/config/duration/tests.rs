//! The one duration parser: units, bare numbers per flag, refusals.

use super::*;

#[test]
fn a_number_with_a_unit_reads_the_same_whatever_the_bare_unit() {
    for bare in [BareUnit::Seconds, BareUnit::Milliseconds] {
        for (text, duration) in [
            ("250ms", Duration::from_millis(250)),
            ("120s", seconds(120)),
            ("5m", seconds(300)),
            ("30m", seconds(1800)),
            ("12h", seconds(43_200)),
            ("7d", seconds(604_800)),
            ("1w", seconds(604_800)),
            ("90 days", seconds(90 * 86_400)),
            ("1h 30m", seconds(5400)),
            ("2min", seconds(120)),
            (" 7d ", seconds(604_800)),
        ] {
            assert_eq!(parse_duration(text, bare), Ok(duration), "{text:?}");
        }
    }
}

#[test]
fn a_bare_number_is_in_the_flags_own_unit() {
    assert_eq!(parse_duration("45", BareUnit::Seconds), Ok(seconds(45)));
    assert_eq!(parse_duration("120", BareUnit::Seconds), Ok(seconds(120)));
    assert_eq!(
        parse_duration("250", BareUnit::Milliseconds),
        Ok(Duration::from_millis(250))
    );
    assert_eq!(parse_duration("0", BareUnit::Seconds), Ok(Duration::ZERO));
    // As the integer flags read them before: one leading `+` is allowed.
    assert_eq!(parse_duration("+120", BareUnit::Seconds), Ok(seconds(120)));
}

#[test]
fn anything_else_is_refused_with_an_example() {
    for text in [
        "",
        "+",
        "++1",
        "d",
        "soon",
        "-1s",
        "7x",
        "5 parsecs",
        "120S",
        "99999999999999999999",
        "99999999999999999999d",
    ] {
        for bare in [BareUnit::Seconds, BareUnit::Milliseconds] {
            let error = parse_duration(text, bare).unwrap_err();
            assert!(!error.is_empty(), "{text:?}");
        }
    }
    let error = parse_duration("soon", BareUnit::Seconds).unwrap_err();
    assert!(error.contains("120s"), "{error}");
}

#[test]
fn a_range_is_checked_after_the_units() {
    let range = seconds(3)..=seconds(3600);
    assert_eq!(
        parse_duration_in("2m", BareUnit::Seconds, range.clone()),
        Ok(seconds(120))
    );
    assert_eq!(
        parse_duration_in("3", BareUnit::Seconds, range.clone()),
        Ok(seconds(3))
    );
    assert_eq!(
        parse_duration_in("1h", BareUnit::Seconds, range.clone()),
        Ok(seconds(3600))
    );
    for text in ["2", "2999ms", "61m", "2h", "0"] {
        let error = parse_duration_in(text, BareUnit::Seconds, range.clone()).unwrap_err();
        assert!(error.contains("3s to 1h"), "{text:?}: {error}");
    }
}
