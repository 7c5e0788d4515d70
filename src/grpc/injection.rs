//! `recap.v1.InjectionService`: what to inject now, a refresh on demand,
//! the inclusion pass's verdicts and the `Subscribe` push.

use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

use super::pb;
use super::pb::injection_service_server::InjectionService;
use super::services::{scoped, split};
use super::status::domain_status;
use super::stream::InjectionStream;
use super::wire::WireInjection;
use crate::domain::ids::{self, ChatKey};
use crate::domain::refresh::InjectionKey;
use crate::engine::Engine;

/// Most chats one `Subscribe` may name (each is loaded and watched).
pub const MAX_CHATS_PER_SUBSCRIBE: usize = 1000;

/// `recap.v1.InjectionService`.
#[derive(Clone)]
pub struct InjectionApi {
    engine: Engine,
    shutdown: CancellationToken,
}

impl InjectionApi {
    /// Serves injections from `engine`; open `Subscribe` streams end when
    /// `shutdown` is cancelled.
    pub fn new(engine: Engine, shutdown: CancellationToken) -> Self {
        InjectionApi { engine, shutdown }
    }
}

#[tonic::async_trait]
impl InjectionService for InjectionApi {
    async fn get_injection(
        &self,
        request: Request<pb::GetInjectionRequest>,
    ) -> Result<Response<WireInjection>, Status> {
        let (tenant, pb::GetInjectionRequest { chat_id, key }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let key = match key.as_deref() {
            None | Some("") => InjectionKey::Scene,
            Some(name) => InjectionKey::parse(name).ok_or_else(|| {
                Status::invalid_argument(format!(
                    "invalid key: {name:?} is not one of auto_recap_scene, auto_recap_messages, auto_recap_recall"
                ))
            })?,
        };
        let injection = self.engine.chats().injection(&chat_id, key).await?;
        Ok(Response::new(WireInjection(injection)))
    }

    async fn refresh(
        &self,
        request: Request<pb::RefreshRequest>,
    ) -> Result<Response<WireInjection>, Status> {
        let (tenant, pb::RefreshRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let injection = self.engine.chats().refresh(&chat_id).await?;
        Ok(Response::new(WireInjection(injection)))
    }

    async fn get_inclusion(
        &self,
        request: Request<pb::GetInclusionRequest>,
    ) -> Result<Response<pb::GetInclusionResponse>, Status> {
        let (tenant, pb::GetInclusionRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let lines = self.engine.chats().inclusion(&chat_id).await?;
        Ok(Response::new(pb::GetInclusionResponse {
            messages: lines.iter().map(Into::into).collect(),
        }))
    }

    type SubscribeStream = InjectionStream;

    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Result<Response<InjectionStream>, Status> {
        let connection = request.remote_addr();
        let (
            tenant,
            pb::SubscribeRequest {
                chat_ids,
                max_updates,
            },
        ) = split(request);
        if chat_ids.len() > MAX_CHATS_PER_SUBSCRIBE {
            return Err(Status::invalid_argument(format!(
                "invalid chat_ids: at most {MAX_CHATS_PER_SUBSCRIBE} chats per Subscribe"
            )));
        }
        let mut seen = std::collections::HashSet::with_capacity(chat_ids.len());
        let mut unique: Vec<ChatKey> = Vec::with_capacity(chat_ids.len());
        for (i, chat_id) in chat_ids.into_iter().enumerate() {
            ids::check_chat_id(&format!("chat_ids[{i}]"), &chat_id).map_err(domain_status)?;
            if seen.insert(chat_id.clone()) {
                unique.push(tenant.chat(&chat_id));
            }
        }
        let updates = self
            .engine
            .chats()
            .subscribe(&tenant, &unique, connection)
            .await?;
        let stream = InjectionStream::new(
            updates,
            max_updates,
            self.shutdown.clone().cancelled_owned(),
        );
        Ok(Response::new(stream))
    }
}
