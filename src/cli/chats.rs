//! `recapd chats list` and `recapd chats delete`: a running recapd's chats
//! (those of the token's tenant) through `MemoryService.ListChats` and
//! `DeleteChat`.
//!
//! Output is made for both people and scripts: tab-separated columns, the
//! chat id first, escaped by [`escape_id`] so that no id can break a line
//! or a column.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write as _;
use std::process::ExitCode;

use tonic::transport::Channel;
use tonic::{Code, Status};

use super::connect::Dial;
use super::files::authorized;
use crate::grpc::pb;
use crate::grpc::pb::memory_service_client::MemoryServiceClient;

/// Chats asked for per ListChats call: the most the server gives.
const LIST_PAGE_SIZE: u32 = 1000;

/// The first line of `recapd chats list`.
pub const LIST_HEADER: &str = "CHAT\tMESSAGES\tREVISION\tENABLED\tUPDATED_AT";

/// Dials the server.
async fn client(dial: &Dial) -> Result<MemoryServiceClient<Channel>, String> {
    let channel = dial.channel().await.map_err(|e| format!("{dial}: {e}"))?;
    Ok(MemoryServiceClient::new(channel))
}

/// Why a call failed, for stderr: the server's message, with a hint for
/// the failures a user can fix.
fn describe(status: &Status) -> String {
    let message = if status.message().is_empty() {
        status.code().description()
    } else {
        status.message()
    };
    match status.code() {
        Code::Unauthenticated => {
            format!("{message} (give the tenant's token with --token or RECAPD_TOKEN)")
        }
        Code::Unimplemented => format!(
            "{message} (this server cannot list or delete chats: a recapd from before chat deletion?)"
        ),
        Code::NotFound => format!("no such chat ({message})"),
        _ => message.to_owned(),
    }
}

/// `id` as one field of a tab-separated line: a backslash, a tab, a
/// newline, a carriage return and any other control character (and the
/// Unicode line and paragraph separators) are escaped (`\\`, `\t`, `\n`,
/// `\r`, `\u{..}`), so the output has one line per chat whatever the ids
/// and the escaping can be undone. Other ids are unchanged.
pub fn escape_id(id: &str) -> Cow<'_, str> {
    let special = |c: char| c == '\\' || c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    if !id.chars().any(special) {
        return Cow::Borrowed(id);
    }
    let mut escaped = String::with_capacity(id.len() + 8);
    for c in id.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\t' => escaped.push_str("\\t"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            c if special(c) => {
                // Writing to a String cannot fail.
                let _ = write!(escaped, "\\u{{{:x}}}", u32::from(c));
            }
            c => escaped.push(c),
        }
    }
    Cow::Owned(escaped)
}

/// One chat's line of `recapd chats list` (without the newline).
pub fn list_line(chat: &pb::ChatSummary) -> String {
    let updated = chat
        .updated_at
        .as_ref()
        .map_or_else(|| "-".to_owned(), ToString::to_string);
    format!(
        "{}\t{}\t{}\t{}\t{}",
        escape_id(&chat.chat_id),
        chat.message_count,
        chat.revision,
        chat.enabled,
        updated
    )
}

/// How a listing or deletion ended early.
enum Stop {
    /// Stdout was closed (`recapd chats list | head`): nothing to report.
    Closed,
    /// A failure, for stderr.
    Failed(String),
}

impl From<String> for Stop {
    fn from(error: String) -> Stop {
        Stop::Failed(error)
    }
}

/// Writes `line` and a newline to stdout.
fn print_line(line: &str) -> Result<(), Stop> {
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Err(Stop::Closed),
        Err(error) => Err(Stop::Failed(format!("stdout: {error}"))),
    }
}

/// Prints every chat, page after page as the server gives them (so in chat
/// id order): the header once the first page came, then one line per chat
/// ([`list_line`]). Exit 0 when the last page came (stdout closed early is
/// no failure), 1 on a failure with the reason on stderr: what was printed
/// before it stays.
pub async fn list(dial: &Dial, token: Option<&str>) -> ExitCode {
    match list_all(dial, token).await {
        Ok(()) | Err(Stop::Closed) => ExitCode::SUCCESS,
        Err(Stop::Failed(error)) => {
            eprintln!("recapd chats list: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn list_all(dial: &Dial, token: Option<&str>) -> Result<(), Stop> {
    let mut memory = client(dial).await?;
    let mut page_token = String::new();
    let mut first = true;
    loop {
        let request = authorized(
            pb::ListChatsRequest {
                page_size: LIST_PAGE_SIZE,
                page_token: page_token.clone(),
            },
            token,
        )?;
        let page = memory
            .list_chats(request)
            .await
            .map_err(|status| describe(&status))?
            .into_inner();
        if first {
            print_line(LIST_HEADER)?;
            first = false;
        }
        for chat in &page.chats {
            print_line(&list_line(chat))?;
        }
        if page.next_page_token.is_empty() {
            return Ok(());
        }
        if page.next_page_token == page_token {
            // A server that would list the same page forever.
            return Err(Stop::Failed(
                "the server gave the same page token twice; the listing stops here".into(),
            ));
        }
        page_token = page.next_page_token;
    }
}

/// Whether a DeleteChat failure concerns that chat alone, so that the
/// next chats are still deleted; any other failure (the token, the
/// server, the connection) stops the command.
fn concerns_the_chat_alone(code: Code) -> bool {
    matches!(
        code,
        Code::NotFound | Code::InvalidArgument | Code::Aborted | Code::FailedPrecondition
    )
}

/// Deletes each chat in order, printing `ID<TAB>deleted at revision N`
/// (the revision of its last injection, the one marked deleted) for each.
/// A chat that cannot be deleted on its own account (unknown, a bad id) is
/// reported on stderr and the others still go; a failure that would fail
/// them all (a bad token, the server unreachable) stops the command and
/// says how many were not tried. Exit 0 when every chat was deleted, 1
/// otherwise.
pub async fn delete(dial: &Dial, token: Option<&str>, chats: &[String]) -> ExitCode {
    let mut memory = match client(dial).await {
        Ok(memory) => memory,
        Err(error) => {
            eprintln!("recapd chats delete: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut failed = 0usize;
    for (at, chat) in chats.iter().enumerate() {
        let request = match authorized(
            pb::DeleteChatRequest {
                chat_id: chat.clone(),
            },
            token,
        ) {
            Ok(request) => request,
            Err(error) => {
                eprintln!("recapd chats delete: {error}");
                return ExitCode::FAILURE;
            }
        };
        match memory.delete_chat(request).await {
            Ok(done) => {
                let line = format!(
                    "{}\tdeleted at revision {}",
                    escape_id(chat),
                    done.into_inner().revision
                );
                match print_line(&line) {
                    Ok(()) | Err(Stop::Closed) => {}
                    Err(Stop::Failed(error)) => eprintln!("recapd chats delete: {error}"),
                }
            }
            Err(status) if concerns_the_chat_alone(status.code()) => {
                eprintln!(
                    "recapd chats delete: {}: {}",
                    escape_id(chat),
                    describe(&status)
                );
                failed += 1;
            }
            Err(status) => {
                eprintln!(
                    "recapd chats delete: {}: {}",
                    escape_id(chat),
                    describe(&status)
                );
                let untried = chats.len() - at - 1;
                if untried > 0 {
                    eprintln!("recapd chats delete: stopped; {untried} more chat(s) not tried");
                }
                return ExitCode::FAILURE;
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "recapd chats delete: {failed} of {} chat(s) not deleted",
            chats.len()
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests;
