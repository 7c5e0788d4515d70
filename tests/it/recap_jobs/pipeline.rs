//! The whole pipeline: breaks found, scenes recapped, recaps merged in
//! order into new running-recap versions, and the new injection pushed.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn a_40_message_chat_gets_its_breaks_scene_recaps_and_merges_and_the_injection_is_pushed() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    // With the default offset (8) and minimum (10): the first detection may
    // break at 10..=31 and finds m11; the next sees m12..m39, may break at
    // 22..=31 and finds m24; then too few eligible messages remain.
    open_chat(&mut server, "story", story_chat(40, &[11, 24, 36])).await;
    let mut pushes = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["story".into()],
            max_updates: 0,
        })
        .await
        .expect("subscribe")
        .into_inner();

    let detection = recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: "story".into(),
        })
        .await
        .expect("detection queued")
        .into_inner();
    assert_eq!(kind(&detection), pb::JobKind::DetectSceneBreak);
    assert_eq!(state(&detection), pb::JobState::Pending);

    let jobs = wait_for_jobs(&mut recaps, "story", "the pipeline to finish", |jobs| {
        jobs.len() >= 6 && all_finished(jobs)
    })
    .await;
    let mut kinds: Vec<(pb::JobKind, String)> = jobs
        .iter()
        .map(|j| {
            assert_eq!(state(j), pb::JobState::Succeeded, "{j:?}");
            (kind(j), j.message_id.clone())
        })
        .collect();
    kinds.sort_by_key(|(k, m)| (*k as i32, m.clone()));
    assert_eq!(
        kinds,
        [
            (pb::JobKind::DetectSceneBreak, "m39".to_owned()),
            (pb::JobKind::DetectSceneBreak, "m39".to_owned()),
            (pb::JobKind::SceneRecap, "m11".to_owned()),
            (pb::JobKind::SceneRecap, "m24".to_owned()),
            (pb::JobKind::RunningRecap, "m11".to_owned()),
            (pb::JobKind::RunningRecap, "m24".to_owned()),
        ],
        "two detections (each examined up to the newest message), two scene recaps, two merges"
    );

    let first = data_of(&mut server, "story", "m11").await;
    assert_eq!(first.scene_break, Some(true));
    assert_eq!(
        first.scene_recap_memory.as_deref(),
        Some("12 lines, Ann: line 0 to Bob: line 11 [END]")
    );
    assert_eq!(first.scene_break_name.as_deref(), Some("from Ann: line 0"));
    let second = data_of(&mut server, "story", "m24").await;
    assert_eq!(
        second.scene_recap_memory.as_deref(),
        Some("13 lines, Ann: line 12 to Ann: line 24 [END]")
    );
    assert_eq!(
        data_of(&mut server, "story", "m36").await.scene_break,
        None,
        "m36 is among the newest 8"
    );

    let list = recaps_of(&mut server, "story").await;
    assert_eq!(list.versions.len(), 2);
    let v2 = &list.versions[1];
    assert_eq!(list.current_version, Some(v2.version));
    assert_eq!(
        v2.content,
        "12 lines, Ann: line 0 to Bob: line 11 [END] / 13 lines, Ann: line 12 to Ann: line 24 [END]",
        "the second merge builds on the first"
    );
    assert_eq!(v2.prev_scene_message_id, "m11");
    assert_eq!(v2.new_scene_message_id, "m24");
    assert_eq!(v2.scene_count, 2);
    assert_eq!(list.versions[0].scene_count, 1);

    // The latest push carries the merged recap, triggered by generation.
    let mut latest = None;
    while let Some(pushed) = common::next_within(&mut pushes, 2).await {
        latest = Some(pushed);
    }
    let latest = latest.expect("injections were pushed");
    assert_eq!(common::trigger(&latest), pb::RefreshTrigger::RecapGenerated);
    assert!(latest.text.contains(&v2.content), "{latest:?}");

    // Every request asked the configured model with the default max tokens.
    let seen = llm.requests();
    assert_eq!(seen.len(), 6, "one request per job: nothing asked twice");
    assert!(
        seen.iter()
            .all(|r| r.model == "fake-model" && r.max_tokens == Some(1024))
    );
    server.stop().await;
}

