//! Recaps written by recapd: the job queue's operations (queue, cancel,
//! retry, list), the runner that takes runnable jobs round-robin over
//! chats and asks the LLM, and the application of results under the
//! chat's lock, in the same commit as the job's end.

use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::Job;
use crate::store::JobQuery;

use super::{Engine, EngineError};

impl Engine {
    /// GenerateSceneRecap: makes `message_id` a visible scene break if it
    /// is not one, and queues its scene recap (an existing non-terminal one
    /// is returned as it is).
    pub async fn generate_scene_recap(
        &self,
        chat: &ChatKey,
        message_id: &str,
    ) -> Result<Job, EngineError> {
        let _ = (chat, message_id);
        todo!("SKELETON: engine jobs")
    }

    /// DetectSceneBreaks: queues a detection over the chat's open scene now.
    pub async fn detect_scene_breaks(&self, chat: &ChatKey) -> Result<Job, EngineError> {
        let _ = chat;
        todo!("SKELETON: engine jobs")
    }

    /// GenerateRunningRecap: queues the merge of break `message_id`'s scene
    /// recap.
    pub async fn generate_running_recap(
        &self,
        chat: &ChatKey,
        message_id: &str,
    ) -> Result<Job, EngineError> {
        let _ = (chat, message_id);
        todo!("SKELETON: engine jobs")
    }

    /// GenerateMessageRecaps: queues one message recap per message (ids
    /// already checked and deduplicated by the caller).
    pub async fn generate_message_recaps(
        &self,
        chat: &ChatKey,
        message_ids: &[String],
    ) -> Result<Vec<Job>, EngineError> {
        let _ = (chat, message_ids);
        todo!("SKELETON: engine jobs")
    }

    /// ListJobs: a page of the tenant's jobs, newest first.
    pub async fn list_jobs(&self, query: &JobQuery) -> Result<Vec<Job>, EngineError> {
        Ok(self.inner.store.list_jobs(query).await?)
    }

    /// CancelJob.
    pub async fn cancel_job(&self, tenant: &Tenant, job_id: &str) -> Result<Job, EngineError> {
        let _ = (tenant, job_id);
        todo!("SKELETON: engine jobs")
    }

    /// RetryJob.
    pub async fn retry_job(&self, tenant: &Tenant, job_id: &str) -> Result<Job, EngineError> {
        let _ = (tenant, job_id);
        todo!("SKELETON: engine jobs")
    }
}
