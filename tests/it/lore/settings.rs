//! The lore settings as a user notices them: without `auto_lore` a scene
//! recap writes no lore; a book at `lore_max_entries` still takes merges
//! into its entries (bounds.rs has the new entities left out);
//! `lore_max_keys` bounds an entry's keys, which leave out generic and
//! temporal words; a merge into an entry past `lore_compaction_threshold`
//! tokens runs on the entry compacted first.

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
async fn a_full_book_still_takes_merges_into_its_entries() {
    let scene_two = (
        "great hall",
        vec![
            entity("character", "Elara", &[], &["Title: knight of the Order"]),
            entity("character", "Mara", &[], &["Mara is the queen's smith."]),
        ],
    );
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one(), scene_two])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, _) = after_scene_one(dir.path(), &llm, "full").await;
    // Scene 1's three entries fill the book.
    server
        .update_settings(
            "full",
            pb::Settings {
                lore_max_entries: Some(3),
                ..Default::default()
            },
        )
        .await;
    let job = generate_lore(&mut recaps, "full", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "full", 2).await;
    assert_none_failed(&jobs);
    let extraction = jobs
        .iter()
        .find(|j| j.job_id == job.job_id)
        .expect("the extraction");
    assert!(
        extraction.result.contains("Mara not written"),
        "{:?}",
        extraction.result
    );
    let entries = chat_entries(&mut server, "full").await;
    assert_eq!(
        comments(&entries),
        ["character-Elara", "location-Ravenhold", "rule-Curfew"],
        "{entries:#?}"
    );
    assert_eq!(
        the_entry(&entries, "character-Elara").lines(),
        [
            "Elara carries a silver sword.",
            "Title: knight of the Order"
        ],
        "the known entity merged"
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
