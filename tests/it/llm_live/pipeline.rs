//! The whole pipeline on a real model: the 76-message conversation
//! without breaks, `DetectSceneBreaks` once, with structured answers
//! (`llm_structured_output` AUTO, the default) and recapd's default
//! prompts; with lore writing on (`auto_lore`), whose jobs must succeed
//! or fail with a reason and never leave the chat's book corrupt or with
//! two entries for one entity.

use std::time::Duration;

use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use tonic::transport::Channel;

use super::{conversation, endpoint};
use crate::common;
use crate::recap_jobs::{all_finished, data_of, jobs_of, kind, recaps_of, start_with_llm, state};

/// The longest a real model's jobs may take here: SmolLM2-135M on one
/// thread answers a request in 5 to 40 s.
const PATIENCE: Duration = Duration::from_secs(25 * 60);

/// Waits until the chat has at least `at_least` jobs and all are
/// finished; returns them.
pub async fn wait_until_finished(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    at_least: usize,
) -> Vec<pb::Job> {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let jobs = jobs_of(recaps, chat).await;
        if jobs.len() >= at_least && all_finished(&jobs) {
            return jobs;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the jobs did not finish within {PATIENCE:?}: {jobs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A job ended as recapd promises: SUCCEEDED, or FAILED (or CANCELLED)
/// with its reason.
fn ended_with_a_reason(job: &pb::Job) -> bool {
    match state(job) {
        pb::JobState::Succeeded => true,
        pb::JobState::Failed => !job.last_error.is_empty() && !job.result.is_empty(),
        pb::JobState::Cancelled => !job.result.is_empty(),
        _ => false,
    }
}

fn summary(jobs: &[pb::Job]) -> String {
    let mut lines: Vec<String> = jobs
        .iter()
        .rev()
        .map(|j| {
            format!(
                "{:?} {} {:?} attempts={} result={:?} last_error={:?}",
                kind(j),
                j.message_id,
                state(j),
                j.attempts,
                j.result,
                j.last_error
            )
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

#[tokio::test]
async fn a_76_message_conversation_runs_the_whole_pipeline_on_a_real_model() {
    let Some((url, model)) = endpoint() else {
        return;
    };
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &url, |config| {
        config.llm.llm_model = model.clone();
        config.llm.llm_concurrency = 1;
        config.llm.llm_max_attempts = 5;
        config.llm.llm_timeout = Duration::from_secs(300);
        config.llm.llm_backoff_base = Duration::from_millis(100);
    })
    .await;
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "live".into(),
            settings: Some(pb::Settings {
                auto_lore: Some(true),
                ..pb::Settings::default()
            }),
            clear: vec![],
        })
        .await
        .expect("lore writing on");
    server
        .publish("live", common::chat_changed(conversation::messages()))
        .await
        .expect("chat opened");
    let mut pushes = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["live".into()],
            max_updates: 0,
        })
        .await
        .expect("subscribe")
        .into_inner();

    recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "live".into(),
        })
        .await
        .expect("detection queued");
    let jobs = wait_until_finished(&mut recaps, "live", 1).await;
    println!(
        "after DetectSceneBreaks ({:?}):\n{}",
        started.elapsed(),
        summary(&jobs)
    );
    let succeeded = |jobs: &[pb::Job], k: pb::JobKind| {
        jobs.iter()
            .any(|j| kind(j) == k && state(j) == pb::JobState::Succeeded)
    };
    // The model may find no break: the first session's end is then made
    // one by hand, as a client would, and recapped (then merged).
    let mut queued = 2;
    if !succeeded(&jobs, pb::JobKind::SceneRecap) {
        queued += 2;
        let first_boundary = format!("m{}", conversation::BOUNDARIES[0]);
        recaps
            .generate_scene_recap(pb::GenerateSceneRecapRequest {
                chat_id: "live".into(),
                message_id: first_boundary,
            })
            .await
            .expect("scene recap queued");
    }
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "live".into(),
            message_ids: vec!["m2".into(), "m41".into()],
        })
        .await
        .expect("message recaps queued");
    let mut jobs = wait_until_finished(&mut recaps, "live", jobs.len() + queued).await;
    println!("all jobs ({:?}):\n{}", started.elapsed(), summary(&jobs));
    // A kind whose every job FAILED (a tiny model can write five unusable
    // answers in a row) is retried, as a client would with RetryJob, at
    // most twice: the guarantees still hold for every attempt.
    for round in 1..=2 {
        let failed: Vec<String> = jobs
            .iter()
            .filter(|j| state(j) == pb::JobState::Failed && !succeeded(&jobs, kind(j)))
            .map(|j| j.job_id.clone())
            .collect();
        if failed.is_empty() {
            break;
        }
        for job_id in failed {
            recaps
                .retry_job(pb::RetryJobRequest { job_id })
                .await
                .expect("a failed job is retried");
        }
        jobs = wait_until_finished(&mut recaps, "live", jobs.len()).await;
        println!("after retry round {round}:\n{}", summary(&jobs));
    }

    for job in &jobs {
        assert!(ended_with_a_reason(job), "{job:#?}");
    }
    for k in [
        pb::JobKind::DetectSceneBreak,
        pb::JobKind::SceneRecap,
        pb::JobKind::RunningRecap,
        pb::JobKind::MessageRecap,
    ] {
        assert!(
            succeeded(&jobs, k),
            "no {k:?} succeeded:\n{}",
            summary(&jobs)
        );
    }

    // No running-recap version holds a placeholder (the one a merge
    // stored in issue 28's trial, or any text of that shape) or nothing.
    let list = recaps_of(&mut server, "live").await;
    for version in &list.versions {
        let text = version.content.trim();
        println!("running recap v{}: {text:?}", version.version);
        assert!(!text.is_empty());
        assert!(
            !(text.starts_with('<') && text.ends_with('>')),
            "a placeholder landed: {text:?}"
        );
    }
    let current = list
        .versions
        .iter()
        .find(|v| Some(v.version) == list.current_version)
        .expect("a merge made a current version");

    // Scene recaps and message recaps that landed are real text.
    for job in jobs.iter().filter(|j| state(j) == pb::JobState::Succeeded) {
        let data = data_of(&mut server, "live", &job.message_id).await;
        match kind(job) {
            pb::JobKind::SceneRecap => {
                let recap = data.scene_recap_memory.unwrap_or_default();
                assert!(
                    !recap.trim().is_empty() && !recap.starts_with('<'),
                    "{recap:?}"
                );
            }
            pb::JobKind::MessageRecap => {
                let recap = data.memory.unwrap_or_default();
                assert!(
                    !recap.trim().is_empty() && !recap.starts_with('<'),
                    "{recap:?}"
                );
            }
            _ => {}
        }
    }

    // The subscriber was pushed the current running recap.
    let mut latest = None;
    while let Some(pushed) = common::next_within(&mut pushes, 2).await {
        if pushed.text.contains(&current.content) {
            latest = Some(pushed);
        }
    }
    let latest = latest.expect("an injection with the current running recap was pushed");
    assert_eq!(common::trigger(&latest), pb::RefreshTrigger::RecapGenerated);

    check_the_lorebook(&mut server, &jobs).await;
    println!("the pipeline took {:?}", started.elapsed());
    server.stop().await;
}

