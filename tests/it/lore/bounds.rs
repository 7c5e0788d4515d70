//! The chat's book within its bounds and from its start: new entities past
//! `lore_max_entries` are not written (and the job says so), and a new
//! book seeded from the books that apply to the chat
//! (`lore_seed_from_active_books`) merges into the copies rather than
//! writing the entities again, leaving the source book as it was.

use recapd::grpc::pb;
use serde_json::json;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn new_entities_past_lore_max_entries_are_not_written_and_the_job_says_so() {
    let script = Script::story(Story::of(&[scene_one()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        lore_max_entries: Some(2),
        ..lore_settings()
    };
    open(&mut server, "small", settings, story_chat()).await;
    make_break(&mut server, "small", "m3").await;
    let job = generate_lore(&mut recaps, "small", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "small", 1).await;
    assert_none_failed(&jobs);

    // Scene 1 names three entities; the first two fit.
    let entries = chat_entries(&mut server, "small").await;
    assert_eq!(
        comments(&entries),
        ["character-Elara", "location-Ravenhold"],
        "{entries:#?}"
    );
    let extraction = jobs
        .iter()
        .find(|j| j.job_id == job.job_id)
        .expect("the extraction");
    assert!(
        extraction.result.contains("Curfew not written"),
        "{:?}",
        extraction.result
    );
    server.stop().await;
}

#[tokio::test]
async fn a_new_book_seeded_from_the_chats_books_merges_into_the_copies() {
    let script = Script::story(Story::of(&[scene_one()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let world = json!({"entries": {
        "0": {"uid": 0, "comment": "location-Ravenhold", "key": ["ravenhold"],
              "content": "Ravenhold guards the northern pass.", "order": 50, "position": 1},
        "1": {"uid": 1, "comment": "Old Roads", "key": ["roads"], "content": "The roads are old."}
    }})
    .to_string();
    lorebooks(&server)
        .import_lorebook(pb::ImportLorebookRequest {
            name: "World".into(),
            json: world.clone(),
        })
        .await
        .expect("the global book imported");
    let settings = pb::Settings {
        world_info_global_books: Some(pb::StringList {
            values: vec!["World".into()],
        }),
        lore_seed_from_active_books: Some(true),
        ..lore_settings()
    };
    open(&mut server, "seeded", settings, story_chat()).await;
    make_break(&mut server, "seeded", "m3").await;
    generate_lore(&mut recaps, "seeded", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "seeded", 1).await;
    assert_none_failed(&jobs);

    let entries = chat_entries(&mut server, "seeded").await;
    assert_eq!(
        comments(&entries),
        [
            "Old Roads",
            "character-Elara",
            "location-Ravenhold",
            "rule-Curfew"
        ],
        "{entries:#?}"
    );
    // Ravenhold was the copy's: merged into it, with its own fields kept.
    assert_eq!(succeeded(&jobs, pb::JobKind::LoreMerge), 1);
    let ravenhold = the_entry(&entries, "location-Ravenhold");
    assert!(
        ravenhold.content.contains("northern pass")
            && ravenhold.content.contains("northern cliffs"),
        "{ravenhold:#?}"
    );
    assert_eq!(ravenhold.json["order"], json!(50));
    // The global book is as it was.
    let exported = lorebooks(&server)
        .export_lorebook(pb::ExportLorebookRequest {
            name: "World".into(),
        })
        .await
        .expect("the global book")
        .into_inner()
        .json;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&exported).unwrap(),
        serde_json::from_str::<serde_json::Value>(&world).unwrap()
    );
    server.stop().await;
}
