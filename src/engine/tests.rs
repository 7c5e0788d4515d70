//! Engine tests over a store that can be slowed down or made to fail, to
//! check what a client would see when a call is cancelled or a commit fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::commit::Committer;
use super::{Engine, EngineError};
use crate::domain::Limits;
use crate::domain::chat::ChatEvent;
use crate::domain::message::{Message, MessageData, NewMessage};
use crate::domain::refresh::{InjectionKey, Trigger};
use crate::domain::settings::SettingsPatch;
use crate::engine::SettingsUpdate;
use crate::store::{ChatSettings, SqliteStore, Store, StoreError, StoredChat, Write};

/// A SQLite store whose commits can be delayed or refused.
struct Faulty {
    inner: SqliteStore,
    delay_ms: AtomicU64,
    fail: AtomicBool,
}

impl Store for Faulty {
    fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        std::thread::sleep(Duration::from_millis(self.delay_ms.load(Ordering::SeqCst)));
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Database("disk full (test)".into()));
        }
        self.inner.commit(groups)
    }
    fn load_chat(&self, chat_id: &str) -> Result<Option<StoredChat>, StoreError> {
        self.inner.load_chat(chat_id)
    }
    fn load_chat_settings(&self, chat_id: &str) -> Result<Option<ChatSettings>, StoreError> {
        self.inner.load_chat_settings(chat_id)
    }
    fn all_chat_settings(&self) -> Result<Vec<(String, ChatSettings)>, StoreError> {
        self.inner.all_chat_settings()
    }
    fn load_global_settings(&self) -> Result<Vec<(String, SettingsPatch)>, StoreError> {
        self.inner.load_global_settings()
    }
    fn chat_ids(&self) -> Result<Vec<String>, StoreError> {
        self.inner.chat_ids()
    }
    fn chats_needing_refresh(&self) -> Result<Vec<String>, StoreError> {
        self.inner.chats_needing_refresh()
    }
}

fn engine(dir: &tempfile::TempDir) -> (Engine, Arc<Faulty>) {
    let store = Arc::new(Faulty {
        inner: SqliteStore::open(dir.path(), true).unwrap(),
        delay_ms: AtomicU64::new(0),
        fail: AtomicBool::new(false),
    });
    let (committer, _thread) = Committer::start(store.clone()).unwrap();
    (
        Engine::new(store.clone(), committer, Limits::default()).unwrap(),
        store,
    )
}

