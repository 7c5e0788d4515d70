//! Structured answers and answer checks over a real socket: every
//! `llm_structured_output` setting runs the whole pipeline, against a model
//! that follows the schema it is sent and against one that ignores it;
//! answers that parse but must not land (the instructions' placeholder, a
//! merge that lost the story) end the job FAILED with the running recap
//! untouched.

use recapd::grpc::pb;
use serde_json::json;

use super::*;
use crate::common::fake_llm::{FakeLlm, SeenRequest};

/// How the fake treats `response_format`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Model {
    /// Answers bare JSON that the schema allows when one is sent (and
    /// panics, failing the test, when the story's answer is one the schema
    /// forbids); prose around JSON when none is.
    Follows,
    /// Answers prose around JSON whatever it is sent.
    Ignores,
}

/// The story's answer as `model` gives it to `seen`.
fn answer(model: Model, seen: &SeenRequest) -> Reply {
    let text = story_answer(&seen.prompt);
    match model {
        Model::Follows => Reply::answer(following_the_schema(seen, text)),
        Model::Ignores => Reply::answer(format!("Sure! Here it is:\n{text}\nHope that helps.")),
    }
}

fn format_type(seen: &SeenRequest) -> Option<String> {
    seen.response_format
        .as_ref()
        .and_then(|f| f["type"].as_str())
        .map(str::to_owned)
}

#[tokio::test]
async fn every_structured_output_setting_runs_the_pipeline_with_models_that_follow_or_ignore_the_schema()
 {
    for setting in [
        pb::StructuredOutput::Auto,
        pb::StructuredOutput::JsonSchema,
        pb::StructuredOutput::JsonObject,
        pb::StructuredOutput::Off,
    ] {
        for model in [Model::Follows, Model::Ignores] {
            let llm = FakeLlm::start(move |seen| answer(model, seen)).await;
            let dir = tempfile::tempdir().expect("temp dir");
            let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
            let case = format!("{setting:?} with a model that {model:?}");
            open_chat(&mut server, "story", story_chat(40, &[11, 24, 36])).await;
            server
                .update_settings(
                    "story",
                    pb::Settings {
                        llm_structured_output: Some(setting.into()),
                        ..Default::default()
                    },
                )
                .await;
            recaps
                .detect_scene_breaks(pb::DetectSceneBreaksRequest {
                    chat_id: "story".into(),
                })
                .await
                .expect("detection queued");
            let jobs = wait_for_jobs(&mut recaps, "story", &case, |jobs| {
                jobs.len() >= 6 && all_finished(jobs)
            })
            .await;
            assert!(
                jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
                "{case}: {jobs:#?}"
            );
            let list = recaps_of(&mut server, "story").await;
            assert_eq!(
                list.versions.last().map(|v| v.content.as_str()),
                Some(
                    "12 lines, Ann: line 0 to Bob: line 11 [END] / 13 lines, Ann: line 12 to Ann: line 24 [END]"
                ),
                "{case}"
            );
            let seen = llm.requests();
            assert_eq!(seen.len(), 6, "{case}: one request per job");
            for request in &seen {
                let sent = format_type(request);
                let expected = match setting {
                    pb::StructuredOutput::JsonObject => Some("json_object"),
                    pb::StructuredOutput::Off => None,
                    _ => Some("json_schema"),
                };
                assert_eq!(sent.as_deref(), expected, "{case}: {request:?}");
                if expected == Some("json_schema") {
                    let format = request.response_format.as_ref().expect("sent");
                    let name = format["json_schema"]["name"].as_str().unwrap_or("");
                    let kind = kind_of(&request.prompt);
                    let expected_name = match kind {
                        "detect" => "scene_break",
                        "scene" => "scene_recap",
                        "merge" => "running_recap",
                        other => panic!("{case}: unexpected kind {other}"),
                    };
                    assert_eq!(name, expected_name, "{case}");
                    assert_eq!(format["json_schema"]["strict"], json!(true), "{case}");
                }
            }
            server.stop().await;
        }
    }
}

