//! A server over a real socket whose store can be made to fail or to panic:
//! the embedded store behind a wrapper that, when told, refuses commits
//! with a database error worded as a driver would word it, or panics in
//! one commit. recapd itself has no such hook, so the server is assembled
//! here from the library's public parts (the engine, the gRPC services and
//! the per-RPC observer), as `App` assembles it.

use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;

use recapd::domain::ids::{ChatKey, Tenant};
use recapd::domain::jobs::Job;
use recapd::domain::recall::StoredVector;
use recapd::domain::time::UnixMicros;
use recapd::engine::Engine;
use recapd::engine::EngineOptions;
use recapd::grpc::observe::ObserveLayer;
use recapd::grpc::pb::event_service_server::EventServiceServer;
use recapd::grpc::pb::injection_service_server::InjectionServiceServer;
use recapd::grpc::pb::memory_service_server::MemoryServiceServer;
use recapd::grpc::{EventApi, InjectionApi, MemoryApi};
use recapd::store::{
    ChatListing, ChatSettings, ChatStore, JobQuery, LoadedChat, SqliteStore, StoreError, Stores,
    TenantSettings, Write,
};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;

use crate::common::Server;

/// What the next commits do.
#[derive(Debug, Clone)]
enum Fault {
    /// Commit as the embedded store does.
    None,
    /// Fail with a database error whose source says this.
    Fail(String),
    /// Panic with this message, once.
    Panic(String),
}

/// The embedded store, with commits that can be made to fail or panic.
pub struct Faulty {
    inner: SqliteStore,
    fault: Mutex<Fault>,
}

impl Faulty {
    /// Every commit from now fails with a database error; `source` is the
    /// database's own words.
    pub fn fail_commits(&self, source: &str) {
        *self.fault.lock().unwrap() = Fault::Fail(source.to_owned());
    }

    /// The next commit panics with `message`.
    pub fn panic_next_commit(&self, message: &str) {
        *self.fault.lock().unwrap() = Fault::Panic(message.to_owned());
    }

    /// Commits work again.
    pub fn heal(&self) {
        *self.fault.lock().unwrap() = Fault::None;
    }
}

#[async_trait::async_trait]
impl ChatStore for Faulty {
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
        let fault = {
            let mut fault = self.fault.lock().unwrap();
            let now = fault.clone();
            if matches!(now, Fault::Panic(_)) {
                *fault = Fault::None;
            }
            now
        };
        match fault {
            Fault::None => self.inner.commit(writes).await,
            Fault::Fail(source) => Err(StoreError::database(
                "committing to /var/lib/recapd/recapd.sqlite3",
                source,
            )),
            Fault::Panic(message) => panic!("{message}"),
        }
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
    ) -> Result<Vec<ChatListing>, StoreError> {
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
    async fn job(&self, tenant: &Tenant, job_id: &str) -> Result<Option<Job>, StoreError> {
        self.inner.job(tenant, job_id).await
    }
    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
        self.inner.list_jobs(query).await
    }
    async fn runnable_jobs(
        &self,
        now_us: UnixMicros,
        limit: usize,
        after: Option<&ChatKey>,
        lane: recapd::domain::jobs::JobLane,
    ) -> Result<Vec<Job>, StoreError> {
        self.inner.runnable_jobs(now_us, limit, after, lane).await
    }
    async fn next_job_due(
        &self,
        after_us: UnixMicros,
        lane: recapd::domain::jobs::JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        self.inner.next_job_due(after_us, lane).await
    }
    async fn lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<recapd::store::StoredLorebook>, StoreError> {
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
    ) -> Result<Vec<recapd::store::LorebookListing>, StoreError> {
        self.inner.list_lorebooks(tenant, after, limit).await
    }
    async fn lorebook_count(&self, tenant: &Tenant) -> Result<usize, StoreError> {
        self.inner.lorebook_count(tenant).await
    }
    async fn close(&self) {
        self.inner.close().await;
    }
}

/// Serves the event, memory and injection services of an engine on
/// [`Faulty`] over `data_dir`, on a loopback port; returns the clients and
/// the store. The server runs until the runtime ends.
pub async fn start(data_dir: &Path) -> (Server, Arc<Faulty>) {
    let store = Arc::new(Faulty {
        inner: SqliteStore::open(data_dir, true)
            .await
            .expect("the store opens"),
        fault: Mutex::new(Fault::None),
    });
    let engine = Engine::new(Stores::single(store.clone()), EngineOptions::default())
        .await
        .expect("the engine starts");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let router = tonic::transport::Server::builder()
        .layer(ObserveLayer)
        .add_service(EventServiceServer::new(EventApi::new(engine.clone())))
        .add_service(MemoryServiceServer::new(MemoryApi::new(
            engine.clone(),
            shutdown.clone(),
        )))
        .add_service(InjectionServiceServer::new(InjectionApi::new(
            engine, shutdown,
        )));
    tokio::spawn(router.serve_with_incoming(TcpIncoming::from(listener)));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("connects");
    (Server::clients(channel), store)
}