fn message(id: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: format!("text {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

async fn debounce(engine: &Engine, ms: u64) {
    let patch = SettingsPatch {
        debounce_ms: Some(ms),
        ..Default::default()
    };
    engine
        .update_settings(
            "",
            None,
            SettingsUpdate {
                patch,
                clear: vec![],
            },
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn a_cancelled_call_still_commits_refreshes_and_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir);
    debounce(&engine, 50).await;
    engine
        .publish("c", ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    store.delay_ms.store(200, Ordering::SeqCst);
    // The caller gives up while the commit is in progress.
    let cancelled = tokio::time::timeout(
        Duration::from_millis(50),
        engine.publish("c", ChatEvent::MessageSent(message("b"))),
    )
    .await;
    assert!(cancelled.is_err(), "the call was cut short");
    tokio::time::sleep(Duration::from_millis(400)).await;
    // The message is stored and its debounced refresh ran.
    assert!(engine.message_data("c", "b").await.is_ok());
    let injection = engine.injection("c", InjectionKey::Scene).await.unwrap();
    assert_eq!(
        (injection.revision, injection.trigger),
        (2, Some(Trigger::MessageSent))
    );

    // A Refresh cut short during its commit still lands, in memory, on
    // disk and for subscribers.
    let mut updates = engine.subscribe("", &["c".to_owned()], None).await.unwrap();
    let cancelled = tokio::time::timeout(Duration::from_millis(50), engine.refresh("c")).await;
    assert!(cancelled.is_err());
    use tokio_stream::StreamExt;
    assert_eq!(updates.next().await.unwrap().revision, 2);
    let pushed = tokio::time::timeout(Duration::from_secs(2), updates.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (pushed.revision, pushed.trigger),
        (3, Some(Trigger::RefreshRequested))
    );
    store.delay_ms.store(0, Ordering::SeqCst);
    assert_eq!(
        engine
            .injection("c", InjectionKey::Scene)
            .await
            .unwrap()
            .revision,
        3
    );
    assert!(store.chats_needing_refresh().unwrap().is_empty());
    drop(engine);
    let reopened = SqliteStore::open(dir.path(), true).unwrap();
    let stored = reopened.load_chat("c").unwrap().unwrap();
    assert_eq!(stored.meta.revision, 3);
}

#[tokio::test]
async fn a_failed_commit_is_unavailable_and_leaves_memory_as_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir);
    debounce(&engine, 100).await;
    engine
        .publish("c", ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    // Acknowledged, debounced: a refresh is owed.
    engine
        .publish("c", ChatEvent::MessageSent(message("b")))
        .await
        .unwrap();
    store.fail.store(true, Ordering::SeqCst);
    let data = MessageData {
        memory: Some("never stored".into()),
        ..Default::default()
    };
    let error = engine.set_message_data("c", "b", &data).await.unwrap_err();
    assert!(matches!(error, EngineError::Store(StoreError::Database(_))));
    let error = engine
        .publish("c", ChatEvent::MessageSent(message("x")))
        .await
        .unwrap_err();
    assert!(matches!(error, EngineError::Store(_)));
    store.fail.store(false, Ordering::SeqCst);
    // Memory was re-read from disk: no trace of the refused writes...
    assert_eq!(engine.message_data("c", "b").await.unwrap().memory, None);
    assert!(engine.message_data("c", "x").await.is_err());
    // ...and the owed refresh of the acknowledged message still comes.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let injection = engine.injection("c", InjectionKey::Scene).await.unwrap();
    assert_eq!(injection.revision, 2);
    assert!(store.chats_needing_refresh().unwrap().is_empty());
}

#[tokio::test]
async fn a_global_change_marks_every_chat_owed_until_refreshed() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir);
    for chat in ["a", "b", "c"] {
        engine
            .publish(chat, ChatEvent::RefreshRequested)
            .await
            .unwrap();
    }
    debounce(&engine, 10).await;
    assert!(store.chats_needing_refresh().unwrap().is_empty());
    for chat in ["a", "b", "c"] {
        let injection = engine.injection(chat, InjectionKey::Scene).await.unwrap();
        assert_eq!(
            (injection.revision, injection.trigger),
            (2, Some(Trigger::SettingsChanged))
        );
    }
    // Were the process to stop between the commit and the refreshes, the
    // chats would be owed: the same write, committed alone, shows it.
    store
        .inner
        .commit(&[vec![Write::AllChatsOweRefresh {
            tenant: String::new(),
        }]])
        .unwrap();
    assert_eq!(store.chats_needing_refresh().unwrap(), ["a", "b", "c"]);
}

#[tokio::test]
async fn reads_of_unknown_chats_do_not_stay_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir);
    engine
        .publish("real", ChatEvent::RefreshRequested)
        .await
        .unwrap();
    for i in 0..1000 {
        let id = format!("made-up-{i}");
        assert!(engine.injection(&id, InjectionKey::Scene).await.is_err());
        assert!(engine.message_data(&id, "m").await.is_err());
        assert!(engine.list_recaps(&id).await.is_err());
        assert!(engine.inclusion(&id).await.is_err());
        engine.settings("", Some(&id)).await.unwrap();
    }
    assert_eq!(engine.resident_slots().len(), 1, "only the real chat stays");
    assert_eq!(
        engine
            .injection("real", InjectionKey::Scene)
            .await
            .unwrap()
            .revision,
        1
    );
}