/// The chat's lorebook after lore writing on a real model: an extraction
/// ran for the scene recapped; when something was written, the book is a
/// World Info file recapd can read back, with one entry per entity
/// (`<type>-<name>`, compared without case) and no empty entry.
async fn check_the_lorebook(server: &mut common::Server, jobs: &[pb::Job]) {
    let lore: Vec<&pb::Job> = jobs
        .iter()
        .filter(|j| {
            matches!(
                kind(j),
                pb::JobKind::LoreExtract
                    | pb::JobKind::LoreResolve
                    | pb::JobKind::LoreMerge
                    | pb::JobKind::LoreCompact
            )
        })
        .collect();
    assert!(
        lore.iter().any(|j| kind(j) == pb::JobKind::LoreExtract),
        "a scene recap queued no lore extraction:\n{}",
        summary(jobs)
    );
    let settings = server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: "live".into(),
        })
        .await
        .expect("settings")
        .into_inner();
    let book = settings.world_info_chat_book.unwrap_or_default();
    if book.is_empty() {
        println!("lore: nothing was written");
        return;
    }
    let json = LorebookServiceClient::new(server.channel.clone())
        .export_lorebook(pb::ExportLorebookRequest { name: book.clone() })
        .await
        .expect("the chat's book exports")
        .into_inner()
        .json;
    let file: serde_json::Value = serde_json::from_str(&json).expect("the book is JSON");
    let entries = file["entries"].as_object().expect("entries");
    let mut seen = std::collections::HashSet::new();
    for (uid, entry) in entries {
        let comment = entry["comment"].as_str().unwrap_or_default().to_lowercase();
        let content = entry["content"].as_str().unwrap_or_default();
        println!("lore entry {uid}: {comment} = {content:?}");
        assert!(!content.trim().is_empty(), "entry {uid} is empty");
        assert!(seen.insert(comment.clone()), "two entries for {comment}");
    }
}
