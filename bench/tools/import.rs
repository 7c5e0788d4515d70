//! Chat files sent the way a client sends a large one: ImportChatStream, in
//! messages of 1 MiB (recapd's default request limit is 4 MiB).

use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::transport::Channel;

/// Bytes per ImportChatStream message.
const CHUNK: usize = 1024 * 1024;

/// Imports `file` (a SillyTavern JSONL chat) as `chat_id` and answers
/// recapd's reply. Fails when recapd refuses the file or repairs any of its
/// lines: a bench's chats are generated, so a repair is the bench's bug.
pub async fn import_chat(
    memory: &mut MemoryServiceClient<Channel>,
    chat_id: &str,
    file: &[u8],
) -> Result<pb::ImportChatResponse, String> {
    let requests: Vec<pb::ImportChatStreamRequest> = file
        .chunks(CHUNK)
        .enumerate()
        .map(|(i, chunk)| pb::ImportChatStreamRequest {
            chat_id: if i == 0 {
                chat_id.to_owned()
            } else {
                String::new()
            },
            chunk: chunk.to_vec(),
            ..Default::default()
        })
        .collect();
    let answer = memory
        .import_chat_stream(tokio_stream::iter(requests))
        .await
        .map_err(|status| format!("import of {chat_id}: {status}"))?
        .into_inner();
    if !answer.warnings.is_empty() {
        return Err(format!(
            "import of {chat_id} repaired lines: {:?}",
            answer.warnings
        ));
    }
    Ok(answer)
}
