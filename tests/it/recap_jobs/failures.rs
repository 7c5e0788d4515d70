//! Failures, retries, cancellation, limits, and the requests in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};

#[tokio::test]
async fn server_errors_and_rate_limits_are_retried_until_an_answer_comes() {
    let count = Arc::new(AtomicUsize::new(0));
    let calls = count.clone();
    let llm =
        FakeLlm::start(
            move |request: &SeenRequest| match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Reply::Status {
                    code: 500,
                    retry_after: None,
                    body: "boom".into(),
                },
                1 => Reply::Status {
                    code: 429,
                    retry_after: Some("1".into()),
                    body: r#"{"error":{"message":"slow down"}}"#.into(),
                },
                2 => Reply::Raw("not json at all".into()),
                _ => Reply::Answer(as_the_model_writes(request, story_answer(&request.prompt))),
            },
        )
        .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "flaky", story_chat(4, &[])).await;
    let started = std::time::Instant::now();
    let queued = recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "flaky".into(),
            message_ids: vec!["m1".into()],
        })
        .await
        .expect("queued")
        .into_inner();
    let jobs = wait_for_jobs(&mut recaps, "flaky", "the retried job", all_finished).await;
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].job_id, queued.jobs[0].job_id);
    assert_eq!(state(&jobs[0]), pb::JobState::Succeeded, "{:?}", jobs[0]);
    assert_eq!(jobs[0].attempts, 4);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert_eq!(
        data_of(&mut server, "flaky", "m1").await.memory.as_deref(),
        Some("short: line 1")
    );
    server.stop().await;
}

#[tokio::test]
async fn an_authorization_error_fails_at_once_cancels_the_waiting_merge_and_retry_runs_both() {
    let authorized = Arc::new(AtomicBool::new(false));
    let allow = authorized.clone();
    let llm = FakeLlm::start(move |request: &SeenRequest| {
        if allow.load(Ordering::SeqCst) {
            Reply::Answer(as_the_model_writes(request, story_answer(&request.prompt)))
        } else {
            Reply::Slow(
                Duration::from_millis(400),
                Box::new(Reply::Status {
                    code: 401,
                    retry_after: None,
                    body: r#"{"error":{"message":"bad key"}}"#.into(),
                }),
            )
        }
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "auth", story_chat(8, &[])).await;
    let scene = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "auth".into(),
            message_id: "m5".into(),
        })
        .await
        .expect("queued")
        .into_inner();
    let merge = recaps
        .generate_running_recap(pb::GenerateRunningRecapRequest {
            chat_id: "auth".into(),
            message_id: "m5".into(),
        })
        .await
        .expect("the merge waits for the scene recap")
        .into_inner();
    let jobs = wait_for_jobs(&mut recaps, "auth", "the failure", all_finished).await;
    let find = |jobs: &[pb::Job], id: &str| {
        jobs.iter()
            .find(|j| j.job_id == id)
            .cloned()
            .expect("job listed")
    };
    let failed = find(&jobs, &scene.job_id);
    assert_eq!(state(&failed), pb::JobState::Failed);
    assert_eq!(failed.attempts, 1, "401 is not retried");
    assert!(failed.last_error.contains("401"), "{failed:?}");
    let cancelled = find(&jobs, &merge.job_id);
    assert_eq!(state(&cancelled), pb::JobState::Cancelled);
    assert!(cancelled.result.contains(&scene.job_id), "{cancelled:?}");

    // RetryJob of a job that is not failed or cancelled is refused.
    let err = recaps
        .retry_job(pb::RetryJobRequest {
            job_id: "nope".into(),
        })
        .await
        .expect_err("unknown job");
    assert_eq!(err.code(), Code::NotFound);

    authorized.store(true, Ordering::SeqCst);
    let retried = recaps
        .retry_job(pb::RetryJobRequest {
            job_id: scene.job_id.clone(),
        })
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(state(&retried), pb::JobState::Pending);
    assert_eq!(retried.attempts, 0);
    let jobs = wait_for_jobs(&mut recaps, "auth", "the retried pair", |jobs| {
        all_finished(jobs) && jobs.iter().all(|j| state(j) == pb::JobState::Succeeded)
    })
    .await;
    assert_eq!(
        jobs.len(),
        2,
        "the merge ran again as itself, not as a second job: {jobs:#?}"
    );
    assert_eq!(recaps_of(&mut server, "auth").await.versions.len(), 1);
    let again = recaps
        .retry_job(pb::RetryJobRequest {
            job_id: scene.job_id.clone(),
        })
        .await
        .expect_err("a succeeded job cannot be retried");
    assert_eq!(again.code(), Code::FailedPrecondition);
    server.stop().await;
}

