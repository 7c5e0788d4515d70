//! Property tests of the World Info file reader and the card reader: any
//! bytes or JSON never panic; a book of SillyTavern's types is taken and
//! its export reads back to the same file; one field mutated to a wrong
//! type is refused naming it. Case counts are bounded (a few seconds each
//! in a debug build); `PROPTEST_CASES` overrides them
//! ([`crate::tests::proptest_cases`]).

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::{Value, json};

use super::super::BookLimits;
use super::*;
use crate::tests::proptest_cases;
use crate::world_info::card::character_book;

const LIMITS: BookLimits = BookLimits {
    max_entries: 10_000,
    max_key_bytes: 1_000,
    max_content_bytes: 100_000,
    max_book_bytes: 1 << 30,
};

/// Any JSON value, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-zA-Z]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A value of `kind` as SillyTavern writes it.
fn valid(kind: Kind) -> BoxedStrategy<Value> {
    let text = "\\PC{0,16}".prop_map(Value::String);
    let strings = proptest::collection::vec("\\PC{0,8}", 0..4).prop_map(|v| json!(v));
    let number = prop_oneof![
        any::<i32>().prop_map(Value::from),
        (0.0..1000.0f64).prop_map(Value::from),
        Just(Value::Null),
        (0..100u32).prop_map(|n| Value::String(n.to_string())),
    ];
    match kind {
        Kind::Text => text.boxed(),
        Kind::Strings => strings.boxed(),
        Kind::Flag => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::NullableFlag => prop_oneof![
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
            Just(json!("true")),
        ]
        .boxed(),
        Kind::Number => number.boxed(),
        Kind::Level => prop_oneof![number, any::<bool>().prop_map(Value::Bool)].boxed(),
        Kind::Uid => prop_oneof![
            (0..1000u32).prop_map(Value::from),
            "[a-z0-9]{1,4}".prop_map(Value::String),
        ]
        .boxed(),
        Kind::CharacterFilter => (any::<bool>(), strings.clone(), strings)
            .prop_map(|(is_exclude, names, tags)| {
                json!({"isExclude": is_exclude, "names": names, "tags": tags})
            })
            .boxed(),
    }
}

/// A value `kind` refuses, and the path suffix the error names (`""`: the
/// field itself; `"[i]"`: an item of a list; `".names[0]"`...).
fn invalid(kind: Kind) -> BoxedStrategy<(Value, String)> {
    let whole = |values: Vec<Value>| {
        proptest::sample::select(values)
            .prop_map(|v| (v, String::new()))
            .boxed()
    };
    let object = json!({"a": [1]});
    match kind {
        Kind::Text => whole(vec![json!(1), json!([]), object, json!(true), Value::Null]),
        Kind::Strings => prop_oneof![
            proptest::sample::select(vec![json!("k"), json!(1), object, Value::Null])
                .prop_map(|v| (v, String::new())),
            (
                0..4usize,
                proptest::sample::select(vec![json!(1), json!(["x"]), Value::Null])
            )
                .prop_map(|(at, bad)| {
                    let mut items: Vec<Value> = (0..at).map(|i| json!(i.to_string())).collect();
                    items.push(bad);
                    (Value::Array(items), format!("[{at}]"))
                }),
        ]
        .boxed(),
        Kind::Flag => whole(vec![json!(1), json!("true"), Value::Null, json!([true])]),
        Kind::NullableFlag => whole(vec![json!(0), json!([]), object]),
        Kind::Number => whole(vec![json!(true), json!([1]), object, json!("ten")]),
        Kind::Level => whole(vec![json!([1]), object, json!("x")]),
        Kind::Uid => whole(vec![Value::Null, json!(true), json!([0]), object]),
        Kind::CharacterFilter => prop_oneof![
            proptest::sample::select(vec![json!("Ann"), json!([]), json!(1)])
                .prop_map(|v| (v, String::new())),
            Just((json!({"names": [1]}), ".names[0]".to_owned())),
            Just((json!({"isExclude": "no"}), ".isExclude".to_owned())),
        ]
        .boxed(),
    }
}

/// One entry of SillyTavern's types: a subset of its fields (in
/// SillyTavern's order) and members of a tool's own.
fn valid_entry() -> impl Strategy<Value = serde_json::Map<String, Value>> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = FIELDS
        .iter()
        .map(|&(name, kind)| {
            proptest::option::weighted(0.5, valid(kind))
                .prop_map(move |v| v.map(|v| (name.to_owned(), v)))
                .boxed()
        })
        .collect();
    (
        fields,
        proptest::collection::btree_map("x[A-Z][a-z]{0,6}", any_json(), 0..3),
    )
        .prop_map(|(fields, extra)| fields.into_iter().flatten().chain(extra).collect())
}

/// A book of SillyTavern's types: 1 to 6 entries under distinct uids, and
/// other top-level members.
fn valid_book() -> impl Strategy<Value = Value> {
    (
        proptest::collection::btree_map("[0-9]{1,3}|[a-z]{1,3}", valid_entry(), 1..6),
        proptest::collection::btree_map("[a-z_]{1,8}", any_json(), 0..3),
    )
        .prop_map(|(entries, mut top)| {
            let entries = entries
                .into_iter()
                .map(|(uid, entry)| (uid, Value::Object(entry)))
                .collect();
            top.insert("entries".to_owned(), Value::Object(entries));
            Value::Object(top.into_iter().collect())
        })
}

