//! Erasure: a deleted message takes its vectors with it, a deleted chat
//! all of them; a chat re-created under the same id is indexed afresh
//! and its tier continues its revisions above the deleted one's.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_embeddings::FakeEmbeddings;
use crate::common::message_deleted;

/// m11's text in the file imported over the chat.
const EDITED: &str = "The village there had a tall windmill painted purple.";

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
    let whole: Vec<String> = (0..STORY.len()).map(said).collect();
    let mut whole: Vec<&str> = whole.iter().map(String::as_str).collect();
    whole.sort_unstable();
    assert_eq!(asked_again, whole, "every passage asked again, once");
    assert_eq!(stored_vectors(dir.path(), "doomed").await, 16);
    server.stop().await;
}

#[tokio::test]
async fn after_an_import_over_the_chat_every_passage_has_a_stored_vector() {
    let fake = FakeEmbeddings::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 32).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "story", story(), recall_on()).await;
    wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);
    let exported = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: "story".into(),
        })
        .await
        .expect("exported")
        .into_inner()
        .jsonl;
    // The file as edited elsewhere: one message says something else.
    let file = String::from_utf8(exported)
        .expect("UTF-8 JSONL")
        .replace(STORY[11], EDITED);
    assert!(file.contains(EDITED));

    server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: "story".into(),
            jsonl: file.into_bytes(),
            ..Default::default()
        })
        .await
        .expect("imported over the chat");
    // Whether the unchanged passages keep their vectors or are asked
    // again, the store ends with one vector a passage, as memory does.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let stored = stored_vectors(dir.path(), "story").await;
        if stored == 16 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{stored} vectors stored for the 16 passages of the import; jobs {:#?}",
            jobs_of(&mut recaps, "story").await
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let found = recall(&server, "story", "a purple windmill").await;
    assert_eq!(found.hits[0].text, EDITED);
    assert!(found.hits[0].vector_score.is_some(), "{:?}", found.hits[0]);

    // What was stored is what a restarted server ranks by.
    server.stop().await;
    let server = Server::start_with(indexing_config(dir.path(), &fake, 32)).await;
    for (query, text) in [(FISH_QUERY, KEY_PASSAGE), ("a purple windmill", EDITED)] {
        let found = recall(&server, "story", query).await;
        let best = &found.hits[0];
        assert_eq!(best.text, text);
        assert!(
            best.vector_score.is_some(),
            "{query:?} after a restart: {best:?}"
        );
    }
    server.stop().await;
}
