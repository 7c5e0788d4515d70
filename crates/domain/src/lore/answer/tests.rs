use super::*;
use crate::lore::clean::{defuse_key, is_hidden_char, is_regex_shaped};

#[test]
fn entities_are_read_in_either_spelling_and_empty_ones_dropped() {
    let text = r#"Here you go:
```json
{"entities": [
  {"type": "Character", "name": " Mira ", "keywords": ["the captain", " "], "content": ["Leads the guard.", "", "Has a scar."]},
  {"t": "location", "n": "Varn", "k": "port city", "c": "A port.\nWalled."},
  {"type": "item", "name": "", "content": ["x"]},
  {"type": "item", "name": "Key", "content": []}
]}
```"#;
    let LoreAnswer::Entities {
        entities: found,
        skipped,
    } = parse_answer(JobKind::LoreExtract, text).unwrap()
    else {
        panic!("an extraction");
    };
    assert_eq!(skipped, []);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].kind, "character");
    assert_eq!(found[0].name, "Mira");
    assert_eq!(found[0].keywords, ["the captain"]);
    assert_eq!(found[0].content, ["Leads the guard.", "Has a scar."]);
    assert_eq!(found[1].keywords, ["port city"]);
    assert_eq!(found[1].content, ["A port.", "Walled."]);
    assert_eq!(
        parse_answer(JobKind::LoreExtract, r#"{"entities": []}"#),
        Ok(LoreAnswer::Entities {
            entities: vec![],
            skipped: vec![]
        })
    );
    assert!(parse_answer(JobKind::LoreExtract, r#"{"entities": "Mira"}"#).is_err());
    // An entity of the wrong shape is skipped, not the answer.
    let LoreAnswer::Entities { entities, skipped } = parse_answer(
        JobKind::LoreExtract,
        r#"{"entities": [{"name": 3, "content": "x"}]}"#,
    )
    .unwrap() else {
        panic!("an extraction");
    };
    assert_eq!(entities, []);
    assert_eq!(
        skipped[0].to_string(),
        "entities[0]: name must be a string, not 3"
    );
}

#[test]
fn a_resolution_names_a_uid_or_a_new_entity() {
    let uid = |text: &str| parse_answer(JobKind::LoreResolve, text);
    assert_eq!(
        uid(r#"{"uid": "12"}"#),
        Ok(LoreAnswer::Resolved(Some("12".into())))
    );
    assert_eq!(
        uid(r#"{"uid": 12}"#),
        Ok(LoreAnswer::Resolved(Some("12".into())))
    );
    assert_eq!(
        uid(r#"{"resolvedUid": "new"}"#),
        Ok(LoreAnswer::Resolved(None))
    );
    assert_eq!(uid(r#"{"uid": null}"#), Ok(LoreAnswer::Resolved(None)));
    assert!(uid(r#"{"uid": [1]}"#).is_err());
    assert!(uid("no idea").is_err());
}

#[test]
fn a_merge_gives_content_and_maybe_a_name() {
    assert_eq!(
        parse_answer(
            JobKind::LoreMerge,
            r#"{"content": ["Mira is the Master Smith.", "Has a scar."], "name": "Master Mira"}"#
        ),
        Ok(LoreAnswer::Merged {
            content: "Mira is the Master Smith.\nHas a scar.".into(),
            name: Some("Master Mira".into()),
            skipped: vec![],
        })
    );
    assert_eq!(
        parse_answer(
            JobKind::LoreMerge,
            r#"{"content": "Mira smiths.", "canonicalName": " "}"#
        ),
        Ok(LoreAnswer::Merged {
            content: "Mira smiths.".into(),
            name: None,
            skipped: vec![],
        })
    );
    assert!(parse_answer(JobKind::LoreMerge, r#"{"content": "  "}"#).is_err());
    // A new name of the wrong type is skipped: the content is merged.
    assert_eq!(
        parse_answer(JobKind::LoreMerge, r#"{"content": "x", "name": 4}"#),
        Ok(LoreAnswer::Merged {
            content: "x".into(),
            name: None,
            skipped: vec![Skipped {
                what: "name".into(),
                reason: "must be a string or null, not 4".into(),
            }],
        })
    );
    assert!(matches!(
        parse_answer(JobKind::LoreMerge, r#"{"content": "x", "name": "\u0000\u202e"}"#),
        Ok(LoreAnswer::Merged { name: None, ref skipped, .. }) if skipped.len() == 1
    ));
}

#[test]
fn a_compaction_gives_content_in_either_spelling() {
    assert_eq!(
        parse_answer(JobKind::LoreCompact, r#"{"compactedContent": "Short."}"#),
        Ok(LoreAnswer::Compacted("Short.".into()))
    );
    assert!(parse_answer(JobKind::LoreCompact, r#"{"summary": "Short."}"#).is_err());
}

/// Finding 7's entity, and a second one named by 100,000 bytes.
const HOSTILE: &str = r#"{"entities": [
  {"type": "character", "name": "Mi\u0000ra\u001b[31m\r\nFAKE LOG LINE\u202e",
   "keywords": ["/(?<=(a+)+)b/i", "Cap\u200ftain"], "content": ["Leads\tthe guard.\r\nHas a scar.\u202e"]},
  {"type": "character", "name": "\u0000\u001b\u202e", "content": "x"},
  7,
  {"type": "item", "name": "Key", "keywords": [["nested"]], "content": "A key."},
  {"type": "item", "name": "Lamp", "content": {"big": "object"}},
  {"type": "location", "name": "Varn", "content": "A port."}
]}"#;

#[test]
fn names_keys_and_content_are_cleaned_and_invalid_entities_skipped() {
    let LoreAnswer::Entities { entities, skipped } =
        parse_answer(JobKind::LoreExtract, HOSTILE).unwrap()
    else {
        panic!("an extraction");
    };
    assert_eq!(entities.len(), 2, "{entities:?}");
    let mira = &entities[0];
    assert_eq!(mira.name, "Mira[31m FAKE LOG LINE");
    assert_eq!(mira.keywords, ["(?=(a+)+)b/i", "Captain"]);
    assert_eq!(mira.content, ["Leads\tthe guard.", "Has a scar."]);
    assert_eq!(entities[1].name, "Varn");
    let reasons: Vec<String> = skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        reasons,
        [
            "entities[1]: the name is empty once control characters are removed",
            "entities[2]: is 7, not an object",
            r#"entities[3] (Key): keywords holds ["nested"], not a string"#,
            r#"entities[4] (Lamp): content must be a string or a list of strings, not {"big":"object"}"#,
        ]
    );
}

#[test]
fn a_skipped_entitys_reason_is_short_and_clean() {
    let long = format!(
        r#"{{"entities": [{{"name": "{}\u001b", "content": {{"x": "{}"}}}}]}}"#,
        "N".repeat(100_000),
        "y".repeat(100_000)
    );
    let LoreAnswer::Entities { skipped, .. } = parse_answer(JobKind::LoreExtract, &long).unwrap()
    else {
        panic!("an extraction");
    };
    let reason = skipped[0].to_string();
    assert!(reason.chars().count() < 200, "{reason}");
    assert!(!reason.chars().any(is_hidden_char), "{reason:?}");
}

/// A regex key in any spelling the model may try is stored as plain text.
#[test]
fn no_keyword_is_regex_shaped() {
    for key in [
        "/x+/",
        " /x+/gi",
        "//x//",
        "\u{a0}/x+/",
        "{{noop}}/x+/",
        "/x+/{{trim}}",
        "\u{feff}/x/m",
    ] {
        let text = format!(
            r#"{{"entities": [{{"name": "Mira", "keywords": ["{key}"], "content": "x"}}]}}"#
        );
        let LoreAnswer::Entities { entities, .. } =
            parse_answer(JobKind::LoreExtract, &text).unwrap()
        else {
            panic!("an extraction");
        };
        for stored in &entities[0].keywords {
            assert!(!is_regex_shaped(stored), "{key} gave {stored}");
        }
    }
}

mod properties;
