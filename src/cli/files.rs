//! `recapd import` and `recapd export`: SillyTavern chat files to and from a
//! running recapd, through `MemoryService.ImportChatStream` and
//! `ExportChatStream`, so a file of any size streams from and to disk and is
//! never whole in memory. Against a server without the streams (it answers
//! UNIMPLEMENTED) they fall back to the unary `ImportChat` and `ExportChat`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tokio::io::AsyncReadExt as _;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use super::connect::Dial;
use crate::grpc::pb;
use crate::grpc::pb::memory_service_client::MemoryServiceClient;

/// Bytes read from a file per ImportChatStream message.
const IMPORT_CHUNK_BYTES: usize = 256 << 10;

/// Dials the server (the one place the file commands connect).
async fn client(addr: &Dial) -> Result<MemoryServiceClient<Channel>, String> {
    let channel = addr.channel().await.map_err(|e| format!("{addr}: {e}"))?;
    // The unary fallback's answer is as large as the chat.
    Ok(MemoryServiceClient::new(channel).max_decoding_message_size(usize::MAX))
}

/// `message` as a request carrying `authorization: Bearer <token>` when a
/// token is given; an error when the token cannot be a header value.
pub(super) fn authorized<T>(message: T, token: Option<&str>) -> Result<Request<T>, String> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| "the token is not a valid header value".to_owned())?;
        request.metadata_mut().insert("authorization", value);
    }
    Ok(request)
}

/// Why a call failed, for stderr.
fn failed(status: Status) -> String {
    status.message().to_owned()
}

/// Imports one file as `chat_id` through ImportChatStream, reading it in
/// chunks as the server takes them. A read error cancels the call, so the
/// server stores nothing. `Ok(None)`: the server has no ImportChatStream.
async fn import_streamed(
    memory: &mut MemoryServiceClient<Channel>,
    token: Option<&str>,
    path: &Path,
    (chat_id, as_branch): (&str, bool),
) -> Result<Option<pb::ImportChatResponse>, String> {
    let mut file = tokio::fs::File::open(path)
        .await
        .map_err(|e| e.to_string())?;
    let (chunks, receiver) = tokio::sync::mpsc::channel(4);
    let (read_failed, read_error) = tokio::sync::oneshot::channel::<String>();
    let chat_id = chat_id.to_owned();
    let reading = tokio::spawn(async move {
        let mut first = Some(chat_id);
        loop {
            let mut chunk = vec![0; IMPORT_CHUNK_BYTES];
            let read = match file.read(&mut chunk).await {
                Ok(0) if first.is_none() => return,
                Ok(read) => read,
                Err(error) => {
                    let _ = read_failed.send(error.to_string());
                    // The stream must not end (the server would take the
                    // file as complete): the call is cancelled instead.
                    std::future::pending::<()>().await;
                    return;
                }
            };
            chunk.truncate(read);
            let message = pb::ImportChatStreamRequest {
                chat_id: first.take().unwrap_or_default(),
                chunk,
                // The CLI imports chats without their group.
                group_id: String::new(),
                branch_from_main_chat: as_branch,
            };
            if chunks.send(message).await.is_err() || read == 0 {
                return;
            }
        }
    });
    let request = authorized(tokio_stream::wrappers::ReceiverStream::new(receiver), token)?;
    let outcome = tokio::select! {
        answer = memory.import_chat_stream(request) => match answer {
            Ok(done) => Ok(Some(done.into_inner())),
            Err(status) if status.code() == Code::Unimplemented => Ok(None),
            Err(status) => Err(failed(status)),
        },
        Ok(error) = read_error => Err(error),
    };
    reading.abort();
    outcome
}

/// Imports one file through the unary ImportChat (the whole file in one
/// message).
async fn import_unary(
    memory: &mut MemoryServiceClient<Channel>,
    token: Option<&str>,
    path: &Path,
    (chat_id, as_branch): (&str, bool),
) -> Result<pb::ImportChatResponse, String> {
    let jsonl = tokio::fs::read(path).await.map_err(|e| e.to_string())?;
    let request = authorized(
        pb::ImportChatRequest {
            chat_id: chat_id.to_owned(),
            jsonl,
            group_id: String::new(),
            branch_from_main_chat: as_branch,
        },
        token,
    )?;
    memory
        .import_chat(request)
        .await
        .map(|r| r.into_inner())
        .map_err(failed)
}

/// Imports each file as the chat named by its file name; stops at the
/// first failure (exit 1) and says which file it was. What the server
/// repaired rather than refused goes to stderr, one line each, and is no
/// failure. `as_branch`: each file is imported with
/// `branch_from_main_chat`; whether it was branched is said on stdout,
/// and why not on stderr.
pub async fn import(
    addr: &Dial,
    token: Option<&str>,
    paths: &[PathBuf],
    as_branch: bool,
) -> ExitCode {
    let mut memory = match client(addr).await {
        Ok(memory) => memory,
        Err(error) => {
            eprintln!("recapd import: {error}");
            return ExitCode::FAILURE;
        }
    };
    for path in paths {
        let chat_id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let target = (chat_id.as_str(), as_branch);
        let result = match import_streamed(&mut memory, token, path, target).await {
            Ok(Some(done)) => Ok(done),
            Ok(None) => import_unary(&mut memory, token, path, target).await,
            Err(error) => Err(error),
        };
        match result {
            Ok(done) => {
                for warning in &done.warnings {
                    eprintln!("recapd import: {}: repaired: {warning}", path.display());
                }
                if !done.not_branched_reason.is_empty() {
                    eprintln!(
                        "recapd import: {}: not branched: {}",
                        path.display(),
                        done.not_branched_reason
                    );
                }
                let branch = if done.branched_from_chat_id.is_empty() {
                    String::new()
                } else {
                    format!(", a branch of {:?}", done.branched_from_chat_id)
                };
                println!(
                    "{}: chat {:?}, {} messages, {} running-recap versions{branch}",
                    path.display(),
                    done.chat_id,
                    done.message_count,
                    done.running_recap_count
                )
            }
            Err(error) => {
                eprintln!("recapd import: {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}

/// Writes the chat to stdout as a SillyTavern chat file, chunk by chunk as
/// ExportChatStream sends it (or whole through ExportChat from a server
/// without the stream).
pub async fn export(addr: &Dial, token: Option<&str>, chat: &str) -> ExitCode {
    let result = async {
        let mut memory = client(addr).await?;
        let request = authorized(
            pb::ExportChatStreamRequest {
                chat_id: chat.to_owned(),
            },
            token,
        )?;
        let mut stdout = std::io::stdout().lock();
        match memory.export_chat_stream(request).await {
            Ok(chunks) => {
                let mut chunks = chunks.into_inner();
                while let Some(next) = chunks.message().await.map_err(failed)? {
                    stdout.write_all(&next.chunk).map_err(|e| e.to_string())?;
                }
            }
            Err(status) if status.code() == Code::Unimplemented => {
                let request = authorized(
                    pb::ExportChatRequest {
                        chat_id: chat.to_owned(),
                    },
                    token,
                )?;
                let jsonl = memory
                    .export_chat(request)
                    .await
                    .map_err(failed)?
                    .into_inner()
                    .jsonl;
                stdout.write_all(&jsonl).map_err(|e| e.to_string())?;
            }
            Err(status) => return Err(failed(status)),
        }
        stdout.flush().map_err(|e| e.to_string())
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recapd export: {chat}: {error}");
            ExitCode::FAILURE
        }
    }
}
