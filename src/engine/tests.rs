//! Engine tests over a store that can be slowed down or made to fail, to
//! check what a client would see when a call is cancelled or a commit fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::{Engine, EngineError};
use crate::domain::Limits;
use crate::domain::chat::ChatEvent;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::message::{Message, MessageData, NewMessage};
use crate::domain::recall::StoredVector;
use crate::domain::refresh::{InjectionKey, Trigger};
use crate::domain::settings::SettingsPatch;
use crate::domain::time::UnixMicros;
use crate::engine::SettingsUpdate;
use crate::store::{
    ChatSettings, ChatStore, LoadedChat, SqliteStore, StoreError, Stores, TenantSettings, Write,
};

/// A SQLite store whose commits can be delayed, refused, or made to panic
/// (once), and that counts the groups it was asked to commit.
pub(in crate::engine) struct Faulty {
    inner: SqliteStore,
    pub delay_ms: AtomicU64,
    pub fail: AtomicBool,
    panic: AtomicBool,
    pub commits: AtomicU64,
}

#[async_trait::async_trait]
impl ChatStore for Faulty {
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        self.commits.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(self.delay_ms.load(Ordering::SeqCst))).await;
        if self.panic.swap(false, Ordering::SeqCst) {
            panic!("the store broke (test)");
        }
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::database("committing", "disk full (test)"));
        }
        self.inner.commit(writes).await
    }
    async fn load(&self, chat: &ChatKey) -> Result<LoadedChat, StoreError> {
        self.inner.load(chat).await
    }
    async fn recall_vectors(&self, chat: &ChatKey) -> Result<Vec<StoredVector>, StoreError> {
        self.inner.recall_vectors(chat).await
    }
    async fn global_settings(&self) -> Result<Vec<TenantSettings>, StoreError> {
        self.inner.global_settings().await
    }
    async fn chat_count(&self) -> Result<usize, StoreError> {
        self.inner.chat_count().await
    }
    async fn chats_of(&self, tenant: &Tenant) -> Result<Vec<ChatKey>, StoreError> {
        self.inner.chats_of(tenant).await
    }
    async fn chat_settings_of(
        &self,
        tenant: &Tenant,
    ) -> Result<Vec<(ChatKey, ChatSettings)>, StoreError> {
        self.inner.chat_settings_of(tenant).await
    }
    async fn list_chats(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<crate::store::ChatListing>, StoreError> {
        self.inner.list_chats(tenant, after, limit).await
    }
    async fn quiet_chats(
        &self,
        changed_before_us: UnixMicros,
        limit: usize,
    ) -> Result<Vec<ChatKey>, StoreError> {
        self.inner.quiet_chats(changed_before_us, limit).await
    }
    async fn chats_owing_refresh(&self) -> Result<Vec<ChatKey>, StoreError> {
        self.inner.chats_owing_refresh().await
    }
    async fn job(
        &self,
        tenant: &Tenant,
        job_id: &str,
    ) -> Result<Option<crate::domain::jobs::Job>, StoreError> {
        self.inner.job(tenant, job_id).await
    }
    async fn list_jobs(
        &self,
        query: &crate::store::JobQuery,
    ) -> Result<Vec<crate::domain::jobs::Job>, StoreError> {
        self.inner.list_jobs(query).await
    }
    async fn runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&crate::domain::ids::ChatKey>,
        lane: crate::domain::jobs::JobLane,
    ) -> Result<Vec<crate::domain::jobs::Job>, StoreError> {
        self.inner.runnable_jobs(now_us, limit, after, lane).await
    }
    async fn next_job_due(
        &self,
        after_us: UnixMicros,
        lane: crate::domain::jobs::JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        self.inner.next_job_due(after_us, lane).await
    }
    async fn lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<crate::store::StoredLorebook>, StoreError> {
        self.inner.lorebook(tenant, name).await
    }
    async fn lorebook_versions(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, u64)>, StoreError> {
        self.inner.lorebook_versions(tenant, names).await
    }
    async fn list_lorebooks(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<crate::store::LorebookListing>, StoreError> {
        self.inner.list_lorebooks(tenant, after, limit).await
    }
    async fn lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError> {
        self.inner.lorebook_count(tenant).await
    }
    async fn close(&self) {
        self.inner.close().await;
    }
}

pub(in crate::engine) async fn engine(dir: &tempfile::TempDir) -> (Engine, Arc<Faulty>) {
    let store = Arc::new(Faulty {
        inner: SqliteStore::open(dir.path(), true).await.unwrap(),
        delay_ms: AtomicU64::new(0),
        fail: AtomicBool::new(false),
        panic: AtomicBool::new(false),
        commits: AtomicU64::new(0),
    });
    let engine = Engine::new(
        Stores::single(store.clone()),
        crate::engine::EngineOptions::default(),
    )
    .await
    .unwrap();
    (engine, store)
}

