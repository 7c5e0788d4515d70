//! A MemoryService with only ListChats and DeleteChat, over a small map in
//! memory and with a small page, as the `recapd chats` commands see a
//! server: for their tests, which do not depend on the real server side.
//! Every other call answers UNIMPLEMENTED.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_server::{MemoryService, MemoryServiceServer};
use tonic::{Request, Response, Status};

/// The most chats one ListChats answer of the fake holds.
pub const PAGE: usize = 3;

/// A server of chats (their summaries, by id) that lists them [`PAGE`] at a
/// time, the page token being the last id given, and deletes them; with a
/// token, every call without `authorization: Bearer <token>` is
/// UNAUTHENTICATED with recapd's own message.
#[derive(Clone, Default)]
pub struct FakeChats {
    /// The chats, by id.
    pub chats: Arc<Mutex<BTreeMap<String, pb::ChatSummary>>>,
    /// ListChats calls answered.
    pub list_calls: Arc<AtomicUsize>,
    token: Option<String>,
}

impl FakeChats {
    /// A server holding `ids` (chat `i` of them with `i` messages, revision
    /// `10 * i`, enabled when `i` is even, changed at `1_700_000_000 + i`
    /// seconds), asking for `token` when given.
    pub fn new(ids: &[&str], token: Option<&str>) -> FakeChats {
        let chats = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let i = i as u32;
                let summary = pb::ChatSummary {
                    chat_id: (*id).to_owned(),
                    message_count: i,
                    revision: 10 * u64::from(i),
                    enabled: i.is_multiple_of(2),
                    updated_at: Some(prost_types::Timestamp {
                        seconds: 1_700_000_000 + i64::from(i),
                        nanos: 0,
                    }),
                    ..Default::default()
                };
                ((*id).to_owned(), summary)
            })
            .collect();
        FakeChats {
            chats: Arc::new(Mutex::new(chats)),
            list_calls: Arc::default(),
            token: token.map(str::to_owned),
        }
    }

    /// The ids it holds now, in order.
    pub fn ids(&self) -> Vec<String> {
        self.chats.lock().unwrap().keys().cloned().collect()
    }

    /// Serves on a loopback port until the task is aborted; its address.
    pub async fn serve(&self) -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let service = MemoryServiceServer::new(self.clone());
        let serving = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
                .await;
        });
        (addr, serving)
    }

    fn check_token<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        let expected = format!("Bearer {token}");
        match request.metadata().get("authorization") {
            Some(value) if value.as_bytes() == expected.as_bytes() => Ok(()),
            _ => Err(Status::unauthenticated(
                recapd::auth::UNAUTHENTICATED_MESSAGE,
            )),
        }
    }
}

fn unimplemented<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented("not in this server"))
}

#[tonic::async_trait]
impl MemoryService for FakeChats {
    async fn list_chats(
        &self,
        request: Request<pb::ListChatsRequest>,
    ) -> Result<Response<pb::ListChatsResponse>, Status> {
        self.check_token(&request)?;
        self.list_calls.fetch_add(1, Ordering::SeqCst);
        let request = request.into_inner();
        let size = match request.page_size as usize {
            0 => PAGE,
            asked => asked.min(PAGE),
        };
        let chats = self.chats.lock().unwrap();
        let after = request.page_token;
        let page: Vec<pb::ChatSummary> = chats
            .values()
            .filter(|chat| after.is_empty() || chat.chat_id > after)
            .take(size + 1)
            .cloned()
            .collect();
        let more = page.len() > size;
        let chats: Vec<_> = page.into_iter().take(size).collect();
        let next_page_token = match (more, chats.last()) {
            (true, Some(last)) => last.chat_id.clone(),
            _ => String::new(),
        };
        Ok(Response::new(pb::ListChatsResponse {
            chats,
            next_page_token,
        }))
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
        request: Request<pb::DeleteChatRequest>,
    ) -> Result<Response<pb::DeleteChatResponse>, Status> {
        self.check_token(&request)?;
        let chat_id = request.into_inner().chat_id;
        match self.chats.lock().unwrap().remove(&chat_id) {
            Some(chat) => Ok(Response::new(pb::DeleteChatResponse {
                revision: chat.revision + 1,
            })),
            None => Err(Status::not_found(format!("chat {chat_id:?} not found"))),
        }
    }
    async fn import_chat(
        &self,
        _: Request<pb::ImportChatRequest>,
    ) -> Result<Response<pb::ImportChatResponse>, Status> {
        unimplemented()
    }
    async fn export_chat(
        &self,
        _: Request<pb::ExportChatRequest>,
    ) -> Result<Response<pb::ExportChatResponse>, Status> {
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
