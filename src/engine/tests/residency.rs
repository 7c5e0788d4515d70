//! The memory budget seen through the engine: chats written and read by
//! the API are counted, dropped and read back (the eviction policy itself
//! is tested on the cache alone, in `cache/tests.rs`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::super::Engine;

use crate::domain::Limits;
use crate::domain::chat::ChatEvent;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::message::{Message, NewMessage};
use crate::domain::refresh::InjectionKey;
use crate::domain::settings::SettingsPatch;
use crate::engine::SettingsUpdate;
use crate::store::{SqliteStore, Stores};

async fn engine(dir: &tempfile::TempDir, budget: usize) -> Engine {
    let store = Arc::new(SqliteStore::open(dir.path(), true).await.unwrap());
    let limits = Limits {
        max_resident_bytes: budget,
        ..Limits::default()
    };
    Engine::new(
        Stores::single(store),
        crate::engine::EngineOptions {
            limits,
            ..crate::engine::EngineOptions::default()
        },
    )
    .await
    .unwrap()
}

fn key(chat: &str) -> ChatKey {
    ChatKey::untenanted(chat)
}

/// A transcript of `n` messages of 1,000 bytes.
fn transcript(n: usize) -> ChatEvent {
    ChatEvent::ChatChanged(
        (0..n)
            .map(|i| {
                NewMessage {
                    id: format!("m{i}"),
                    text: format!("{i:>1000}"),
                    ..Default::default()
                }
                .build("message", &Limits::default())
                .unwrap()
            })
            .collect::<Vec<Message>>(),
    )
}

fn resident(engine: &Engine, chat: &str) -> bool {
    engine.chats().inner.cache.resident(&key(chat)).is_some()
}

/// The sum of every slot's estimate, counted apart from the total.
fn counted(engine: &Engine) -> usize {
    engine
        .chats()
        .inner
        .cache
        .slots()
        .iter()
        .map(|slot| slot.bytes.load(Ordering::Acquire))
        .sum()
}

#[tokio::test]
async fn the_total_is_the_sum_of_the_slots_and_follows_the_chats_size() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir, 0).await;
    engine
        .chats()
        .publish(&key("small"), transcript(2))
        .await
        .unwrap();
    let small = engine.chats().inner.cache.total();
    engine
        .chats()
        .publish(&key("big"), transcript(40))
        .await
        .unwrap();
    let both = engine.chats().inner.cache.total();
    assert_eq!(both, counted(&engine));
    // Forty messages of 1,000 bytes: at least their text, and not wildly more.
    let big = both - small;
    assert!(
        (40_000..120_000).contains(&big),
        "{big} bytes for 40 KB of text"
    );
    // The big chat shrinks to one message: its estimate follows.
    engine
        .chats()
        .publish(&key("big"), transcript(1))
        .await
        .unwrap();
    assert!(engine.chats().inner.cache.total() < small + 10_000);
    assert_eq!(engine.chats().inner.cache.total(), counted(&engine));
}

#[tokio::test]
async fn past_the_budget_the_least_recently_used_chats_go_first() {
    let dir = tempfile::tempdir().unwrap();
    // About ten chats of 10 KB fit.
    let engine = engine(&dir, 150_000).await;
    for i in 0..10 {
        engine
            .chats()
            .publish(&key(&format!("c{i}")), transcript(10))
            .await
            .unwrap();
    }
    // c0 is used again: now c1 is the least recently used.
    engine
        .chats()
        .injection(&key("c0"), InjectionKey::Scene)
        .await
        .unwrap();
    for i in 10..14 {
        engine
            .chats()
            .publish(&key(&format!("c{i}")), transcript(10))
            .await
            .unwrap();
    }
    assert!(resident(&engine, "c0"), "used again: kept");
    assert!(!resident(&engine, "c1"), "least recently used: dropped");
    assert!(resident(&engine, "c13"), "just written: kept");
    let total = engine.chats().inner.cache.total();
    assert!(total <= 150_000, "{total} over the budget");
    assert_eq!(total, counted(&engine));
    // A dropped chat comes back as it was.
    let again = engine
        .chats()
        .injection(&key("c1"), InjectionKey::Scene)
        .await
        .unwrap();
    assert_eq!(again.revision, 1);
    assert_eq!(
        engine.chats().inclusion(&key("c1")).await.unwrap().len(),
        10
    );
}

