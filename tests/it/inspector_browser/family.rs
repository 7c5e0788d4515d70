//! The `branch <chat id>` step: the chat the page made with "Branch here",
//! as the API sees it (ListChats' summary, every page read, and
//! ListRunningRecaps), for the script to compare with what the page showed.

use recapd::grpc::pb;
use serde_json::{Value, json};

use super::Clients;

/// The chat `chat_id` as ListChats and ListRunningRecaps answer it; `{}`
/// when ListChats does not list it.
pub(super) async fn branch_summary(clients: &mut Clients, chat_id: &str) -> Value {
    let mut page_token = String::new();
    let summary = loop {
        let page = clients
            .memory
            .list_chats(pb::ListChatsRequest {
                page_size: 1000,
                page_token,
            })
            .await
            .expect("the chats")
            .into_inner();
        if let Some(found) = page.chats.into_iter().find(|c| c.chat_id == chat_id) {
            break Some(found);
        }
        if page.next_page_token.is_empty() {
            break None;
        }
        page_token = page.next_page_token;
    };
    let Some(summary) = summary else {
        return json!({});
    };
    let recaps = clients
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat_id.into(),
        })
        .await
        .expect("the branch's running recaps")
        .into_inner();
    json!({
        "chatId": summary.chat_id,
        "messageCount": summary.message_count,
        "parentChatId": summary.parent_chat_id,
        "parentMessageId": summary.parent_message_id,
        "runningRecapCount": recaps.versions.len(),
    })
}
