//! DeleteChat of a chat whose jobs are under way: every job ends for its
//! WatchJobs readers, its rows are gone with the chat, and the answer of
//! the job that was running when the chat went changes nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn deleting_a_chat_ends_its_jobs_and_drops_the_running_ones_late_answer() {
    // The LLM answers after 1.5 s: the scene recap is still running when
    // the chat is deleted, and the merge still waits for it.
    let llm = FakeLlm::start(|request| story(request).after(Duration::from_millis(1500))).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "doomed", story_chat(8, &[])).await;
    let mut watch = recaps
        .watch_jobs(pb::WatchJobsRequest {
            chat_ids: vec!["doomed".into()],
        })
        .await
        .expect("watch")
        .into_inner();
    let scene = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "doomed".into(),
            message_id: "m5".into(),
        })
        .await
        .expect("queued")
        .into_inner();
    let merge = recaps
        .generate_running_recap(pb::GenerateRunningRecapRequest {
            chat_id: "doomed".into(),
            message_id: "m5".into(),
        })
        .await
        .expect("queued")
        .into_inner();
    let asked = tokio::time::Instant::now() + Duration::from_secs(10);
    while llm.requests().is_empty() {
        assert!(
            tokio::time::Instant::now() < asked,
            "the scene recap never ran"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    server
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "doomed".into(),
        })
        .await
        .expect("deleted");
    let mut last: BTreeMap<String, pb::JobState> = BTreeMap::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while [&scene.job_id, &merge.job_id]
        .iter()
        .any(|id| last.get(*id) != Some(&pb::JobState::Cancelled))
    {
        let job = tokio::time::timeout_at(deadline, watch.message())
            .await
            .unwrap_or_else(|_| panic!("both jobs end within 5 s; seen {last:?}"))
            .expect("the stream stays open")
            .expect("a job");
        last.insert(job.job_id.clone(), state(&job));
    }
    assert!(
        jobs_of(&mut recaps, "doomed").await.is_empty(),
        "erased with the chat"
    );

    // The running job's answer arrives, and is dropped.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(jobs_of(&mut recaps, "doomed").await.is_empty());
    let read = server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: "doomed".into(),
        })
        .await;
    assert_eq!(read.unwrap_err().code(), Code::NotFound);
    assert_eq!(llm.requests().len(), 1, "the merge never ran");
    server.stop().await;
}