#[tokio::test]
async fn watched_and_debouncing_chats_are_never_dropped() {
    let dir = tempfile::tempdir().unwrap();
    // A 1-byte budget: everything that may go, goes.
    let engine = engine(&dir, 1).await;
    engine
        .chats()
        .publish(&key("watched"), transcript(3))
        .await
        .unwrap();
    let updates = engine
        .chats()
        .subscribe(&Tenant::default(), &[key("watched")], None)
        .await
        .unwrap();
    let patch = SettingsPatch {
        debounce_ms: Some(60_000),
        ..Default::default()
    };
    engine
        .chats()
        .update_settings(
            &Tenant::default(),
            Some(&key("owing")),
            SettingsUpdate {
                patch,
                clear: vec![],
            },
        )
        .await
        .unwrap();
    engine
        .chats()
        .publish(&key("owing"), transcript(3))
        .await
        .unwrap();
    engine
        .chats()
        .publish(
            &key("owing"),
            ChatEvent::MessageSent(
                NewMessage {
                    id: "late".into(),
                    text: "a debounced message".into(),
                    ..Default::default()
                }
                .build("message", &Limits::default())
                .unwrap(),
            ),
        )
        .await
        .unwrap();
    for i in 0..5 {
        engine
            .chats()
            .publish(&key(&format!("other{i}")), transcript(3))
            .await
            .unwrap();
    }
    assert!(resident(&engine, "watched"));
    assert!(resident(&engine, "owing"));
    // Each publish leaves its chat droppable; the next one's pass drops it.
    assert!(!resident(&engine, "other0") && !resident(&engine, "other3"));
    drop(updates);
    // Unwatched now: the next pass drops it.
    engine
        .chats()
        .publish(&key("other9"), transcript(1))
        .await
        .unwrap();
    assert!(!resident(&engine, "watched"));
    assert!(resident(&engine, "owing"), "its refresh is still pending");
}

#[tokio::test]
async fn an_empty_slot_costs_its_own_bytes_and_leaving_gives_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir, 0).await;
    assert_eq!(engine.chats().inner.cache.total(), 0);
    // A read of an unknown chat makes a slot, then drops it.
    assert!(
        engine
            .chats()
            .injection(&key("nobody"), InjectionKey::Scene)
            .await
            .is_err()
    );
    assert_eq!(engine.chats().inner.cache.total(), 0);
    engine
        .chats()
        .publish(&key("one"), transcript(1))
        .await
        .unwrap();
    let one = engine.chats().inner.cache.resident(&key("one")).unwrap();
    assert!(engine.chats().inner.cache.total() > one.bytes_with(None));
}

#[tokio::test]
async fn an_all_chats_stream_that_fell_behind_gets_the_latest_of_dropped_chats_too() {
    use tokio_stream::StreamExt;
    let dir = tempfile::tempdir().unwrap();
    // Every chat leaves memory after each call.
    let engine = engine(&dir, 1).await;
    let mut stream = engine
        .chats()
        .subscribe(&Tenant::default(), &[], None)
        .await
        .unwrap();
    let mut latest = std::collections::HashMap::new();
    for i in 0..20 {
        let chat = format!("quiet{i}");
        let revision = engine
            .chats()
            .publish(&key(&chat), transcript(1))
            .await
            .unwrap();
        latest.insert(chat, revision);
    }
    // More refreshes of another chat than the stream holds, none read
    // yet: the quiet chats' only updates fall out of it.
    engine
        .chats()
        .publish(&key("busy"), transcript(1))
        .await
        .unwrap();
    for _ in 0..crate::engine::chats::ALL_CHATS_BUFFER + 10 {
        let injection = engine.chats().refresh(&key("busy")).await.unwrap();
        latest.insert("busy".to_owned(), injection.revision);
    }
    assert!(
        !resident(&engine, "quiet0"),
        "the quiet chats are out of memory"
    );
    // Reading now: every chat ends at its latest revision.
    let mut seen = std::collections::HashMap::new();
    while seen != latest {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), stream.next())
            .await
            .unwrap_or_else(|_| panic!("the stream stopped short: {seen:?}"))
            .expect("the stream stays open");
        seen.insert(next.chat.id.clone(), next.revision);
    }
}
