//! Events of one chat published at once: they share commits, and each
//! still keeps every guarantee of an event published alone.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_stream::StreamExt;

use crate::domain::DomainError;
use crate::domain::chat::ChatEvent;
use crate::domain::ids::Tenant;
use crate::domain::refresh::InjectionKey;
use crate::engine::EngineError;
use crate::engine::tests::{Faulty, debounce, engine, key, message};
use crate::store::{ChatStore, SqliteStore, StoreError};

/// An engine over a fresh store in `dir` with `debounce_ms`, and chat "c"
/// holding message `first`.
async fn chat_holding(
    dir: &tempfile::TempDir,
    debounce_ms: u64,
    first: &str,
) -> (crate::engine::Engine, Arc<Faulty>) {
    let (engine, store) = engine(dir).await;
    debounce(&engine, debounce_ms).await;
    engine
        .chats()
        .publish(&key("c"), ChatEvent::ChatChanged(vec![message(first)]))
        .await
        .unwrap();
    (engine, store)
}

/// Publishes `count` messages `m0`.. on chat "c" at once, each from a task
/// of its own; the answers in publishing order.
async fn publish_at_once(
    engine: &crate::engine::Engine,
    count: usize,
) -> Vec<Result<u64, EngineError>> {
    let calls: Vec<_> = (0..count)
        .map(|i| {
            let engine = engine.clone();
            tokio::spawn(async move {
                engine
                    .chats()
                    .publish(&key("c"), ChatEvent::MessageSent(message(&format!("m{i}"))))
                    .await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    answers
}

#[tokio::test]
async fn events_of_one_chat_at_once_share_commits_and_apply_in_order() {
    let dir = tempfile::tempdir().unwrap();
    // No delay: every event is refreshed in its own turn, so its answer
    // tells where it was applied.
    let (engine, store) = chat_holding(&dir, 0, "a").await;
    let mut all_chats = engine
        .chats()
        .subscribe(&Tenant::default(), &[], None)
        .await
        .unwrap();
    let before = store.commits.load(Ordering::SeqCst);
    // Each commit takes a while: the events arriving meanwhile queue.
    store.delay_ms.store(20, Ordering::SeqCst);
    let answers = publish_at_once(&engine, 40).await;
    let commits = store.commits.load(Ordering::SeqCst) - before;
    assert!(commits <= 4, "40 events took {commits} commits");
    let mut revisions: Vec<u64> = answers.into_iter().map(Result::unwrap).collect();
    revisions.sort_unstable();
    assert_eq!(revisions, (2..=41).collect::<Vec<_>>());

    // Subscribers got every refresh, in order.
    let mut pushed = Vec::new();
    while pushed.len() < 40 {
        let next = tokio::time::timeout(Duration::from_secs(5), all_chats.next())
            .await
            .unwrap()
            .unwrap();
        if next.key == InjectionKey::Scene {
            pushed.push(next.revision);
        }
    }
    assert!(pushed.windows(2).all(|w| w[0] < w[1]), "{pushed:?}");
    assert_eq!(pushed.last(), Some(&41));

    // The store holds every event, in the order their revisions say.
    store.delay_ms.store(0, Ordering::SeqCst);
    drop(engine);
    store.close().await;
    let reopened = SqliteStore::open(dir.path(), true).await.unwrap();
    let stored = reopened.load(&key("c")).await.unwrap().chat.unwrap();
    assert_eq!(stored.meta.revision, 41);
    assert_eq!(stored.messages.len(), 41);
}

#[tokio::test]
async fn a_failed_group_fails_every_event_and_memory_stays_as_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = chat_holding(&dir, 50, "a").await;
    store.delay_ms.store(20, Ordering::SeqCst);
    store.fail.store(true, Ordering::SeqCst);
    let answers = publish_at_once(&engine, 12).await;
    for answer in &answers {
        assert!(
            matches!(answer, Err(EngineError::Store(StoreError::Database { .. }))),
            "{answer:?}"
        );
    }
    store.fail.store(false, Ordering::SeqCst);
    store.delay_ms.store(0, Ordering::SeqCst);
    // Nothing of the refused events is in memory: the same ids are new.
    for i in 0..12 {
        assert!(
            engine
                .chats()
                .message_data(&key("c"), &format!("m{i}"), None)
                .await
                .is_err()
        );
    }
    let answers = publish_at_once(&engine, 12).await;
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    let export = engine.chats().export_chat(&key("c")).await.unwrap();
    assert_eq!(String::from_utf8(export).unwrap().lines().count(), 1 + 13);
}

#[tokio::test]
async fn a_refused_event_fails_alone_in_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = chat_holding(&dir, 50, "m3").await;
    store.delay_ms.store(20, Ordering::SeqCst);
    // "m3" is already in the chat: that event is refused, the others land.
    let answers = publish_at_once(&engine, 8).await;
    for (i, answer) in answers.iter().enumerate() {
        match i {
            3 => assert!(
                matches!(
                    answer,
                    Err(EngineError::Domain(DomainError::AlreadyExists(_)))
                ),
                "{answer:?}"
            ),
            _ => assert!(answer.is_ok(), "m{i}: {answer:?}"),
        }
    }
    store.delay_ms.store(0, Ordering::SeqCst);
    for i in 0..8 {
        assert!(
            engine
                .chats()
                .message_data(&key("c"), &format!("m{i}"), None)
                .await
                .is_ok()
        );
    }
    drop(engine);
    store.close().await;
    let reopened = SqliteStore::open(dir.path(), true).await.unwrap();
    assert_eq!(
        reopened
            .load(&key("c"))
            .await
            .unwrap()
            .chat
            .unwrap()
            .messages
            .len(),
        8
    );
}

#[tokio::test]
async fn an_event_whose_caller_left_before_its_turn_is_never_applied() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = chat_holding(&dir, 50, "a").await;
    store.delay_ms.store(300, Ordering::SeqCst);
    // "slow" holds the chat through its commit...
    let slow = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .chats()
                .publish(&key("c"), ChatEvent::MessageSent(message("slow")))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    // ...while "gone" waits its turn, and its caller gives up.
    let gone = tokio::time::timeout(
        Duration::from_millis(50),
        engine
            .chats()
            .publish(&key("c"), ChatEvent::MessageSent(message("gone"))),
    )
    .await;
    assert!(gone.is_err(), "the call was cut short");
    slow.await.unwrap().unwrap();
    store.delay_ms.store(0, Ordering::SeqCst);
    // The next event finds nothing left waiting: "gone" never lands.
    engine
        .chats()
        .publish(&key("c"), ChatEvent::MessageSent(message("next")))
        .await
        .unwrap();
    assert!(
        engine
            .chats()
            .message_data(&key("c"), "gone", None)
            .await
            .is_err()
    );
    assert!(
        engine
            .chats()
            .message_data(&key("c"), "next", None)
            .await
            .is_ok()
    );
}
