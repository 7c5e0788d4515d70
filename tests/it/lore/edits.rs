//! Client edits win, and the book never holds two entries for one entity:
//! an entry edited by a client while its merge runs is merged again from
//! the edited text; a locked entry is never changed; a duplicate a client
//! wrote is merged into one entry when the next lore job lands; two scenes
//! queued at once that both introduce someone make one entry; a scene
//! edited while its extraction runs is read again.

use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn a_client_edit_during_a_merge_discards_it_and_the_merge_runs_on_the_edited_text() {
    let script = Script::holding(
        Story::of(&[scene_one(), scene_two()]),
        "lore_merge",
        Duration::from_millis(1500),
    );
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut recaps, book) = after_scene_one(dir.path(), &llm, "edit").await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();

    script.arm();
    generate_lore(&mut recaps, "edit", "m7").await;
    script.wait_held().await;
    let edited = "Title: squire of the Order\nElara carries a silver sword.\nElara is left-handed.";
    put_entry(&server, &book, &elara.uid, json!({ "content": edited })).await;

    let jobs = wait_for_jobs(&mut recaps, "edit", "the merge run again", |jobs| {
        all_finished(jobs) && succeeded(jobs, pb::JobKind::LoreMerge) >= 1
    })
    .await;
    assert_eq!(
        states(&jobs, pb::JobKind::LoreMerge),
        [pb::JobState::Succeeded, pb::JobState::Discarded],
        "{jobs:#?}"
    );
    let merges = prompts_of(&llm.requests(), "lore_merge");
    assert_eq!(merges.len(), 2, "{merges:#?}");
    assert!(!merges[0].contains("left-handed"));
    assert!(
        merges[1].contains("Elara is left-handed.") && merges[1].contains("Title: knight"),
        "the second merge starts from the client's text: {}",
        merges[1]
    );
    let entries = book_entries(&server, &book).await;
    let merged = the_entry(&entries, "character-Elara");
    assert_eq!(merged.uid, elara.uid);
    assert_eq!(
        merged.lines(),
        [
            "Elara carries a silver sword.",
            "Elara is left-handed.",
            "Title: knight of the Order",
        ],
        "the client's fact kept, the title replaced"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_locked_entry_is_never_changed() {
    let script = Script::story(Story::of(&[scene_one(), scene_two()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut recaps, book) = after_scene_one(dir.path(), &llm, "locked").await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    let locked = put_entry(&server, &book, &elara.uid, json!({ "recapdLocked": true })).await;
    let locked: Value = serde_json::from_str(&locked.json).expect("entry JSON");
    assert_eq!(locked["recapdLocked"], true);

    generate_lore(&mut recaps, "locked", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "locked", 2).await;
    assert_none_failed(&jobs);
    let entries = book_entries(&server, &book).await;
    assert_eq!(
        the_entry(&entries, "character-Elara").json,
        locked,
        "the locked entry is exactly as the client left it"
    );
    assert_eq!(
        comments(&entries),
        ["character-Elara", "location-Ravenhold", "rule-Curfew"],
        "and no second entry for Elara was written instead"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_duplicate_a_client_wrote_is_merged_into_the_lowest_uid_when_a_lore_job_lands() {
    let scene_two = (
        "great hall",
        vec![entity(
            "character",
            "Mara",
            &[],
            &["Mara is the queen's smith."],
        )],
    );
    let script = Script::story(Story::of(&[scene_one(), scene_two]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut recaps, book) = after_scene_one(dir.path(), &llm, "dupe").await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    let duplicate = put_entry(
        &server,
        &book,
        "",
        json!({
            "comment": "character-elara",
            "key": ["elara", "swordswoman"],
            "content": "Elara fears deep water.",
        }),
    )
    .await;
    assert_ne!(duplicate.uid, elara.uid);

    generate_lore(&mut recaps, "dupe", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "dupe", 2).await;
    assert_none_failed(&jobs);
    let entries = book_entries(&server, &book).await;
    let elaras: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.comment.to_lowercase() == "character-elara")
        .collect();
    assert_eq!(elaras.len(), 1, "one entry for Elara: {entries:#?}");
    let kept = elaras[0];
    let lowest = elara
        .uid
        .parse::<u64>()
        .expect("numeric uid")
        .min(duplicate.uid.parse::<u64>().expect("numeric uid"));
    assert_eq!(kept.uid, lowest.to_string(), "kept at the lowest uid");
    for fact in [
        "Title: squire of the Order",
        "Elara carries a silver sword.",
        "Elara fears deep water.",
    ] {
        assert_eq!(
            kept.lines().iter().filter(|l| **l == fact).count(),
            1,
            "{fact:?} once in {kept:?}"
        );
    }
    assert!(
        kept.keys.iter().any(|k| k == "elara") && kept.keys.iter().any(|k| k == "swordswoman"),
        "keys unioned: {kept:?}"
    );
    the_entry(&entries, "character-Mara");
    server.stop().await;
}

#[tokio::test]
async fn two_scenes_queued_at_once_that_introduce_one_person_make_one_entry() {
    let first = (
        "gates of Ravenhold",
        vec![entity(
            "character",
            "Mara",
            &[],
            &["Mara is the queen's smith."],
        )],
    );
    let second = (
        "great hall",
        vec![entity(
            "character",
            "Mara",
            &["the smith"],
            &["Mara forged Elara's silver sword."],
        )],
    );
    // The first extraction is slow, so the second is queued while it runs.
    let script = Script::holding(
        Story::of(&[first, second]),
        "lore_extract",
        Duration::from_millis(500),
    );
    script.arm();
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "race", lore_settings(), story_chat()).await;
    make_break(&mut server, "race", "m3").await;
    make_break(&mut server, "race", "m7").await;
    generate_lore(&mut recaps, "race", "m3").await;
    generate_lore(&mut recaps, "race", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "race", 2).await;
    assert_none_failed(&jobs);
    let entries = chat_entries(&mut server, "race").await;
    assert_eq!(comments(&entries), ["character-Mara"], "{entries:#?}");
    let mara = &entries[0];
    let mut lines = mara.lines();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "Mara forged Elara's silver sword.",
            "Mara is the queen's smith.",
        ],
        "both scenes' facts, once each"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_scene_edited_during_its_extraction_is_read_again() {
    let bronze = (
        "bronze sword",
        vec![entity(
            "character",
            "Elara",
            &[],
            &["Elara carries a bronze sword."],
        )],
    );
    let script = Script::holding(
        Story::of(&[bronze, scene_one()]),
        "lore_extract",
        Duration::from_millis(1500),
    );
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) =
        with_extraction_held(dir.path(), &llm, &script, "reread", lore_settings()).await;
    server
        .publish(
            "reread",
            pb::event::Kind::MessageEdited(pb::MessageEdited {
                message_id: "m1".into(),
                text: "A young squire named Elara lets us in; a bronze sword hangs at her side."
                    .into(),
            }),
        )
        .await
        .expect("edit");
    let extractions = extracted_twice(&mut recaps, &llm, "reread").await;
    assert!(extractions[1].contains("a bronze sword hangs at her side"));
    let entries = chat_entries(&mut server, "reread").await;
    assert_eq!(
        comments(&entries),
        ["character-Elara"],
        "nothing of the stale answer was written: {entries:#?}"
    );
    assert_eq!(entries[0].lines(), ["Elara carries a bronze sword."]);
    server.stop().await;
}
