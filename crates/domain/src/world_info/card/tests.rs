//! Character cards. The expected books are SillyTavern's own output:
//! tests/fixtures/world_info/*_converted.json were written by running
//! `convertCharacterBook` (world-info.js:5498-5555 at 51ad27f) under Node
//! (tools/st_convert.mjs, see the fixtures' README).

use serde_json::Value;
use serde_json::value::RawValue;

use super::*;
use crate::world_info::book::json::members;

const LIMITS: BookLimits = BookLimits {
    max_entries: 10_000,
    max_key_bytes: 1_000,
    max_content_bytes: 100_000,
    max_book_bytes: usize::MAX,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../tests/fixtures/world_info/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {path}: {e}"))
}

/// Numbers as f64 (Node writes `1.0` as `1`; serde_json tells them apart).
fn normal(value: Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(normal).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, normal(v))).collect()),
        other => other,
    }
}

/// The member names of every object, in order, at every level.
fn shape(text: &str) -> String {
    if let Ok(ms) = members(text) {
        let inner: Vec<String> = ms
            .iter()
            .map(|(name, value)| format!("{name}:{}", shape(value.get())))
            .collect();
        return format!("{{{}}}", inner.join(","));
    }
    if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text) {
        let inner: Vec<String> = items.iter().map(|v| shape(v.get())).collect();
        return format!("[{}]", inner.join(","));
    }
    String::new()
}

/// `book` is what SillyTavern saved: JSON-equal, members in its order.
fn assert_same_book(book: &Book, expected: &[u8]) {
    let expected = std::str::from_utf8(expected).expect("fixtures are UTF-8");
    let ours = book.to_json();
    let value = |t: &str| normal(serde_json::from_str(t).expect("valid JSON"));
    assert_eq!(value(&ours), value(expected));
    assert_eq!(shape(&ours), shape(expected));
}

#[test]
fn seraphina_converts_as_sillytavern_converts_it() {
    let (name, book) = character_book(&fixture("default_Seraphina.png"), &LIMITS).unwrap();
    // character_book.name is "Eldoria" (world-info.js:5625).
    assert_eq!(name, "Eldoria");
    assert_eq!(book.entry_count(), 4);
    assert_same_book(&book, &fixture("Seraphina_converted.json"));
    // The facts file, section 1, spelled out on entry 0: before_char with
    // extensions.position 0; selective as the card has it (true); use_regex
    // is not carried; sticky/cooldown/delay 0 stay 0 (not null: `??`).
    let entry: Value = serde_json::from_str(book.entry("0").unwrap().get()).unwrap();
    assert_eq!(entry["position"], 0);
    assert_eq!(entry["selective"], true);
    assert_eq!(entry["disable"], false);
    assert_eq!(entry["addMemo"], true);
    assert_eq!(
        (entry["sticky"].clone(), entry["delay"].clone()),
        (0.into(), 0.into())
    );
    assert_eq!(entry["delayUntilRecursion"], false, "`?? false`, :5516");
    assert_eq!(entry["triggers"], Value::Array(vec![]));
    assert!(entry.get("use_regex").is_none());
}

#[test]
fn sakana_converts_as_sillytavern_converts_it() {
    let (name, book) = character_book(&fixture("Sakana_card.json"), &LIMITS).unwrap();
    assert_eq!(name, "Sakana-WI");
    assert_eq!(book.entry_count(), 14);
    assert_same_book(&book, &fixture("Sakana_converted.json"));
}

/// Every branch of convertCharacterBook on one synthetic card: a missing
/// id takes the index (:5502-5504) and is written into originalData; a
/// repeated id replaces the entry; property order puts array indexes
/// first ("01" and "b" are not), in every object JSON.stringify writes;
/// `||` keeps truthy values as they are;
/// `??` keeps 0 and false; extensions that are not objects read as
/// missing; `position` falls back on before_char (:5515). SillyTavern
/// converts it, and its `keys: "k"`, `constant: 1` and `selective: "yes"`
/// are carried as they are: the import then refuses the converted book
/// for its types (the conversion is checked on its own here).
#[test]
fn every_branch_converts_as_sillytavern_converts_it() {
    let card = fixture("synthetic_card.json");
    assert_eq!(
        character_book(&card, &LIMITS).unwrap_err(),
        DomainError::invalid(
            "entries.10.key",
            "expected an array of strings, got a string \
             (in the card's book as SillyTavern converts it)"
        )
    );
    let (name, book) = converted_book(&card, &LIMITS).unwrap();
    // character_book.name "" is falsy: `${characters[chid].name}'s Lorebook`,
    // the name readFromV2 took from data.name (characters.js:504-556).
    assert_eq!(name, "Ann's Lorebook");
    assert_same_book(&book, &fixture("synthetic_converted.json"));
    let uids: Vec<&str> = book.entries().map(|(uid, _)| uid).collect();
    assert_eq!(uids, ["0", "2", "6", "10", "b", "01"]);
}

