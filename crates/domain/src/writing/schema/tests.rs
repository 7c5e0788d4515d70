//! Tests of [`super::answer_schema`]: each kind's schema allows what the
//! parser accepts, and a detection's allows only the breaks it showed.

use serde_json::{Value, json};

use super::*;
use crate::lore::prepare::LoreInput;
use crate::writing::answer::{Answer, parse_answer};
use crate::writing::prepare::prepare;
use crate::writing::tests::test_chat::{chat, settings};

fn lines(text: &str) -> usize {
    text.lines().count()
}

#[test]
fn a_detection_schema_allows_the_valid_breaks_it_shows_or_false() {
    // 12 messages, offset 3, at least 4 before a break: #4..=#8 are valid.
    let c = chat(12).build();
    let s = settings(3, 4);
    let p = prepare(
        JobKind::DetectSceneBreak,
        &c,
        &s,
        "",
        &LoreInput::default(),
        &lines,
    )
    .unwrap();
    assert_eq!(p.schema_name, "scene_break");
    let allowed = &p.schema["properties"]["scene_break_at"]["anyOf"];
    assert_eq!(
        allowed,
        &json!([{"type": "integer", "enum": [4, 5, 6, 7, 8]}, {"type": "boolean", "enum": [false]}])
    );
    assert_eq!(p.schema["required"], json!(["rationale", "scene_break_at"]));
    assert_eq!(p.schema["additionalProperties"], json!(false));
    // Every number the schema allows parses as that break.
    let candidates = p.candidates.as_ref();
    for n in [4, 5, 6, 7, 8] {
        let answer = json!({"rationale": "r", "scene_break_at": n}).to_string();
        match parse_answer(JobKind::DetectSceneBreak, &answer, candidates) {
            Ok(Answer::Break(c)) => assert_eq!(c.index, n),
            other => panic!("#{n}: {other:?}"),
        }
    }
    // A number it leaves out (not eligible, or before the earliest break)
    // is one the parser refuses too.
    for n in [3, 9] {
        let answer = json!({"rationale": "r", "scene_break_at": n}).to_string();
        assert!(parse_answer(JobKind::DetectSceneBreak, &answer, candidates).is_err());
    }
}

#[test]
fn a_detection_without_candidates_allows_only_false() {
    let (_, schema) = answer_schema(JobKind::DetectSceneBreak, &Settings::default(), None);
    assert_eq!(
        schema["properties"]["scene_break_at"]["anyOf"],
        json!([{"type": "boolean", "enum": [false]}])
    );
}

#[test]
fn recap_schemas_bound_their_texts_by_the_answer_limit() {
    let s = {
        let mut settings = Settings::default();
        settings.writing.llm_max_tokens = 300;
        settings
    };
    for (kind, name) in [
        (JobKind::SceneRecap, "scene_recap"),
        (JobKind::RunningRecap, "running_recap"),
        (JobKind::MessageRecap, "message_recap"),
    ] {
        let (got, schema) = answer_schema(kind, &s, None);
        assert_eq!(got, name);
        let recap = &schema["properties"]["recap"];
        assert_eq!(recap["minLength"], json!(1), "{name}");
        assert_eq!(
            recap["maxLength"],
            json!(1200),
            "{name}: 4 characters a token"
        );
        assert_eq!(schema["additionalProperties"], json!(false));
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let properties: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(required, properties, "{name}: every property is required");
    }
    let (_, scene) = answer_schema(JobKind::SceneRecap, &s, None);
    assert_eq!(
        scene["properties"]["scene_name"],
        json!({"type": "string", "minLength": 1, "maxLength": SCENE_NAME_MAX_CHARS})
    );
}
