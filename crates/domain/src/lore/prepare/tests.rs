//! Tests of [`super::prepare`] and [`super::scene_unchanged`].

use super::*;
use crate::lore::edit::{LOCKED_FIELD, LoreLimits, create_entry};
use crate::world_info::book::BookLimits;
use crate::writing::tests::test_chat::{chat, settings};

const LIMITS: LoreLimits = LoreLimits {
    max_entries: 100,
    max_keys: 10,
    book: BookLimits {
        max_entries: 1000,
        max_key_bytes: 1024,
        max_content_bytes: 100_000,
        max_book_bytes: usize::MAX,
    },
};

fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

fn entity(kind: &str, name: &str, content: &[&str]) -> Entity {
    Entity {
        kind: kind.into(),
        name: name.into(),
        keywords: vec![],
        content: content.iter().map(|c| (*c).to_owned()).collect(),
    }
}

/// A chat of six messages with a visible break at m2 and at m5 (whose
/// scene recap is "They met at the inn."), and settings with short prompts.
fn story() -> (Chat, Settings) {
    let c = chat(6)
        .breaks(&[2, 5])
        .text(3, "Mira drew her sword.")
        .hidden(&[4])
        .scene_recap(5, "They met at the inn.")
        .build();
    let s = {
        let mut settings = settings(1, 1);
        settings.lore.extract_prompt =
            "{{scene_messages}}|{{scene_recap}}|{{lore_entity_types}}|{{user}}/{{char}}".into();
        settings.lore.resolve_prompt =
            "{{entity_type}} {{entity_name}}: {{entity}}\n{{lore_registry}}".into();
        settings.lore.merge_prompt = "{{entity_name}}\n{{entry}}\n+\n{{entity}}".into();
        settings.lore.compact_prompt = "{{entity_type}} {{entity_name}}: {{entry}}".into();
        settings
    };
    (c, s)
}

fn book_with_mira() -> (Book, String) {
    let mut book = Book::empty();
    let uid = create_entry(
        &mut book,
        &entity(
            "character",
            "Mira",
            &["Mira is an apprentice.", "She has a scar."],
        ),
        &Settings::default().lore.entity_types,
        &LIMITS,
    )
    .unwrap();
    (book, uid)
}

#[test]
fn an_extraction_reads_the_scene_its_recap_and_the_types() {
    let (c, s) = story();
    let p = prepare(
        JobKind::LoreExtract,
        &c,
        &s,
        "m5",
        &LoreInput::default(),
        &words,
    )
    .unwrap();
    let parts: Vec<&str> = p.request.split('|').collect();
    assert_eq!(parts[0], "Bob: Mira drew her sword.\nBob: text 5");
    assert_eq!(parts[1], "They met at the inn.");
    assert!(parts[2].starts_with("- character: "), "{}", parts[2]);
    assert_eq!(parts[2].lines().count(), 8);
    assert_eq!(parts[3], "Ann/Bob");
    let read: Vec<&str> = p.read.messages.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(read, ["m3", "m5"]);
    assert_eq!(
        p.read.scene_recap,
        Some(fingerprint_text("They met at the inn."))
    );
    assert_eq!(p.schema_name, "lore_extract");
    assert!(scene_unchanged(&p.read, &c, "m5"));
    let edited = chat(6)
        .breaks(&[2, 5])
        .text(3, "Mira drew her sword.")
        .hidden(&[4])
        .scene_recap(5, "They fought at the inn.")
        .build();
    assert!(!scene_unchanged(&p.read, &edited, "m5"));
}

#[test]
fn a_lore_job_on_a_message_that_is_no_break_is_gone() {
    let (c, s) = story();
    for kind in [
        JobKind::LoreExtract,
        JobKind::LoreMerge,
        JobKind::LoreCompact,
    ] {
        let err = prepare(kind, &c, &s, "m4", &LoreInput::default(), &words).unwrap_err();
        assert!(matches!(err, PrepareError::Gone(_)), "{kind:?}: {err:?}");
        let err = prepare(kind, &c, &s, "m99", &LoreInput::default(), &words).unwrap_err();
        assert!(matches!(err, PrepareError::Gone(_)), "{kind:?}: {err:?}");
    }
}

