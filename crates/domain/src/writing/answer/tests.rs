//! Tests of [`super::parse_answer`].

use super::*;
use crate::writing::candidates::detection_candidates;
use crate::writing::tests::test_chat::{chat, settings};

/// Twelve candidates m0..m11; offset 3, min 4: eligible 0..=8, earliest 4,
/// valid breaks 4..=8.
fn twelve() -> Candidates {
    detection_candidates(&chat(12).build(), &settings(3, 4))
}

fn detect(text: &str) -> Result<Answer, String> {
    parse_answer(JobKind::DetectSceneBreak, text, Some(&twelve()))
}

fn break_at(answer: Result<Answer, String>) -> usize {
    match answer {
        Ok(Answer::Break(candidate)) => candidate.index,
        other => panic!("expected a break, got {other:?}"),
    }
}

fn recap(kind: JobKind, text: &str) -> Result<Answer, String> {
    parse_answer(kind, text, None)
}

#[test]
fn a_plain_break_resolves_against_the_snapshot() {
    let answer = detect(r#"{"scene_break_at": 6, "rationale": "they leave"}"#);
    let Ok(Answer::Break(candidate)) = answer else {
        panic!("expected a break, got {answer:?}");
    };
    assert_eq!((candidate.index, candidate.message_id.as_str()), (6, "m6"));
}

#[test]
fn no_break_keeps_the_rationale_which_is_optional() {
    assert_eq!(
        detect(r#"{"scene_break_at": false, "rationale": "  still talking "}"#),
        Ok(Answer::NoBreak {
            rationale: "still talking".into()
        })
    );
    assert_eq!(
        detect(r#"{"scene_break_at": false}"#),
        Ok(Answer::NoBreak {
            rationale: String::new()
        })
    );
    assert_eq!(
        detect(r#"{"scene_break_at": "false", "rationale": 3}"#),
        Ok(Answer::NoBreak {
            rationale: String::new()
        })
    );
}

#[test]
fn the_extensions_key_and_numbers_in_strings_or_with_a_zero_fraction_are_accepted() {
    assert_eq!(break_at(detect(r#"{"sceneBreakAt": 5}"#)), 5);
    assert_eq!(break_at(detect(r#"{"scene_break_at": "7"}"#)), 7);
    assert_eq!(break_at(detect(r#"{"scene_break_at": " 8 "}"#)), 8);
    assert_eq!(break_at(detect(r##"{"scene_break_at": "#6"}"##)), 6);
    assert_eq!(break_at(detect(r#"{"scene_break_at": 4.0}"#)), 4);
    // Ours wins when both are there.
    assert_eq!(
        break_at(detect(r#"{"sceneBreakAt": 5, "scene_break_at": 6}"#)),
        6
    );
}

#[test]
fn anything_but_false_or_a_whole_number_is_refused() {
    for (text, expected) in [
        (r#"{"rationale": "no key"}"#, "has no scene_break_at"),
        (r#"{"scene_break_at": true}"#, "not true"),
        (r#"{"scene_break_at": null}"#, "not null"),
        (r#"{"scene_break_at": -5}"#, "-5 is negative"),
        (r#"{"scene_break_at": -5.0}"#, "is negative"),
        (r#"{"scene_break_at": 5.5}"#, "5.5 is not a whole number"),
        (r#"{"scene_break_at": 1e300}"#, "is too large"),
        (r#"{"scene_break_at": "five"}"#, r#"not "five""#),
        (r#"{"scene_break_at": "-5"}"#, r#"not "-5""#),
        (r###"{"scene_break_at": "##5"}"###, r###"not "##5""###),
        (r#"{"scene_break_at": [5]}"#, "not [5]"),
    ] {
        let err = detect(text).unwrap_err();
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn an_invalid_break_names_the_number_and_the_valid_range() {
    for (n, why) in [
        (3, "#3 is before the earliest allowed break #4"),
        (9, "#9 is marked not eligible"),
        (12, "#12 is not one of the messages shown"),
    ] {
        let err = detect(&format!(r#"{{"scene_break_at": {n}}}"#)).unwrap_err();
        assert_eq!(
            err,
            format!(
                "scene_break_at {n} is not a valid break: {why}; valid: an eligible message from #4 to #8"
            )
        );
    }
    let one = detection_candidates(&chat(8).build(), &settings(3, 4));
    let err = parse_answer(
        JobKind::DetectSceneBreak,
        r#"{"scene_break_at": 5}"#,
        Some(&one),
    )
    .unwrap_err();
    assert!(err.ends_with("valid: #4"), "{err}");
    let err =
        parse_answer(JobKind::DetectSceneBreak, r#"{"scene_break_at": 5}"#, None).unwrap_err();
    assert!(err.contains("no candidates"), "{err}");
}

#[test]
fn the_object_is_found_in_fences_and_prose() {
    let fenced = "Here you go:\n```json\n{\"scene_break_at\": 5}\n```\nHope it helps.";
    assert_eq!(break_at(detect(fenced)), 5);
    let bare_fence = "```\n{\"scene_break_at\": 6}\n```";
    assert_eq!(break_at(detect(bare_fence)), 6);
    let prose =
        "I think the scene ends at {\"scene_break_at\": 7, \"rationale\": \"a {new} day\"}. Done";
    assert_eq!(break_at(detect(prose)), 7);
    // Braces in prose and in strings do not confuse the search.
    let braces = "Note {this} and {\"rationale\": \"}{ {\", \"scene_break_at\": 8} trailing }";
    assert_eq!(break_at(detect(braces)), 8);
}

#[test]
fn an_object_with_the_kinds_key_wins_over_others_and_reasoning_is_ignored() {
    let text = "Example shape: {\"x\": 1}\n{\"scene_break_at\": 5}";
    assert_eq!(break_at(detect(text)), 5);
    let thinking = "<think>maybe {\"scene_break_at\": 4}?</think>\n{\"scene_break_at\": 6}";
    assert_eq!(break_at(detect(thinking)), 6);
    let fence_first = "{\"scene_break_at\": 4}\n```json\n{\"scene_break_at\": 8}\n```";
    assert_eq!(
        break_at(detect(fence_first)),
        8,
        "a fenced object is preferred"
    );
    // A fenced block that is not one object falls back to the search.
    let broken_fence = "```json\nsure: {\"scene_break_at\": 7}\n```";
    assert_eq!(break_at(detect(broken_fence)), 7);
}

#[test]
fn empty_malformed_and_keyless_answers_say_why() {
    assert_eq!(detect("").unwrap_err(), "the answer is empty");
    assert_eq!(detect(" \n ").unwrap_err(), "the answer is empty");
    assert_eq!(
        detect("<think>hm</think>").unwrap_err(),
        "the answer is empty"
    );
    assert_eq!(
        detect("{\"scene_break_at\": 5").unwrap_err(),
        "no JSON object in the answer: {\"scene_break_at\": 5"
    );
    assert_eq!(
        detect("I cannot tell.").unwrap_err(),
        "no JSON object in the answer: I cannot tell."
    );
    assert_eq!(
        detect("{\"break\": 5}").unwrap_err(),
        "the answer's JSON has no scene_break_at: {\"break\": 5}"
    );
}

#[test]
fn reasons_quote_at_most_a_short_excerpt() {
    let long = format!("no json here {}", "é".repeat(5000));
    let err = detect(&long).unwrap_err();
    assert!(err.chars().count() < EXCERPT_CHARS + 60, "{}", err.len());
    assert!(err.ends_with('…'));
    let long_value = format!(r#"{{"scene_break_at": "{}"}}"#, "x".repeat(5000));
    assert!(detect(&long_value).unwrap_err().chars().count() < EXCERPT_CHARS + 80);
}

#[test]
fn a_scene_recap_needs_a_recap_and_takes_an_optional_name() {
    assert_eq!(
        recap(
            JobKind::SceneRecap,
            "```json\n{\"scene_name\": \" The Inn \", \"recap\": \" They met.\\nThey ate. \"}\n```"
        ),
        Ok(Answer::SceneRecap {
            name: "The Inn".into(),
            recap: "They met.\nThey ate.".into()
        })
    );
    assert_eq!(
        recap(JobKind::SceneRecap, r#"{"recap": "r"}"#),
        Ok(Answer::SceneRecap {
            name: String::new(),
            recap: "r".into()
        })
    );
    for (text, expected) in [
        (r#"{"scene_name": "n"}"#, "has no recap"),
        (r#"{"scene_name": "n", "recap": "  "}"#, "recap is empty"),
        (
            r#"{"scene_name": 5, "recap": "r"}"#,
            "scene_name must be a string, not 5",
        ),
        (
            r#"{"scene_name": "n", "recap": ["a"]}"#,
            r#"recap must be a string, not ["a"]"#,
        ),
    ] {
        let err = recap(JobKind::SceneRecap, text).unwrap_err();
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn merges_and_message_recaps_answer_a_recap() {
    for kind in [JobKind::RunningRecap, JobKind::MessageRecap] {
        assert_eq!(
            recap(
                kind,
                "Sure!\n{\"recap\": \"Ann {and} Bob\"}\nAnything else?"
            ),
            Ok(Answer::Recap("Ann {and} Bob".into()))
        );
        assert!(recap(kind, r#"{"recap": ""}"#).is_err());
        assert!(recap(kind, r#"{"summary": "x"}"#).is_err());
        assert!(recap(kind, "").is_err());
    }
}

#[test]
fn a_pathological_answer_is_handled_quickly() {
    let started = std::time::Instant::now();
    let braces = "{".repeat(200_000);
    assert!(detect(&braces).is_err());
    let nested = "{\"a\":".repeat(50_000);
    assert!(detect(&nested).is_err());
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(detect(&format!("{{\"scene_break_at\": {deep}}}")).is_err());
    // Debug builds take well under a second; the bound is for slow CI.
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn many_stray_braces_before_the_answer_do_not_hide_it() {
    let text = format!("{} {{\"scene_break_at\": 5}}", "{x} {\"a\": ".repeat(2_000));
    assert_eq!(break_at(detect(&text)), 5);
}

#[test]
fn an_answer_without_any_json_object_is_told_from_one_off_its_schema() {
    assert!(!holds_json_object("Sure! Here is the recap: they met."));
    assert!(!holds_json_object(
        "<think>{\"recap\": \"x\"}</think> no JSON here"
    ));
    assert!(holds_json_object("```json\n{\"other\": 1}\n```"));
    assert!(holds_json_object("text {\"other\": 1} text"));
}
