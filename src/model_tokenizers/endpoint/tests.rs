use std::time::Duration;

use super::*;
use crate::llm::LlmSetup;

/// Counts asked of an endpoint nobody listens on (port 1 of loopback).
fn unreachable() -> EndpointCounts {
    let setup = LlmSetup {
        base_url: "http://127.0.0.1:1/v1".into(),
        model: "m".into(),
        api_key: None,
        concurrency: 1,
        timeout: Duration::from_secs(2),
        max_attempts: 1,
        backoff_base: Duration::from_millis(10),
        requests_per_minute: None,
    };
    let client = LlmClient::new(&setup).expect("a loopback http URL is a valid endpoint");
    EndpointCounts::new(client, "m", 16)
}

fn chat(id: &str) -> ChatKey {
    ChatKey::untenanted(id)
}

fn queued(counts: &EndpointCounts) -> (usize, usize, usize) {
    let queue = counts.inner.queue.lock();
    (queue.texts.len(), queue.bytes, queue.waiters.len())
}

#[test]
fn an_uncounted_text_is_estimated_queued_and_its_chat_noted() {
    let counts = unreachable();
    let counter = counts.counter("", Some(&chat("c1")));
    assert!(!counter.estimated());
    let (count, is_final) = counter.count_final("hello world");
    assert_eq!(
        count,
        tokens::count(TokenizerKind::O200kBase, "hello world")
    );
    assert!(!is_final, "an estimate is never final");
    assert!(counter.estimated());
    // The same text again is queued once; the chat is noted once.
    counter.count_final("hello world");
    assert_eq!(queued(&counts), (1, 11, 1));
}

#[test]
fn a_counted_text_is_final_and_asks_nothing() {
    let counts = unreachable();
    let key = counts.key("m", "hello world");
    counts.inner.counts.lock().insert(key, 7);
    let counter = counts.counter("", Some(&chat("c1")));
    assert_eq!(counter.count_final("hello world"), (7, true));
    assert!(!counter.estimated());
    assert_eq!(queued(&counts), (0, 0, 0));
    // Another model's count of the same text is another count.
    let other = counts.counter("other-model", None);
    assert!(!other.count_final("hello world").1);
}

#[test]
fn the_queue_is_bounded() {
    let counts = unreachable();
    let counter = counts.counter("", None);
    let long = "a".repeat(MAX_TEXT_BYTES + 1);
    assert!(!counter.count_final(&long).1);
    assert_eq!(
        queued(&counts),
        (0, 0, 0),
        "a text over MAX_TEXT_BYTES is never sent"
    );
    for i in 0..MAX_QUEUED_TEXTS + 10 {
        counter.count_final(&format!("text {i}"));
    }
    assert_eq!(queued(&counts).0, MAX_QUEUED_TEXTS);
}

#[tokio::test]
async fn an_endpoint_that_fails_rests_and_refreshes_no_chat() {
    let counts = unreachable();
    let refreshed = Arc::new(Mutex::new(Vec::new()));
    let stop = CancellationToken::new();
    let worker = tokio::spawn({
        let counts = counts.clone();
        let refreshed = refreshed.clone();
        let stop = stop.clone();
        async move {
            counts
                .run(
                    |chats| {
                        refreshed.lock().extend(chats);
                        async {}
                    },
                    stop,
                )
                .await;
        }
    });
    let counter = counts.counter("", Some(&chat("c1")));
    counter.count_final("hello world");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !counts.resting() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        counts.resting(),
        "a refused connection sets the endpoint resting"
    );
    assert!(refreshed.lock().is_empty(), "nothing counted: no refresh");
    // Resting: texts are estimated and not queued.
    let counter = counts.counter("", Some(&chat("c2")));
    assert!(!counter.count_final("another text").1);
    assert_eq!(queued(&counts), (0, 0, 0));
    stop.cancel();
    worker.await.expect("the worker stops when told");
}
