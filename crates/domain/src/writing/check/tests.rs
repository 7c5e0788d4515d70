//! Tests of [`super::AnswerCheck`]: the answers a real small model gave
//! that must never land (its instructions' placeholders, macros, a merge
//! that lost the story), and the ones that must.

use super::*;
use crate::settings::Settings;
use crate::writing::candidates::Candidate;

fn recap(text: &str) -> Answer {
    Answer::Recap(text.to_owned())
}

/// A scene recap's instructions as recapd's first defaults wrote them:
/// the answer as a template with placeholders.
const TEMPLATED_SCENE: &str = r#"Recap the scene. {{scene_messages}}
Reply with JSON only, in this form:
{"scene_name": "<a title of at most six words>", "recap": "<the recap>"}"#;

/// A merge's instructions in the same style.
const TEMPLATED_MERGE: &str = r#"Fold {{scene_recap}} into {{current_running_recap}}.
Reply with JSON only, in this form:
{"recap": "<the new memory>"}"#;

#[test]
fn placeholders_are_found_and_the_defaults_offer_none_to_copy() {
    assert_eq!(
        placeholders(TEMPLATED_SCENE),
        ["<a title of at most six words>", "<the recap>"]
    );
    assert_eq!(placeholders(TEMPLATED_MERGE), ["<the new memory>"]);
    assert!(placeholders("a </think> b <\nc> d <x").is_empty());
    let s = Settings::default();
    for instructions in [
        &s.writing.scene_break_prompt,
        &s.writing.scene_recap_prompt,
        &s.writing.running_recap_prompt,
        &s.writing.message_recap_prompt,
    ] {
        assert_eq!(placeholders(instructions), Vec::<String>::new());
    }
}

#[test]
fn a_placeholder_answer_is_unusable_with_or_without_brackets_or_case() {
    let merge = merge_check(TEMPLATED_MERGE, "", "A short scene.", 0, 4096);
    // SmolLM2-135M, constrained to the schema, answered this to a merge.
    for answer in ["<the new memory>", "The new memory", " <THE NEW MEMORY> "] {
        let reason = merge.check(&recap(answer)).unwrap_err();
        assert!(reason.contains("placeholder"), "{answer}: {reason}");
    }
    // Anything shaped like a placeholder, even one the prompt lacks.
    let reason = merge.check(&recap("<the scene's recap>")).unwrap_err();
    assert!(reason.contains("placeholder"), "{reason}");
    let scene = check_for(JobKind::SceneRecap, TEMPLATED_SCENE);
    let named = |name: &str, text: &str| Answer::SceneRecap {
        name: name.into(),
        recap: text.into(),
    };
    let reason = scene
        .check(&named("<a title of at most six words>", "Ann met Bob."))
        .unwrap_err();
    assert!(reason.contains("scene_name"), "{reason}");
    assert!(scene.check(&named("The Meeting", "<the recap>")).is_err());
    assert_eq!(
        scene.check(&named("", "Ann met Bob.")),
        Ok(()),
        "a prompt may ask for no name"
    );
    assert_eq!(scene.check(&named("The Meeting", "Ann met Bob.")), Ok(()));
    // A name may look like markup; a one-word placeholder refuses only
    // itself with its brackets.
    assert_eq!(scene.check(&named("<Untitled>", "Ann met Bob.")), Ok(()));
    let alice = check_for(JobKind::SceneRecap, "Call him <Alice>. {{scene_messages}}");
    assert_eq!(alice.check(&named("Alice", "Ann met Bob.")), Ok(()));
    assert!(alice.check(&named("<Alice>", "Ann met Bob.")).is_err());
}

#[test]
fn an_unreplaced_macro_is_unusable_and_other_braces_are_not() {
    let check = check_for(JobKind::MessageRecap, "Recap: {{message}} <the recap>");
    let reason = check.check(&recap("{{char}} went home.")).unwrap_err();
    assert!(reason.contains("unreplaced macro"), "{reason}");
    // The reason is recapd's own words: a job's error never quotes the
    // answer.
    assert!(!reason.contains("char"), "{reason}");
    assert!(
        check
            .check(&recap("Bob drew {{ and }} on the wall."))
            .is_ok()
    );
    assert!(check.check(&recap("A {set} of <b>tags</b>.")).is_ok());
}

#[test]
fn a_merge_shorter_than_the_ratio_of_what_it_builds_on_is_unusable() {
    let base = "x".repeat(900);
    let scene = "y".repeat(100);
    let check = merge_check("<the new memory>", &base, &scene, 200, 4096);
    assert_eq!(check.min_recap_chars, 200);
    let reason = check.check(&recap(&"z".repeat(199))).unwrap_err();
    assert!(
        reason.contains("199 characters") && reason.contains("running_recap_min_ratio 0.2"),
        "{reason}"
    );
    assert_eq!(check.check(&recap(&"z".repeat(200))), Ok(()));
    // 0 turns the length check off; the placeholder check stays.
    let off = merge_check("<the new memory>", &base, &scene, 0, 4096);
    assert_eq!(off.check(&recap("Short.")), Ok(()));
    assert!(off.check(&recap("<the new memory>")).is_err());
    // Never more than the answer may hold.
    let capped = merge_check("", &base, &scene, 1000, 300);
    assert_eq!(capped.min_recap_chars, 300);
    assert!(capped.check(&recap(&"z".repeat(300))).is_ok());
    let reason = capped.check(&recap(&"z".repeat(299))).unwrap_err();
    assert!(
        reason.contains("capped at the answer's limit of 300"),
        "{reason}"
    );
}

#[test]
fn detections_are_not_checked() {
    let check = check_for(JobKind::DetectSceneBreak, "<one sentence>");
    assert_eq!(
        check.check(&Answer::NoBreak {
            rationale: "<one sentence>".into()
        }),
        Ok(())
    );
    let candidate = Candidate {
        index: 3,
        message_id: "m3".into(),
        name: "Ann".into(),
        text: "t".into(),
        eligible: true,
    };
    assert_eq!(check.check(&Answer::Break(candidate)), Ok(()));
}
