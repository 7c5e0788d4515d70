//! The lore settings as a user notices them: without `auto_lore` a scene
//! recap writes no lore; `lore_max_entries` bounds the book (known
//! entities are still merged); `lore_max_keys` bounds an entry's keys,
//! which leave out generic and temporal words; with
//! `lore_seed_from_active_books` the chat's new book starts with copies
//! of the books that apply to the chat, whose entries are then merged
//! into rather than duplicated; a merge into an entry past
//! `lore_compaction_threshold` tokens runs on the entry compacted first.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn without_auto_lore_a_scene_recap_writes_no_lore() {
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one()])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    // lore_settings leaves auto_lore at its default.
    open(&mut server, "off", lore_settings(), story_chat()).await;
    recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "off".into(),
            message_id: "m3".into(),
        })
        .await
        .expect("scene recap queued");
    let jobs = wait_for_jobs(&mut recaps, "off", "the scene recap", |jobs| {
        all_finished(jobs) && succeeded(jobs, pb::JobKind::SceneRecap) == 1
    })
    .await;
    assert_eq!(jobs.len(), 1, "no lore job: {jobs:#?}");
    assert!(
        llm.requests()
            .iter()
            .all(|r| !kind_of(&r.prompt).starts_with("lore_")),
        "no lore request"
    );
    assert_eq!(
        chat_settings(&mut server, "off")
            .await
            .world_info_chat_book
            .unwrap_or_default(),
        "",
        "no book for the chat"
    );
    server.stop().await;
}

#[tokio::test]
async fn past_lore_max_entries_new_entities_are_not_written_and_known_ones_still_merge() {
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one(), scene_two()])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        lore_max_entries: Some(2),
        ..lore_settings()
    };
    open(&mut server, "full", settings, story_chat()).await;
    make_break(&mut server, "full", "m3").await;
    make_break(&mut server, "full", "m7").await;
    generate_lore(&mut recaps, "full", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "full", 1).await;
    assert_none_failed(&jobs);
    assert!(
        jobs[0].result.contains("Curfew not written"),
        "the result says what was left out: {:?}",
        jobs[0].result
    );
    assert_eq!(
        comments(&chat_entries(&mut server, "full").await),
        ["character-Elara", "location-Ravenhold"]
    );

    generate_lore(&mut recaps, "full", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "full", 2).await;
    assert_none_failed(&jobs);
    let entries = chat_entries(&mut server, "full").await;
    assert_eq!(entries.len(), 2, "{entries:#?}");
    assert_eq!(
        the_entry(&entries, "character-Elara").lines(),
        [
            "Elara carries a silver sword.",
            "Title: knight of the Order"
        ],
        "a known entity is merged in a full book"
    );
    server.stop().await;
}

#[tokio::test]
async fn keys_leave_out_generic_and_temporal_words_and_keep_to_lore_max_keys() {
    let scene = (
        "gates of Ravenhold",
        vec![entity(
            "character",
            "Elara",
            &[
                "She",
                "yesterday",
                "Sir Elara",
                "the squire",
                "ELARA",
                "silver sword",
                "order knight",
            ],
            &["Elara is a squire of the Order."],
        )],
    );
    let llm = FakeLlm::start(Script::story(Story::of(&[scene])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        lore_max_keys: Some(4),
        ..lore_settings()
    };
    open(&mut server, "keys", settings, story_chat()).await;
    make_break(&mut server, "keys", "m3").await;
    generate_lore(&mut recaps, "keys", "m3").await;
    wait_for_lore(&mut recaps, "keys", 1).await;
    let entries = chat_entries(&mut server, "keys").await;
    assert_eq!(
        the_entry(&entries, "character-Elara").keys,
        ["elara", "sir elara", "the squire", "silver sword"],
        "the name first, lowercase, no pronoun, no time word, no repeat, four at most"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_seeded_book_starts_with_the_active_books_entries_and_merges_into_them() {
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one()])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let realm = json!({"entries": {
        "0": {"uid": 0, "comment": "location-Ravenhold", "key": ["ravenhold"],
              "content": "Ravenhold guards the northern pass."},
        "1": {"uid": 1, "comment": "Old Roads", "key": ["old road"],
              "content": "The old roads are unsafe after dark."},
    }});
    import_book(&server, "Realm", realm).await;
    let realm_before = book_entries(&server, "Realm").await;
    let settings = pb::Settings {
        lore_seed_from_active_books: Some(true),
        world_info_global_books: Some(pb::StringList {
            values: vec!["Realm".into()],
        }),
        ..lore_settings()
    };
    open(&mut server, "seeded", settings, story_chat()).await;
    make_break(&mut server, "seeded", "m3").await;
    generate_lore(&mut recaps, "seeded", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "seeded", 1).await;
    assert_none_failed(&jobs);

    let book = chat_book(&mut server, "seeded").await;
    assert_ne!(book, "Realm", "the chat's own book");
    let entries = book_entries(&server, &book).await;
    assert_eq!(
        comments(&entries),
        [
            "Old Roads",
            "character-Elara",
            "location-Ravenhold",
            "rule-Curfew"
        ],
        "the seeded copies and the scene's new entities, once each: {entries:#?}"
    );
    assert_eq!(
        the_entry(&entries, "location-Ravenhold").lines(),
        [
            "Ravenhold guards the northern pass.",
            "Ravenhold is a fortress on the northern cliffs."
        ],
        "the scene's facts merged into the seeded copy"
    );
    assert_eq!(
        the_entry(&entries, "Old Roads").content,
        "The old roads are unsafe after dark."
    );
    assert_eq!(
        book_entries(&server, "Realm").await,
        realm_before,
        "the global book is left as it was"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_merge_into_an_entry_past_the_compaction_threshold_waits_for_its_compaction() {
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one(), scene_two()])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "long").await;
    past_the_threshold(&mut server, &book, "long").await;
    generate_lore(&mut recaps, "long", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "long", 2).await;
    assert_none_failed(&jobs);
    assert_eq!(succeeded(&jobs, pb::JobKind::LoreCompact), 1, "{jobs:#?}");
    assert_eq!(succeeded(&jobs, pb::JobKind::LoreMerge), 1, "{jobs:#?}");
    let kinds: Vec<String> = llm
        .requests()
        .iter()
        .map(|r| kind_of(&r.prompt).to_owned())
        .collect();
    assert_eq!(
        kinds,
        ["lore_extract", "lore_extract", "lore_compact", "lore_merge"],
        "the compaction before the merge"
    );
    let merge = &prompts_of(&llm.requests(), "lore_merge")[0];
    assert!(
        !merge.contains("(minor)") && merge.contains("Title: squire of the Order"),
        "the merge read the compacted entry: {merge}"
    );
    let now = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    assert_eq!(
        now.lines(),
        [
            "Elara carries a silver sword.",
            "Title: knight of the Order"
        ]
    );
    server.stop().await;
}