/// An engine over a fresh store in `dir` whose wall clock is `clock` (a
/// test's manual clock), with the default job options.
pub(in crate::engine) async fn engine_at(
    dir: &tempfile::TempDir,
    clock: &crate::wall_clock::ManualClock,
) -> Engine {
    let store = crate::store::SqliteStore::open(dir.path(), true)
        .await
        .unwrap();
    let options = crate::engine::EngineOptions {
        wall_clock: Arc::new(clock.clone()),
        ..crate::engine::EngineOptions::default()
    };
    Engine::new(crate::store::Stores::single(Arc::new(store)), options)
        .await
        .unwrap()
}

pub(in crate::engine) fn key(chat: &str) -> ChatKey {
    ChatKey::untenanted(chat)
}

pub(in crate::engine) fn message(id: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: format!("text {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

pub(in crate::engine) async fn debounce(engine: &Engine, ms: u64) {
    let patch = SettingsPatch {
        debounce_ms: Some(ms),
        ..Default::default()
    };
    engine
        .chats()
        .update_settings(
            &Tenant::default(),
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
    let (engine, store) = engine(&dir).await;
    debounce(&engine, 50).await;
    engine
        .chats()
        .publish(&key("c"), ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    store.delay_ms.store(200, Ordering::SeqCst);
    // The caller gives up while the commit is in progress.
    let cancelled = tokio::time::timeout(
        Duration::from_millis(50),
        engine
            .chats()
            .publish(&key("c"), ChatEvent::MessageSent(message("b"))),
    )
    .await;
    assert!(cancelled.is_err(), "the call was cut short");
    // The message is stored and its debounced refresh runs: two delayed
    // commits and the debounce, about 450 ms, longer on a loaded machine.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let injection = loop {
        let injection = engine
            .chats()
            .injection(&key("c"), InjectionKey::Scene)
            .await
            .unwrap();
        if injection.revision >= 2 || tokio::time::Instant::now() >= deadline {
            break injection;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        engine
            .chats()
            .message_data(&key("c"), "b", None)
            .await
            .is_ok()
    );
    assert_eq!(
        (injection.revision, injection.trigger),
        (2, Some(Trigger::MessageSent))
    );

    // A Refresh cut short during its commit still lands, in memory, on
    // disk and for subscribers.
    let mut updates = engine
        .chats()
        .subscribe(&Tenant::default(), &[key("c")], None)
        .await
        .unwrap();
    let cancelled =
        tokio::time::timeout(Duration::from_millis(50), engine.chats().refresh(&key("c"))).await;
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
            .chats()
            .injection(&key("c"), InjectionKey::Scene)
            .await
            .unwrap()
            .revision,
        3
    );
    assert!(store.chats_owing_refresh().await.unwrap().is_empty());
    drop(engine);
    store.close().await;
    let reopened = SqliteStore::open(dir.path(), true).await.unwrap();
    let stored = reopened.load(&key("c")).await.unwrap().chat.unwrap();
    assert_eq!(stored.meta.revision, 3);
}

#[tokio::test]
async fn a_failed_commit_is_unavailable_and_leaves_memory_as_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir).await;
    debounce(&engine, 100).await;
    engine
        .chats()
        .publish(&key("c"), ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    // Acknowledged, debounced: a refresh is owed.
    engine
        .chats()
        .publish(&key("c"), ChatEvent::MessageSent(message("b")))
        .await
        .unwrap();
    store.fail.store(true, Ordering::SeqCst);
    let data = MessageData {
        memory: Some("never stored".into()),
        ..Default::default()
    };
    let error = engine
        .chats()
        .set_message_data(&key("c"), "b", &data, false)
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        EngineError::Store(StoreError::Database { .. })
    ));
    let error = engine
        .chats()
        .publish(&key("c"), ChatEvent::MessageSent(message("x")))
        .await
        .unwrap_err();
    assert!(matches!(error, EngineError::Store(_)));
    store.fail.store(false, Ordering::SeqCst);
    // Memory was re-read from disk: no trace of the refused writes...
    assert_eq!(
        engine
            .chats()
            .message_data(&key("c"), "b", None)
            .await
            .unwrap()
            .memory,
        None
    );
    assert!(
        engine
            .chats()
            .message_data(&key("c"), "x", None)
            .await
            .is_err()
    );
    // ...and the owed refresh of the acknowledged message still comes.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let injection = engine
        .chats()
        .injection(&key("c"), InjectionKey::Scene)
        .await
        .unwrap();
    assert_eq!(injection.revision, 2);
    assert!(store.chats_owing_refresh().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_global_change_marks_every_chat_owed_until_refreshed() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir).await;
    for chat in ["a", "b", "c"] {
        engine
            .chats()
            .publish(&key(chat), ChatEvent::RefreshRequested)
            .await
            .unwrap();
    }
    debounce(&engine, 10).await;
    assert!(store.chats_owing_refresh().await.unwrap().is_empty());
    for chat in ["a", "b", "c"] {
        let injection = engine
            .chats()
            .injection(&key(chat), InjectionKey::Scene)
            .await
            .unwrap();
        assert_eq!(
            (injection.revision, injection.trigger),
            (2, Some(Trigger::SettingsChanged))
        );
    }
    // Were the process to stop between the commit and the refreshes, the
    // chats would be owed: the same write, committed alone, shows it.
    store
        .inner
        .commit(vec![Write::AllChatsOweRefresh {
            tenant: Tenant::default(),
        }])
        .await
        .unwrap();
    assert_eq!(
        store.chats_owing_refresh().await.unwrap(),
        [key("a"), key("b"), key("c")]
    );
}

