//! Order and fairness under trouble: scenes are merged in chat order even
//! when an earlier scene's recap has to wait; a repeated DetectSceneBreaks
//! makes a waiting detection due now; a disabled chat with a full queue
//! does not hold up other chats.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};

/// The story script, except that the first request matching `first`
/// answers 429 with this Retry-After.
fn refuse_first(
    first: impl Fn(&SeenRequest) -> bool + Send + Sync + 'static,
    retry_after: &'static str,
) -> impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static {
    let refused = Arc::new(AtomicBool::new(false));
    move |request: &SeenRequest| {
        if first(request) && !refused.swap(true, Ordering::SeqCst) {
            return Reply::Status {
                code: 429,
                retry_after: Some(retry_after.into()),
                body: "{}".into(),
            };
        }
        story(request)
    }
}

#[tokio::test]
async fn a_later_scene_is_not_merged_before_an_earlier_one_whose_recap_waits() {
    // The first scene's recap waits 2 s after a 429; meanwhile the second
    // break is found and its scene recapped.
    let llm = FakeLlm::start(refuse_first(
        |r| kind_of(&r.prompt) == "scene" && r.prompt.contains("Ann: line 0"),
        "2",
    ))
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "story", story_chat(40, &[11, 24])).await;
    recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "story".into(),
        })
        .await
        .expect("detection queued");
    wait_for_jobs(&mut recaps, "story", "the pipeline", |jobs| {
        jobs.len() >= 6 && all_finished(jobs)
    })
    .await;
    let list = recaps_of(&mut server, "story").await;
    let contents: Vec<&str> = list.versions.iter().map(|v| v.content.as_str()).collect();
    assert_eq!(
        contents,
        [
            "12 lines, Ann: line 0 to Bob: line 11 [END]",
            "12 lines, Ann: line 0 to Bob: line 11 [END] / 13 lines, Ann: line 12 to Ann: line 24 [END]",
        ],
        "the first scene is merged first and the second builds on it"
    );
    assert_eq!(list.current_version, Some(list.versions[1].version));
    server.stop().await;
}

#[tokio::test]
async fn asking_again_for_a_detection_that_waits_out_a_retry_after_runs_it_now() {
    let llm = FakeLlm::start(refuse_first(|r| kind_of(&r.prompt) == "detect", "30")).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "story", story_chat(40, &[11])).await;
    let first = recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "story".into(),
        })
        .await
        .expect("detection queued")
        .into_inner();
    wait_for_jobs(&mut recaps, "story", "the first attempt to fail", |jobs| {
        jobs.iter()
            .any(|j| j.attempts == 1 && state(j) == pb::JobState::Pending)
    })
    .await;
    let again = recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "story".into(),
        })
        .await
        .expect("asked again")
        .into_inner();
    assert_eq!(again.job_id, first.job_id, "the same job, not a second one");
    let jobs = wait_for_jobs(&mut recaps, "story", "the detection to run again", |jobs| {
        jobs.iter()
            .any(|j| j.job_id == first.job_id && state(j) == pb::JobState::Succeeded)
    })
    .await;
    let detection = jobs
        .iter()
        .find(|j| j.job_id == first.job_id)
        .expect("listed");
    assert_eq!(detection.attempts, 2);
    server.stop().await;
}

#[tokio::test]
async fn a_disabled_chat_with_a_full_queue_does_not_hold_up_other_chats() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "paused", story_chat(1000, &[])).await;
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "paused".into(),
            enabled: false,
        })
        .await
        .expect("disable");
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "paused".into(),
            message_ids: (0..1000).map(|i| format!("m{i}")).collect(),
        })
        .await
        .expect("1000 queued");
    open_chat(&mut server, "other", story_chat(4, &[])).await;
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "other".into(),
            message_ids: vec!["m1".into()],
        })
        .await
        .expect("queued");
    wait_for_jobs(&mut recaps, "other", "the other chat's job", |jobs| {
        jobs.iter().all(|j| state(j) == pb::JobState::Succeeded)
    })
    .await;
    assert_eq!(llm.requests().len(), 1, "the paused chat asked nothing");
    tokio::time::sleep(Duration::from_millis(100)).await;
    server.stop().await;
}