#[tokio::test]
async fn unusable_answers_fail_the_job_after_the_last_attempt() {
    let llm = FakeLlm::start(|_: &SeenRequest| Reply::Answer("I would rather not.".into())).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |config| {
        config.llm.llm_max_attempts = 2;
    })
    .await;
    open_chat(&mut server, "junk", story_chat(4, &[])).await;
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "junk".into(),
            message_ids: vec!["m2".into()],
        })
        .await
        .expect("queued");
    let jobs = wait_for_jobs(&mut recaps, "junk", "the job to fail", all_finished).await;
    assert_eq!(state(&jobs[0]), pb::JobState::Failed);
    assert_eq!(jobs[0].attempts, 2);
    assert!(
        jobs[0]
            .last_error
            .starts_with("the answer was not JSON (error id "),
        "{:?}",
        jobs[0]
    );
    assert_eq!(data_of(&mut server, "junk", "m2").await.memory, None);
    server.stop().await;
}

#[tokio::test]
async fn without_an_llm_generation_is_refused_and_the_rest_works() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path()).await;
    let mut recaps = RecapServiceClient::new(server.channel.clone());
    server
        .publish("plain", common::chat_changed(story_chat(3, &[])))
        .await
        .expect("chat");
    let refused = [
        recaps
            .detect_scene_breaks(pb::DetectSceneBreaksRequest {
                chat_id: "plain".into(),
            })
            .await
            .map(|_| ()),
        recaps
            .generate_scene_recap(pb::GenerateSceneRecapRequest {
                chat_id: "plain".into(),
                message_id: "m1".into(),
            })
            .await
            .map(|_| ()),
        recaps
            .generate_running_recap(pb::GenerateRunningRecapRequest {
                chat_id: "plain".into(),
                message_id: "m1".into(),
            })
            .await
            .map(|_| ()),
        recaps
            .generate_message_recaps(pb::GenerateMessageRecapsRequest {
                chat_id: "plain".into(),
                message_ids: vec!["m1".into()],
            })
            .await
            .map(|_| ()),
        recaps
            .retry_job(pb::RetryJobRequest { job_id: "x".into() })
            .await
            .map(|_| ()),
    ];
    for answer in refused {
        let status = answer.expect_err("refused without --llm-url");
        assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
        assert!(status.message().contains("--llm-url"), "{status:?}");
    }
    assert!(jobs_of(&mut recaps, "plain").await.is_empty());
    let unknown = recaps
        .cancel_job(pb::CancelJobRequest { job_id: "x".into() })
        .await
        .expect_err("no such job");
    assert_eq!(unknown.code(), Code::NotFound);
    assert_eq!(
        data_of(&mut server, "plain", "m1").await.scene_break,
        None,
        "nothing was touched"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_disabled_chat_keeps_its_jobs_pending_and_cancel_and_retry_move_them() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |config| {
        config.llm.max_jobs_per_chat = 2;
    })
    .await;
    open_chat(&mut server, "paused", story_chat(6, &[])).await;
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "paused".into(),
            enabled: false,
        })
        .await
        .expect("disable");
    let over = recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "paused".into(),
            message_ids: vec!["m1".into(), "m2".into(), "m3".into()],
        })
        .await
        .expect_err("past --max-jobs-per-chat");
    assert_eq!(over.code(), Code::ResourceExhausted);
    assert!(
        jobs_of(&mut recaps, "paused").await.is_empty(),
        "all or none"
    );
    let queued = recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "paused".into(),
            message_ids: vec!["m1".into(), "m2".into()],
        })
        .await
        .expect("two fit")
        .into_inner()
        .jobs;
    let full = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "paused".into(),
            message_id: "m4".into(),
        })
        .await
        .expect_err("the chat is full");
    assert_eq!(full.code(), Code::ResourceExhausted);
    assert_eq!(
        data_of(&mut server, "paused", "m4").await.scene_break,
        None,
        "a refused request changes nothing"
    );

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let jobs = jobs_of(&mut recaps, "paused").await;
    assert!(
        jobs.iter().all(|j| state(j) == pb::JobState::Pending),
        "{jobs:#?}"
    );
    assert!(llm.requests().is_empty());

    let cancelled = recaps
        .cancel_job(pb::CancelJobRequest {
            job_id: queued[0].job_id.clone(),
        })
        .await
        .expect("cancel")
        .into_inner();
    assert_eq!(state(&cancelled), pb::JobState::Cancelled);
    let twice = recaps
        .cancel_job(pb::CancelJobRequest {
            job_id: queued[0].job_id.clone(),
        })
        .await
        .expect_err("already cancelled");
    assert_eq!(twice.code(), Code::FailedPrecondition);
    recaps
        .retry_job(pb::RetryJobRequest {
            job_id: queued[0].job_id.clone(),
        })
        .await
        .expect("retry a cancelled job");
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "paused".into(),
            enabled: true,
        })
        .await
        .expect("enable");
    let jobs = wait_for_jobs(
        &mut recaps,
        "paused",
        "the jobs to run once enabled",
        |jobs| all_finished(jobs) && jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
    )
    .await;
    assert_eq!(jobs.len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn requests_in_flight_stay_within_the_concurrency_and_chats_take_turns() {
    let llm = FakeLlm::start(|request: &SeenRequest| {
        Reply::Slow(
            Duration::from_millis(150),
            Box::new(Reply::Answer(as_the_model_writes(
                request,
                story_answer(&request.prompt),
            ))),
        )
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |config| {
        config.llm.llm_concurrency = 2;
    })
    .await;
    let chats = ["c0", "c1", "c2", "c3", "c4"];
    for chat in chats {
        let messages = (0..3)
            .map(|i| pb::Message {
                id: format!("m{i}"),
                text: format!("{chat} line {i}"),
                name: "Bob".into(),
                ..Default::default()
            })
            .collect();
        open_chat(&mut server, chat, messages).await;
    }
    for chat in chats {
        recaps
            .generate_message_recaps(pb::GenerateMessageRecapsRequest {
                chat_id: chat.into(),
                message_ids: vec!["m0".into(), "m1".into(), "m2".into()],
            })
            .await
            .expect("queued");
    }
    for chat in chats {
        wait_for_jobs(&mut recaps, chat, "the chat's recaps", |jobs| {
            jobs.len() == 3 && jobs.iter().all(|j| state(j) == pb::JobState::Succeeded)
        })
        .await;
    }
    assert!(
        llm.max_in_flight() <= 2,
        "{} in flight",
        llm.max_in_flight()
    );
    assert_eq!(llm.max_in_flight(), 2, "both places were used");
    let first: std::collections::BTreeSet<String> = llm.requests()[..5]
        .iter()
        .map(|r| r.prompt.lines().nth(1).unwrap_or("")[..2].to_owned())
        .collect();
    assert_eq!(
        first.len(),
        5,
        "the first five requests served five chats: {first:?}"
    );
    server.stop().await;
}