proptest! {
    // Cheap cases: many of them.
    #![proptest_config(Config::with_cases(proptest_cases(1024)))]

    /// Arbitrary text (read from arbitrary bytes as a client's UTF-8
    /// would be) never panics the reader or the checks.
    #[test]
    fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Ok(book) = Book::parse(&text, &LIMITS) {
            let _ = book.check_types();
        }
    }

}

proptest! {
    #![proptest_config(Config::with_cases(proptest_cases(256)))]

    /// Arbitrary JSON as a book, as an entry, and as one entry's edit never
    /// panics; what is taken writes back JSON-equal.
    #[test]
    fn any_json_never_panics(top in any_json(), entry in any_json(), fields in any_json()) {
        let text = json!({"entries": {"0": entry}, "x": top}).to_string();
        let mut book = Book::parse(&text, &LIMITS).expect("a JSON object with entries");
        prop_assert_eq!(serde_json::from_str::<Value>(&book.to_json()).ok(), serde_json::from_str::<Value>(&text).ok());
        let _ = book.check_types();
        let before = book.to_json();
        match book.put_entry(Some("0"), &fields.to_string(), &LIMITS) {
            Ok(_) => prop_assert!(fields.is_object()),
            Err(_) => prop_assert_eq!(book.to_json(), before, "refusing changes nothing"),
        }
        let _ = Book::parse(&top.to_string(), &LIMITS);
    }

    /// A card reader given any bytes, any bytes after a PNG signature, or a
    /// PNG whose character chunk holds anything, never panics.
    #[test]
    fn any_card_never_panics(
        bytes in proptest::collection::vec(any::<u8>(), 0..512),
        chunk in "[A-Za-z0-9+/=]{0,64}",
        character in any_json(),
    ) {
        let _ = character_book(&bytes, &LIMITS);
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend_from_slice(&bytes);
        let _ = character_book(&png, &LIMITS);
        use base64::Engine;
        let card = json!({"spec": "chara_card_v2", "data": {"character_book": {"entries": [character]}}});
        let encoded = base64::engine::general_purpose::STANDARD.encode(card.to_string());
        for text in [chunk.as_str(), encoded.as_str()] {
            let _ = character_book(&png_with("chara", text), &LIMITS);
        }
    }
}

proptest! {
    // Whole books of up to 6 entries of up to 42 fields: fewer cases.
    #![proptest_config(Config::with_cases(proptest_cases(64)))]

    /// A book of SillyTavern's types is taken, and its export reads back
    /// to the same file (and the same check).
    #[test]
    fn a_valid_books_export_reads_back_to_the_same_file(file in valid_book()) {
        let text = file.to_string();
        let book = Book::parse(&text, &LIMITS).expect("a valid book parses");
        prop_assert_eq!(book.check_types(), Ok(()));
        let out = book.to_json();
        // Both read the same way (serde_json's float reading is not exact).
        let read = |t: &str| serde_json::from_str::<Value>(t).expect("JSON");
        prop_assert_eq!(read(&out), read(&text));
        let again = Book::parse(&out, &LIMITS).expect("the export parses");
        prop_assert_eq!(again.check_types(), Ok(()));
        prop_assert_eq!(again.to_json(), out);
    }

    /// One field of one entry mutated to a type SillyTavern does not write
    /// is refused, naming that field; as an edit too.
    #[test]
    fn a_mutated_field_is_refused_naming_it(
        file in valid_book(),
        pick in any::<proptest::sample::Index>(),
        (field, bad) in proptest::sample::select(FIELDS.to_vec())
            .prop_flat_map(|(name, kind)| (Just(name), invalid(kind))),
    ) {
        let (bad, suffix) = bad;
        let mut file = file;
        let entries = file["entries"].as_object_mut().expect("entries");
        let uid = entries.keys().nth(pick.index(entries.len())).expect("an entry").clone();
        entries[&uid][field] = bad.clone();
        let text = file.to_string();
        let book = Book::parse(&text, &LIMITS).expect("still JSON");
        match book.check_types() {
            Err(DomainError::Invalid { field: path, .. }) => {
                prop_assert_eq!(path, format!("entries.{uid}.{field}{suffix}"));
            }
            other => prop_assert!(false, "{field} = {bad}: {other:?}"),
        }
        if field != "uid" && !bad.is_null() {
            let mut book = Book::parse(r#"{"entries":{}}"#, &LIMITS).expect("empty book");
            let edit = json!({ field: bad }).to_string();
            match book.put_entry(None, &edit, &LIMITS) {
                Err(DomainError::Invalid { field: path, .. }) => {
                    prop_assert_eq!(path, format!("fields.{field}{suffix}"));
                }
                other => prop_assert!(false, "{edit}: {other:?}"),
            }
        }
    }
}

/// A 1×1 PNG with one tEXt chunk, written by the png crate.
fn png_with(keyword: &str, text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, 1, 1);
    encoder.set_color(::png::ColorType::Rgba);
    encoder
        .add_text_chunk(keyword.to_owned(), text.to_owned())
        .expect("a test keyword is valid");
    let mut writer = encoder.write_header().expect("test PNG header");
    writer
        .write_image_data(&[1, 2, 3, 4])
        .expect("test PNG data");
    writer.finish().expect("test PNG end");
    out
}
