//! A chat that says the same thing again and again: the recall tier and
//! Recall give the passage once.

use super::*;
use crate::common::api::o200k;

/// What five early messages all say.
const SAID_AGAIN: &str = "The brass key opens the iron door behind the inn.";

/// The story with m0..=m4 (before the recent window) saying
/// [`SAID_AGAIN`], the last spelled with other spacing and case.
fn repetitive() -> Vec<pb::Message> {
    let mut messages = story();
    for (i, message) in messages.iter_mut().take(5).enumerate() {
        message.text = if i == 4 {
            "the brass key  opens the iron door behind the inn.".into()
        } else {
            SAID_AGAIN.into()
        };
    }
    messages
}

#[tokio::test]
async fn a_sentence_five_messages_say_is_recalled_once() {
    let (_dir, mut server) = start_keyword().await;
    open(&mut server, "again", repetitive(), recall_on()).await;

    let injection = tier(&mut server, "again").await;
    let copies = injection
        .text
        .to_lowercase()
        .matches("iron door behind")
        .count();
    assert_eq!(copies, 1, "once in the tier: {:?}", injection.text);
    assert_eq!(injection.token_count, o200k(&injection.text));

    let found = recall(&server, "again", "brass key iron door").await;
    let copies = found
        .hits
        .iter()
        .filter(|h| h.text.to_lowercase().contains("iron door behind"))
        .count();
    assert_eq!(copies, 1, "once in Recall's answer: {:?}", texts(&found));
    assert_eq!(found.hits[0].message_id, "m4", "the newest of the copies");
    server.stop().await;
}
