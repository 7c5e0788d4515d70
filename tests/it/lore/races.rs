//! What a client or the chat does while a lore job's request runs: an
//! entry the client writes for the entity being extracted is merged into,
//! not duplicated; an entry locked or deleted meanwhile is left as the
//! client left it; a scene recap rewritten meanwhile makes the extraction
//! read the scene again; a deleted break cancels its extraction;
//! GenerateLore during the scene's recap waits for it; and an entry
//! edited during its compaction is compacted again from the edited text
//! before the merge waiting for it runs.

use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;

/// How long the held request waits: the test acts meanwhile.
const HOLD: Duration = Duration::from_millis(1500);

/// Scene 2 of the story as told here: the queen knights Elara.
fn the_queen() -> (&'static str, Vec<Value>) {
    (
        "great hall",
        vec![entity(
            "character",
            "Queen Isolde",
            &["Isolde"],
            &["Queen Isolde knighted Elara."],
        )],
    )
}

/// The lore settings with an extraction prompt that shows the scene
/// recap it read.
fn with_recap_shown() -> pb::Settings {
    pb::Settings {
        lore_extract_prompt: Some(
            "KIND=lore_extract\nRECAP={{scene_recap}}\n{{scene_messages}}".into(),
        ),
        ..lore_settings()
    }
}

#[tokio::test]
async fn an_entry_a_client_writes_while_the_extraction_runs_is_merged_into_not_duplicated() {
    let script = Script::holding(Story::of(&[scene_one(), the_queen()]), "lore_extract", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "race").await;

    script.arm();
    generate_lore(&mut recaps, "race", "m7").await;
    script.wait_held().await;
    // The client writes the queen's entry while the scene's extraction,
    // which finds her too, runs.
    let written = put_entry(
        &server,
        &book,
        "",
        json!({"comment": "character-Queen Isolde", "key": ["queen isolde"], "content": "Queen Isolde rules from Ravenhold."}),
    )
    .await;
    let jobs = wait_for_lore(&mut recaps, "race", 2).await;
    assert_none_failed(&jobs);

    let entries = chat_entries(&mut server, "race").await;
    let queen = the_entry(&entries, "character-Queen Isolde");
    assert_eq!(queen.uid, written.uid, "the client's entry, merged into");
    assert_eq!(
        queen.lines(),
        [
            "Queen Isolde rules from Ravenhold.",
            "Queen Isolde knighted Elara."
        ]
    );
    let merges = prompts_of(&llm.requests(), "lore_merge");
    assert_eq!(merges.len(), 1, "{merges:#?}");
    assert!(
        merges[0].contains("Queen Isolde rules from Ravenhold."),
        "the merge read the client's entry: {}",
        merges[0]
    );
    server.stop().await;
}

#[tokio::test]
async fn an_entry_locked_while_its_merge_runs_keeps_the_clients_text() {
    let script = Script::holding(Story::of(&[scene_one(), scene_two()]), "lore_merge", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "lock").await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();

    script.arm();
    generate_lore(&mut recaps, "lock", "m7").await;
    script.wait_held().await;
    put_entry(&server, &book, &elara.uid, json!({ "recapdLocked": true })).await;
    let jobs = wait_for_lore(&mut recaps, "lock", 2).await;
    // Give the held answer time to arrive and be refused.
    tokio::time::sleep(HOLD).await;
    let jobs_after = jobs_of(&mut recaps, "lock").await;
    assert!(all_finished(&jobs_after), "{jobs_after:#?}");
    assert_eq!(jobs_after.len(), jobs.len(), "nothing more was queued");
    assert_none_failed(&jobs_after);
    assert!(
        states(&jobs_after, pb::JobKind::LoreMerge).contains(&pb::JobState::Discarded),
        "the merge's answer was not applied: {jobs_after:#?}"
    );
    assert_eq!(
        prompts_of(&llm.requests(), "lore_merge").len(),
        1,
        "a locked entry is never asked about"
    );
    let now = the_entry(&chat_entries(&mut server, "lock").await, "character-Elara").clone();
    assert_eq!(
        now.content, elara.content,
        "the entry as the client left it"
    );
    assert_eq!(now.keys, elara.keys);
    assert_eq!(now.json["recapdLocked"], json!(true));
    server.stop().await;
}

