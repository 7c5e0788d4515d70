//! Property tests of the lore answer reader: whatever an LLM answers
//! (arbitrary JSON shaped like an answer, arbitrary bytes), reading it
//! never panics, and what it keeps, once written to a book, holds no
//! control or bidirectional character in a name or key and no key that
//! SillyTavern would take for a regex. Bounded to about a second per
//! property in a debug build.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;
use crate::lore::default_entity_types;
use crate::lore::edit::{LoreLimits, create_entry};
use crate::lore::registry::entry_members;
use crate::world_info::book::{Book, BookLimits};

/// Characters an attacker would reach for: controls, bidi, slashes and
/// flags, macro delimiters, spaces a JavaScript trim removes, quotes.
fn hostile_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => prop::sample::select(vec![
            '/', '/', 'g', 'i', 'm', 's', 'u', 'y', 'G', 'I', '{', '}', '<', '>', ' ', '\u{a0}',
            '\u{feff}', '\u{2028}', '\u{85}', '\u{0}', '\u{1b}', '\r', '\n', '\t', '\u{7f}',
            '\u{9b}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
            '\u{61c}', '\\', '"', '(', '+', ')', '?', '=', 'a', 'b', 'é', '東',
        ]),
        1 => any::<char>(),
    ]
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop::collection::vec(hostile_char(), 0..24).prop_map(|cs| cs.into_iter().collect())
}

/// Any JSON value, its strings hostile.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((hostile_string(), inner), 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// An entity as a model might give it: the members the reader looks for
/// (either spelling), each a string, a list of strings or any JSON.
fn entity_value() -> impl Strategy<Value = Value> {
    let member = prop_oneof![
        3 => hostile_string().prop_map(Value::String),
        2 => prop::collection::vec(hostile_string().prop_map(Value::String), 0..4)
            .prop_map(Value::Array),
        1 => json_value(),
    ];
    let name = prop::sample::select(vec![
        "type", "name", "keywords", "content", "t", "n", "k", "c",
    ]);
    prop_oneof![
        6 => prop::collection::vec((name, member), 0..6).prop_map(|members| {
            let mut object = Map::new();
            // Mostly a real type, so that entries get written.
            object.insert("type".into(), json!("character"));
            for (k, v) in members {
                object.insert(k.to_owned(), v);
            }
            Value::Object(object)
        }),
        1 => json_value(),
    ]
}

/// Whether SillyTavern's `parseRegexFromString` would split `key` after a
/// scan trimmed it: its very regex, run by a JavaScript regex engine.
fn sillytavern_splits(key: &str) -> bool {
    let split = regress::Regex::new(r"^\/([\w\W]+?)\/([gimsuy]*)$")
        .expect("SillyTavern's split is a valid regex");
    let trimmed = key.trim_matches(crate::world_info::entry::js::is_js_space);
    split.find(trimmed).is_some()
}

/// The names and keys an extraction's entities get once written to a book.
fn written(entities: &[Entity]) -> Vec<(String, Vec<String>)> {
    let types = default_entity_types();
    let limits = LoreLimits {
        max_entries: 1000,
        max_keys: 32,
        book: BookLimits {
            max_entries: 1000,
            max_key_bytes: 4096,
            max_content_bytes: 1 << 20,
            max_book_bytes: 16 << 20,
        },
    };
    let mut book = Book::empty();
    let mut out = Vec::new();
    for entity in entities {
        let Ok(uid) = create_entry(&mut book, entity, &types, &limits) else {
            continue;
        };
        let members = entry_members(book.entry(&uid).expect("just written").get());
        let comment = members["comment"].as_str().unwrap_or_default().to_owned();
        let keys = members["key"]
            .as_array()
            .map(|keys| {
                keys.iter()
                    .map(|k| k.as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.push((comment, keys));
    }
    out
}

fn check_extraction(answer: &LoreAnswer) -> Result<(), TestCaseError> {
    let LoreAnswer::Entities { entities, skipped } = answer else {
        return Err(TestCaseError::fail("not an extraction"));
    };
    for entity in entities {
        prop_assert!(!entity.name.is_empty());
        prop_assert!(
            !entity.name.chars().any(is_hidden_char),
            "{:?}",
            entity.name
        );
        prop_assert!(
            !entity.kind.chars().any(is_hidden_char),
            "{:?}",
            entity.kind
        );
        for line in &entity.content {
            prop_assert!(
                !line.chars().any(|c| is_hidden_char(c) && c != '\t'),
                "{line:?}"
            );
        }
    }
    for skip in skipped {
        let text = skip.to_string();
        prop_assert!(!text.chars().any(is_hidden_char), "{text:?}");
        prop_assert!(text.chars().count() < 300, "{text:?}");
    }
    for (comment, keys) in written(entities) {
        prop_assert!(!comment.chars().any(is_hidden_char), "{comment:?}");
        for key in keys {
            prop_assert!(!key.chars().any(is_hidden_char), "{key:?}");
            prop_assert!(!sillytavern_splits(&key), "{key:?} is a regex key");
            prop_assert!(!is_regex_shaped(&key), "{key:?}");
            prop_assert!(
                !key.contains(['{', '}', '<', '>']),
                "{key:?} may hold a macro"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    #[test]
    fn an_extraction_stores_only_clean_names_and_plain_keys(
        list in prop::collection::vec(entity_value(), 0..6),
        prose in hostile_string(),
    ) {
        let text = format!("{prose}\n{}", json!({ "entities": list }));
        if let Ok(answer) = parse_answer(JobKind::LoreExtract, &text) {
            check_extraction(&answer)?;
        }
    }

    #[test]
    fn any_json_answer_is_read_without_a_panic(value in json_value(), kind in 0..4_usize) {
        let kind = [
            JobKind::LoreExtract,
            JobKind::LoreResolve,
            JobKind::LoreMerge,
            JobKind::LoreCompact,
        ][kind];
        let text = value.to_string();
        match parse_answer(kind, &text) {
            Ok(answer @ LoreAnswer::Entities { .. }) => check_extraction(&answer)?,
            Ok(LoreAnswer::Merged { name: Some(name), .. }) => {
                prop_assert!(!name.chars().any(is_hidden_char), "{name:?}");
            }
            _ => {}
        }
    }

    #[test]
    fn any_bytes_are_read_without_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        for kind in [
            JobKind::LoreExtract,
            JobKind::LoreResolve,
            JobKind::LoreMerge,
            JobKind::LoreCompact,
        ] {
            if let Ok(answer @ LoreAnswer::Entities { .. }) = parse_answer(kind, &text) {
                check_extraction(&answer)?;
            }
        }
    }

    #[test]
    fn a_defused_keyword_is_never_a_regex_key(text in hostile_string()) {
        let key = defuse_key(&text);
        prop_assert!(!sillytavern_splits(&key), "{text:?} gave {key:?}");
        prop_assert!(!sillytavern_splits(&key.to_lowercase()), "{text:?} gave {key:?}");
        prop_assert!(!key.chars().any(is_hidden_char));
        prop_assert_eq!(defuse_key(&key), key.clone());
    }
}
