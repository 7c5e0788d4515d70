//! Tests of [`super::prepare`] and [`super::read_unchanged`].

use super::*;
use crate::chat::ChatEvent;
use crate::message::MessageData;
use crate::recaps::NewRecap;
use crate::time::UnixMillis;
use crate::writing::tests::test_chat::{chat, settings};

/// One token per line: easy sums in the bound tests.
fn lines(text: &str) -> usize {
    text.lines().count()
}

fn run(kind: JobKind, c: &Chat, s: &Settings, id: &str) -> Result<Prepared, PrepareError> {
    prepare(kind, c, s, id, &LoreInput::default(), &lines)
}

fn detect_settings(offset: u32, min: u32, prompt: &str) -> Settings {
    {
        let mut settings = settings(offset, min);
        settings.writing.scene_break_prompt = prompt.to_owned();
        settings
    }
}

fn read_ids(p: &Prepared) -> Vec<&str> {
    p.read.messages.iter().map(|(id, _)| id.as_str()).collect()
}

fn shown(p: &Prepared) -> Vec<usize> {
    p.candidates
        .as_ref()
        .map(|c| c.list.iter().map(|c| c.index).collect())
        .unwrap_or_default()
}

#[test]
fn a_detection_prompt_lists_the_open_scene_and_reads_what_it_shows() {
    let c = chat(9)
        .breaks(&[2])
        .text(4, "two\nlines")
        .hidden(&[5])
        .thoughts(&[6])
        .build();
    let s = detect_settings(
        1,
        2,
        "from #{{earliest_allowed_break}} ({{user}}/{{char}}):\n{{messages}}\n{{scene_recap}}",
    );
    let p = run(JobKind::DetectSceneBreak, &c, &s, "").unwrap();
    assert_eq!(
        p.request,
        "from #7 (Ann/Bob):\n#3 Bob: text 3\n#4 Ann: two lines\n#7 Bob: text 7\n#8 (not eligible) Ann: text 8\n{{scene_recap}}"
    );
    assert_eq!(read_ids(&p), ["m3", "m4", "m7", "m8"]);
    let (_, m4) = c.message("m4").unwrap();
    assert_eq!(p.read.messages[1].1, fingerprint(m4));
    assert_eq!((p.read.recap_version, p.read.scene_recap), (None, None));
    assert_eq!(p.message_id, "m8", "the newest candidate");
    assert_eq!(shown(&p), [3, 4, 7, 8]);
}

#[test]
fn a_detection_without_a_possible_break_has_nothing_to_do_and_is_never_gone() {
    // offset 2, min 3: six candidates are needed.
    let s = detect_settings(2, 3, "{{messages}}");
    let five = chat(5).build();
    assert!(matches!(
        run(JobKind::DetectSceneBreak, &five, &s, "missing"),
        Err(PrepareError::NothingToDo(_))
    ));
    let six = chat(6).build();
    assert!(run(JobKind::DetectSceneBreak, &six, &s, "missing").is_ok());
    // A hidden message does not count towards the six.
    let hidden = chat(6).hidden(&[0]).build();
    assert!(matches!(
        run(JobKind::DetectSceneBreak, &hidden, &s, ""),
        Err(PrepareError::NothingToDo(_))
    ));
}

#[test]
fn an_over_long_detection_drops_its_oldest_candidates_keeping_eligibility() {
    // 20 candidates, offset 2, min 3: the prompt is one line per candidate.
    let c = chat(20).build();
    let mut s = detect_settings(2, 3, "{{messages}}");
    s.writing.llm_max_tokens = 100;
    s.inclusion.max_context_tokens = Some(110);
    let p = run(JobKind::DetectSceneBreak, &c, &s, "").unwrap();
    assert_eq!(shown(&p), (10..20).collect::<Vec<_>>());
    assert_eq!(lines(&p.request), 10);
    assert_eq!(read_ids(&p).first(), Some(&"m10"));
    let candidates = p.candidates.unwrap();
    assert_eq!(
        candidates.earliest_allowed_break,
        Some(3),
        "the whole scene's"
    );
    assert_eq!(candidates.eligible_count(), 8);
    assert!(
        p.request
            .ends_with("#18 (not eligible) Ann: text 18\n#19 (not eligible) Bob: text 19")
    );
    assert!(candidates.valid_break(10).is_some());
    assert!(candidates.valid_break(9).is_none(), "dropped");

    // Six lines is the least: min + 1 eligible and the two ineligible.
    s.inclusion.max_context_tokens = Some(106);
    let p = run(JobKind::DetectSceneBreak, &c, &s, "").unwrap();
    assert_eq!(shown(&p), (14..20).collect::<Vec<_>>());
    s.inclusion.max_context_tokens = Some(105);
    let err = run(JobKind::DetectSceneBreak, &c, &s, "").unwrap_err();
    let PrepareError::TooLong(reason) = err else {
        panic!("expected TooLong, got {err:?}");
    };
    assert!(reason.contains("needs 6 tokens"), "{reason}");
    assert!(reason.contains("allows 5"), "{reason}");
    assert!(
        reason.contains("newest 6 of the open scene's 20"),
        "{reason}"
    );

    // Without max_context_tokens nothing is dropped.
    s.inclusion.max_context_tokens = None;
    assert_eq!(
        shown(&run(JobKind::DetectSceneBreak, &c, &s, "").unwrap()).len(),
        20
    );
}

