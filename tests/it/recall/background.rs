//! A long chat's recall searches away from its lock
//! (`--recall-inline-passages`, 0 here so that every chat counts as long):
//! the recall tier answers from its previous search, and a refresh with
//! trigger RECALL_SEARCHED brings what the new moment finds; Recall
//! answers as it does for a short chat.

use super::*;

/// A keyword-only server whose every recall search runs in the
/// background, every trigger refreshing at once.
async fn start_background() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = common::test_config(dir.path());
    config.recall_inline_passages = 0;
    let mut server = Server::start_with(config).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

/// Waits until the tier of `chat`, refreshed after a background search,
/// holds `passage`; returns the tier.
async fn tier_holding(server: &mut Server, chat: &str, passage: &str) -> pb::Injection {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let injection = tier(server, chat).await;
        if injection.text.contains(passage)
            && injection.trigger == pb::RefreshTrigger::RecallSearched as i32
        {
            return injection;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tier never held {passage:?}: {injection:#?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_tier_of_a_long_chat_catches_up_with_its_moment_after_the_search() {
    let (_dir, mut server) = start_background().await;
    open(&mut server, "long", story(), recall_on()).await;

    // The story's moment is about the brass key: the search that found
    // it ran in the background and refreshed the chat when it was done.
    tier_holding(&mut server, "long", &said(1)).await;

    // A new moment, about the gulls of m2: the tier follows once its
    // search is done (the last refresh is the one after the search).
    let gulls = "Those gulls that followed our boat for hours, remember them?";
    for (i, text) in [gulls, gulls].into_iter().enumerate() {
        server
            .publish(
                "long",
                pb::event::Kind::MessageSent(pb::MessageSent {
                    message: Some(line(16 + i, text)),
                }),
            )
            .await
            .expect("sent");
    }
    let injection = tier_holding(&mut server, "long", &said(2)).await;
    assert!(!injection.text.contains(&said(1)), "{injection:#?}");

    // Recall searches away from the chat's lock too, with the same answer.
    let found = recall(&server, "long", FISH_QUERY).await;
    assert_eq!(texts(&found)[0], KEY_PASSAGE);
    server.stop().await;
}

#[tokio::test]
async fn a_long_chats_tier_is_what_a_short_chats_tier_is_once_searched() {
    let (_dir, mut long) = start_background().await;
    let (_other, mut short) = start_keyword().await;
    open(&mut long, "c", story(), recall_on()).await;
    open(&mut short, "c", story(), recall_on()).await;
    let expected = tier(&mut short, "c").await;
    let caught_up = tier_holding(&mut long, "c", &said(1)).await;
    assert_eq!(caught_up.text, expected.text);
    assert_eq!(caught_up.token_count, expected.token_count);
    long.stop().await;
    short.stop().await;
}
