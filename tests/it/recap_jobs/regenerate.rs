//! Regenerating the running recap from every scene recap, and merges of an
//! older scene that no longer shrink the memory (issue 43, item 4).

use recapd::grpc::pb;
use serde_json::json;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};

/// The story script, but a merge answers its whole input: the running
/// recap it edits, then every scene recap it was sent (a regeneration
/// sends several, each under its "[Scene N: name]" line).
fn merge_echoes(request: &SeenRequest) -> Reply {
    if kind_of(&request.prompt) != "merge" {
        return story(request);
    }
    let (head, scenes) = request
        .prompt
        .split_once("SCENE=")
        .expect("the scripted merge prompt");
    let base = head
        .lines()
        .find_map(|l| l.strip_prefix("BASE="))
        .unwrap_or("");
    let recap = format!("{base} | {}", scenes.replace('\n', " "));
    Reply::Answer(as_the_model_writes(
        request,
        json!({ "recap": recap }).to_string(),
    ))
}

/// Makes message `id` a visible break named `name` with scene recap `recap`.
async fn scene(server: &mut Server, chat: &str, id: &str, name: &str, recap: &str) {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            chat_id: chat.into(),
            message_id: id.into(),
            data: Some(pb::MessageData {
                scene_break: Some(true),
                scene_break_visible: Some(true),
                scene_break_name: Some(name.into()),
                scene_recap_memory: Some(recap.into()),
                ..Default::default()
            }),
            edit: false,
        })
        .await
        .expect("scene set");
}

fn current(list: &pb::ListRunningRecapsResponse) -> &pb::RunningRecapVersion {
    list.versions
        .iter()
        .find(|v| Some(v.version) == list.current_version)
        .expect("a current version")
}

async fn three_scenes(server: &mut Server) {
    open_chat(server, "c", story_chat(12, &[])).await;
    scene(server, "c", "m3", "The harbour", "They meet.").await;
    scene(server, "c", "m7", "The race", "They race.").await;
    scene(server, "c", "m11", "The parting", "They part.").await;
}

async fn regenerate(recaps: &mut RecapServiceClient<Channel>) -> pb::Job {
    recaps
        .regenerate_running_recap(pb::RegenerateRunningRecapRequest {
            chat_id: "c".into(),
        })
        .await
        .expect("regeneration queued")
        .into_inner()
}

#[tokio::test]
async fn regenerating_reads_every_scene_but_the_newest_and_edits_the_current_version() {
    let llm = FakeLlm::start(merge_echoes).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    three_scenes(&mut server).await;
    let job = regenerate(&mut recaps).await;
    assert_eq!(kind(&job), pb::JobKind::RegenerateRunningRecap);
    wait_for_jobs(&mut recaps, "c", "the regeneration", all_finished).await;
    let list = recaps_of(&mut server, "c").await;
    let first = current(&list).clone();
    // The default running_recap_exclude_latest (1) holds back the newest
    // (the answer is trimmed).
    assert_eq!(
        first.content,
        "| [Scene 1: The harbour] They meet.  [Scene 2: The race] They race."
    );
    assert_eq!(
        (first.scene_count, first.excluded_count),
        (2, 1),
        "{first:?}"
    );
    assert_eq!(first.new_scene_message_id, "m7");

    // Holding back none, it reads all three and edits the current version.
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: "c".into(),
            settings: Some(pb::Settings {
                running_recap_exclude_latest: Some(0),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .expect("setting");
    regenerate(&mut recaps).await;
    wait_for_jobs(&mut recaps, "c", "the second regeneration", |jobs| {
        jobs.len() >= 2 && all_finished(jobs)
    })
    .await;
    let list = recaps_of(&mut server, "c").await;
    let second = current(&list);
    assert!(
        second.content.starts_with(&first.content),
        "it edits the current version: {second:?}"
    );
    assert!(
        second
            .content
            .ends_with("[Scene 3: The parting] They part.")
    );
    assert_eq!((second.scene_count, second.excluded_count), (3, 0));
}

#[tokio::test]
async fn regenerating_a_chat_without_scene_recaps_is_refused() {
    let llm = FakeLlm::start(merge_echoes).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "c", story_chat(6, &[])).await;
    let err = recaps
        .regenerate_running_recap(pb::RegenerateRunningRecapRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::FailedPrecondition);
}

#[tokio::test]
async fn merging_an_older_scene_again_does_not_shrink_the_memory() {
    let llm = FakeLlm::start(merge_echoes).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    three_scenes(&mut server).await;
    let client = recaps.clone();
    let merge = |id: &'static str| {
        let mut recaps = client.clone();
        async move {
            recaps
                .generate_running_recap(pb::GenerateRunningRecapRequest {
                    chat_id: "c".into(),
                    message_id: id.into(),
                })
                .await
                .expect("merge queued");
        }
    };
    for id in ["m3", "m7", "m11"] {
        merge(id).await;
    }
    wait_for_jobs(&mut recaps, "c", "three merges", |jobs| {
        jobs.len() >= 3 && all_finished(jobs)
    })
    .await;
    let before = recaps_of(&mut server, "c").await;
    assert_eq!(current(&before).new_scene_message_id, "m11");

    // The first scene is merged again (as after a new recap of it): the
    // memory goes on to cover m11, not just m3.
    merge("m3").await;
    let jobs = wait_for_jobs(&mut recaps, "c", "the rebuild", |jobs| {
        jobs.len() >= 6 && all_finished(jobs)
    })
    .await;
    assert!(
        jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
        "{jobs:#?}"
    );
    let after = recaps_of(&mut server, "c").await;
    let now = current(&after);
    assert_eq!(now.new_scene_message_id, "m11", "{after:#?}");
    assert_eq!(now.scene_count, 3);
    assert_eq!(after.versions.len(), 6, "three merges, then three again");
    // While the rebuild ran, the versions of m3 and m7 were added without
    // becoming current.
    let newest_m3 = after.versions[3].clone();
    assert_eq!(newest_m3.new_scene_message_id, "m3");
    assert_ne!(after.current_version, Some(newest_m3.version));
}