#[test]
fn an_answer_budget_larger_than_the_context_leaves_no_room() {
    let c = chat(20).build();
    let mut s = detect_settings(2, 3, "{{messages}}");
    s.writing.llm_max_tokens = 2000;
    s.inclusion.max_context_tokens = Some(1000);
    assert!(matches!(
        run(JobKind::DetectSceneBreak, &c, &s, ""),
        Err(PrepareError::TooLong(_))
    ));
}

fn scene_settings(prompt: &str) -> Settings {
    {
        let mut settings = Settings::default();
        settings.writing.scene_recap_prompt = prompt.to_owned();
        settings
    }
}

#[test]
fn a_scene_recap_shows_the_scene_after_the_previous_break_through_its_own() {
    let c = chat(10)
        .breaks(&[2, 6])
        .text(3, "a {{char}}\r\nb")
        .hidden(&[4])
        .thoughts(&[5])
        .build();
    let s = scene_settings("[{{scene_messages}}] {{messages}} {{char}}");
    let p = run(JobKind::SceneRecap, &c, &s, "m6").unwrap();
    assert_eq!(
        p.request,
        "[Bob: a {{char}} b\nAnn: text 6] {{messages}} Bob"
    );
    assert_eq!(read_ids(&p), ["m3", "m6"]);
    assert_eq!(p.message_id, "m6");
    assert_eq!(p.candidates, None);
    // The first scene starts at the chat's start.
    let p = run(JobKind::SceneRecap, &c, &s, "m2").unwrap();
    assert_eq!(read_ids(&p), ["m0", "m1", "m2"]);
}

#[test]
fn a_scene_recap_ignores_auto_hide_and_reads_a_hidden_break() {
    let c = chat(12).breaks(&[2, 6, 9]).hidden(&[6]).build();
    let mut s = scene_settings("{{scene_messages}}");
    s.inclusion.auto_hide_scene_count = 1;
    let p = run(JobKind::SceneRecap, &c, &s, "m6").unwrap();
    assert_eq!(p.request, "Bob: text 3\nAnn: text 4\nBob: text 5");
    assert_eq!(read_ids(&p), ["m3", "m4", "m5", "m6"], "the break too");
}

#[test]
fn a_scene_recap_needs_a_visible_break_with_visible_messages() {
    let c = chat(8)
        .breaks(&[2, 5])
        .invisible_breaks(&[7])
        .hidden(&[3, 4, 5])
        .build();
    let s = Settings::default();
    let gone = |id: &str| {
        matches!(
            run(JobKind::SceneRecap, &c, &s, id),
            Err(PrepareError::Gone(_))
        )
    };
    assert!(gone("m9"), "missing");
    assert!(gone("m6"), "not a break");
    assert!(gone("m7"), "an invisible break");
    let err = run(JobKind::SceneRecap, &c, &s, "m6").unwrap_err();
    assert!(err.reason().contains("no longer a scene break"), "{err}");
    assert!(matches!(
        run(JobKind::SceneRecap, &c, &s, "m5"),
        Err(PrepareError::NothingToDo(_))
    ));
}

fn merge_settings(prompt: &str) -> Settings {
    {
        let mut settings = Settings::default();
        settings.writing.running_recap_prompt = prompt.to_owned();
        settings
    }
}

#[test]
fn a_merge_shows_its_base_and_scene_recap_and_reads_both() {
    let c = chat(10)
        .breaks(&[2, 5])
        .scene_recap(5, "Bob left {{user}}.")
        .recap("Ann met Bob.", Some(2), 1)
        .build();
    let s = merge_settings("<{{current_running_recap}}|{{scene_recap}}|{{user}}>");
    let p = run(JobKind::RunningRecap, &c, &s, "m5").unwrap();
    assert_eq!(p.request, "<Ann met Bob.|Bob left {{user}}.|Ann>");
    assert_eq!(read_ids(&p), ["m5"]);
    assert_eq!(p.read.recap_version, Some(0));
    assert_eq!(
        p.read.scene_recap,
        Some(fingerprint_text("Bob left {{user}}."))
    );

    let first = chat(4).breaks(&[2]).scene_recap(2, "r").build();
    let p = run(JobKind::RunningRecap, &first, &s, "m2").unwrap();
    assert_eq!(p.request, "<|r|Ann>");
    assert_eq!(p.read.recap_version, None);
}

#[test]
fn a_merge_needs_a_visible_break_with_a_scene_recap() {
    let c = chat(6)
        .breaks(&[2, 4])
        .scene_recap(3, "not a break")
        .scene_recap(4, "")
        .build();
    let s = Settings::default();
    let run = |id: &str| run(JobKind::RunningRecap, &c, &s, id);
    assert!(matches!(run("m9"), Err(PrepareError::Gone(_))));
    assert!(matches!(run("m3"), Err(PrepareError::Gone(_))));
    assert!(
        matches!(run("m2"), Err(PrepareError::NothingToDo(_))),
        "no scene recap"
    );
    assert!(
        matches!(run("m4"), Err(PrepareError::NothingToDo(_))),
        "an empty one"
    );
}

