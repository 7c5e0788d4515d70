//! Indexing across process lives: a server killed with SIGKILL while a
//! batch is in flight finishes the index after a restart; a chat written
//! before the embeddings endpoint was configured is indexed once it is;
//! and on PostgreSQL, replicas share the vectors one of them fetched.

use std::collections::BTreeMap;
use std::time::Duration;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_embeddings::FakeEmbeddings;
use crate::common::process::Recapd;
use crate::common::replicas::{fresh_schema, replica_config};

/// The command-line options of [`super::indexing_config`], with a 3 s job lease
/// (a restarted server on PostgreSQL takes a dead one's job over when its
/// lease expires).
fn embedding_args(fake: &FakeEmbeddings, batch: u64) -> Vec<String> {
    [
        "--embedding-url",
        &fake.url(),
        "--embedding-model",
        MODEL,
        "--embedding-batch-size",
        &batch.to_string(),
        "--embedding-backoff-base",
        "10ms",
        "--embedding-timeout",
        "20s",
        "--job-lease",
        "3",
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect()
}

/// The recapd binary on `dir` (and its test store) using `fake`.
fn recapd_with_embeddings(dir: &std::path::Path, fake: &FakeEmbeddings, batch: u64) -> Recapd {
    let mut command = Recapd::command(dir);
    command.args(embedding_args(fake, batch));
    Recapd::start_with(command, dir)
}

/// How many times each text was asked.
fn asked(fake: &FakeEmbeddings) -> BTreeMap<String, usize> {
    let mut asked = BTreeMap::new();
    for input in fake.inputs() {
        *asked.entry(input).or_default() += 1;
    }
    asked
}

#[tokio::test]
async fn killed_during_a_batch_a_restarted_server_completes_the_index() {
    let fake = FakeEmbeddings::start().await;
    fake.hold();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut first = recapd_with_embeddings(dir.path(), &fake, 4);
    let mut server = Server::clients(first.channel().await);
    server.set_global_debounce(0).await;
    open(&mut server, "story", story(), recall_on()).await;
    fake.wait_for_waiting(1).await;
    let killed_batch = fake.requests()[0].input.clone();
    assert_eq!(killed_batch.len(), 4, "{killed_batch:?}");
    // Mid-request: this batch's answer never arrives.
    first.kill9();
    drop(server);
    fake.release();

    let second = recapd_with_embeddings(dir.path(), &fake, 4);
    let server = Server::clients(second.channel().await);
    let mut recaps = recaps_client(&server);
    let jobs = wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    assert_eq!(
        index_jobs(&jobs).len(),
        1,
        "the same job finished: {jobs:#?}"
    );
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);
    for (text, times) in asked(&fake) {
        let expected = if killed_batch.contains(&text) { 2 } else { 1 };
        assert_eq!(times, expected, "{text:?}");
    }
    assert_eq!(asked(&fake).len(), 16, "every passage asked");

    let found = recall(&server, "story", FISH_QUERY).await;
    assert!(found.used_vectors);
    let best = &found.hits[0];
    assert_eq!(best.text, KEY_PASSAGE);
    assert!(best.vector_score.is_some(), "{best:?}");
    drop(second);
}

#[tokio::test]
async fn a_chat_written_before_the_endpoint_was_configured_is_indexed_once_it_is() {
    let fake = FakeEmbeddings::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut before = Recapd::start(dir.path());
    let mut server = Server::clients(before.channel().await);
    server.set_global_debounce(0).await;
    open(&mut server, "story", story(), recall_on()).await;
    assert!(tier(&mut server, "story").await.text.contains(KEY_PASSAGE));
    drop(server);
    // Every write was acknowledged, so durable: a kill loses nothing.
    before.kill9();

    let after = recapd_with_embeddings(dir.path(), &fake, 32);
    let server = Server::clients(after.channel().await);
    let mut recaps = recaps_client(&server);
    // No event: "Existing and imported chats catch up in the background
    // at start" (docs/recall.md, Indexing).
    let jobs = wait_for_index_within(
        &mut recaps,
        "story",
        pb::JobState::Succeeded,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(index_jobs(&jobs).len(), 1, "{jobs:#?}");
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);
    let found = recall(&server, "story", FISH_QUERY).await;
    assert!(found.hits[0].vector_score.is_some(), "{:?}", found.hits[0]);
    drop(after);
}

#[tokio::test]
async fn replicas_share_the_vectors_one_of_them_fetched() {
    if !crate::common::on_postgres() {
        // Replicas need the shared store; this test runs in the PostgreSQL pass.
        eprintln!("skipped here: runs with RECAPD_TEST_STORE=postgres");
        return;
    }
    let fake = FakeEmbeddings::start().await;
    // Slow answers: each replica's runner has time to try the job while
    // the other holds it.
    fake.set_latency(Duration::from_millis(150));
    fake.hold();
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = fresh_schema(dir.path());
    let url = crate::common::test_database_url();
    let replica = |name: &str| {
        let mut config = replica_config(&dir.path().join(name), &url, &schema);
        with_embeddings(&mut config, &fake, 4);
        config
    };
    let mut a = Server::start_with(replica("a")).await;
    let mut b = Server::start_with(replica("b")).await;
    a.set_global_debounce(0).await;
    crate::common::replicas::wait_for_debounce(&mut b, 0).await;
    open(&mut a, "shared", story(), recall_on()).await;
    fake.wait_for_waiting(1).await;
    // B holds the chat in memory before any vector exists.
    let early = recall(&b, "shared", "").await;
    assert_eq!(early.hits[0].text, KEY_PASSAGE);
    fake.release();

    let mut recaps = recaps_client(&b);
    let jobs = wait_for_index(&mut recaps, "shared", pb::JobState::Succeeded).await;
    assert_eq!(index_jobs(&jobs).len(), 1, "{jobs:#?}");
    let best = eventually("B to rank by the vectors A or B stored", || async {
        let found = recall(&b, "shared", FISH_QUERY).await;
        found.hits[0].vector_score.is_some().then_some(found)
    })
    .await;
    assert!(best.used_vectors);
    assert_eq!(best.hits[0].text, KEY_PASSAGE);
    let on_a = eventually("A to rank by the vectors too", || async {
        let found = recall(&a, "shared", FISH_QUERY).await;
        found.hits[0].vector_score.is_some().then_some(found)
    })
    .await;
    assert_eq!(on_a.hits[0].text, KEY_PASSAGE);

    // Each passage embedded once by the two replicas together, after its
    // speaker's name (the queries of the Recall calls besides).
    let asked = asked(&fake);
    for text in (0..STORY.len()).map(said) {
        assert_eq!(
            asked.get(&text),
            Some(&1),
            "{text:?} embedded once: {asked:#?}"
        );
    }
    a.stop().await;
    b.stop().await;
}