#[tokio::test]
async fn a_character_message_starts_a_detection_once_the_open_scene_is_long_enough() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    server.set_global_debounce(0).await;
    open_chat(&mut server, "auto", story_chat(19, &[12])).await;
    // 19 messages: 11 eligible, one short of minimum + 1: nothing yet.
    server
        .publish("auto", common::message_sent("m19", "line 19"))
        .await
        .expect("user message");
    assert!(
        jobs_of(&mut recaps, "auto").await.is_empty(),
        "a user message starts nothing"
    );
    server
        .publish("auto", common::message_received("m20", "line 20"))
        .await
        .expect("character message");
    let jobs = wait_for_jobs(&mut recaps, "auto", "the automatic pipeline", |jobs| {
        jobs.len() >= 3 && all_finished(jobs)
    })
    .await;
    assert!(
        jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
        "{jobs:#?}"
    );
    assert_eq!(
        data_of(&mut server, "auto", "m12").await.scene_break,
        Some(true)
    );
    assert_eq!(recaps_of(&mut server, "auto").await.versions.len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn a_disabled_chat_queues_nothing_automatically() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    server.set_global_debounce(0).await;
    open_chat(&mut server, "off", story_chat(30, &[12])).await;
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: "off".into(),
            enabled: false,
        })
        .await
        .expect("disable");
    server
        .publish("off", common::message_received("m30", "line 30"))
        .await
        .expect("character message");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(jobs_of(&mut recaps, "off").await.is_empty());
    assert!(llm.requests().is_empty());
    server.stop().await;
}

#[tokio::test]
async fn generate_scene_recap_makes_the_break_and_message_recaps_fill_memory() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "by-hand", story_chat(6, &[])).await;
    let job = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "by-hand".into(),
            message_id: "m3".into(),
        })
        .await
        .expect("scene recap queued")
        .into_inner();
    assert_eq!(kind(&job), pb::JobKind::SceneRecap);
    // A repeated request while it is queued answers the same job.
    let again = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "by-hand".into(),
            message_id: "m3".into(),
        })
        .await
        .expect("same job")
        .into_inner();
    // (Unless the first had already finished: the fake answers at once, so
    // the second request may come after it and queue the work again, which
    // is recapped and merged a second time.)
    let recapped_twice = again.job_id != job.job_id;
    if recapped_twice {
        let first = jobs_of(&mut recaps, "by-hand")
            .await
            .into_iter()
            .find(|j| j.job_id == job.job_id)
            .expect("the first job is listed");
        assert_eq!(state(&first), pb::JobState::Succeeded, "{first:?}");
    }
    let queued = recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: "by-hand".into(),
            message_ids: vec!["m4".into(), "m5".into()],
        })
        .await
        .expect("message recaps queued")
        .into_inner();
    assert_eq!(queued.jobs.len(), 2);
    wait_for_jobs(
        &mut recaps,
        "by-hand",
        "scene, merge and message recaps",
        |jobs| jobs.len() >= 4 && all_finished(jobs),
    )
    .await;
    let m3 = data_of(&mut server, "by-hand", "m3").await;
    assert_eq!(m3.scene_break, Some(true));
    assert_eq!(m3.scene_break_visible, Some(true));
    assert_eq!(
        m3.scene_recap_memory.as_deref(),
        Some("4 lines, Ann: line 0 to Bob: line 3")
    );
    assert_eq!(
        data_of(&mut server, "by-hand", "m5")
            .await
            .memory
            .as_deref(),
        Some("short: line 5")
    );
    assert_eq!(
        recaps_of(&mut server, "by-hand").await.versions.len(),
        if recapped_twice { 2 } else { 1 }
    );
    server.stop().await;
}

#[tokio::test]
async fn watch_jobs_shows_each_job_move_through_its_states_in_order() {
    let llm = FakeLlm::start(story).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), &llm.url(), |_| {}).await;
    open_chat(&mut server, "watched", story_chat(6, &[])).await;
    let mut watch = recaps
        .watch_jobs(pb::WatchJobsRequest {
            chat_ids: vec!["watched".into()],
        })
        .await
        .expect("watch")
        .into_inner();
    let scene = recaps
        .generate_scene_recap(pb::GenerateSceneRecapRequest {
            chat_id: "watched".into(),
            message_id: "m3".into(),
        })
        .await
        .expect("queued")
        .into_inner();
    // The scene recap, then the merge it queues: each seen PENDING,
    // RUNNING, SUCCEEDED, in that order.
    let mut seen: std::collections::BTreeMap<String, Vec<pb::JobState>> = Default::default();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while seen
        .values()
        .filter(|s| s.last() == Some(&pb::JobState::Succeeded))
        .count()
        < 2
    {
        let job = tokio::time::timeout_at(deadline, watch.message())
            .await
            .expect("job changes within 20 s")
            .expect("the stream stays open")
            .expect("a job");
        assert_eq!(job.chat_id, "watched");
        seen.entry(job.job_id.clone())
            .or_default()
            .push(state(&job));
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
    for (id, states) in &seen {
        assert_eq!(
            states,
            &[
                pb::JobState::Pending,
                pb::JobState::Running,
                pb::JobState::Succeeded
            ],
            "job {id}"
        );
    }
    assert!(seen.contains_key(&scene.job_id));
    server.stop().await;
}