#[tokio::test]
async fn reads_of_unknown_chats_do_not_stay_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir).await;
    engine
        .chats()
        .publish(&key("real"), ChatEvent::RefreshRequested)
        .await
        .unwrap();
    for i in 0..1000 {
        let id = key(&format!("made-up-{i}"));
        assert!(
            engine
                .chats()
                .injection(&id, InjectionKey::Scene)
                .await
                .is_err()
        );
        assert!(engine.chats().message_data(&id, "m", None).await.is_err());
        assert!(engine.chats().list_recaps(&id).await.is_err());
        assert!(engine.chats().inclusion(&id).await.is_err());
        engine
            .chats()
            .settings(&Tenant::default(), Some(&id))
            .await
            .unwrap();
    }
    assert_eq!(
        engine.chats().inner.cache.slots().len(),
        1,
        "only the real chat stays"
    );
    assert_eq!(
        engine
            .chats()
            .injection(&key("real"), InjectionKey::Scene)
            .await
            .unwrap()
            .revision,
        1
    );
}

#[tokio::test]
async fn a_panic_in_the_commit_path_fails_that_call_only() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir).await;
    engine
        .chats()
        .publish(&key("c"), ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    // The next commit panics after a while; a read of the same chat waits
    // behind it for the chat's lock.
    store.delay_ms.store(100, Ordering::SeqCst);
    store.panic.store(true, Ordering::SeqCst);
    let chat = key("c");
    let (panicked, queued_read) = tokio::join!(
        engine
            .chats()
            .publish(&chat, ChatEvent::MessageSent(message("b"))),
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            engine.chats().message_data(&chat, "b", None).await
        }
    );
    let error = panicked.unwrap_err();
    assert!(
        matches!(&error, EngineError::Panicked(m) if m.contains("the store broke")),
        "{error:?}"
    );
    // The queued read did not see the message that was never committed.
    assert!(queued_read.is_err(), "{queued_read:?}");
    store.delay_ms.store(0, Ordering::SeqCst);
    engine
        .chats()
        .publish(&chat, ChatEvent::MessageSent(message("x")))
        .await
        .unwrap();
    let stored = store.inner.load(&chat).await.unwrap().chat.unwrap();
    let ids: Vec<&str> = stored.messages.iter().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["a", "x"]);
    // The chat goes on.
    engine
        .chats()
        .publish(&key("c"), ChatEvent::MessageSent(message("b")))
        .await
        .unwrap();
    assert!(
        engine
            .chats()
            .message_data(&key("c"), "b", None)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn an_import_the_store_refuses_leaves_nothing_and_a_stored_one_is_held_once() {
    use crate::domain::st_chat::parse_st_chat;
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir).await;
    let file = "{\"chat_metadata\":{}}\n{\"name\":\"U\",\"is_user\":true,\"mes\":\"hi\"}\n";
    let imported = || parse_st_chat(file, &Limits::default()).unwrap();
    store.fail.store(true, Ordering::SeqCst);
    let failed = engine.chats().import_chat(&key("c"), imported()).await;
    assert!(matches!(failed, Err(EngineError::Store(_))), "{failed:?}");
    store.fail.store(false, Ordering::SeqCst);
    assert!(engine.chats().chat_snapshot(&key("c")).await.is_err());
    assert_eq!(store.chat_count().await.unwrap(), 0);
    assert_eq!(
        engine
            .chats()
            .import_chat(&key("c"), imported())
            .await
            .unwrap(),
        (1, 0)
    );
    // Memory holds the chat once: the store and the import let go of it,
    // so the chat's next change copies nothing.
    let snapshot = engine.chats().chat_snapshot(&key("c")).await.unwrap();
    assert_eq!(Arc::strong_count(&snapshot.chat), 2);
}

mod profiles;
mod residency;
mod toggles;
mod tokenizers;
