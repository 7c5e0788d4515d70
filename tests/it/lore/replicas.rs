//! Two replicas on one PostgreSQL (always: without a reachable database
//! these fail, as tests/it/replicas.rs): lore jobs queued on both, for
//! scenes that all speak of one person, leave one entry holding each
//! scene's facts once, the same on both replicas.

use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;
use crate::common::replicas::*;
use crate::common::test_database_url;

/// A replica on `schema` writing lore with the fake at `llm_url`.
async fn replica(
    dir: &std::path::Path,
    schema: &str,
    llm_url: &str,
) -> (Server, RecapServiceClient<Channel>) {
    let mut config = replica_config(dir, &test_database_url(), schema);
    config.llm.llm_url = Some(llm_url.to_owned());
    config.llm.llm_model = "fake-model".into();
    config.llm.llm_backoff_base = Duration::from_millis(10);
    let server = Server::start_with(config).await;
    let recaps = RecapServiceClient::new(server.channel.clone());
    (server, recaps)
}

#[tokio::test]
async fn lore_jobs_on_two_replicas_apply_each_result_once_and_keep_one_entry_per_entity() {
    let facts = [
        ("gates of Ravenhold", "Mara is the queen's smith."),
        ("great hall", "Mara forged Elara's silver sword."),
        ("Ashen Citadel", "Mara owes the queen a debt of gold."),
    ];
    let story = Story::of(
        &facts.map(|(needle, fact)| (needle, vec![entity("character", "Mara", &[], &[fact])])),
    );
    let script = Script::story(story);
    // Every extraction takes a while, so replicas' jobs overlap if they can.
    let llm = FakeLlm::start({
        let reply = script.as_fake();
        move |request: &crate::common::fake_llm::SeenRequest| {
            let answer = reply(request);
            if kind_of(&request.prompt) == "lore_extract" {
                answer.after(Duration::from_millis(300))
            } else {
                answer
            }
        }
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = fresh_schema(dir.path());
    let (mut a, mut on_a) = replica(&dir.path().join("a"), &schema, &llm.url()).await;
    let (mut b, mut on_b) = replica(&dir.path().join("b"), &schema, &llm.url()).await;
    open(&mut a, "shared", lore_settings(), story_chat()).await;
    for message in ["m3", "m7", "m11"] {
        make_break(&mut a, "shared", message).await;
    }
    catch_up(&mut b, &mut a, "shared").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while chat_settings(&mut b, "shared").await.lore_extract_prompt
        != lore_settings().lore_extract_prompt
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the chat's settings never reached B"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut also_on_a = on_a.clone();
    let (first, second, third) = tokio::join!(
        generate_lore(&mut on_a, "shared", "m3"),
        generate_lore(&mut on_b, "shared", "m7"),
        generate_lore(&mut also_on_a, "shared", "m11"),
    );
    let queued = [first, second, third];
    assert!(
        queued.iter().all(|j| kind(j) == pb::JobKind::LoreExtract),
        "{queued:#?}"
    );
    let jobs = wait_for_lore(&mut on_a, "shared", 3).await;
    assert_none_failed(&jobs);
    let mut extracted: Vec<&str> = jobs
        .iter()
        .filter(|j| kind(j) == pb::JobKind::LoreExtract && state(j) == pb::JobState::Succeeded)
        .map(|j| j.message_id.as_str())
        .collect();
    extracted.sort_unstable();
    assert_eq!(
        extracted,
        ["m11", "m3", "m7"],
        "each scene's extraction applied once: {jobs:#?}"
    );

    let on_a_entries = chat_entries(&mut a, "shared").await;
    assert_eq!(
        comments(&on_a_entries),
        ["character-Mara"],
        "one entry for Mara: {on_a_entries:#?}"
    );
    let mut lines = on_a_entries[0].lines();
    lines.sort_unstable();
    let mut expected: Vec<&str> = facts.iter().map(|(_, fact)| *fact).collect();
    expected.sort_unstable();
    assert_eq!(lines, expected, "each scene's facts once");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let on_b_entries = chat_entries(&mut b, "shared").await;
        if on_b_entries == on_a_entries {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "B never saw A's book: {on_b_entries:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        jobs_of(&mut on_b, "shared").await.len(),
        jobs.len(),
        "both replicas list the same jobs"
    );
    a.stop().await;
    b.stop().await;
}
