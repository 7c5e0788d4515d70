//! A vector that arrives for a passage edited while its batch was in
//! flight is discarded, and the new text is asked for instead: recall
//! never ranks a passage by the vector of words it no longer has.

use recapd::grpc::pb;

use super::*;
use crate::common::api::edited;
use crate::common::fake_embeddings::FakeEmbeddings;

/// m11's text after the edit; no other passage shares its words.
const EDITED: &str = "The village there had a tall windmill painted purple.";

#[tokio::test]
async fn an_edit_during_a_batch_discards_its_vector_and_the_new_text_is_asked_for() {
    let fake = FakeEmbeddings::start().await;
    fake.hold();
    let dir = tempfile::tempdir().expect("temp dir");
    // Batches of 8, newest first: the first holds m15..=m8.
    let mut server = start_indexing(dir.path(), &fake, 8).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "story", story(), recall_on()).await;
    fake.wait_for_waiting(1).await;
    let in_flight = fake.requests()[0].input.clone();
    assert!(
        in_flight.iter().any(|t| *t == said(11)),
        "m11 is in the first batch: {in_flight:?}"
    );

    let before_edit = fake.request_count();
    server
        .publish("story", edited("m11", EDITED))
        .await
        .expect("edited");
    fake.release();

    let jobs = wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    assert_eq!(index_jobs(&jobs).len(), 1, "{jobs:#?}");
    assert_eq!(
        fake.times_asked(&said(11)),
        1,
        "the old text only in the held batch"
    );
    // m11 is Bob's: his name comes before the text asked for.
    let edited_input = format!("Bob: {EDITED}");
    assert_eq!(
        fake.times_asked(&edited_input),
        1,
        "the new text asked once"
    );
    let asked_after: Vec<String> = fake.requests()[before_edit..]
        .iter()
        .flat_map(|r| r.input.clone())
        .collect();
    assert!(
        asked_after.contains(&edited_input),
        "the new text was asked after the edit: {asked_after:?}"
    );
    for text in (0..STORY.len()).filter(|i| *i != 11).map(said) {
        assert_eq!(fake.times_asked(&text), 1, "{text:?} asked once");
    }
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);

    // Recall finds the edited text, with the new text's vector.
    let found = recall(&server, "story", "a purple windmill").await;
    let best = &found.hits[0];
    assert_eq!(
        (best.message_id.as_str(), best.text.as_str()),
        ("m11", EDITED)
    );
    assert!(
        best.vector_score.is_some_and(|s| s > 0.5),
        "the new text's vector: {best:?}"
    );
    // The old words are gone: neither by keyword nor by a stale vector.
    let old = recall(&server, "story", "a crooked stone church").await;
    assert!(
        old.hits
            .iter()
            .all(|h| h.text != STORY[11] && h.message_id != "m11"),
        "the old text is not recalled: {:?}",
        old.hits
    );
    server.stop().await;
}
