//! Erasure: a deleted message takes its vectors with it, a deleted chat
//! all of them; a chat re-created under the same id is indexed afresh
//! and its tier continues its revisions above the deleted one's.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_embeddings::FakeEmbeddings;
use crate::common::message_deleted;

#[tokio::test]
async fn deleting_a_message_or_the_chat_erases_their_vectors_and_a_new_chat_starts_afresh() {
    let fake = FakeEmbeddings::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 32).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "doomed", story(), recall_on()).await;
    wait_for_index(&mut recaps, "doomed", pb::JobState::Succeeded).await;
    assert_eq!(stored_vectors(dir.path(), "doomed").await, 16);

    server
        .publish("doomed", message_deleted("m3"))
        .await
        .expect("deleted");
    assert_eq!(
        stored_vectors(dir.path(), "doomed").await,
        15,
        "the deleted message's vector goes with it"
    );
    let found = recall(&server, "doomed", "brass buckle").await;
    assert!(
        found.hits.iter().all(|h| h.message_id != "m3"),
        "{:?}",
        found.hits
    );

    // Refreshed a few times, so the tier's revision is well above 1.
    for _ in 0..3 {
        crate::common::api::refresh(&mut server, "doomed")
            .await
            .expect("refreshed");
    }
    let last = tier(&mut server, "doomed").await;
    assert!(last.revision >= 4, "{last:?}");

    server
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "doomed".into(),
        })
        .await
        .expect("chat deleted");
    assert_eq!(
        stored_vectors(dir.path(), "doomed").await,
        0,
        "DeleteChat erases every vector of the chat"
    );
    let gone = try_recall(&server, "doomed", FISH_QUERY)
        .await
        .expect_err("a deleted chat is unknown");
    assert_eq!(gone.code(), tonic::Code::NotFound, "{gone:?}");

    // The same id again: a new chat, indexed from scratch.
    let asked_before = fake.inputs().len();
    open(&mut server, "doomed", story(), recall_on()).await;
    let reborn = tier(&mut server, "doomed").await;
    assert!(
        reborn.revision > last.revision,
        "the tier continues above the deleted chat's {}: {reborn:?}",
        last.revision
    );
    let jobs = wait_for_index(&mut recaps, "doomed", pb::JobState::Succeeded).await;
    assert_eq!(
        index_jobs(&jobs).len(),
        1,
        "the deleted chat's jobs went with it: {jobs:#?}"
    );
    let asked_again = &fake.inputs()[asked_before..];
    let mut asked_again: Vec<&str> = asked_again.iter().map(String::as_str).collect();
    asked_again.sort_unstable();
    let mut whole: Vec<&str> = STORY.to_vec();
    whole.sort_unstable();
    assert_eq!(asked_again, whole, "every passage asked again, once");
    assert_eq!(stored_vectors(dir.path(), "doomed").await, 16);
    server.stop().await;
}
