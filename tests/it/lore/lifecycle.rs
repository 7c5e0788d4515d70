//! Lore jobs on the queue with the recap jobs' guarantees: WatchJobs
//! shows them; an answer that fails its checks is asked again and never
//! written; a job the LLM refuses fails and changes nothing, and RetryJob
//! runs it again; a chat deleted while a lore request runs takes its book
//! with it, and the late answer writes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};

/// A script that answers the first `times` requests of `kind` with
/// `first`, and everything else as `script` does.
fn first_of_kind(
    script: Arc<Script>,
    kind: &'static str,
    times: usize,
    first: Reply,
) -> impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static {
    let seen = AtomicUsize::new(0);
    move |request| {
        if kind_of(&request.prompt) == kind && seen.fetch_add(1, Ordering::SeqCst) < times {
            first.clone()
        } else {
            script.reply(request)
        }
    }
}

#[tokio::test]
async fn watch_jobs_shows_each_lore_job_through_its_states() {
    let llm = FakeLlm::start(Script::story(Story::of(&[scene_one(), scene_two()])).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut recaps, _) = after_scene_one(dir.path(), &llm, "watched").await;
    let mut watch = recaps
        .watch_jobs(pb::WatchJobsRequest {
            chat_ids: vec!["watched".into()],
        })
        .await
        .expect("watch")
        .into_inner();
    generate_lore(&mut recaps, "watched", "m7").await;
    let mut seen: Vec<(pb::JobKind, pb::JobState)> = Vec::new();
    while !seen.contains(&(pb::JobKind::LoreMerge, pb::JobState::Succeeded)) {
        let job = tokio::time::timeout(Duration::from_secs(20), watch.message())
            .await
            .expect("a job change within 20 s")
            .expect("the watch goes on")
            .expect("a job");
        let change = (kind(&job), state(&job));
        if seen.last() != Some(&change) {
            seen.push(change);
        }
    }
    let of = |wanted: pb::JobKind| -> Vec<pb::JobState> {
        seen.iter()
            .filter(|(k, _)| *k == wanted)
            .map(|(_, s)| *s)
            .collect()
    };
    use pb::JobState::{Pending, Running, Succeeded};
    assert_eq!(of(pb::JobKind::LoreExtract), [Pending, Running, Succeeded]);
    assert_eq!(of(pb::JobKind::LoreMerge), [Pending, Running, Succeeded]);
    server.stop().await;
}

#[tokio::test]
async fn an_answer_that_fails_its_checks_is_asked_again_and_never_written() {
    // A type the chat does not have: the answer is refused.
    let unknown_type = Reply::answer(
        json!({"entities": [entity("person", "Elara", &[], &["Elara is a squire."])]}).to_string(),
    );
    let script = Script::story(Story::of(&[scene_one()]));
    let llm = FakeLlm::start(first_of_kind(script, "lore_extract", 1, unknown_type)).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "checked", lore_settings(), story_chat()).await;
    make_break(&mut server, "checked", "m3").await;
    generate_lore(&mut recaps, "checked", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "checked", 1).await;
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(jobs[0].attempts, 2, "asked again: {jobs:#?}");
    // The reason names the model's entities: the log has it, the client
    // the category and an id.
    assert!(
        jobs[0]
            .last_error
            .starts_with("the answer did not pass its checks (error id ")
            && !jobs[0].last_error.contains("Elara"),
        "the refused answer's category: {:?}",
        jobs[0].last_error
    );
    let entries = chat_entries(&mut server, "checked").await;
    assert_eq!(
        comments(&entries),
        ["character-Elara", "location-Ravenhold", "rule-Curfew"],
        "only the good answer was written"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_merge_the_llm_refuses_fails_and_changes_nothing_until_retried() {
    let script = Script::story(Story::of(&[scene_one(), scene_two()]));
    let refused = Reply::status(400, "the model refuses");
    let llm = FakeLlm::start(first_of_kind(script, "lore_merge", 1, refused)).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (server, mut recaps, book) = after_scene_one(dir.path(), &llm, "refused").await;
    let before = book_entries(&server, &book).await;

    generate_lore(&mut recaps, "refused", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "refused", 2).await;
    let merge = jobs
        .iter()
        .find(|j| kind(j) == pb::JobKind::LoreMerge)
        .expect("the merge")
        .clone();
    assert_eq!(state(&merge), pb::JobState::Failed, "{jobs:#?}");
    assert!(!merge.last_error.is_empty(), "{merge:?}");
    assert_eq!(
        book_entries(&server, &book).await,
        before,
        "a failed job changes nothing"
    );

    recaps
        .retry_job(pb::RetryJobRequest {
            job_id: merge.job_id.clone(),
        })
        .await
        .expect("retried");
    wait_for_jobs(&mut recaps, "refused", "the merge run again", |jobs| {
        all_finished(jobs)
            && jobs
                .iter()
                .any(|j| j.job_id == merge.job_id && state(j) == pb::JobState::Succeeded)
    })
    .await;
    let elara = the_entry(&book_entries(&server, &book).await, "character-Elara").clone();
    assert_eq!(
        elara.lines(),
        [
            "Elara carries a silver sword.",
            "Title: knight of the Order"
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_chat_deleted_while_its_merge_runs_takes_its_book_and_the_late_answer_writes_nothing() {
    let hold = Duration::from_millis(1500);
    let script = Script::holding(Story::of(&[scene_one(), scene_two()]), "lore_merge", hold);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps, book) = after_scene_one(dir.path(), &llm, "doomed").await;
    script.arm();
    generate_lore(&mut recaps, "doomed", "m7").await;
    script.wait_held().await;
    server
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "doomed".into(),
        })
        .await
        .expect("chat deleted");
    assert!(
        book_names(&server).await.is_empty(),
        "the book went with it"
    );
    // The held answer arrives after the deletion.
    tokio::time::sleep(hold + Duration::from_millis(500)).await;
    assert!(
        book_names(&server).await.is_empty(),
        "the late answer made no book ({book:?} or another)"
    );
    assert!(jobs_of(&mut recaps, "doomed").await.is_empty());
    assert_eq!(prompts_of(&llm.requests(), "lore_merge").len(), 1);
    server.stop().await;
}
