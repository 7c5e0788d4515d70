//! One implementation per proto service; each checks the request, calls
//! the engine, and converts the answer.

use tokio_util::sync::CancellationToken;
use tonic::{Request, Response, Status};

use super::convert;
use super::files;
use super::pb;
use super::pb::event_service_server::EventService;
use super::pb::memory_service_server::MemoryService;
use super::pb::settings_service_server::SettingsService;
use super::profiles;
use super::status::domain_status;
use crate::auth::Tenant;
use crate::domain::ids::{self, ChatKey};
use crate::domain::st_settings::import_st_settings;
use crate::engine::{Branched, Engine, SettingsUpdate, Started};

/// The caller's tenant (set by [`crate::auth::AuthLayer`]; the default
/// tenant without authentication) and the request's message.
pub(super) fn split<T>(request: Request<T>) -> (Tenant, T) {
    let tenant = request
        .extensions()
        .get::<Tenant>()
        .cloned()
        .unwrap_or_default();
    (tenant, request.into_inner())
}

/// Checks a request's `chat_id` and gives the engine's key for it in the
/// caller's tenant.
pub(super) fn scoped(tenant: &Tenant, chat_id: &str) -> Result<ChatKey, Status> {
    convert::chat_id(chat_id).map_err(domain_status)?;
    Ok(tenant.chat(chat_id))
}

/// `recap.v1.EventService`.
#[derive(Clone)]
pub struct EventApi {
    engine: Engine,
}

impl EventApi {
    /// Serves events into `engine`.
    pub fn new(engine: Engine) -> Self {
        EventApi { engine }
    }
}

#[tonic::async_trait]
impl EventService for EventApi {
    async fn publish(
        &self,
        request: Request<pb::PublishRequest>,
    ) -> Result<Response<pb::PublishResponse>, Status> {
        let (tenant, pb::PublishRequest { event }) = split(request);
        let (character_key, group_id) =
            convert::chat_identity(event.as_ref()).map_err(domain_status)?;
        let (chat_id, event) =
            convert::event(event, self.engine.limits()).map_err(domain_status)?;
        let chat_id = tenant.chat(&chat_id);
        let revision = self.engine.chats().publish(&chat_id, event).await?;
        if character_key.is_some() || group_id.is_some() {
            self.engine
                .chats()
                .set_chat_identity(&chat_id, character_key, group_id)
                .await?;
        }
        Ok(Response::new(pb::PublishResponse { revision }))
    }
}

/// `recap.v1.MemoryService`.
#[derive(Clone)]
pub struct MemoryApi {
    engine: Engine,
    /// Cancelled when the server shuts down: exports under way end.
    shutdown: CancellationToken,
}

impl MemoryApi {
    /// Serves message data, running recaps and chat files from `engine`;
    /// streamed exports end (with UNAVAILABLE) once `shutdown` is
    /// cancelled.
    pub fn new(engine: Engine, shutdown: CancellationToken) -> Self {
        MemoryApi { engine, shutdown }
    }
}

