//! What RecallService refuses, and the tier's key on a chat whose tier
//! never refreshed.

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::api::assert_code;

#[tokio::test]
async fn recall_refuses_a_bad_limit_score_or_chat_id_and_names_what_is_wrong() {
    let (_dir, mut server) = start_keyword().await;
    open(&mut server, "story", story(), recall_on()).await;
    let mut client = recall_client(&server);
    let ask = |chat: &str, limit: u32, min_score: Option<f64>| pb::RecallRequest {
        chat_id: chat.into(),
        query: FISH_QUERY.into(),
        limit,
        min_score,
    };
    assert_code(
        client.recall(ask("story", 101, None)).await,
        Code::InvalidArgument,
        "limit",
    );
    assert_code(
        client.recall(ask("story", 1, Some(2.0))).await,
        Code::InvalidArgument,
        "min_score",
    );
    assert_code(
        client.recall(ask("story", 1, Some(-0.5))).await,
        Code::InvalidArgument,
        "min_score",
    );
    let bad_id = client
        .recall(ask("", 1, None))
        .await
        .expect_err("an empty chat id is refused");
    assert_eq!(bad_id.code(), Code::InvalidArgument, "{bad_id:?}");
    let unknown = client
        .recall(ask("nobody", 1, None))
        .await
        .expect_err("an unknown chat");
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");

    // The bounds themselves are accepted: 100 hits, scores 0 and 1.
    let all = client
        .recall(ask("story", 100, Some(0.0)))
        .await
        .expect("limit 100, min_score 0")
        .into_inner();
    assert_eq!(all.hits[0].text, KEY_PASSAGE);
    let top = client
        .recall(ask("story", 100, Some(1.0)))
        .await
        .expect("min_score 1")
        .into_inner();
    assert_eq!(
        texts(&top),
        [KEY_PASSAGE],
        "only what every ranking puts first"
    );
    let one = client
        .recall(ask("story", 1, None))
        .await
        .expect("limit 1")
        .into_inner();
    assert_eq!(one.hits.len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn the_recall_key_answers_on_a_chat_whose_tier_never_refreshed() {
    let (_dir, mut server) = start_keyword().await;
    server
        .publish("quiet", crate::common::chat_changed(story()))
        .await
        .expect("chat opened");
    let never = tier(&mut server, "quiet").await;
    assert_eq!(
        (never.key.as_str(), never.revision, never.text.as_str()),
        (KEY, 0, "")
    );
    let unknown = try_tier(&mut server, "nobody")
        .await
        .expect_err("an unknown chat");
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    server.stop().await;
}