#[test]
fn a_resolution_lists_the_candidates_first_and_allows_only_their_uids() {
    let (c, s) = story();
    let (mut book, mira) = book_with_mira();
    let inn = create_entry(
        &mut book,
        &entity("location", "Inn", &["An inn."]),
        &s.lore.entity_types,
        &LIMITS,
    )
    .unwrap();
    let task = LoreTask {
        entity: Some(entity("character", "Captain Mira", &["Leads the guard."])),
        candidates: vec![mira.clone()],
        ..LoreTask::default()
    };
    let input = LoreInput {
        task: Some(&task),
        book: Some(&book),
        book_name: "b",
    };
    let p = prepare(JobKind::LoreResolve, &c, &s, "m5", &input, &words).unwrap();
    let mut lines = p.request.lines();
    assert_eq!(
        lines.next(),
        Some("character Captain Mira: Leads the guard.")
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with(&format!("- uid {mira}: character \"Mira\""))
    );
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with(&format!("- uid {inn}: location \"Inn\""))
    );
    assert_eq!(
        p.check.lore.rule,
        LoreRule::Resolve {
            uids: vec![mira, inn]
        }
    );
    assert_eq!(p.schema_name, "lore_resolve");
    let empty = LoreInput {
        book: Some(&Book::empty()),
        ..input
    };
    assert!(matches!(
        prepare(JobKind::LoreResolve, &c, &s, "m5", &empty, &words),
        Err(PrepareError::NothingToDo(_))
    ));
}

#[test]
fn a_merge_shows_the_entry_and_the_new_facts_and_reads_the_entry() {
    let (c, s) = story();
    let (book, mira) = book_with_mira();
    let task = LoreTask {
        entity: Some(entity(
            "character",
            "Mira",
            &["Mira is now the Master Smith."],
        )),
        uid: Some(mira.clone()),
        ..LoreTask::default()
    };
    let input = LoreInput {
        task: Some(&task),
        book: Some(&book),
        book_name: "chat book",
    };
    let p = prepare(JobKind::LoreMerge, &c, &s, "m5", &input, &words).unwrap();
    assert_eq!(
        p.request,
        "Mira\nMira is an apprentice.\nShe has a scar.\n+\nMira is now the Master Smith."
    );
    let read = p.read.entry.clone().unwrap();
    assert_eq!(
        (read.book.as_str(), read.uid.as_str()),
        ("chat book", mira.as_str())
    );
    assert!(crate::lore::edit::entry_unchanged(&read, Some(&book)));
    assert_eq!(p.read.messages.len(), 2, "the scene too");
    // A locked entry is not asked about; a deleted one is gone.
    let mut locked = book.clone();
    locked
        .put_entry(
            Some(&mira),
            &format!(r#"{{"{LOCKED_FIELD}":true}}"#),
            &LIMITS.book,
        )
        .unwrap();
    let input_locked = LoreInput {
        book: Some(&locked),
        ..input
    };
    assert!(matches!(
        prepare(JobKind::LoreMerge, &c, &s, "m5", &input_locked, &words),
        Err(PrepareError::NothingToDo(_))
    ));
    let mut gone = book.clone();
    gone.delete_entry(&mira).unwrap();
    let input_gone = LoreInput {
        book: Some(&gone),
        ..input
    };
    assert!(matches!(
        prepare(JobKind::LoreMerge, &c, &s, "m5", &input_gone, &words),
        Err(PrepareError::Gone(_))
    ));
}

#[test]
fn a_compaction_reads_only_its_entry_and_must_shorten_it() {
    let (c, s) = story();
    let (book, mira) = book_with_mira();
    let task = LoreTask {
        uid: Some(mira.clone()),
        ..LoreTask::default()
    };
    let input = LoreInput {
        task: Some(&task),
        book: Some(&book),
        book_name: "b",
    };
    let p = prepare(JobKind::LoreCompact, &c, &s, "m5", &input, &words).unwrap();
    assert_eq!(
        p.request,
        "character Mira: Mira is an apprentice.\nShe has a scar."
    );
    assert!(p.read.messages.is_empty());
    assert_eq!(
        p.check.lore.rule,
        LoreRule::Compact {
            shorter_than: "Mira is an apprentice.\nShe has a scar.".chars().count()
        }
    );
}

#[test]
fn a_lore_request_past_the_bound_is_too_long() {
    let (c, mut s) = story();
    s.inclusion.max_context_tokens = Some(s.writing.llm_max_tokens + 3);
    let err = prepare(
        JobKind::LoreExtract,
        &c,
        &s,
        "m5",
        &LoreInput::default(),
        &words,
    )
    .unwrap_err();
    assert!(matches!(err, PrepareError::TooLong(_)), "{err:?}");
}
