//! ImportChat, ExportChat and their streaming forms: SillyTavern chat files
//! in and out of `MemoryService`.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_stream::Stream;
use tokio_util::sync::CancellationToken;
use tonic::{Code, Status, Streaming};

use super::convert;
use super::pb;
use super::status::{self, domain_status};
use crate::auth::Tenant;
use crate::domain::st_chat::{ChatReader, ImportedChat};
use crate::engine::{Engine, FileImported};

/// Most bytes in one ExportChatStream message (the proto says 1 MiB).
pub const EXPORT_CHUNK_BYTES: usize = 1 << 20;

/// How many export chunks wait for a slow reader before the export pauses.
const EXPORT_CHUNKS_AHEAD: usize = 4;

/// The stream ExportChatStream answers with.
pub type ExportStream =
    Pin<Box<dyn Stream<Item = Result<pb::ExportChatStreamResponse, Status>> + Send>>;

/// Stores a read file as chat `chat_id` of `tenant`: the answer to both
/// import calls. `as_branch`: the request's `branch_from_main_chat`.
async fn store(
    engine: &Engine,
    tenant: &Tenant,
    chat_id: String,
    imported: ImportedChat,
    (group_id, as_branch): (String, bool),
) -> Result<pb::ImportChatResponse, Status> {
    let warnings = imported.warnings.clone();
    let chat = tenant.chat(&chat_id);
    let group_id = Some(group_id).filter(|g| !g.is_empty());
    let FileImported {
        message_count,
        running_recap_count,
        branched_from,
        not_branched,
    } = if as_branch {
        engine
            .chats()
            .import_branch_file(&chat, imported, group_id)
            .await?
    } else {
        let (message_count, running_recap_count) = engine
            .chats()
            .import_chat_in_group(&chat, imported, group_id)
            .await?;
        FileImported {
            message_count,
            running_recap_count,
            branched_from: None,
            not_branched: None,
        }
    };
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(pb::ImportChatResponse {
        chat_id,
        message_count: count(message_count),
        running_recap_count: count(running_recap_count),
        warnings,
        branched_from_chat_id: branched_from.unwrap_or_default(),
        not_branched_reason: not_branched.unwrap_or_default(),
    })
}

/// ImportChat: the file in one message.
pub async fn import(
    engine: &Engine,
    tenant: &Tenant,
    pb::ImportChatRequest {
        chat_id,
        jsonl,
        group_id,
        branch_from_main_chat,
    }: pb::ImportChatRequest,
) -> Result<pb::ImportChatResponse, Status> {
    convert::chat_id(&chat_id).map_err(domain_status)?;
    optional_group(&group_id)?;
    let mut reader = ChatReader::new(*engine.limits());
    reader.push(&jsonl).map_err(domain_status)?;
    drop(jsonl);
    store(
        engine,
        tenant,
        chat_id,
        reader.finish().map_err(domain_status)?,
        (group_id, branch_from_main_chat),
    )
    .await
}

/// ImportChatStream: the file in chunks split anywhere, read (and checked)
/// as they come; nothing is stored unless the whole file was read.
pub async fn import_stream(
    engine: &Engine,
    tenant: &Tenant,
    mut chunks: Streaming<pb::ImportChatStreamRequest>,
) -> Result<pb::ImportChatResponse, Status> {
    let first = chunks.message().await?.ok_or_else(|| {
        Status::invalid_argument("chat_id: the stream ended before its first message")
    })?;
    convert::chat_id(&first.chat_id).map_err(domain_status)?;
    optional_group(&first.group_id)?;
    let chat_id = first.chat_id;
    let group_id = first.group_id;
    let as_branch = first.branch_from_main_chat;
    let mut reader = ChatReader::new(*engine.limits());
    reader.push(&first.chunk).map_err(domain_status)?;
    while let Some(next) = chunks.message().await? {
        reader.push(&next.chunk).map_err(domain_status)?;
    }
    store(
        engine,
        tenant,
        chat_id,
        reader.finish().map_err(domain_status)?,
        (group_id, as_branch),
    )
    .await
}

/// Checks a request's optional `group_id` (the id rules when not empty).
fn optional_group(group_id: &str) -> Result<(), Status> {
    if !group_id.is_empty() {
        crate::domain::profiles::check_name("group_id", group_id).map_err(domain_status)?;
    }
    Ok(())
}

