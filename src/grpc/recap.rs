//! `recap.v1.RecapService`: recaps written by recapd, as jobs. Each RPC
//! checks its request, calls the engine, and converts the answer.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio_stream::Stream;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tonic::{Request, Response, Status};

use super::convert;
use super::injection::MAX_CHATS_PER_SUBSCRIBE;
use super::pb;
use super::pb::recap_service_server::RecapService;
use super::services::{scoped, split};
use super::status::domain_status;
use crate::domain::ids;
use crate::engine::{Engine, JobUpdates};
use crate::store::JobQuery;

/// `recap.v1.RecapService`.
#[derive(Clone)]
pub struct RecapApi {
    engine: Engine,
    /// Cancelled when the server shuts down: open WatchJobs streams end.
    shutdown: CancellationToken,
}

impl RecapApi {
    /// Serves jobs from `engine`; open `WatchJobs` streams end when
    /// `shutdown` is cancelled.
    pub fn new(engine: Engine, shutdown: CancellationToken) -> Self {
        RecapApi { engine, shutdown }
    }
}

#[tonic::async_trait]
impl RecapService for RecapApi {
    async fn generate_scene_recap(
        &self,
        request: Request<pb::GenerateSceneRecapRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (
            tenant,
            pb::GenerateSceneRecapRequest {
                chat_id,
                message_id,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let job = self
            .engine
            .jobs()
            .generate_scene_recap(&chat_id, &message_id)
            .await?;
        Ok(Response::new((&job).into()))
    }

    async fn detect_scene_breaks(
        &self,
        request: Request<pb::DetectSceneBreaksRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (tenant, pb::DetectSceneBreaksRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let job = self.engine.jobs().detect_scene_breaks(&chat_id).await?;
        Ok(Response::new((&job).into()))
    }

    async fn generate_running_recap(
        &self,
        request: Request<pb::GenerateRunningRecapRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (
            tenant,
            pb::GenerateRunningRecapRequest {
                chat_id,
                message_id,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let job = self
            .engine
            .jobs()
            .generate_running_recap(&chat_id, &message_id)
            .await?;
        Ok(Response::new((&job).into()))
    }

    async fn regenerate_running_recap(
        &self,
        request: Request<pb::RegenerateRunningRecapRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (tenant, pb::RegenerateRunningRecapRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let job = self
            .engine
            .jobs()
            .regenerate_running_recap(&chat_id)
            .await?;
        Ok(Response::new((&job).into()))
    }

    async fn generate_lore(
        &self,
        request: Request<pb::GenerateLoreRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (
            tenant,
            pb::GenerateLoreRequest {
                chat_id,
                message_id,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let job = self
            .engine
            .jobs()
            .generate_lore(&chat_id, &message_id)
            .await?;
        Ok(Response::new((&job).into()))
    }

    async fn generate_message_recaps(
        &self,
        request: Request<pb::GenerateMessageRecapsRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        let (
            tenant,
            pb::GenerateMessageRecapsRequest {
                chat_id,
                message_ids,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let message_ids = convert::unique_ids(
            "message_ids",
            message_ids,
            convert::MAX_MESSAGE_IDS,
            ids::check_message_id,
        )
        .map_err(domain_status)?;
        let jobs = self
            .engine
            .jobs()
            .generate_message_recaps(&chat_id, &message_ids)
            .await?;
        Ok(Response::new(pb::ListJobsResponse {
            jobs: jobs.iter().map(Into::into).collect(),
            next_page_token: String::new(),
        }))
    }

    async fn list_jobs(
        &self,
        request: Request<pb::ListJobsRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        let (
            tenant,
            pb::ListJobsRequest {
                chat_id,
                states,
                page_size,
                page_token,
            },
        ) = split(request);
        let chat_id = if chat_id.is_empty() {
            None
        } else {
            convert::chat_id(&chat_id).map_err(domain_status)?;
            Some(chat_id)
        };
        let states = convert::job_states(&states).map_err(domain_status)?;
        let limit = convert::page_size(page_size).map_err(domain_status)?;
        let after = convert::page_after(&page_token).map_err(domain_status)?;
        // One more than the page, to know whether another page follows.
        let query = JobQuery {
            tenant,
            chat_id,
            states,
            limit: limit + 1,
            after,
            changed_since_us: None,
        };
        let mut jobs = self.engine.jobs().list_jobs(&query).await?;
        let next_page_token = if jobs.len() > limit {
            jobs.truncate(limit);
            jobs.last().map(convert::page_token).unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListJobsResponse {
            jobs: jobs.iter().map(Into::into).collect(),
            next_page_token,
        }))
    }

    async fn cancel_job(
        &self,
        request: Request<pb::CancelJobRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (tenant, pb::CancelJobRequest { job_id }) = split(request);
        convert::job_id(&job_id).map_err(domain_status)?;
        let job = self.engine.jobs().cancel_job(&tenant, &job_id).await?;
        Ok(Response::new((&job).into()))
    }

    async fn retry_job(
        &self,
        request: Request<pb::RetryJobRequest>,
    ) -> Result<Response<pb::Job>, Status> {
        let (tenant, pb::RetryJobRequest { job_id }) = split(request);
        convert::job_id(&job_id).map_err(domain_status)?;
        let job = self.engine.jobs().retry_job(&tenant, &job_id).await?;
        Ok(Response::new((&job).into()))
    }

    type WatchJobsStream = JobStream;

    async fn watch_jobs(
        &self,
        request: Request<pb::WatchJobsRequest>,
    ) -> Result<Response<JobStream>, Status> {
        let connection = request.remote_addr();
        let (tenant, pb::WatchJobsRequest { chat_ids }) = split(request);
        let chat_ids = convert::unique_ids(
            "chat_ids",
            chat_ids,
            MAX_CHATS_PER_SUBSCRIBE,
            ids::check_chat_id,
        )
        .map_err(domain_status)?;
        let updates = self
            .engine
            .jobs()
            .watch_jobs(&tenant, chat_ids, connection)?;
        Ok(Response::new(JobStream::new(
            updates,
            self.shutdown.clone().cancelled_owned(),
        )))
    }
}

/// Job state changes for one `WatchJobs` call, converted to the wire type.
/// Ends with a clean end of stream when the server shuts down, or with the
/// error of a re-read that failed (see [`JobUpdates`]).
pub struct JobStream {
    updates: JobUpdates,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl JobStream {
    /// Wraps `updates`, ending once `shutdown` completes.
    pub fn new(updates: JobUpdates, shutdown: WaitForCancellationFutureOwned) -> Self {
        JobStream {
            updates,
            shutdown: Box::pin(shutdown),
        }
    }
}

impl Stream for JobStream {
    type Item = Result<pb::Job, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.shutdown.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.updates)
            .poll_next(cx)
            .map(|next| next.map(|item| item.map(|job| pb::Job::from(&*job)).map_err(Status::from)))
    }
}

#[cfg(test)]
mod tests;
