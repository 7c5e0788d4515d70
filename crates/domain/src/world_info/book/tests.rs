//! Book: lossless reading, edits, limits, hostile input.

use super::*;

const LIMITS: BookLimits = BookLimits {
    max_entries: 10_000,
    max_key_bytes: 1_000,
    max_content_bytes: 100_000,
    max_book_bytes: usize::MAX,
};

fn value(text: &str) -> Value {
    serde_json::from_str(text).expect("test JSON is valid")
}

fn entry_value(book: &Book, uid: &str) -> Value {
    value(book.entry(uid).expect("the entry exists").get())
}

/// Numbers keep their spelling, strings their escapes, members their order,
/// at every level (the brief: JSON-equal and numbers as written).
const ODD: &str = r#"{ "name": "Odd", "entries": {
  "3": {"uid": 3, "key": ["a", "b\u00e9"], "order": 1.0, "probability": 1e3,
        "extensions": {"big": 123456789012345678901234567890, "neg": -0.0}},
  "0": {"uid": 0, "key": "plain", "content": "x\ny", "role": null}
 }, "_meta": {"v": 1.50} }"#;

#[test]
fn a_book_round_trips_json_equal_with_numbers_as_written() {
    let book = Book::parse(ODD, &LIMITS).unwrap();
    let out = book.to_json();
    assert_eq!(value(&out), value(ODD));
    for spelling in [
        "1.0",
        "1e3",
        "123456789012345678901234567890",
        "-0.0",
        "1.50",
        r#""b\u00e9""#,
    ] {
        assert!(out.contains(spelling), "{spelling} kept in {out}");
    }
    // Member order at every level.
    assert!(out.find("\"name\"") < out.find("\"entries\""));
    assert!(out.find("\"entries\"") < out.find("\"_meta\""));
    assert!(out.find("\"3\"") < out.find("\"0\""));
    assert!(out.find("\"order\"") < out.find("\"probability\""));
    let uids: Vec<&str> = book.entries().map(|(uid, _)| uid).collect();
    assert_eq!(uids, ["3", "0"]);
    assert_eq!(book.entry_count(), 2);
    // Parsing what it wrote gives the same text again.
    assert_eq!(Book::parse(&out, &LIMITS).unwrap().to_json(), out);
}

