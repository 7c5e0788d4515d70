//! With an embeddings endpoint: index jobs fetch every passage's vector
//! once, in batches no larger than --embedding-batch-size; Recall then
//! ranks by vectors too, and the tier refreshes when the index is done
//! (trigger RECALL_INDEXED).

use std::collections::BTreeMap;

use recapd::grpc::pb;

use super::*;
use crate::common::fake_embeddings::FakeEmbeddings;
use crate::common::{api, trigger};

#[tokio::test]
async fn index_jobs_ask_each_passage_once_in_batches_and_recall_then_uses_vectors() {
    let fake = FakeEmbeddings::start().await;
    // Answers take a while, as a real model's do: refreshes and the
    // runner's rounds meanwhile ask nothing twice.
    fake.set_latency(std::time::Duration::from_millis(50));
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 4).await;
    let mut recaps = recaps_client(&server);
    server
        .publish("story", crate::common::chat_changed(story()))
        .await
        .expect("chat opened");
    let mut stream = api::subscribe(&mut server, &["story"], 0).await;
    server.update_settings("story", recall_on()).await;

    let jobs = wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    let index = index_jobs(&jobs);
    assert_eq!(index.len(), 1, "one index job did the chat: {jobs:#?}");
    assert_eq!(index[0].chat_id, "story");
    assert!(index[0].last_error.is_empty(), "{:?}", index[0]);

    // Every passage asked exactly once, never more than 4 at a time.
    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for input in fake.inputs() {
        *asked.entry(input).or_default() += 1;
    }
    // Each passage is embedded after its speaker's name.
    let expected: BTreeMap<String, usize> = (0..STORY.len()).map(|i| (said(i), 1)).collect();
    assert_eq!(asked, expected, "each passage once");
    assert!(fake.max_batch() <= 4, "batch of {}", fake.max_batch());
    assert_eq!(fake.request_count(), 4, "16 passages, 4 a request");
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
    assert!(fake.requests().iter().all(|r| r.model == MODEL));
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);

    // The tier refreshed once the index was complete.
    let indexed = next_push(&mut stream, |item| {
        item.key == KEY && trigger(item) == pb::RefreshTrigger::RecallIndexed
    })
    .await;
    assert!(
        indexed.text.starts_with(&format!("{HEADER}{}", said(1))),
        "{:?}",
        indexed.text
    );
    let now = tier(&mut server, "story").await;
    assert!(now.revision >= indexed.revision);

    // Recall ranks by vectors too: the query is embedded, the passages
    // have theirs.
    let asked_before = fake.request_count();
    let found = recall(&server, "story", FISH_QUERY).await;
    assert!(found.used_vectors);
    assert_eq!(fake.request_count(), asked_before + 1, "the query embedded");
    let best = &found.hits[0];
    assert_eq!(
        (best.message_id.as_str(), best.text.as_str()),
        ("m1", KEY_PASSAGE)
    );
    let similarity = best.vector_score.expect("the passage has a vector");
    assert!(similarity > 0.5, "{best:?}");
    assert!(
        (best.score - 1.0).abs() < 1e-6,
        "first by both rankings: {best:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_recall_query_fails_unavailable_when_the_endpoint_does_not_answer() {
    let fake = FakeEmbeddings::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 32).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "story", story(), recall_on()).await;
    wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    fake.stop().await;
    let refused = try_recall(&server, "story", FISH_QUERY)
        .await
        .expect_err("the query cannot be embedded");
    assert_eq!(refused.code(), tonic::Code::Unavailable, "{refused:?}");
    // The moment needs no request: it still answers, from stored vectors.
    let moment = recall(&server, "story", "").await;
    assert_eq!(moment.hits[0].text, KEY_PASSAGE);
    assert!(moment.used_vectors, "the query messages have vectors");
    server.stop().await;
}