/// recapd's default prompts, answered by kind (told by the schema's name)
/// with `merge` as the merge's `recap`.
fn default_prompt_model(merge: &'static str) -> impl Fn(&SeenRequest) -> Reply + Send + Sync {
    move |seen| {
        let schema = seen.schema().expect("AUTO sends the schema");
        let name = seen.response_format.as_ref().expect("sent")["json_schema"]["name"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        Reply::answer(match name.as_str() {
            "scene_break" => {
                let first = schema["properties"]["scene_break_at"]["anyOf"][0]["enum"][0].clone();
                json!({"rationale": "the scene ends", "scene_break_at": first}).to_string()
            }
            "scene_recap" => {
                json!({"recap": "Ann and Bob spoke at length.", "scene_name": "Talk"}).to_string()
            }
            "running_recap" => json!({ "recap": merge }).to_string(),
            other => panic!("unexpected schema {other}"),
        })
    }
}

/// Waits until `chat` has a merge and every job finished; returns the
/// jobs and the merge.
async fn the_merge(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
) -> (Vec<pb::Job>, pb::Job) {
    let jobs = wait_for_jobs(recaps, chat, "the merge to end", |jobs| {
        jobs.iter().any(|j| kind(j) == pb::JobKind::RunningRecap) && all_finished(jobs)
    })
    .await;
    let merge = jobs
        .iter()
        .find(|j| kind(j) == pb::JobKind::RunningRecap)
        .cloned()
        .expect("a merge");
    (jobs, merge)
}

/// A server whose jobs get 2 attempts, with `chat` open on 30 plain
/// messages and recapd's default prompts.
async fn default_prompt_server(
    dir: &std::path::Path,
    llm: &FakeLlm,
    chat: &str,
) -> (Server, RecapServiceClient<Channel>) {
    let (mut server, recaps) = start_with_llm(dir, &llm.url(), |config| {
        config.llm.llm_max_attempts = 2;
    })
    .await;
    server
        .publish(chat, common::chat_changed(story_chat(30, &[])))
        .await
        .expect("chat opened");
    (server, recaps)
}

#[tokio::test]
async fn a_merge_that_answers_its_placeholder_fails_and_leaves_the_running_recap_alone() {
    // SmolLM2-135M, constrained to the schema, answered exactly this.
    let llm = FakeLlm::start(default_prompt_model("<the new memory>")).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = default_prompt_server(dir.path(), &llm, "ph").await;
    recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "ph".into(),
        })
        .await
        .expect("detection queued");
    let (jobs, merge) = the_merge(&mut recaps, "ph").await;
    assert_eq!(state(&merge), pb::JobState::Failed, "{merge:?}");
    assert_eq!(merge.attempts, 2, "retried like a malformed answer");
    // The reason is recapd's own words: the answer's text (the
    // placeholder it copied) is in the log only.
    assert!(
        merge.last_error.contains("placeholder") && !merge.last_error.contains("<the new memory>"),
        "{}",
        merge.last_error
    );
    assert!(
        jobs.iter()
            .filter(|j| kind(j) == pb::JobKind::SceneRecap)
            .all(|j| state(j) == pb::JobState::Succeeded),
        "the scene recap itself landed: {jobs:#?}"
    );
    assert!(
        recaps_of(&mut server, "ph").await.versions.is_empty(),
        "no running recap was made"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_merge_far_shorter_than_what_it_builds_on_fails_and_the_current_version_stays() {
    let llm = FakeLlm::start(default_prompt_model("Ann left.")).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = default_prompt_server(dir.path(), &llm, "short").await;
    let long = "Ann and Bob crossed the mountains and found the lost city. ".repeat(20);
    server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "short".into(),
            content: long.clone(),
            scene_count: 1,
            new_scene_message_id: "m1".into(),
            ..Default::default()
        })
        .await
        .expect("a running recap to build on");
    recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "short".into(),
        })
        .await
        .expect("detection queued");
    let (_, merge) = the_merge(&mut recaps, "short").await;
    assert_eq!(state(&merge), pb::JobState::Failed, "{merge:?}");
    assert!(
        merge.last_error.contains("running_recap_min_ratio 0.2"),
        "{}",
        merge.last_error
    );
    let list = recaps_of(&mut server, "short").await;
    assert_eq!(list.versions.len(), 1, "no new version");
    assert_eq!(list.versions[0].content, long);
    assert_eq!(list.current_version, Some(list.versions[0].version));

    // With the check off, the same answer lands.
    server
        .update_settings(
            "short",
            pb::Settings {
                running_recap_min_ratio: Some(0.0),
                ..Default::default()
            },
        )
        .await;
    recaps
        .retry_job(pb::RetryJobRequest {
            job_id: merge.job_id.clone(),
        })
        .await
        .expect("retried");
    wait_for_jobs(&mut recaps, "short", "the retried merge", |jobs| {
        all_finished(jobs)
            && jobs.iter().any(|j| {
                kind(j) == pb::JobKind::RunningRecap && state(j) == pb::JobState::Succeeded
            })
    })
    .await;
    let list = recaps_of(&mut server, "short").await;
    assert_eq!(
        list.versions.last().map(|v| v.content.as_str()),
        Some("Ann left.")
    );
    server.stop().await;
}
