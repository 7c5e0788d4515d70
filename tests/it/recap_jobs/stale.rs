//! Answers whose inputs changed while the request ran are never applied:
//! the job ends DISCARDED and the work runs again on the new inputs; a
//! deleted message cancels its jobs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply};

/// A script whose first request is slow (so the test can change the chat
/// while it runs) and whose later ones answer at once.
fn slow_first(
    delay: Duration,
) -> (
    impl Fn(&crate::common::fake_llm::SeenRequest) -> Reply,
    Arc<AtomicUsize>,
) {
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    let script = move |request: &crate::common::fake_llm::SeenRequest| {
        let answer = Reply::Answer(as_the_model_writes(request, story_answer(&request.prompt)));
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            Reply::Slow(delay, Box::new(answer))
        } else {
            answer
        }
    };
    (script, seen)
}

async fn wait_for_requests(seen: &AtomicUsize, n: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.load(Ordering::SeqCst) < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the fake got no request"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn scene_recap_of_m5(recaps: &mut RecapServiceClient<Channel>, chat: &str) {
    recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: chat.into(),
            message_id: "m5".into(),
        })
        .await
        .expect("scene recap queued");
}

#[tokio::test]
async fn an_edit_during_the_request_discards_the_answer_and_the_recap_is_written_again() {
    let (script, seen) = slow_first(Duration::from_millis(800));
    let llm = FakeLlm::start(script).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "edit", story_chat(8, &[])).await;
    scene_recap_of_m5(&mut recaps, "edit").await;
    wait_for_requests(&seen, 1).await;
    server
        .publish(
            "edit",
            pb::event::Kind::MessageEdited(pb::MessageEdited {
                message_id: "m2".into(),
                text: "line 2 rewritten".into(),
            }),
        )
        .await
        .expect("edit");
    let jobs = wait_for_jobs(&mut recaps, "edit", "the recap written again", |jobs| {
        all_finished(jobs)
            && jobs.iter().any(|j| {
                kind(j) == pb::JobKind::RunningRecap && state(j) == pb::JobState::Succeeded
            })
    })
    .await;
    let scene: Vec<_> = jobs
        .iter()
        .filter(|j| kind(j) == pb::JobKind::SceneRecap)
        .collect();
    let mut states: Vec<_> = scene.iter().map(|j| state(j)).collect();
    states.sort_by_key(|s| *s as i32);
    assert_eq!(
        states,
        [pb::JobState::Succeeded, pb::JobState::Discarded],
        "{jobs:#?}"
    );
    let recap = data_of(&mut server, "edit", "m5").await.scene_recap_memory;
    assert_eq!(
        recap.as_deref(),
        Some("6 lines, Ann: line 0 to Bob: line 5")
    );
    assert!(
        llm.requests()[1].prompt.contains("line 2 rewritten"),
        "the second request read the edited text"
    );
    assert_eq!(
        recaps_of(&mut server, "edit").await.versions.len(),
        1,
        "only the fresh recap was merged"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_swipe_during_the_request_discards_the_answer() {
    let (script, seen) = slow_first(Duration::from_millis(800));
    let llm = FakeLlm::start(script).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "swipe", story_chat(8, &[])).await;
    scene_recap_of_m5(&mut recaps, "swipe").await;
    wait_for_requests(&seen, 1).await;
    server
        .publish(
            "swipe",
            pb::event::Kind::MessageSwiped(pb::MessageSwiped {
                message_id: "m1".into(),
                swipe_id: 1,
                text: "another take".into(),
            }),
        )
        .await
        .expect("swipe");
    let jobs = wait_for_jobs(&mut recaps, "swipe", "the recap written again", |jobs| {
        all_finished(jobs)
            && jobs.iter().any(|j| state(j) == pb::JobState::Discarded)
            && jobs
                .iter()
                .any(|j| kind(j) == pb::JobKind::SceneRecap && state(j) == pb::JobState::Succeeded)
    })
    .await;
    let discarded = jobs
        .iter()
        .find(|j| state(j) == pb::JobState::Discarded)
        .expect("a discarded job");
    assert!(discarded.result.contains("changed"), "{discarded:?}");
    assert!(llm.requests()[1].prompt.contains("another take"));
    server.stop().await;
}

#[tokio::test]
async fn deleting_the_break_message_cancels_its_jobs() {
    let (script, seen) = slow_first(Duration::from_millis(800));
    let llm = FakeLlm::start(script).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "gone", story_chat(8, &[])).await;
    scene_recap_of_m5(&mut recaps, "gone").await;
    wait_for_requests(&seen, 1).await;
    server
        .publish("gone", common::message_deleted("m5"))
        .await
        .expect("delete");
    let jobs = wait_for_jobs(&mut recaps, "gone", "the job cancelled", all_finished).await;
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(state(&jobs[0]), pb::JobState::Cancelled);
    assert!(jobs[0].result.contains("deleted"), "{:?}", jobs[0]);
    // The slow answer arrives after the cancellation and is not applied.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(recaps_of(&mut server, "gone").await.versions.is_empty());
    assert_eq!(
        state(&jobs_of(&mut recaps, "gone").await[0]),
        pb::JobState::Cancelled
    );
    server.stop().await;
}

#[tokio::test]
async fn a_merge_waiting_for_a_discarded_scene_recap_waits_for_the_fresh_one() {
    let (script, seen) = slow_first(Duration::from_millis(800));
    let llm = FakeLlm::start(script).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "waits", story_chat(8, &[])).await;
    scene_recap_of_m5(&mut recaps, "waits").await;
    let merge = recaps
        .generate_running_recap(pb::GenerateRunningRecapRequest {
            chat_id: "waits".into(),
            message_id: "m5".into(),
        })
        .await
        .expect("the merge waits for the scene recap")
        .into_inner();
    wait_for_requests(&seen, 1).await;
    server
        .publish(
            "waits",
            pb::event::Kind::MessageEdited(pb::MessageEdited {
                message_id: "m4".into(),
                text: "line 4 again".into(),
            }),
        )
        .await
        .expect("edit");
    let jobs = wait_for_jobs(&mut recaps, "waits", "the merge", |jobs| {
        jobs.iter()
            .any(|j| j.job_id == merge.job_id && state(j) == pb::JobState::Succeeded)
    })
    .await;
    assert!(
        jobs.iter().all(|j| state(j) != pb::JobState::Cancelled),
        "nothing was cancelled: {jobs:#?}"
    );
    let list = recaps_of(&mut server, "waits").await;
    assert_eq!(list.versions.len(), 1);
    assert!(list.versions[0].content.contains("6 lines"), "{list:?}");
    assert!(
        llm.requests()
            .iter()
            .any(|r| r.prompt.contains("line 4 again"))
    );
    server.stop().await;
}