#[tonic::async_trait]
impl MemoryService for MemoryApi {
    async fn delete_chat(
        &self,
        request: Request<pb::DeleteChatRequest>,
    ) -> Result<Response<pb::DeleteChatResponse>, Status> {
        let (tenant, pb::DeleteChatRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let revision = self.engine.chats().delete_chat(&chat_id).await?;
        Ok(Response::new(pb::DeleteChatResponse { revision }))
    }

    async fn branch_chat(
        &self,
        request: Request<pb::BranchChatRequest>,
    ) -> Result<Response<pb::BranchChatResponse>, Status> {
        let (
            tenant,
            pb::BranchChatRequest {
                chat_id,
                message_id,
                new_chat_id,
            },
        ) = split(request);
        let from = scoped(&tenant, &chat_id)?;
        let new_chat = scoped(&tenant, &new_chat_id)?;
        let Branched {
            message_count,
            running_recap_count,
            chat_book,
        } = self
            .engine
            .chats()
            .branch_chat(&from, &message_id, &new_chat)
            .await?;
        Ok(Response::new(pb::BranchChatResponse {
            chat_id: new_chat_id,
            message_count: u32::try_from(message_count).unwrap_or(u32::MAX),
            running_recap_count: u32::try_from(running_recap_count).unwrap_or(u32::MAX),
            chat_book: chat_book.unwrap_or_default(),
        }))
    }

    async fn start_chat_from(
        &self,
        request: Request<pb::StartChatFromRequest>,
    ) -> Result<Response<pb::StartChatFromResponse>, Status> {
        let (
            tenant,
            pb::StartChatFromRequest {
                from_chat_id,
                new_chat_id,
            },
        ) = split(request);
        let from = scoped(&tenant, &from_chat_id)?;
        let new_chat = scoped(&tenant, &new_chat_id)?;
        let Started {
            carried_recap,
            chat_book,
            recall_chats,
        } = self
            .engine
            .chats()
            .start_chat_from(&from, &new_chat)
            .await?;
        Ok(Response::new(pb::StartChatFromResponse {
            chat_id: new_chat_id,
            carried_recap,
            chat_book: chat_book.unwrap_or_default(),
            recall_chats,
        }))
    }

    async fn list_chats(
        &self,
        request: Request<pb::ListChatsRequest>,
    ) -> Result<Response<pb::ListChatsResponse>, Status> {
        let (
            tenant,
            pb::ListChatsRequest {
                page_size,
                page_token,
            },
        ) = split(request);
        let limit = convert::page_size(page_size).map_err(domain_status)?;
        let after = convert::chat_page_after(&page_token).map_err(domain_status)?;
        // One more than the page, to know whether another page follows.
        let mut chats = self
            .engine
            .chats()
            .list_chats(&tenant, after.as_deref(), limit + 1)
            .await?;
        let next_page_token = if chats.len() > limit {
            chats.truncate(limit);
            chats
                .last()
                .map(|last| convert::chat_page_token(&last.chat_id))
                .unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListChatsResponse {
            chats: chats.into_iter().map(Into::into).collect(),
            next_page_token,
        }))
    }

