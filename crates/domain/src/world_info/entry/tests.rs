//! Reading entries as SillyTavern's scanner does.

use serde_json::value::RawValue;

use super::js::{Js, number_to_string, string_hash};
use super::*;

fn read(book: &str, json: &str) -> Entry {
    let raw = RawValue::from_string(json.to_string()).expect("test JSON is valid");
    Entry::read("0", book, &raw)
}

#[test]
fn the_hash_is_sillytaverns_for_the_loaded_entry() {
    // Expected values: SillyTavern's own `getStringHash` (utils.js:522-539)
    // and `parseDecorators` (world-info.js:4540-4590) at 51ad27f, run under
    // Node on `{uid, world, ...rest}` then `{...entry, decorators, content}`
    // (world-info.js:4471, 4515-4521) for each text below, book "B".
    let cases = [
        // Decorators stripped from content, `@@@` skipped before any
        // unknown line; a number JavaScript writes as 1.5e-7.
        (
            r#"{"uid":3,"key":["a"],"content":"@@activate\n@@@dont_activate\nbody","order":1.5e-7}"#,
            2_605_540_391_605_552u64,
        ),
        // uid moved first, integer-like members ahead of the others,
        // 1e21 written as JavaScript does.
        (
            r#"{"key":["a"],"uid":"7","10":true,"2":null,"content":"x","probability":1e21}"#,
            1_031_775_779_697_409,
        ),
        // A `world` member keeps its place after uid but takes the
        // entry's value; an old `decorators` is replaced in place; control
        // characters escaped, astral characters hashed as two units.
        (
            r#"{"uid":1,"world":"Other","content":"\u0001\t\"é😀","decorators":["old"],"n":0.1}"#,
            695_067_554_399_401,
        ),
        // A repeated member keeps its first place and last value; an
        // unknown decorator line lets `@@@activate` count.
        (
            r#"{"uid":5,"key":["a"],"key":["b"],"content":"@@x\n@@@activate\ntext"}"#,
            5_723_685_490_138_410,
        ),
    ];
    for (json, hash) in cases {
        assert_eq!(read("B", json).hash, hash, "{json}");
    }
}