#[test]
fn a_card_without_spec_is_named_by_its_top_level_name() {
    let card = br#"{"name":"Top","data":{"name":"Inner","character_book":{"entries":[]}}}"#;
    let (name, book) = character_book(card, &LIMITS).unwrap();
    assert_eq!((name.as_str(), book.entry_count()), ("Top's Lorebook", 0));
    let card = br#"{"spec":"x","data":{"character_book":{"name":7,"entries":[]}}}"#;
    assert_eq!(character_book(card, &LIMITS).unwrap().0, "7");
    let card = br#"{"spec":"x","data":{"character_book":{"entries":[]}}}"#;
    assert_eq!(
        character_book(card, &LIMITS).unwrap().0,
        "undefined's Lorebook"
    );
}

/// A PNG with the given tEXt chunks, written by the png crate.
fn png_with(texts: &[(&str, &str)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, 1, 1);
    encoder.set_color(::png::ColorType::Rgba);
    for (keyword, text) in texts {
        encoder
            .add_text_chunk((*keyword).to_owned(), (*text).to_owned())
            .expect("a test keyword is valid");
    }
    let mut writer = encoder.write_header().expect("test PNG header");
    writer
        .write_image_data(&[1, 2, 3, 4])
        .expect("test PNG data");
    writer.finish().expect("test PNG end");
    out
}

fn card_json(name: &str) -> String {
    format!(
        r#"{{"spec":"chara_card_v2","data":{{"name":"{name}","character_book":{{"entries":[{{"keys":["k"],"content":"c","enabled":true}}]}}}}}}"#
    )
}

fn b64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// character-card-parser.js `read`: keywords lower-cased, ccv3 first, then
/// chara; the text is base64 as Node reads it.
#[test]
fn ccv3_wins_over_chara_and_keywords_ignore_case() {
    let png = png_with(&[
        ("chara", &b64(&card_json("V2"))),
        ("CCv3", &b64(&card_json("V3"))),
    ]);
    assert_eq!(character_book(&png, &LIMITS).unwrap().0, "V3's Lorebook");
    let png = png_with(&[("Chara", &b64(&card_json("V2"))), ("other", "x")]);
    assert_eq!(character_book(&png, &LIMITS).unwrap().0, "V2's Lorebook");
    // Node's base64: whitespace and other characters skipped, the URL-safe
    // alphabet read, the first `=` ends the data.
    let spaced: String = b64(&card_json("Sp"))
        .chars()
        .flat_map(|c| [c, '\n'])
        .collect::<String>()
        + "=garbage";
    let png = png_with(&[("chara", &spaced)]);
    assert_eq!(character_book(&png, &LIMITS).unwrap().0, "Sp's Lorebook");
    // Each expected value is what Node 20 printed for
    // `Buffer.from(text, 'base64')`.
    for (text, bytes) in [
        ("YWJj?Y", &b"abc"[..]),
        ("YQ", b"a"),
        ("YQ==YQ==", b"a"),
        ("YWJj\nZGVm", b"abcdef"),
        ("-_-_", &[0xfb, 0xff, 0xbf]),
        ("+/+/", &[0xfb, 0xff, 0xbf]),
        ("Y", b""),
        ("YW=Jj", b"a"),
        ("YWJjZ", b"abc"),
        ("Y W J j", b"abc"),
        ("YWJ=jZGVm", b"ab"),
    ] {
        assert_eq!(chunks::node_base64(text), bytes, "{text:?}");
    }
}

fn invalid_reason(result: Result<(String, Book), DomainError>) -> String {
    match result {
        Err(DomainError::Invalid { field, reason }) => {
            assert_eq!(field, "card");
            reason
        }
        other => panic!("expected Invalid card, got {other:?}"),
    }
}

