//! A store for tests of the job reads: chats in SQLite, jobs in memory,
//! read as the [`ChatStore`] contract says (so these tests need not wait
//! for the stores' job tables), and a switch that makes job reads fail.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::Job;
use crate::domain::recall::StoredVector;
use crate::domain::time::UnixMicros;
use crate::store::{
    ChatSettings, ChatStore, JobQuery, LoadedChat, SqliteStore, StoreError, TenantSettings, Write,
};

/// Chats in SQLite; jobs in memory, set by the test.
pub(crate) struct JobsStore {
    inner: SqliteStore,
    jobs: Mutex<Vec<Job>>,
    /// Every `list_jobs` query asked, in order.
    queries: Mutex<Vec<JobQuery>>,
    /// Job reads fail (UNAVAILABLE) while set.
    pub fail_reads: AtomicBool,
}

impl JobsStore {
    /// A store over a new SQLite database in `dir`.
    pub async fn open(dir: &std::path::Path) -> JobsStore {
        JobsStore {
            inner: SqliteStore::open(dir, false).await.expect("opens"),
            jobs: Mutex::new(Vec::new()),
            queries: Mutex::new(Vec::new()),
            fail_reads: AtomicBool::new(false),
        }
    }

    /// Stores `job`, replacing the job with its id.
    pub fn put(&self, job: Job) {
        let mut jobs = self.jobs.lock();
        jobs.retain(|j| j.id != job.id);
        jobs.push(job);
    }

    /// The `list_jobs` queries asked so far.
    pub fn queries(&self) -> Vec<JobQuery> {
        self.queries.lock().clone()
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.fail_reads.load(Ordering::SeqCst) {
            return Err(StoreError::database("reading jobs", "disk gone (test)"));
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl ChatStore for JobsStore {
    async fn commit(&self, writes: Vec<Write>) -> Result<(), StoreError> {
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
    async fn job(&self, tenant: &Tenant, job_id: &str) -> Result<Option<Job>, StoreError> {
        self.check()?;
        Ok(self
            .jobs
            .lock()
            .iter()
            .find(|j| j.id == job_id && j.chat.tenant == *tenant)
            .cloned())
    }
    async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, StoreError> {
        self.queries.lock().push(query.clone());
        self.check()?;
        let mut jobs: Vec<Job> = self
            .jobs
            .lock()
            .iter()
            .filter(|j| {
                j.chat.tenant == query.tenant
                    && query.chat_id.as_ref().is_none_or(|c| *c == j.chat.id)
                    && (query.states.is_empty() || query.states.contains(&j.state))
                    && query.changed_since_us.is_none_or(|t| j.updated_us >= t)
            })
            .cloned()
            .collect();
        // Newest first by (created, id); strictly after the cursor.
        jobs.sort_by(|a, b| (b.created_us, &b.id).cmp(&(a.created_us, &a.id)));
        if let Some((created_us, id)) = &query.after {
            jobs.retain(|j| (j.created_us, &j.id) < (*created_us, id));
        }
        jobs.truncate(query.limit);
        Ok(jobs)
    }
    async fn runnable_jobs(
        &self,
        _now_us: UnixMicros,
        _limit: usize,
        _after: Option<&ChatKey>,
        _lane: crate::domain::jobs::JobLane,
    ) -> Result<Vec<Job>, StoreError> {
        // Nothing runs in these tests: no runner takes the jobs set here.
        Ok(Vec::new())
    }
    async fn next_job_due(
        &self,
        _after_us: UnixMicros,
        _lane: crate::domain::jobs::JobLane,
    ) -> Result<Option<UnixMicros>, StoreError> {
        Ok(None)
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