#[test]
fn the_hash_depends_on_member_order() {
    // Facts §7: the hash is of the whole JSON text, so member order counts.
    let a = read("B", r#"{"uid":1,"key":["a"],"content":"x"}"#);
    let b = read("B", r#"{"uid":1,"content":"x","key":["a"]}"#);
    assert_ne!(a.hash, b.hash);
    // And on the book's name (the `world` member).
    assert_ne!(
        a.hash,
        read("C", r#"{"uid":1,"key":["a"],"content":"x"}"#).hash
    );
}

#[test]
fn decorators_are_read_from_the_first_lines() {
    // world-info.js:4540-4590.
    let e = read(
        "B",
        "{\"content\":\"@@activate\\nhello\\n@@dont_activate\"}",
    );
    assert!(e.activate_decorator);
    assert!(
        !e.dont_activate_decorator,
        "only leading lines are decorators"
    );
    assert_eq!(e.content, "hello\n@@dont_activate");
    // `@@@` before any unknown line is skipped, not a decorator.
    let e = read("B", "{\"content\":\"@@@activate\\nx\"}");
    assert!(!e.activate_decorator);
    assert_eq!(e.content, "x");
    // Every line a decorator: the content stays whole (newContent starts
    // as the content, world-info.js:4563).
    let e = read("B", "{\"content\":\"@@dont_activate\"}");
    assert!(e.dont_activate_decorator);
    assert_eq!(e.content, "@@dont_activate");
    // A line that only starts like a known one is kept but is not equal.
    let e = read("B", "{\"content\":\"@@activated\\nx\"}");
    assert!(!e.activate_decorator);
}

#[test]
fn missing_fields_read_as_the_scanner_reads_them() {
    // Facts §1: defaults are the editor's; the scanner sees raw JSON.
    let e = read("B", r#"{"key":["a"]}"#);
    assert!(!e.selective, "missing selective: secondary keys off");
    assert!(!e.use_probability, "missing useProbability: no roll");
    assert_eq!(e.position, None, "missing position: placed nowhere");
    assert!(e.order.is_nan(), "missing order: `undefined - x` is NaN");
    assert_eq!(
        e.group_weight, 100.0,
        "groupWeight ?? DEFAULT_WEIGHT (world-info.js:5330)"
    );
    assert_eq!(e.scan_depth, None);
    assert_eq!(e.case_sensitive, None);
    assert_eq!(e.selective_logic_raw, None);
    assert!(!e.disable);
}

#[test]
fn truthiness_and_loose_equality_follow_javascript() {
    // `entry.disable == true` (world-info.js:4684): 1 and "1" are true,
    // "true" is not.
    assert!(read("B", r#"{"disable":1}"#).disable);
    assert!(read("B", r#"{"disable":"1"}"#).disable);
    assert!(!read("B", r#"{"disable":"true"}"#).disable);
    // Truthiness: "0" is a non-empty string.
    assert!(read("B", r#"{"constant":"0"}"#).constant);
    assert!(!read("B", r#"{"constant":0}"#).constant);
    // `?? global`: false stays false, null falls back.
    assert_eq!(
        read("B", r#"{"caseSensitive":false}"#).case_sensitive,
        Some(false)
    );
    assert_eq!(read("B", r#"{"caseSensitive":null}"#).case_sensitive, None);
    // `delayUntilRecursion === true ? 1 : level` (world-info.js:4644).
    assert_eq!(
        read("B", r#"{"delayUntilRecursion":true}"#).delay_until_recursion,
        1
    );
    assert_eq!(
        read("B", r#"{"delayUntilRecursion":3}"#).delay_until_recursion,
        3
    );
    // A string selectiveLogic is no number: NaN (never equal to 0-3).
    assert!(
        read("B", r#"{"selectiveLogic":"1"}"#)
            .selective_logic_raw
            .is_some_and(f64::is_nan)
    );
    // `position` is compared with ===: a string places nowhere.
    assert_eq!(read("B", r#"{"position":"1"}"#).position, None);
    assert_eq!(
        read("B", r#"{"position":4}"#).position,
        Some(WiPosition::AtDepth)
    );
}

#[test]
fn triggers_keep_that_a_filter_was_written() {
    // world-info.js:4689-4695: a non-empty array filters, even when no
    // name in it is known.
    let e = read("B", r#"{"triggers":["nonsense"]}"#);
    assert!(e.has_triggers);
    assert!(e.triggers.is_empty());
    let e = read("B", r#"{"triggers":["swipe","normal"]}"#);
    assert_eq!(e.triggers, [GenerationType::Swipe, GenerationType::Normal]);
    assert!(!read("B", r#"{"triggers":[]}"#).has_triggers);
}

#[test]
fn text_that_is_no_object_gives_an_entry_that_never_activates() {
    for json in ["[]", "3", "\"x\"", "null"] {
        let e = read("B", json);
        assert!(e.disable && e.key.is_empty(), "{json}");
    }
}

#[test]
fn numbers_are_written_as_javascript_writes_them() {
    // ECMAScript Number::toString.
    for (n, s) in [
        (0.0, "0"),
        (-0.0, "0"),
        (100.0, "100"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (123456789012345680000.0, "123456789012345680000"),
        (-2.5e-10, "-2.5e-10"),
    ] {
        assert_eq!(number_to_string(n), s);
    }
}

#[test]
fn string_hash_matches_getstringhash() {
    // utils.js:522-539 under Node: getStringHash('') and ('abc').
    assert_eq!(string_hash(""), 3_338_908_027_751_811);
    assert_eq!(string_hash("abc"), 5_059_922_895_146_125);
}

#[test]
fn members_keep_first_place_and_last_value() {
    // JSON.parse semantics.
    let v = Js::parse(r#"{"a":1,"b":2,"a":3}"#).expect("json");
    assert_eq!(v.stringify(), r#"{"a":3,"b":2}"#);
}

fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        "[a-z@\n ]{0,8}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("key".to_string()),
                    Just("content".to_string()),
                    Just("uid".to_string()),
                    Just("sticky".to_string()),
                    Just("order".to_string()),
                    Just("characterFilter".to_string()),
                    "[a-z0-9]{1,6}"
                ],
                inner,
                0..6
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    /// Any JSON reads as some entry, without panicking.
    #[test]
    fn any_json_reads_without_panicking(value in json_value()) {
        let raw = RawValue::from_string(value.to_string()).expect("serde_json writes valid JSON");
        let _ = Entry::read("0", "B", &raw);
    }
}