#[test]
fn cards_sillytavern_cannot_import_are_refused_with_the_reason() {
    for (card, says) in [
        (b"not json".to_vec(), "neither a PNG nor a JSON object"),
        (b"[1]".to_vec(), "neither a PNG nor a JSON object"),
        (br#"{"data":{}}"#.to_vec(), "no `data.character_book`"),
        (
            br#"{"character_book":{"entries":[]}}"#.to_vec(),
            "no `data.character_book`",
        ),
        (
            br#"{"data":{"character_book":""}}"#.to_vec(),
            "no `data.character_book`",
        ),
        (br#"{"data":"x"}"#.to_vec(), "no `data.character_book`"),
        (
            br#"{"data":{"character_book":{"entries":{}}}}"#.to_vec(),
            "entries is not an array",
        ),
        (
            br#"{"data":{"character_book":"text"}}"#.to_vec(),
            "entries is not an array",
        ),
        (
            br#"{"data":{"character_book":[1]}}"#.to_vec(),
            "entries is not an array",
        ),
        (
            br#"{"data":{"character_book":{"entries":[null]}}}"#.to_vec(),
            "entries[0] is not an object",
        ),
        (
            br#"{"data":{"character_book":{"entries":[{},5]}}}"#.to_vec(),
            "entries[1] is not an object",
        ),
        (png_with(&[("other", "x")]), "no `ccv3` or `chara`"),
        (
            png_with(&[("chara", &b64("{]"))]),
            "the PNG's character is not a JSON object",
        ),
    ] {
        let reason = invalid_reason(character_book(&card, &LIMITS));
        assert!(reason.contains(says), "{reason} / {says}");
    }
}

#[test]
fn hostile_cards_never_panic() {
    let png = fixture("default_Seraphina.png");
    // Every truncation is refused (png-chunks-extract throws without IEND).
    for cut in (0..png.len()).step_by(97).chain(png.len() - 13..png.len()) {
        assert!(
            character_book(&png[..cut], &LIMITS).is_err(),
            "cut at {cut}"
        );
    }
    // A flipped byte inside a tEXt chunk fails its CRC: refused, as
    // png-chunks-extract refuses it.
    let mut bad = png.clone();
    let at = bad.len() - 500;
    bad[at] ^= 1;
    let reason = invalid_reason(character_book(&bad, &LIMITS));
    assert!(reason.contains("not a readable PNG"), "{reason}");
    // Invalid UTF-8 inside the chunk's JSON string reads as U+FFFD
    // (Buffer#toString('utf8')).
    let mut json = card_json("X").into_bytes();
    let at = json
        .iter()
        .position(|&b| b == b'X')
        .expect("the name is there");
    json[at] = 0xFF;
    use base64::Engine;
    let text = base64::engine::general_purpose::STANDARD.encode(&json);
    let (name, _) = character_book(&png_with(&[("chara", &text)]), &LIMITS).unwrap();
    assert_eq!(name, "\u{FFFD}'s Lorebook");
    // Deep nesting and huge numbers inside a card.
    let deep = format!(
        r#"{{"data":{{"character_book":{{"entries":[{{"extensions":{{"x":{}{}}},"keys":["k"],"insertion_order":1e999999}}]}}}}}}"#,
        "[".repeat(50_000),
        "]".repeat(50_000)
    );
    let (_, book) = character_book(deep.as_bytes(), &LIMITS).unwrap();
    assert!(book.entry("0").unwrap().get().contains("1e999999"));
    // Arbitrary bytes after a PNG signature.
    let mut junk = chunks::SIGNATURE.to_vec();
    junk.extend((0..=255u8).cycle().take(5000));
    assert!(character_book(&junk, &LIMITS).is_err());
    assert!(character_book(&[], &LIMITS).is_err());
}

#[test]
fn a_converted_book_is_checked_against_the_limits() {
    let small = BookLimits {
        max_entries: 3,
        max_key_bytes: 100,
        max_content_bytes: 100_000,
        max_book_bytes: usize::MAX,
    };
    match character_book(&fixture("Sakana_card.json"), &small) {
        Err(DomainError::ResourceExhausted(reason)) => assert!(reason.contains("limit of 3")),
        other => panic!("{other:?}"),
    }
    let long_key = BookLimits {
        max_entries: 100,
        max_key_bytes: 3,
        max_content_bytes: 100_000,
        max_book_bytes: usize::MAX,
    };
    match character_book(&fixture("default_Seraphina.png"), &long_key) {
        Err(DomainError::ResourceExhausted(reason)) => assert!(reason.contains("entry 0")),
        other => panic!("{other:?}"),
    }
}