#[test]
fn a_message_recap_shows_the_text_as_written() {
    let c = chat(4)
        .text(2, "Line one\nsays {{char}}")
        .text(3, "  \n")
        .build();
    let s = {
        let mut settings = Settings::default();
        settings.writing.message_recap_prompt = "{{char}}: {{message}}".to_owned();
        settings
    };
    let p = run(JobKind::MessageRecap, &c, &s, "m2").unwrap();
    assert_eq!(p.request, "Bob: Line one\nsays {{char}}");
    assert_eq!(read_ids(&p), ["m2"]);
    assert!(matches!(
        run(JobKind::MessageRecap, &c, &s, "m9"),
        Err(PrepareError::Gone(_))
    ));
    assert!(matches!(
        run(JobKind::MessageRecap, &c, &s, "m3"),
        Err(PrepareError::NothingToDo(_))
    ));
}

#[test]
fn other_kinds_fail_over_the_bound_instead_of_shortening() {
    let c = chat(6).breaks(&[4]).scene_recap(4, "r").build();
    let mut s = {
        let mut settings = Settings::default();
        settings.writing.scene_recap_prompt = "{{scene_messages}}".to_owned();
        settings.writing.running_recap_prompt = "a\nb\n{{scene_recap}}".to_owned();
        settings.writing.message_recap_prompt = "a\nb\n{{message}}".to_owned();
        settings.writing.llm_max_tokens = 10;
        settings.inclusion.max_context_tokens = Some(13);
        settings
    };
    // The scene has five lines, the others three: a limit of 3.
    let err = run(JobKind::SceneRecap, &c, &s, "m4").unwrap_err();
    assert_eq!(
        err,
        PrepareError::TooLong(
            "the prompt needs 5 tokens; max_context_tokens 13 - llm_max_tokens 10 allows 3".into()
        )
    );
    assert!(run(JobKind::RunningRecap, &c, &s, "m4").is_ok());
    assert!(run(JobKind::MessageRecap, &c, &s, "m1").is_ok());
    s.inclusion.max_context_tokens = Some(12);
    assert!(matches!(
        run(JobKind::RunningRecap, &c, &s, "m4"),
        Err(PrepareError::TooLong(_))
    ));
    assert!(matches!(
        run(JobKind::MessageRecap, &c, &s, "m1"),
        Err(PrepareError::TooLong(_))
    ));
}

#[test]
fn what_was_read_goes_stale_on_edits_but_not_on_new_messages() {
    let mut c = chat(8).breaks(&[2]).build();
    let s = scene_settings("{{scene_messages}}");
    let p = run(JobKind::SceneRecap, &c, &s, "m2").unwrap();
    assert!(read_unchanged(JobKind::SceneRecap, &p.read, &c, "m2"));
    c.apply(ChatEvent::MessageSent(crate::chat::tests::msg("m8", "new")))
        .unwrap();
    assert!(read_unchanged(JobKind::SceneRecap, &p.read, &c, "m2"));
    c.apply(ChatEvent::MessageEdited {
        message_id: "m1".into(),
        text: "edited".into(),
    })
    .unwrap();
    assert!(!read_unchanged(JobKind::SceneRecap, &p.read, &c, "m2"));
}

#[test]
fn a_merge_goes_stale_when_its_base_or_scene_recap_changes() {
    let c = chat(10)
        .breaks(&[2, 5])
        .scene_recap(2, "first")
        .scene_recap(5, "second")
        .recap("v0", Some(2), 1)
        .build();
    let s = Settings::default();
    let p = run(JobKind::RunningRecap, &c, &s, "m5").unwrap();
    assert!(read_unchanged(JobKind::RunningRecap, &p.read, &c, "m5"));

    let mut rebased = c.clone();
    rebased
        .add_recap(
            NewRecap {
                content: "v0 again".into(),
                scene_count: 1,
                new_scene_message_id: Some("m2".into()),
                ..NewRecap::default()
            },
            UnixMillis(0),
        )
        .unwrap();
    assert!(!read_unchanged(
        JobKind::RunningRecap,
        &p.read,
        &rebased,
        "m5"
    ));

    let mut rewritten = c.clone();
    let data = MessageData {
        scene_recap_memory: Some("second, rewritten".into()),
        ..MessageData::default()
    };
    rewritten.set_message_data("m5", &data).unwrap();
    assert!(!read_unchanged(
        JobKind::RunningRecap,
        &p.read,
        &rewritten,
        "m5"
    ));

    // A version of a later scene is no base of this merge.
    let mut later = c.clone();
    later
        .add_recap(
            NewRecap {
                content: "later".into(),
                new_scene_message_id: Some("m9".into()),
                ..NewRecap::default()
            },
            UnixMillis(0),
        )
        .unwrap();
    assert!(read_unchanged(JobKind::RunningRecap, &p.read, &later, "m5"));
}