#[tokio::test]
async fn an_entry_deleted_while_its_merge_runs_stays_deleted() {
    let script = Script::holding(Story::of(&[scene_one(), scene_two()]), "lore_merge", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "gone").await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();

    script.arm();
    generate_lore(&mut recaps, "gone", "m7").await;
    script.wait_held().await;
    lorebooks(&server)
        .delete_lorebook_entry(pb::DeleteLorebookEntryRequest {
            name: book.clone(),
            uid: elara.uid.clone(),
        })
        .await
        .expect("entry deleted");
    wait_for_lore(&mut recaps, "gone", 2).await;
    tokio::time::sleep(HOLD).await;
    let jobs = jobs_of(&mut recaps, "gone").await;
    assert!(all_finished(&jobs), "{jobs:#?}");
    assert_eq!(
        states(&jobs, pb::JobKind::LoreMerge),
        [pb::JobState::Cancelled, pb::JobState::Discarded],
        "the held answer not applied, the merge queued again and given up: {jobs:#?}"
    );
    assert!(
        jobs[0].result.contains("no longer exists"),
        "{:?}",
        jobs[0].result
    );
    assert!(
        jobs.iter().all(|j| state(j) != pb::JobState::Failed),
        "{jobs:#?}"
    );
    let entries = chat_entries(&mut server, "gone").await;
    assert_eq!(
        comments(&entries),
        ["location-Ravenhold", "rule-Curfew"],
        "the deleted entry is not written back: {entries:#?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_scene_recap_rewritten_during_the_extraction_makes_it_read_the_scene_again() {
    let script = Script::holding(Story::of(&[scene_one()]), "lore_extract", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) =
        with_extraction_held(dir.path(), &llm, &script, "recap", with_recap_shown()).await;
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: "recap".into(),
            message_id: "m3".into(),
            data: Some(pb::MessageData {
                scene_recap_memory: Some("Elara lets the travellers into Ravenhold.".into()),
                ..Default::default()
            }),
        })
        .await
        .expect("recap rewritten");
    let extractions = extracted_twice(&mut recaps, &llm, "recap").await;
    assert!(extractions[0].contains("RECAP=The scene up to m3."));
    assert!(
        extractions[1].contains("RECAP=Elara lets the travellers into Ravenhold."),
        "the second extraction read the new recap: {}",
        extractions[1]
    );
    let entries = chat_entries(&mut server, "recap").await;
    assert_eq!(
        comments(&entries),
        ["character-Elara", "location-Ravenhold", "rule-Curfew"],
        "the fresh answer, once: {entries:#?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_break_deleted_during_its_extraction_cancels_it_and_nothing_is_written() {
    let script = Script::holding(Story::of(&[scene_one()]), "lore_extract", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) =
        with_extraction_held(dir.path(), &llm, &script, "cut", lore_settings()).await;
    server
        .publish("cut", crate::common::message_deleted("m3"))
        .await
        .expect("break deleted");
    let jobs = wait_for_jobs(&mut recaps, "cut", "the extraction cancelled", all_finished).await;
    assert_eq!(
        states(&jobs, pb::JobKind::LoreExtract),
        [pb::JobState::Cancelled],
        "{jobs:#?}"
    );
    // The held answer arrives after the cancellation and is not applied.
    tokio::time::sleep(HOLD + Duration::from_millis(300)).await;
    assert_eq!(
        states(&jobs_of(&mut recaps, "cut").await, pb::JobKind::LoreExtract),
        [pb::JobState::Cancelled]
    );
    assert_eq!(
        chat_settings(&mut server, "cut")
            .await
            .world_info_chat_book
            .unwrap_or_default(),
        "",
        "no book was made for the chat"
    );
    let books = book_names(&server).await;
    assert!(books.is_empty(), "{books:#?}");
    server.stop().await;
}

#[tokio::test]
async fn generate_lore_during_the_scene_recap_waits_for_it_and_reads_the_fresh_recap() {
    let script = Script::holding(Story::of(&[scene_one()]), "scene", HOLD);
    script.arm();
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "after", with_recap_shown(), story_chat()).await;
    recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "after".into(),
            message_id: "m3".into(),
        })
        .await
        .expect("scene recap queued");
    script.wait_held().await;
    let extraction = generate_lore(&mut recaps, "after", "m3").await;
    assert_eq!(state(&extraction), pb::JobState::Pending, "it waits");
    let jobs = wait_for_lore(&mut recaps, "after", 1).await;
    assert_none_failed(&jobs);
    let kinds: Vec<String> = llm
        .requests()
        .iter()
        .map(|r| kind_of(&r.prompt).to_owned())
        .collect();
    assert_eq!(kinds, ["scene", "lore_extract"], "the recap first");
    let recap = crate::recap_jobs::data_of(&mut server, "after", "m3")
        .await
        .scene_recap_memory
        .expect("the scene recap written");
    let prompt = &prompts_of(&llm.requests(), "lore_extract")[0];
    assert!(
        prompt.contains(&format!("RECAP={recap}")),
        "the extraction read the fresh recap {recap:?}: {prompt}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_edit_during_a_compaction_discards_it_and_the_merge_waits_for_the_compaction_of_the_edited_text()
 {
    let script = Script::holding(Story::of(&[scene_one(), scene_two()]), "lore_compact", HOLD);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "squeeze").await;
    past_the_threshold(&mut server, &book, "squeeze").await;

    script.arm();
    generate_lore(&mut recaps, "squeeze", "m7").await;
    script.wait_held().await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    let edited = format!("{}\nElara is left-handed.", elara.content);
    put_entry(&server, &book, &elara.uid, json!({ "content": edited })).await;
    let jobs = wait_for_lore(&mut recaps, "squeeze", 2).await;
    assert_eq!(
        states(&jobs, pb::JobKind::LoreCompact),
        [pb::JobState::Succeeded, pb::JobState::Discarded],
        "{jobs:#?}"
    );
    assert_eq!(succeeded(&jobs, pb::JobKind::LoreMerge), 1, "{jobs:#?}");
    let compactions = prompts_of(&llm.requests(), "lore_compact");
    assert_eq!(compactions.len(), 2);
    assert!(
        compactions[1].contains("Elara is left-handed."),
        "the second compaction read the edited text: {}",
        compactions[1]
    );
    let merge = &prompts_of(&llm.requests(), "lore_merge")[0];
    assert!(
        merge.contains("Elara is left-handed.") && !merge.contains("(minor)"),
        "the merge ran after the fresh compaction: {merge}"
    );
    let now = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    assert_eq!(
        now.lines(),
        [
            "Elara carries a silver sword.",
            "Elara is left-handed.",
            "Title: knight of the Order"
        ]
    );
    server.stop().await;
}
