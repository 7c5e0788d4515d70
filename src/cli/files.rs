//! `recapd import` and `recapd export`: SillyTavern chat files to and from a
//! running recapd, through `MemoryService.ImportChat` and `ExportChat`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use tonic::Request;
use tonic::transport::Channel;

use super::connect::Dial;
use crate::grpc::pb;
use crate::grpc::pb::memory_service_client::MemoryServiceClient;

async fn client(addr: &Dial) -> Result<MemoryServiceClient<Channel>, String> {
    let channel = addr.channel().await.map_err(|e| format!("{addr}: {e}"))?;
    Ok(MemoryServiceClient::new(channel))
}

fn authorized<T>(message: T, token: Option<&str>) -> Result<Request<T>, String> {
    let mut request = Request::new(message);
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| "the token is not a valid header value".to_owned())?;
        request.metadata_mut().insert("authorization", value);
    }
    Ok(request)
}

/// Imports each file as the chat named by its file name; stops at the
/// first failure (exit 1) and says which file it was. What the server
/// repaired rather than refused goes to stderr, one line each, and is no
/// failure.
pub async fn import(addr: &Dial, token: Option<&str>, paths: &[PathBuf]) -> ExitCode {
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
        let result = async {
            let jsonl = std::fs::read(path).map_err(|e| e.to_string())?;
            let request = authorized(
                pb::ImportChatRequest {
                    chat_id: chat_id.clone(),
                    jsonl,
                },
                token,
            )?;
            memory
                .import_chat(request)
                .await
                .map(|r| r.into_inner())
                .map_err(|s| s.message().to_owned())
        }
        .await;
        match result {
            Ok(done) => {
                for warning in &done.warnings {
                    eprintln!("recapd import: {}: repaired: {warning}", path.display());
                }
                println!(
                    "{}: chat {:?}, {} messages, {} running-recap versions",
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

/// Writes the chat to stdout as a SillyTavern chat file.
pub async fn export(addr: &Dial, token: Option<&str>, chat: &str) -> ExitCode {
    let result = async {
        let mut memory = client(addr).await?;
        let request = authorized(
            pb::ExportChatRequest {
                chat_id: chat.to_owned(),
            },
            token,
        )?;
        let jsonl = memory
            .export_chat(request)
            .await
            .map_err(|s| s.message().to_owned())?
            .into_inner()
            .jsonl;
        std::io::stdout()
            .write_all(&jsonl)
            .map_err(|e| e.to_string())
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
