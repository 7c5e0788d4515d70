//! Jobs survive kill -9: after a restart, queued and running jobs run
//! again and every result is applied at most once; on PostgreSQL, a
//! replica killed in the middle of a job loses its lease and another
//! replica finishes the job, applying it once.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};
use crate::common::process::Recapd;
use crate::common::replicas::fresh_schema;

fn slow_story(request: &SeenRequest) -> Reply {
    Reply::Slow(
        Duration::from_millis(250),
        Box::new(Reply::Answer(as_the_model_writes(
            request,
            story_answer(&request.prompt),
        ))),
    )
}

#[tokio::test]
async fn killed_at_any_point_of_the_pipeline_a_restart_finishes_it_and_applies_each_result_once() {
    let llm = FakeLlm::start(slow_story).await;
    for kill_after in [1, 3, 5] {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut first = recapd_with_llm(dir.path(), dir.path(), &llm.url(), &[]);
        let mut server = Server::clients(first.channel().await);
        let mut recaps = RecapServiceClient::new(server.channel.clone());
        let before = llm.requests().len();
        open_chat(&mut server, "story", story_chat(40, &[11, 24])).await;
        recaps
            .detect_scene_breaks(pb::DetectSceneBreaksRequest {
                chat_id: "story".into(),
            })
            .await
            .expect("queued");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while llm.requests().len() < before + kill_after {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the pipeline stalled"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Mid-request: the answer of this attempt never arrives.
        first.kill9();
        drop((server, recaps));

        let second = recapd_with_llm(dir.path(), dir.path(), &llm.url(), &[]);
        let mut server = Server::clients(second.channel().await);
        let mut recaps = RecapServiceClient::new(server.channel.clone());
        let jobs = wait_for_jobs(
            &mut recaps,
            "story",
            "the pipeline after a restart",
            |jobs| {
                all_finished(jobs)
                    && jobs
                        .iter()
                        .filter(|j| {
                            kind(j) == pb::JobKind::RunningRecap
                                && state(j) == pb::JobState::Succeeded
                        })
                        .count()
                        == 2
            },
        )
        .await;
        let list = recaps_of(&mut server, "story").await;
        assert_eq!(
            list.versions
                .iter()
                .map(|v| v.content.as_str())
                .collect::<Vec<_>>(),
            [
                "12 lines, Ann: line 0 to Bob: line 11 [END]",
                "12 lines, Ann: line 0 to Bob: line 11 [END] / 13 lines, Ann: line 12 to Ann: line 24 [END]",
            ],
            "killed after request {kill_after}: each merge applied once, in order; jobs {jobs:#?}"
        );
        for id in ["m11", "m24"] {
            assert_eq!(
                data_of(&mut server, "story", id).await.scene_break,
                Some(true)
            );
        }
        let breaks = jobs
            .iter()
            .filter(|j| kind(j) == pb::JobKind::SceneRecap && state(j) == pb::JobState::Succeeded)
            .count();
        assert_eq!(breaks, 2, "one scene recap per break: {jobs:#?}");
        drop(second);
    }
}

#[tokio::test]
async fn a_replica_killed_mid_job_loses_its_lease_and_the_other_applies_the_result_once() {
    if !crate::common::on_postgres() {
        // Replicas need the shared store; this test runs in the PostgreSQL pass.
        eprintln!("skipped here: runs with RECAPD_TEST_STORE=postgres");
        return;
    }
    // A's request (the first) is held for longer than the test runs, so A
    // is always killed before its answer: with a fixed delay for every
    // request, a B slow to start under load (over that delay) let A apply
    // its own answer first, and the job ended with 1 attempt. B's requests
    // are answered at once.
    let asked = AtomicUsize::new(0);
    let llm = FakeLlm::start(move |request: &SeenRequest| {
        let answer = Reply::Answer(as_the_model_writes(request, story_answer(&request.prompt)));
        if asked.fetch_add(1, Ordering::SeqCst) == 0 {
            answer.after(Duration::from_secs(600))
        } else {
            answer
        }
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = fresh_schema(dir.path());
    let replica = |name: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_recapd"));
        command
            .arg("--store")
            .arg(crate::common::test_database_url())
            .args(["--store-schema", &schema, "--resync-interval", "1"])
            .args([
                "--llm-url",
                &llm.url(),
                "--llm-model",
                "fake",
                "--job-lease",
                "3",
            ]);
        Recapd::start_with(command, &dir.path().join(name))
    };
    let mut doomed = replica("a");
    let mut a = Server::clients(doomed.channel().await);
    let mut on_a = RecapServiceClient::new(a.channel.clone());
    open_chat(&mut a, "shared", story_chat(8, &[])).await;
    on_a.generate_scene_recap(pb::GenerateSceneRecapRequest {
        chat_id: "shared".into(),
        message_id: "m5".into(),
    })
    .await
    .expect("queued on A");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while llm.requests().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "A never asked");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(
        kind_of(&llm.requests()[0].prompt),
        "scene",
        "A's held request is the scene recap's"
    );
    let survivor = replica("b");
    let mut b = Server::clients(survivor.channel().await);
    let mut on_b = RecapServiceClient::new(b.channel.clone());
    doomed.kill9();
    drop((a, on_a));
    let jobs = wait_for_jobs(&mut on_b, "shared", "B to take the job over", |jobs| {
        all_finished(jobs)
            && jobs.iter().any(|j| {
                kind(j) == pb::JobKind::RunningRecap && state(j) == pb::JobState::Succeeded
            })
    })
    .await;
    let scene = jobs
        .iter()
        .find(|j| kind(j) == pb::JobKind::SceneRecap)
        .expect("the scene recap job");
    assert_eq!(state(scene), pb::JobState::Succeeded);
    assert_eq!(
        scene.attempts, 2,
        "A's attempt died with it; B made the second"
    );
    assert_eq!(recaps_of(&mut b, "shared").await.versions.len(), 1);
    assert_eq!(
        data_of(&mut b, "shared", "m5")
            .await
            .scene_recap_memory
            .as_deref(),
        Some("6 lines, Ann: line 0 to Bob: line 5")
    );
    drop(survivor);
}
