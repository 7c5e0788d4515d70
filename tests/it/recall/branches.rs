//! A branch takes the vectors of the passages it keeps (BranchChat, issue
//! 45): nothing is asked of the embeddings endpoint again, the branch
//! recalls by vector at once, and no vector of a message after the branch
//! point is copied.

use recapd::grpc::pb;

use super::*;

#[tokio::test]
async fn a_branch_recalls_with_its_parents_vectors_and_asks_for_none() {
    let fake = FakeEmbeddings::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 32).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "story", story(), recall_on()).await;
    wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);
    let asked = fake.request_count();

    // m0..=m9: the key passage (m1) is in the branch.
    server
        .memory
        .branch_chat(pb::BranchChatRequest {
            chat_id: "story".into(),
            message_id: "m9".into(),
            new_chat_id: "fork".into(),
        })
        .await
        .expect("branched");
    assert_eq!(stored_vectors(dir.path(), "fork").await, 10);
    let found = recall(&server, "fork", FISH_QUERY).await;
    let best = found.hits.first().expect("a hit");
    assert_eq!(best.text, KEY_PASSAGE);
    assert!(
        best.vector_score.is_some(),
        "the branch has the passage's vector at once"
    );
    assert!(
        found
            .hits
            .iter()
            .all(|h| h.message_id[1..].parse::<usize>().is_ok_and(|i| i <= 9)),
        "no passage after the branch point"
    );
    // The branch's index job, if one ran, found nothing to ask: each
    // passage was embedded once, for the parent (the requests since were
    // the queries').
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(fake.request_count() > asked, "the query was embedded");
    for i in 0..16 {
        assert_eq!(fake.times_asked(&said(i)), 1, "m{i} embedded once");
    }
    server.stop().await;
}