    async fn set_message_data(
        &self,
        request: Request<pb::SetMessageDataRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        let (
            tenant,
            pb::SetMessageDataRequest {
                chat_id,
                message_id,
                data,
                edit,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let update = data.unwrap_or_default().into();
        let data = self
            .engine
            .chats()
            .set_message_data(&chat_id, &message_id, &update, edit)
            .await?;
        Ok(Response::new(data.into()))
    }

    async fn get_message_data(
        &self,
        request: Request<pb::GetMessageDataRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        let (
            tenant,
            pb::GetMessageDataRequest {
                chat_id,
                message_id,
                swipe_id,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let data = self
            .engine
            .chats()
            .message_data(&chat_id, &message_id, swipe_id)
            .await?;
        Ok(Response::new(data.into()))
    }

    async fn select_scene_recap_version(
        &self,
        request: Request<pb::SelectSceneRecapVersionRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        let (
            tenant,
            pb::SelectSceneRecapVersionRequest {
                chat_id,
                message_id,
                index,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let data = self
            .engine
            .chats()
            .select_scene_recap_version(&chat_id, &message_id, index)
            .await?;
        Ok(Response::new(data.into()))
    }

    async fn clear_memory(
        &self,
        request: Request<pb::ClearMemoryRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        let (
            tenant,
            pb::ClearMemoryRequest {
                chat_id,
                message_id,
            },
        ) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        convert::message_id(&message_id).map_err(domain_status)?;
        let data = self
            .engine
            .chats()
            .clear_memory(&chat_id, &message_id)
            .await?;
        Ok(Response::new(data.into()))
    }

    async fn add_running_recap(
        &self,
        request: Request<pb::AddRunningRecapRequest>,
    ) -> Result<Response<pb::RunningRecapVersion>, Status> {
        let (tenant, request) = split(request);
        let (chat_id, recap) = convert::new_recap(request).map_err(domain_status)?;
        let chat_id = tenant.chat(&chat_id);
        let version = self.engine.chats().add_recap(&chat_id, recap).await?;
        Ok(Response::new((&version).into()))
    }

    async fn select_running_recap(
        &self,
        request: Request<pb::SelectRunningRecapRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        let (tenant, pb::SelectRunningRecapRequest { chat_id, version }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let list = self.engine.chats().select_recap(&chat_id, version).await?;
        Ok(Response::new((&list).into()))
    }

    async fn delete_running_recap(
        &self,
        request: Request<pb::DeleteRunningRecapRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        let (tenant, pb::DeleteRunningRecapRequest { chat_id, version }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let list = self.engine.chats().delete_recap(&chat_id, version).await?;
        Ok(Response::new((&list).into()))
    }

    async fn import_chat(
        &self,
        request: Request<pb::ImportChatRequest>,
    ) -> Result<Response<pb::ImportChatResponse>, Status> {
        let (tenant, request) = split(request);
        files::import(&self.engine, &tenant, request)
            .await
            .map(Response::new)
    }

    async fn export_chat(
        &self,
        request: Request<pb::ExportChatRequest>,
    ) -> Result<Response<pb::ExportChatResponse>, Status> {
        let (tenant, request) = split(request);
        files::export(&self.engine, &tenant, request)
            .await
            .map(Response::new)
    }

    async fn import_chat_stream(
        &self,
        request: Request<tonic::Streaming<pb::ImportChatStreamRequest>>,
    ) -> Result<Response<pb::ImportChatResponse>, Status> {
        let (tenant, chunks) = split(request);
        files::import_stream(&self.engine, &tenant, chunks)
            .await
            .map(Response::new)
    }

    type ExportChatStreamStream = files::ExportStream;

    async fn export_chat_stream(
        &self,
        request: Request<pb::ExportChatStreamRequest>,
    ) -> Result<Response<Self::ExportChatStreamStream>, Status> {
        let (tenant, request) = split(request);
        files::export_stream(&self.engine, &tenant, request, self.shutdown.clone())
            .await
            .map(Response::new)
    }

    async fn list_running_recaps(
        &self,
        request: Request<pb::ListRunningRecapsRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        let (tenant, pb::ListRunningRecapsRequest { chat_id }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let list = self.engine.chats().list_recaps(&chat_id).await?;
        Ok(Response::new((&list).into()))
    }
}

/// `recap.v1.SettingsService`.
#[derive(Clone)]
pub struct SettingsApi {
    engine: Engine,
}

impl SettingsApi {
    /// Serves settings from `engine`.
    pub fn new(engine: Engine) -> Self {
        SettingsApi { engine }
    }
}

/// An empty chat id means the global settings.
fn optional_chat(chat_id: &str) -> Result<Option<&str>, Status> {
    if chat_id.is_empty() {
        return Ok(None);
    }
    ids::check_chat_id("chat_id", chat_id).map_err(domain_status)?;
    Ok(Some(chat_id))
}

#[tonic::async_trait]
impl SettingsService for SettingsApi {
    async fn get_settings(
        &self,
        request: Request<pb::GetSettingsRequest>,
    ) -> Result<Response<pb::Settings>, Status> {
        let (tenant, pb::GetSettingsRequest { chat_id }) = split(request);
        let chat = optional_chat(&chat_id)?.map(|c| tenant.chat(c));
        let settings = self.engine.chats().settings(&tenant, chat.as_ref()).await?;
        Ok(Response::new((&settings).into()))
    }

    async fn update_settings(
        &self,
        request: Request<pb::UpdateSettingsRequest>,
    ) -> Result<Response<pb::Settings>, Status> {
        let (
            tenant,
            pb::UpdateSettingsRequest {
                chat_id,
                settings,
                clear,
            },
        ) = split(request);
        let chat = optional_chat(&chat_id)?.map(|c| tenant.chat(c));
        let update = SettingsUpdate {
            patch: convert::settings_patch(settings).map_err(domain_status)?,
            clear,
        };
        let settings = self
            .engine
            .chats()
            .update_settings(&tenant, chat.as_ref(), update)
            .await?;
        Ok(Response::new((&settings).into()))
    }

    async fn import_settings(
        &self,
        request: Request<pb::ImportSettingsRequest>,
    ) -> Result<Response<pb::ImportSettingsResponse>, Status> {
        let (tenant, pb::ImportSettingsRequest { chat_id, json }) = split(request);
        let chat = optional_chat(&chat_id)?.map(|c| tenant.chat(c));
        self.engine
            .limits()
            .check_text("json", &json)
            .map_err(domain_status)?;
        let mut imported = import_st_settings(&json).map_err(domain_status)?;
        let extension_profiles = std::mem::take(&mut imported.profiles);
        let update = SettingsUpdate {
            patch: imported.patch,
            clear: imported.clear,
        };
        let settings = self
            .engine
            .chats()
            .update_settings(&tenant, chat.as_ref(), update)
            .await?;
        // Each chat's own state, in the caller's tenant; a chat import
        // takes only its own entry. The global toggle is never touched.
        for (id, enabled) in &imported.chats_enabled {
            if chat_id.is_empty() || *id == chat_id {
                self.engine
                    .chats()
                    .set_chat_own_enabled(&tenant.chat(id), *enabled)
                    .await?;
            }
        }
        let scope = (!chat_id.is_empty()).then_some(chat_id.as_str());
        profiles::import_extension_profiles(
            &self.engine,
            &tenant,
            scope,
            extension_profiles,
            &mut imported.ignored_keys,
        )
        .await?;
        // A chat's answer shows its profile's settings when the import
        // gave it one.
        let settings = match chat {
            Some(chat) => self.engine.chats().settings(&tenant, Some(&chat)).await?,
            None => settings,
        };
        Ok(Response::new(pb::ImportSettingsResponse {
            settings: Some((&settings).into()),
            ignored_keys: imported.ignored_keys,
        }))
    }

    async fn put_profile(
        &self,
        request: Request<pb::PutProfileRequest>,
    ) -> Result<Response<pb::Profile>, Status> {
        let (tenant, request) = split(request);
        profiles::put_profile(&self.engine, &tenant, request).await
    }

    async fn get_profile(
        &self,
        request: Request<pb::GetProfileRequest>,
    ) -> Result<Response<pb::Profile>, Status> {
        let (tenant, request) = split(request);
        profiles::get_profile(&self.engine, &tenant, request)
    }

    async fn list_profiles(
        &self,
        request: Request<pb::ListProfilesRequest>,
    ) -> Result<Response<pb::ListProfilesResponse>, Status> {
        let (tenant, pb::ListProfilesRequest {}) = split(request);
        Ok(profiles::list_profiles(&self.engine, &tenant))
    }

    async fn delete_profile(
        &self,
        request: Request<pb::DeleteProfileRequest>,
    ) -> Result<Response<pb::DeleteProfileResponse>, Status> {
        let (tenant, request) = split(request);
        profiles::delete_profile(&self.engine, &tenant, request).await
    }

    async fn bind_profile(
        &self,
        request: Request<pb::BindProfileRequest>,
    ) -> Result<Response<pb::BindProfileResponse>, Status> {
        let (tenant, request) = split(request);
        profiles::bind_profile(&self.engine, &tenant, request).await
    }

    async fn import_group(
        &self,
        request: Request<pb::ImportGroupRequest>,
    ) -> Result<Response<pb::Group>, Status> {
        let (tenant, request) = split(request);
        profiles::import_group(&self.engine, &tenant, request).await
    }

    async fn get_group(
        &self,
        request: Request<pb::GetGroupRequest>,
    ) -> Result<Response<pb::Group>, Status> {
        let (tenant, request) = split(request);
        profiles::get_group(&self.engine, &tenant, request)
    }

    async fn list_groups(
        &self,
        request: Request<pb::ListGroupsRequest>,
    ) -> Result<Response<pb::ListGroupsResponse>, Status> {
        let (tenant, pb::ListGroupsRequest {}) = split(request);
        Ok(profiles::list_groups(&self.engine, &tenant))
    }

    async fn set_group_members(
        &self,
        request: Request<pb::SetGroupMembersRequest>,
    ) -> Result<Response<pb::Group>, Status> {
        let (tenant, request) = split(request);
        profiles::set_group_members(&self.engine, &tenant, request).await
    }

    async fn set_chat_enabled(
        &self,
        request: Request<pb::SetChatEnabledRequest>,
    ) -> Result<Response<pb::SetChatEnabledResponse>, Status> {
        let (tenant, pb::SetChatEnabledRequest { chat_id, enabled }) = split(request);
        let chat_id = scoped(&tenant, &chat_id)?;
        let (enabled, revision) = self
            .engine
            .chats()
            .set_chat_enabled(&chat_id, enabled)
            .await?;
        Ok(Response::new(pb::SetChatEnabledResponse {
            enabled,
            revision,
        }))
    }
}