/// JSON.parse keeps the last value of a repeated name, where the name
/// first appeared (ECMAScript JSON.parse -> CreateDataProperty replaces the
/// value of an existing property). The expected text is what Node 20
/// printed for `JSON.stringify(JSON.parse(text))`. serde_json's Value keeps
/// the last too.
#[test]
fn duplicate_names_resolve_as_json_parse_at_every_level() {
    let text = r#"{"entries":{"1":{"a":1},"2":{"x":1,"y":{"p":1,"p":2},"x":[{"q":1,"q":3}]},"1":{"a":2}},"n":1,"entries2":0,"n":2}"#;
    let book = Book::parse(text, &LIMITS).unwrap();
    assert_eq!(book.entry_count(), 2);
    let uids: Vec<&str> = book.entries().map(|(uid, _)| uid).collect();
    assert_eq!(uids, ["1", "2"]);
    assert_eq!(book.entry("1").unwrap().get(), r#"{"a":2}"#);
    assert_eq!(
        book.entry("2").unwrap().get(),
        r#"{"x":[{"q":3}],"y":{"p":2}}"#
    );
    assert_eq!(
        book.to_json(),
        r#"{"entries":{"1":{"a":2},"2":{"x":[{"q":3}],"y":{"p":2}}},"n":2,"entries2":0}"#
    );
    assert_eq!(value(&book.to_json()), value(text));
    // A later `entries` replaces the first one's value, at its place.
    let book = Book::parse(r#"{"entries":{"1":{}},"x":0,"entries":{"2":{}}}"#, &LIMITS).unwrap();
    assert_eq!(book.to_json(), r#"{"entries":{"2":{}},"x":0}"#);
}

/// What SillyTavern's server refuses (src/endpoints/worldinfo.js:116-117):
/// JSON.parse failing, or no `entries` in the result.
#[test]
fn only_what_sillytavern_refuses_is_refused() {
    for text in [
        "",
        "not json",
        "[]",
        "5",
        "\"entries\"",
        "{}",
        r#"{"entries":{}"#,
        r#"{"entries":[]}"#,
        r#"{"entries":5}"#,
        r#"{"entries":{}} x"#,
    ] {
        match Book::parse(text, &LIMITS) {
            Err(DomainError::Invalid { field, .. }) => assert_eq!(field, "json", "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    // Shapes SillyTavern's scanner reads with JavaScript's truthiness are kept.
    let lenient = r#"{"entries":{"0":{"key":5,"keysecondary":"x","role":null},"1":"text","2":null,"3":[1,2],"4":{}},"scan_depth":null}"#;
    let book = Book::parse(lenient, &LIMITS).unwrap();
    assert_eq!(book.entry_count(), 5);
    assert_eq!(value(&book.to_json()), value(lenient));
    // ...by the reader (a book stored before the type checks keeps
    // loading); a book coming in is checked for SillyTavern's types.
    assert_eq!(
        book.check_types(),
        Err(DomainError::invalid(
            "entries.0.key",
            "expected an array of strings, got a number"
        ))
    );
    assert_eq!(Book::empty().to_json(), r#"{"entries":{}}"#);
    assert_eq!(Book::empty().entry_count(), 0);
}

#[test]
fn hostile_input_never_panics() {
    let deep = format!(
        r#"{{"entries":{{"0":{{"x":{}{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    // JSON.parse reads any depth (Node 20 parses this one); so does the
    // book, and keeps it as written.
    let book = Book::parse(&deep, &LIMITS).unwrap();
    assert_eq!(book.to_json(), deep);
    let deep_dup = format!(
        r#"{{"entries":{{"0":{{"x":{}{{"a":1,"a":2}}{}}}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    assert!(Book::parse(&deep_dup, &LIMITS).is_ok());
    let deep_objects = format!(r#"{{"entries":{}"#, r#"{"a":"#.repeat(50_000));
    assert!(Book::parse(&deep_objects, &LIMITS).is_err());
    // Numbers past f64 stay as written (JSON.parse reads Infinity, keeps them).
    let huge = r#"{"entries":{"0":{"order":1e999999,"depth":-1e-999999,"uid":99999999999999999999999999999}}}"#;
    let book = Book::parse(huge, &LIMITS).unwrap();
    assert!(book.to_json().contains("1e999999"));
    assert!(book.to_json().contains("99999999999999999999999999999"));
    // Truncated text and stray bytes.
    for cut in 0..ODD.len() {
        if ODD.is_char_boundary(cut) {
            assert!(Book::parse(&ODD[..cut], &LIMITS).is_err());
        }
    }
    let mut book = Book::parse(ODD, &LIMITS).unwrap();
    let deep_array = "[".repeat(100_000);
    for fields in ["", "[", "[]", "null", "1", r#"{"a":"#, &deep_array] {
        assert!(
            book.put_entry(None, fields, &LIMITS).is_err(),
            "{}",
            &fields[..fields.len().min(20)]
        );
    }
    assert_eq!(book.entry_count(), 2, "refusing changes nothing");
}

/// getFreeWorldEntryUid (world-info.js:4283-4297): the first integer from 0
/// for which `uid in data.entries` is false; "01" and "x" are other names.
#[test]
fn a_new_entry_takes_the_lowest_free_uid() {
    let mut book = Book::empty();
    assert_eq!(book.put_entry(None, "{}", &LIMITS).unwrap(), "0");
    let mut book2 = Book::parse(
        r#"{"entries":{"1":{},"01":{},"x":{},"3":{},"0":{}}}"#,
        &LIMITS,
    )
    .unwrap();
    assert_eq!(book2.put_entry(None, "{}", &LIMITS).unwrap(), "2");
    assert_eq!(book2.put_entry(None, "{}", &LIMITS).unwrap(), "4");
    book2.delete_entry("1").unwrap();
    assert_eq!(book2.put_entry(None, "{}", &LIMITS).unwrap(), "1");
    // New entries go last, in creation order.
    let uids: Vec<&str> = book2.entries().map(|(uid, _)| uid).collect();
    assert_eq!(uids, ["01", "x", "3", "0", "2", "4", "1"]);
    assert_eq!(book.entry_count(), 1);
}

/// createWorldInfoEntry (world-info.js:4057-4069): `{ uid, ...template }`;
/// the template is newWorldInfoEntryTemplate (:4002-4055); the editor adds
/// displayIndex = uid when it renders the entry (:2365).
#[test]
fn a_new_entry_has_sillytaverns_editor_defaults() {
    let mut book = Book::empty();
    let uid = book
        .put_entry(
            None,
            r#"{"key":["Ann"],"content":"Ann is tall.","uid":77,"depth":null}"#,
            &LIMITS,
        )
        .unwrap();
    assert_eq!(uid, "0");
    let entry = book.entry("0").unwrap().get();
    let expected = r#"{"uid":0,"key":["Ann"],"keysecondary":[],"comment":"","content":"Ann is tall.","constant":false,"vectorized":false,"selective":true,"selectiveLogic":0,"addMemo":false,"order":100,"position":0,"disable":false,"ignoreBudget":false,"excludeRecursion":false,"preventRecursion":false,"matchPersonaDescription":false,"matchCharacterDescription":false,"matchCharacterPersonality":false,"matchCharacterDepthPrompt":false,"matchScenario":false,"matchCreatorNotes":false,"delayUntilRecursion":0,"probability":100,"useProbability":true,"outletName":"","group":"","groupOverride":false,"groupWeight":100,"scanDepth":null,"caseSensitive":null,"matchWholeWords":null,"useGroupScoring":null,"automationId":"","role":0,"sticky":null,"cooldown":null,"delay":null,"triggers":[],"displayIndex":0}"#;
    assert_eq!(entry, expected, "uid ignored, depth given null removed");
    // An unknown integer uid is created under that uid.
    assert_eq!(
        book.put_entry(Some("12"), r#"{"comment":"c"}"#, &LIMITS)
            .unwrap(),
        "12"
    );
    let twelve = entry_value(&book, "12");
    assert_eq!(
        (twelve["uid"].clone(), twelve["displayIndex"].clone()),
        (12.into(), 12.into())
    );
    assert_eq!(twelve["comment"], "c");
    assert_eq!(twelve["depth"], 4, "DEFAULT_DEPTH, world-info.js:96");
    for bad in ["x", "", "-1", "01", "1.5", "9007199254740992"] {
        match book.put_entry(Some(bad), "{}", &LIMITS) {
            Err(DomainError::Invalid { field, .. }) => assert_eq!(field, "uid"),
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    match book.put_entry(None, "[1]", &LIMITS) {
        Err(DomainError::Invalid { field, .. }) => assert_eq!(field, "fields"),
        other => panic!("{other:?}"),
    }
    assert_eq!(book.entry_count(), 2);
}

#[test]
fn an_edit_replaces_only_the_named_members() {
    let mut book = Book::parse(ODD, &LIMITS).unwrap();
    let uid = book
        .put_entry(
            Some("3"),
            r#"{"key":["c"],"probability":null,"comment":"new","uid":9,"gone":null}"#,
            &LIMITS,
        )
        .unwrap();
    assert_eq!(uid, "3");
    assert_eq!(
        book.entry("3").unwrap().get(),
        r#"{"uid":3,"key":["c"],"order":1.0,"extensions":{"big": 123456789012345678901234567890, "neg": -0.0},"comment":"new"}"#,
    );
    // The other entry and the rest of the file are untouched.
    assert_eq!(
        book.entry("0").unwrap().get(),
        r#"{"uid": 0, "key": "plain", "content": "x\ny", "role": null}"#
    );
    assert!(book.to_json().contains(r#""_meta":{"v": 1.50}"#));
    book.delete_entry("3").unwrap();
    assert_eq!(
        book.delete_entry("3"),
        Err(DomainError::NotFound("entry 3".into()))
    );
    assert_eq!(book.entry_count(), 1);
    // An entry that is not an object is replaced by the fields.
    let mut odd = Book::parse(r#"{"entries":{"5":"text"}}"#, &LIMITS).unwrap();
    odd.put_entry(Some("5"), r#"{"a":1}"#, &LIMITS).unwrap();
    assert_eq!(odd.to_json(), r#"{"entries":{"5":{"a":1}}}"#);
}

fn exhausted(result: Result<impl std::fmt::Debug, DomainError>) -> String {
    match result {
        Err(DomainError::ResourceExhausted(reason)) => reason,
        other => panic!("expected ResourceExhausted, got {other:?}"),
    }
}

#[test]
fn limits_refuse_naming_the_entry_and_the_limit() {
    let small = BookLimits {
        max_entries: 2,
        max_key_bytes: 6,
        max_content_bytes: 9,
        max_book_bytes: usize::MAX,
    };
    // Thai: 3 bytes a character, so two characters fit in 6 bytes, three do not.
    let ok = r#"{"entries":{"a":{"key":["กข","123456"],"keysecondary":"abc","content":"123456789"},"b":{"key":[5,null,["long long"]],"content":5}}}"#;
    Book::parse(ok, &small).unwrap();
    for (text, uid, says) in [
        (r#"{"entries":{"7":{"key":["กขค"]}}}"#, "7", "6 bytes"),
        (
            r#"{"entries":{"7":{"keysecondary":["1234567"]}}}"#,
            "7",
            "keysecondary",
        ),
        (
            r#"{"entries":{"8":{"key":"1234567"}}}"#,
            "8",
            "key of 7 bytes",
        ),
        (
            r#"{"entries":{"9":{"content":"1234567890"}}}"#,
            "9",
            "9 bytes",
        ),
    ] {
        let reason = exhausted(Book::parse(text, &small));
        assert!(reason.contains(&format!("entry {uid}")), "{reason}");
        assert!(reason.contains(says), "{reason}");
    }
    let reason = exhausted(Book::parse(r#"{"entries":{"1":{},"2":{},"3":{}}}"#, &small));
    assert!(reason.contains("limit of 2"), "{reason}");

    let mut book = Book::parse(ok, &small).unwrap();
    let before = book.to_json();
    let reason = exhausted(book.put_entry(None, "{}", &small));
    assert!(reason.contains("entry 0"), "{reason}");
    let reason = exhausted(book.put_entry(Some("a"), r#"{"content":"1234567890"}"#, &small));
    assert!(reason.contains("entry a"), "{reason}");
    exhausted(book.put_entry(Some("b"), r#"{"key":["1234567"]}"#, &small));
    assert_eq!(book.to_json(), before, "refusing changes nothing");
    // An update within the limits, at the entry limit, is fine.
    book.put_entry(Some("b"), r#"{"key":["ok"]}"#, &small)
        .unwrap();
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/../../tests/fixtures/world_info/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {path}: {e}"))
}

/// Every number token of a JSON text, as spelled (outside strings).
fn number_spellings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut current = String::new();
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
            current.push(c);
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        in_string = c == '"';
    }
    out
}

/// Each real book (tests/fixtures/world_info/README.md) parses and writes
/// back JSON-equal, with every number spelled as in the file and the
/// members in the file's order.
#[test]
fn real_books_round_trip() {
    for (name, entries) in [
        ("Eldoria.json", 4),
        ("Eldoria_V10_reduced.json", 150),
        ("Nen_Encyclopedia_HxH.json", 9),
        ("Vina_HxH.json", 8),
    ] {
        let text = fixture(name);
        let book = Book::parse(&text, &LIMITS).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(book.entry_count(), entries, "{name}");
        let out = book.to_json();
        assert_eq!(value(&out), value(&text), "{name}");
        assert_eq!(number_spellings(&out), number_spellings(&text), "{name}");
        let uids: Vec<&str> = book.entries().map(|(uid, _)| uid).collect();
        let file: serde_json::Map<String, Value> =
            serde_json::from_value(value(&text)["entries"].clone()).unwrap();
        let mut in_file: Vec<&str> = file.keys().map(String::as_str).collect();
        // serde_json's Map sorts its keys; the book keeps the file's order,
        // which for these files is ascending by number.
        in_file.sort_by_key(|uid| uid.parse::<u64>().unwrap_or(u64::MAX));
        assert_eq!(uids, in_file, "{name}");
        // An edit of one entry leaves every other entry's text as it was.
        let mut edited = book.clone();
        let first = uids[0].to_owned();
        edited
            .put_entry(Some(&first), r#"{"comment":"edited"}"#, &LIMITS)
            .unwrap();
        for (uid, entry) in book.entries().skip(1) {
            assert_eq!(edited.entry(uid).unwrap().get(), entry.get());
        }
        let mut expected = value(book.entry(&first).unwrap().get());
        expected["comment"] = "edited".into();
        assert_eq!(entry_value(&edited, &first), expected);
    }
    // Eldoria_V10's top-level `_meta` is kept as written.
    let v10 = Book::parse(&fixture("Eldoria_V10_reduced.json"), &LIMITS).unwrap();
    assert_eq!(value(&v10.to_json())["_meta"]["entry_count"], 947);
}

/// Nen_Encyclopedia_HxH (README): card-style top-level members, sparse
/// entries, Thai and CJK keys; Vina_HxH: `role: null`. Kept as written;
/// Thai keys count in UTF-8 bytes (3 a character).
#[test]
fn sparse_and_non_ascii_books_are_plain_data() {
    let nen = Book::parse(&fixture("Nen_Encyclopedia_HxH.json"), &LIMITS).unwrap();
    let out = value(&nen.to_json());
    assert_eq!(out["scan_depth"], 4);
    assert_eq!(out["token_budget"], 10000);
    let uids: Vec<&str> = nen.entries().map(|(uid, _)| uid).collect();
    assert_eq!(
        uids,
        [
            "7", "620", "99600", "99601", "99602", "99603", "99604", "99605", "99606"
        ]
    );
    let entry = entry_value(&nen, "99603");
    assert_eq!(entry["key"][1], "สายเสริมพลัง");
    assert_eq!(entry["key"][2], "強化系");
    assert!(entry.get("depth").is_none() && entry.get("role").is_none());
    // Entries 7 and 620 have no key past 36 bytes; in 99600 "Secret
    // Hunter Exam" is 18 bytes, but "สอบฮันเตอร์ลับ" is 14 Thai characters,
    // 42 bytes.
    let tight = BookLimits {
        max_key_bytes: 41,
        ..LIMITS
    };
    let reason = exhausted(Book::parse(&fixture("Nen_Encyclopedia_HxH.json"), &tight));
    assert!(reason.contains("entry 99600"), "{reason}");
    // A new entry in this book takes uid 0 (no entry named 0).
    let mut nen = nen;
    assert_eq!(nen.put_entry(None, "{}", &LIMITS).unwrap(), "0");

    let vina = Book::parse(&fixture("Vina_HxH.json"), &LIMITS).unwrap();
    assert_eq!(entry_value(&vina, "0")["role"], Value::Null);
    assert!(vina.entry("0").unwrap().get().contains("\"role\": null"));
    assert_eq!(entry_value(&vina, "7")["key"], Value::Array(vec![]));
}

/// JSON.parse takes a lone surrogate escape (`"\ud800"`); serde_json
/// takes it inside a value (kept as written) but not in a member name,
/// which recapd reads as text: such a file is refused, and says why.
#[test]
fn a_lone_surrogate_is_kept_in_values_and_refused_in_names() {
    let text = r#"{"entries":{"0":{"content":"a\ud800b","key":["\udfff"]}}}"#;
    let book = Book::parse(text, &LIMITS).unwrap();
    assert_eq!(book.to_json(), text);
    match Book::parse(r#"{"entries":{"\ud800":{}}}"#, &LIMITS) {
        Err(DomainError::Invalid { field, reason }) => {
            assert_eq!(field, "json");
            assert!(reason.contains("escape"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// `file_bytes` is the exported file's length, through parses, edits
/// (names that need escapes included) and deletions.
#[test]
fn file_bytes_is_the_length_of_the_file() {
    let mut book = Book::parse(ODD, &LIMITS).unwrap();
    assert_eq!(book.file_bytes(), book.to_json().len());
    let odd_uid = "1";
    book.put_entry(None, r#"{"content":"q\"\\\u0001é"}"#, &LIMITS)
        .unwrap();
    book.put_entry(Some(odd_uid), r#"{"comment":"c"}"#, &LIMITS)
        .unwrap();
    assert_eq!(book.file_bytes(), book.to_json().len());
    book.delete_entry("3").unwrap();
    assert_eq!(book.file_bytes(), book.to_json().len());
    let weird = Book::parse(r#"{"a\n\"\u0002":1,"entries":{"\t\u001f":{}}}"#, &LIMITS).unwrap();
    assert_eq!(weird.file_bytes(), weird.to_json().len());
    assert_eq!(Book::empty().file_bytes(), Book::empty().to_json().len());
}

/// The book's file size is bounded on reading and at every edit; a
/// refused edit changes nothing, and an edit that shrinks the entry is
/// taken at the limit.
#[test]
fn the_book_size_limit_refuses_a_file_or_an_edit_past_it() {
    let text = r#"{"entries":{"0":{"content":"0123456789"}}}"#;
    let exact = BookLimits {
        max_book_bytes: text.len(),
        ..LIMITS
    };
    let mut book = Book::parse(text, &exact).unwrap();
    let smaller = BookLimits {
        max_book_bytes: text.len() - 1,
        ..LIMITS
    };
    let reason = exhausted(Book::parse(text, &smaller));
    assert!(reason.contains("the book's file is 42 bytes"), "{reason}");
    let reason = exhausted(book.put_entry(Some("0"), r#"{"content":"0123456789A"}"#, &exact));
    assert!(
        reason.contains("entry 0: the book's file would be 43 bytes"),
        "{reason}"
    );
    let reason = exhausted(book.put_entry(None, "{}", &exact));
    assert!(reason.contains("the book's file would be"), "{reason}");
    assert_eq!(book.to_json(), text);
    book.put_entry(Some("0"), r#"{"content":"012"}"#, &exact)
        .unwrap();
    assert_eq!(book.file_bytes(), text.len() - 7);
}

/// Replaying the stored edits of a book on its stored file gives the book
/// the edits made: replaced in place, appended, removed.
#[test]
fn replayed_entry_edits_give_the_edited_book() {
    let mut edited = Book::parse(ODD, &LIMITS).unwrap();
    let mut replayed = Book::parse(ODD, &LIMITS).unwrap();
    let mut log: Vec<(String, Option<String>)> = Vec::new();
    let uid = edited
        .put_entry(None, r#"{"content":"new"}"#, &LIMITS)
        .unwrap();
    log.push((
        uid.clone(),
        Some(edited.entry(&uid).unwrap().get().to_owned()),
    ));
    edited
        .put_entry(Some("3"), r#"{"content":"changed"}"#, &LIMITS)
        .unwrap();
    log.push((
        "3".to_owned(),
        Some(edited.entry("3").unwrap().get().to_owned()),
    ));
    edited.delete_entry("0").unwrap();
    log.push(("0".to_owned(), None));
    for (uid, entry) in &log {
        replayed.replay_entry(uid, entry.as_deref()).unwrap();
    }
    assert_eq!(replayed.to_json(), edited.to_json());
    assert!(replayed.replay_entry("9", Some("{not json")).is_err());
}