/// ExportChat: the whole file in one message.
pub async fn export(
    engine: &Engine,
    tenant: &Tenant,
    pb::ExportChatRequest { chat_id }: pb::ExportChatRequest,
) -> Result<pb::ExportChatResponse, Status> {
    convert::chat_id(&chat_id).map_err(domain_status)?;
    let jsonl = engine.chats().export_chat(&tenant.chat(&chat_id)).await?;
    Ok(pb::ExportChatResponse { jsonl })
}

/// ExportChatStream: a snapshot of the chat taken now, written line by
/// line into chunks of at most [`EXPORT_CHUNK_BYTES`] as the client reads
/// them (a client that stops reading pauses the export; one that goes away
/// ends it). At `shutdown` an unfinished export ends with UNAVAILABLE, so
/// the client cannot take what it got for the whole file.
pub async fn export_stream(
    engine: &Engine,
    tenant: &Tenant,
    pb::ExportChatStreamRequest { chat_id }: pb::ExportChatStreamRequest,
    shutdown: CancellationToken,
) -> Result<ExportStream, Status> {
    convert::chat_id(&chat_id).map_err(domain_status)?;
    let snapshot = engine.chats().chat_snapshot(&tenant.chat(&chat_id)).await?;
    let (sender, receiver) = tokio::sync::mpsc::channel(EXPORT_CHUNKS_AHEAD);
    // Set by the writer once the whole file is sent: a writer that stops
    // short (a panic) must not end the stream as if the file were whole.
    let finished = Arc::new(AtomicBool::new(false));
    let wrote_all = finished.clone();
    // The chat as the log names it (with its tenant).
    let log_chat = tenant.chat(&chat_id);
    let writer = tokio::spawn(async move {
        let mut chunk = Vec::with_capacity(EXPORT_CHUNK_BYTES);
        for line in snapshot.lines(&chat_id) {
            for bytes in [line.as_bytes(), b"\n"] {
                let mut rest = bytes;
                while !rest.is_empty() {
                    let take = (EXPORT_CHUNK_BYTES - chunk.len()).min(rest.len());
                    chunk.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    if chunk.len() == EXPORT_CHUNK_BYTES {
                        let full =
                            std::mem::replace(&mut chunk, Vec::with_capacity(EXPORT_CHUNK_BYTES));
                        let message = pb::ExportChatStreamResponse { chunk: full };
                        if sender.send(Ok(message)).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
        if !chunk.is_empty()
            && sender
                .send(Ok(pb::ExportChatStreamResponse { chunk }))
                .await
                .is_err()
        {
            return;
        }
        wrote_all.store(true, Ordering::Release);
    });
    // The chunks, until the server shuts down: then UNAVAILABLE instead of
    // an end that would pass for the end of the file (the writer stops when
    // the receiver goes). A writer gone before the end is INTERNAL. Either
    // way the client gets a fixed message and an error id; the cause is
    // logged.
    let chunks = futures_util::stream::unfold(Some((receiver, writer)), move |state| {
        let shutdown = shutdown.clone();
        let finished = finished.clone();
        let chat_id = log_chat.clone();
        async move {
            let (mut receiver, writer) = state?;
            tokio::select! {
                biased;
                () = shutdown.cancelled() => {
                    let cause = format!("the server began shutting down during the export of chat {chat_id}");
                    Some((Err(withheld_for(Code::Unavailable, EXPORT_CUT_SHORT, cause)), None))
                }
                next = receiver.recv() => match next {
                    Some(item) => Some((item, Some((receiver, writer)))),
                    None if finished.load(Ordering::Acquire) => None,
                    None => {
                        let why = match writer.await {
                            Err(error) if error.is_panic() => {
                                crate::store::panic_message(&*error.into_panic())
                            }
                            _ => "the writer ended early".to_owned(),
                        };
                        let cause = format!("the export of chat {chat_id} stopped: {why}");
                        Some((Err(withheld_for(Code::Internal, EXPORT_STOPPED, cause)), None))
                    }
                },
            }
        }
    });
    Ok(Box::pin(chunks))
}

/// UNAVAILABLE: an export the server's shutdown cut short.
const EXPORT_CUT_SHORT: &str = "the server is shutting down; the export is incomplete";
/// INTERNAL: an export whose writer stopped before the end of the file.
const EXPORT_STOPPED: &str = "the export stopped before the end of the file";

/// [`status::withheld`] for a cause known only as text.
fn withheld_for(code: Code, message: &'static str, cause: String) -> Status {
    let cause: Box<dyn std::error::Error + Send + Sync> = cause.into();
    status::withheld(code, message, &*cause)
}
