//! A MemoryService with only the unary ImportChat and ExportChat, as a
//! recapd from before ImportChatStream / ExportChatStream answers: for
//! tests of clients' fallback to the unary calls.

use std::pin::Pin;
use std::sync::{Arc, Mutex};

use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_server::MemoryService;
use tonic::{Request, Response, Status};

/// A server that has only the unary ImportChat and ExportChat (as a recapd
/// from before the streams): every other MemoryService call answers
/// UNIMPLEMENTED. It keeps imported files as they came.
#[derive(Default, Clone)]
pub struct UnaryOnly {
    /// The files imported, by chat id.
    pub files: Arc<Mutex<std::collections::HashMap<String, Vec<u8>>>>,
}

fn unimplemented<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented("not in this server"))
}

#[tonic::async_trait]
impl MemoryService for UnaryOnly {
    async fn import_chat(
        &self,
        request: Request<pb::ImportChatRequest>,
    ) -> Result<Response<pb::ImportChatResponse>, Status> {
        let request = request.into_inner();
        let count = request.jsonl.iter().filter(|b| **b == b'\n').count() as u32;
        self.files
            .lock()
            .unwrap()
            .insert(request.chat_id.clone(), request.jsonl);
        Ok(Response::new(pb::ImportChatResponse {
            chat_id: request.chat_id,
            message_count: count.saturating_sub(1),
            ..Default::default()
        }))
    }
    async fn export_chat(
        &self,
        request: Request<pb::ExportChatRequest>,
    ) -> Result<Response<pb::ExportChatResponse>, Status> {
        let jsonl = self
            .files
            .lock()
            .unwrap()
            .get(&request.into_inner().chat_id)
            .cloned()
            .ok_or_else(|| Status::not_found("chat"))?;
        Ok(Response::new(pb::ExportChatResponse { jsonl }))
    }
    async fn branch_chat(
        &self,
        _: Request<pb::BranchChatRequest>,
    ) -> Result<Response<pb::BranchChatResponse>, Status> {
        unimplemented()
    }
    async fn start_chat_from(
        &self,
        _: Request<pb::StartChatFromRequest>,
    ) -> Result<Response<pb::StartChatFromResponse>, Status> {
        unimplemented()
    }
    async fn delete_chat(
        &self,
        _: Request<pb::DeleteChatRequest>,
    ) -> Result<Response<pb::DeleteChatResponse>, Status> {
        unimplemented()
    }
    async fn list_chats(
        &self,
        _: Request<pb::ListChatsRequest>,
    ) -> Result<Response<pb::ListChatsResponse>, Status> {
        unimplemented()
    }
    async fn import_chat_stream(
        &self,
        _: Request<tonic::Streaming<pb::ImportChatStreamRequest>>,
    ) -> Result<Response<pb::ImportChatResponse>, Status> {
        unimplemented()
    }
    type ExportChatStreamStream = Pin<
        Box<dyn tokio_stream::Stream<Item = Result<pb::ExportChatStreamResponse, Status>> + Send>,
    >;
    async fn export_chat_stream(
        &self,
        _: Request<pb::ExportChatStreamRequest>,
    ) -> Result<Response<Self::ExportChatStreamStream>, Status> {
        unimplemented()
    }
    async fn set_message_data(
        &self,
        _: Request<pb::SetMessageDataRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        unimplemented()
    }
    async fn get_message_data(
        &self,
        _: Request<pb::GetMessageDataRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        unimplemented()
    }
    async fn select_scene_recap_version(
        &self,
        _: Request<pb::SelectSceneRecapVersionRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        unimplemented()
    }
    async fn clear_memory(
        &self,
        _: Request<pb::ClearMemoryRequest>,
    ) -> Result<Response<pb::MessageData>, Status> {
        unimplemented()
    }
    async fn add_running_recap(
        &self,
        _: Request<pb::AddRunningRecapRequest>,
    ) -> Result<Response<pb::RunningRecapVersion>, Status> {
        unimplemented()
    }
    async fn select_running_recap(
        &self,
        _: Request<pb::SelectRunningRecapRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        unimplemented()
    }
    async fn delete_running_recap(
        &self,
        _: Request<pb::DeleteRunningRecapRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        unimplemented()
    }
    async fn list_running_recaps(
        &self,
        _: Request<pb::ListRunningRecapsRequest>,
    ) -> Result<Response<pb::ListRunningRecapsResponse>, Status> {
        unimplemented()
    }
}
