//! Entry field types: each kind accepts what SillyTavern writes and refuses
//! the rest, naming the value's path; real books pass.

use super::super::BookLimits;
use super::*;

const LIMITS: BookLimits = BookLimits {
    max_entries: 10_000,
    max_key_bytes: 1_000,
    max_content_bytes: 100_000,
    max_book_bytes: 1 << 30,
};

/// The error of importing one entry `{<member>}` under uid 7.
fn import_error(member: &str) -> Option<(String, String)> {
    let text = format!(r#"{{"entries":{{"7":{{{member}}}}}}}"#);
    let book = Book::parse(&text, &LIMITS).expect("the test book is JSON");
    match book.check_types() {
        Ok(()) => None,
        Err(DomainError::Invalid { field, reason }) => Some((field, reason)),
        Err(other) => panic!("{member}: {other:?}"),
    }
}

fn accepted(members: &[&str]) {
    for member in members {
        assert_eq!(import_error(member), None, "{member} is accepted");
    }
}

fn refused(cases: &[(&str, &str, &str)]) {
    for (member, field, reason) in cases {
        assert_eq!(
            import_error(member),
            Some(((*field).to_owned(), (*reason).to_owned())),
            "{member}"
        );
    }
}

#[test]
fn key_lists_are_arrays_of_strings() {
    accepted(&[
        r#""key":[]"#,
        r#""key":["a","b c","/re/i"]"#,
        r#""keysecondary":["x"]"#,
        r#""triggers":["normal","unknown name"]"#,
    ]);
    refused(&[
        (
            r#""key":["a","b",["x"]]"#,
            "entries.7.key[2]",
            "expected a string, got an array",
        ),
        (
            r#""key":"plain""#,
            "entries.7.key",
            "expected an array of strings, got a string",
        ),
        (
            r#""keysecondary":[1]"#,
            "entries.7.keysecondary[0]",
            "expected a string, got a number",
        ),
        (
            r#""key":[null]"#,
            "entries.7.key[0]",
            "expected a string, got null",
        ),
        (
            r#""triggers":{"0":"normal"}"#,
            "entries.7.triggers",
            "expected an array of strings, got an object",
        ),
        (
            r#""key":null"#,
            "entries.7.key",
            "expected an array of strings, got null",
        ),
    ]);
}

#[test]
fn text_fields_are_strings() {
    accepted(&[r#""content":"","comment":"t","group":"a,b","outletName":"o","automationId":"x""#]);
    refused(&[
        (
            r#""content":{"a":"b"}"#,
            "entries.7.content",
            "expected a string, got an object",
        ),
        (
            r#""comment":5"#,
            "entries.7.comment",
            "expected a string, got a number",
        ),
        (
            r#""group":["a"]"#,
            "entries.7.group",
            "expected a string, got an array",
        ),
        (
            r#""content":null"#,
            "entries.7.content",
            "expected a string, got null",
        ),
    ]);
}

#[test]
fn flags_are_booleans_and_three_overrides_may_be_null() {
    accepted(&[
        r#""constant":true,"selective":false,"disable":false,"excludeRecursion":true"#,
        r#""caseSensitive":null,"matchWholeWords":true,"useGroupScoring":false"#,
        // `/setentryfield` writes its text into a member that held null.
        r#""caseSensitive":"true""#,
    ]);
    refused(&[
        (
            r#""constant":1"#,
            "entries.7.constant",
            "expected a boolean, got a number",
        ),
        (
            r#""selective":"yes""#,
            "entries.7.selective",
            "expected a boolean, got a string",
        ),
        (
            r#""disable":null"#,
            "entries.7.disable",
            "expected a boolean, got null",
        ),
        (
            r#""matchWholeWords":[true]"#,
            "entries.7.matchWholeWords",
            "expected a boolean or null, got an array",
        ),
    ]);
}

#[test]
fn numbers_are_numbers_null_or_numeric_strings() {
    accepted(&[
        r#""order":100,"position":4,"depth":-1e-999999,"probability":null,"role":null"#,
        r#""sticky":null,"cooldown":0,"delay":2.5,"scanDepth":"3","selectiveLogic":"1""#,
        r#""groupWeight":1e999999,"displayIndex":0,"order":" 0x1F ""#,
        r#""delayUntilRecursion":true,"delayUntilRecursion":2"#,
        r#""delayUntilRecursion":false"#,
        r#""uid":7"#,
        r#""uid":"b""#,
    ]);
    refused(&[
        (
            r#""order":"first""#,
            "entries.7.order",
            "expected a number or null, got a string that is not a number",
        ),
        (
            r#""depth":true"#,
            "entries.7.depth",
            "expected a number or null, got a boolean",
        ),
        (
            r#""role":{}"#,
            "entries.7.role",
            "expected a number or null, got an object",
        ),
        (
            r#""delayUntilRecursion":[1]"#,
            "entries.7.delayUntilRecursion",
            "expected a number or a boolean, got an array",
        ),
        (
            r#""uid":null"#,
            "entries.7.uid",
            "expected a number or a string, got null",
        ),
    ]);
}

#[test]
fn the_character_filter_has_its_shape() {
    accepted(&[
        r#""characterFilter":{"isExclude":false,"names":["Ann.png"],"tags":[]}"#,
        r#""characterFilter":{"names":[],"other":[1]}"#,
    ]);
    refused(&[
        (
            r#""characterFilter":"Ann""#,
            "entries.7.characterFilter",
            "expected an object (isExclude, names, tags), got a string",
        ),
        (
            r#""characterFilter":{"names":["a",2]}"#,
            "entries.7.characterFilter.names[1]",
            "expected a string, got a number",
        ),
        (
            r#""characterFilter":{"isExclude":"no"}"#,
            "entries.7.characterFilter.isExclude",
            "expected a boolean, got a string",
        ),
    ]);
}

#[test]
fn unknown_members_stay_and_duplicates_count_as_json_parse_reads_them() {
    accepted(&[
        r#""extensions":[1],"world":{"x":1},"myTool":null"#,
        // JSON.parse keeps the last value of a repeated name.
        r#""key":5,"key":["a"]"#,
    ]);
    refused(&[(
        r#""key":["a"],"key":5"#,
        "entries.7.key",
        "expected an array of strings, got a number",
    )]);
}

#[test]
fn an_entry_is_an_object() {
    for (text, got) in [
        (r#"{"entries":{"0":"text"}}"#, "a string"),
        (r#"{"entries":{"0":null}}"#, "null"),
        (r#"{"entries":{"0":[1]}}"#, "an array"),
    ] {
        let book = Book::parse(text, &LIMITS).unwrap();
        assert_eq!(
            book.check_types(),
            Err(DomainError::invalid(
                "entries.0",
                format!("expected an object, got {got}")
            ))
        );
    }
}

#[test]
fn errors_are_short_whatever_the_value_or_uid() {
    let huge = format!(
        r#"{{"entries":{{"{}":{{"content":{{"a":"{}"}}}}}}}}"#,
        "u\\n".repeat(5000),
        "x".repeat(3_000_000)
    );
    let book = Book::parse(&huge, &LIMITS).unwrap();
    let error = book.check_types().unwrap_err().to_string();
    assert!(
        error.len() < 200,
        "{} bytes: {}",
        error.len(),
        &error[..200]
    );
    assert!(error.starts_with("invalid entries.u\\nu\\n"), "{error}");
    assert!(
        error.contains("….content: expected a string, got an object"),
        "{error}"
    );
    assert!(!error.contains('\n'), "control characters escaped: {error}");
}

/// Every real book and SillyTavern's own conversions of real cards pass.
#[test]
fn real_books_pass() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/world_info");
    for name in [
        "Eldoria.json",
        "Eldoria_V10_reduced.json",
        "Nen_Encyclopedia_HxH.json",
        "Vina_HxH.json",
        "Seraphina_converted.json",
        "Sakana_converted.json",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("the fixture exists");
        let book = Book::parse(&text, &LIMITS).expect("a real book parses");
        assert_eq!(book.check_types(), Ok(()), "{name}");
    }
}

#[test]
fn an_edit_is_checked_field_by_field_and_refusing_changes_nothing() {
    let mut book = Book::parse(r#"{"entries":{"0":{"key":5}}}"#, &LIMITS).unwrap();
    let before = book.to_json();
    for (fields, field, reason) in [
        (
            r#"{"key":[["x"]]}"#,
            "fields.key[0]",
            "expected a string, got an array",
        ),
        (
            r#"{"content":{"big":"object"}}"#,
            "fields.content",
            "expected a string, got an object",
        ),
        (
            r#"{"comment":"ok","constant":"yes"}"#,
            "fields.constant",
            "expected a boolean, got a string",
        ),
    ] {
        for uid in [None, Some("0"), Some("9")] {
            assert_eq!(
                book.put_entry(uid, fields, &LIMITS),
                Err(DomainError::invalid(field, reason)),
                "{fields} at {uid:?}"
            );
        }
    }
    assert_eq!(book.to_json(), before, "refusing changes nothing");
    // Null removes a member whatever its type; `uid` is ignored; an entry
    // stored before the checks can still be edited in its other members.
    book.put_entry(
        Some("0"),
        r#"{"uid":[1],"comment":"kept","disable":null}"#,
        &LIMITS,
    )
    .unwrap();
    assert_eq!(
        book.entry("0").unwrap().get(),
        r#"{"key":5,"comment":"kept"}"#
    );
    book.put_entry(Some("0"), r#"{"key":["fixed"]}"#, &LIMITS)
        .unwrap();
    assert_eq!(book.check_types(), Ok(()));
}
