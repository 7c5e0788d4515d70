//! The MCP tools of `recapd mcp`: each one call (or, for `list_chats`,
//! one page) to the running recapd, its answer as JSON (structured
//! content, and the same as text for clients that read only text).
//!
//! The descriptions are short on purpose: an agent pays for them in
//! tokens on every turn (docs/mcp.md counts them).

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Extensions, Implementation, ServerCapabilities, ServerConfig,
};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use tonic::Status;
use tonic::transport::Channel;

use super::super::connect::{Dial, with_causes};
use super::super::files::authorized;
use super::McpOptions;
use super::answers;
use crate::grpc::observe::code_name;
use crate::grpc::pb;

/// The most bytes of JSON one tool answers with; a larger answer is cut
/// where the tool says (render_prompt: its oldest messages) or refused.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// The write tools: offered only with `--mcp-allow-writes`.
const WRITE_TOOLS: [&str; 1] = ["add_memory"];

/// The token an HTTP caller authenticated with (put in the request's
/// extensions by the listener), passed on to recapd for its calls. Its
/// `Debug` does not show it.
#[derive(Clone)]
pub struct CallerToken(pub String);

impl std::fmt::Debug for CallerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallerToken(..)")
    }
}

/// The MCP server: cheap to clone (rmcp clones it per session), the
/// channel to recapd made at the first call that needs it and shared.
#[derive(Clone)]
pub struct RecapdTools {
    dial: Arc<Dial>,
    channel: Arc<tokio::sync::OnceCell<Channel>>,
    token: Option<Arc<str>>,
    // The tools offered (the write tools removed unless allowed); read by
    // the code `tool_handler` generates.
    tool_router: ToolRouter<RecapdTools>,
}

/// `recall`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RecallArgs {
    /// The chat to search.
    pub chat_id: String,
    /// What to look for.
    pub query: String,
    /// Most passages, 1-100 (default 5).
    pub limit: Option<u32>,
}

/// `get_memory`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ChatArgs {
    /// The chat.
    pub chat_id: String,
}

/// `list_chats`' arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListChatsArgs {
    /// next_page_token of the previous answer; omit for the first page.
    pub page_token: Option<String>,
}

/// `search_lore`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchLoreArgs {
    /// The chat whose lorebooks apply.
    pub chat_id: String,
    /// Text to scan instead of the chat; omit to scan the chat.
    pub text: Option<String>,
}

/// `render_prompt`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RenderPromptArgs {
    /// The chat.
    pub chat_id: String,
    /// "chat" (messages, the default) or "text" (one text).
    pub mode: Option<String>,
}

/// `add_memory`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddMemoryArgs {
    /// The chat.
    pub chat_id: String,
    /// "message_recap" (needs message_id) or "running_recap".
    pub kind: String,
    /// For message_recap: the message.
    pub message_id: Option<String>,
    /// The recap.
    pub text: String,
}

/// A tool's failure, answered as an MCP tool error ([`error_text`]).
enum ToolError {
    /// A call's status: recapd's answer, or a transport failure.
    Status(Status),
    /// A refusal of this server's own, its text as answered.
    Text(String),
}

impl From<Status> for ToolError {
    fn from(status: Status) -> ToolError {
        ToolError::Status(status)
    }
}

/// The text of a tool error: the status's code and message when recapd
/// answered it; when the call failed on its way (the status has a cause:
/// recapd went away, a connection broke), a fixed message naming `addr`,
/// the cause logged, never answered.
fn error_text(error: ToolError, addr: &dyn std::fmt::Display) -> String {
    match error {
        ToolError::Text(text) => text,
        ToolError::Status(status) => match std::error::Error::source(&status) {
            Some(cause) => {
                tracing::warn!(
                    %addr,
                    code = code_name(status.code()),
                    cause = %with_causes(cause),
                    "a call to recapd failed on its way"
                );
                unreachable_text(addr)
            }
            None => format!("{}: {}", code_name(status.code()), status.message()),
        },
    }
}

/// What a tool answers when recapd cannot be reached.
fn unreachable_text(addr: &dyn std::fmt::Display) -> String {
    format!("UNAVAILABLE: recapd at {addr} cannot be reached")
}

/// A tool's answer: its JSON, or its failure as a tool error. The answer
/// as sent (the JSON, and the same as text) is at most
/// [`MAX_ANSWER_BYTES`], else refused.
fn answer(
    result: Result<Value, ToolError>,
    addr: &dyn std::fmt::Display,
) -> Result<CallToolResult, ErrorData> {
    Ok(match result {
        Ok(value) => {
            let answered = CallToolResult::structured(value);
            let size = serde_json::to_vec(&answered).map_or(usize::MAX, |json| json.len());
            if size > MAX_ANSWER_BYTES {
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "RESOURCE_EXHAUSTED: the answer is {size} bytes, over the {MAX_ANSWER_BYTES} a \
                     tool returns"
                ))])
            } else {
                answered
            }
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error_text(error, addr))]),
    })
}

impl RecapdTools {
    /// The tools, talking to the recapd `dial` reaches; the write tools
    /// only when `options.allow_writes`.
    pub fn new(dial: Dial, options: McpOptions) -> RecapdTools {
        let mut tool_router = Self::tool_router();
        if !options.allow_writes {
            for name in WRITE_TOOLS {
                tool_router.remove_route(name);
            }
        }
        RecapdTools {
            dial: Arc::new(dial),
            channel: Arc::new(tokio::sync::OnceCell::new()),
            token: options.token.map(Arc::from),
            tool_router,
        }
    }

    /// The channel to recapd, dialled at the first call (recapd may start
    /// after this server); a failed dial is tried again at the next call.
    async fn channel(&self) -> Result<Channel, ToolError> {
        self.channel
            .get_or_try_init(|| async {
                self.dial.channel().await.map_err(|cause| {
                    tracing::warn!(addr = %self.dial, %cause, "recapd cannot be reached");
                    ToolError::Text(unreachable_text(&self.dial))
                })
            })
            .await
            .cloned()
    }

    /// `message` as a request with the caller's token: an HTTP caller's
    /// own, else `--token`.
    fn request<T>(
        &self,
        extensions: &Extensions,
        message: T,
    ) -> Result<tonic::Request<T>, ToolError> {
        let caller = extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<CallerToken>())
            .map(|token| token.0.as_str());
        authorized(message, caller.or(self.token.as_deref()))
            .map_err(|reason| ToolError::Text(format!("UNAUTHENTICATED: {reason}")))
    }
}

#[tool_router]
impl RecapdTools {
    #[tool(
        description = "Search a chat's memory (messages and scene recaps) for passages about a query, best first."
    )]
    async fn recall(
        &self,
        Parameters(args): Parameters<RecallArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.recall_call(args, &extensions).await, &*self.dial)
    }

    #[tool(
        description = "A chat's memory as injected into its prompt: the running recap's text and where it goes."
    )]
    async fn get_memory(
        &self,
        Parameters(args): Parameters<ChatArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.get_memory_call(args, &extensions).await, &*self.dial)
    }

    #[tool(description = "List the chats, 100 per page.")]
    async fn list_chats(
        &self,
        Parameters(args): Parameters<ListChatsArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.list_chats_call(args, &extensions).await, &*self.dial)
    }

    #[tool(
        description = "World Info (lore) entries that a text, or the chat itself, would activate. Changes nothing."
    )]
    async fn search_lore(
        &self,
        Parameters(args): Parameters<SearchLoreArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.search_lore_call(args, &extensions).await, &*self.dial)
    }

    #[tool(
        description = "The chat's whole prompt with its memory and lore placed, as SillyTavern would send it. Changes nothing."
    )]
    async fn render_prompt(
        &self,
        Parameters(args): Parameters<RenderPromptArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(
            self.render_prompt_call(args, &extensions).await,
            &*self.dial,
        )
    }

    #[tool(
        description = "Store a recap: of one message (message_recap) or a new running recap of the story (running_recap)."
    )]
    async fn add_memory(
        &self,
        Parameters(args): Parameters<AddMemoryArgs>,
        extensions: Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.add_memory_call(args, &extensions).await, &*self.dial)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RecapdTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("recapd", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Long-term memory of role-play chats: recall passages, read the running recap, \
                 find lore.",
            )
    }
}

impl RecapdTools {
    async fn recall_call(&self, args: RecallArgs, ext: &Extensions) -> Result<Value, ToolError> {
        let mut client = pb::recall_service_client::RecallServiceClient::new(self.channel().await?);
        let request = pb::RecallRequest {
            chat_id: args.chat_id,
            query: args.query,
            limit: args.limit.unwrap_or(5),
            min_score: None,
        };
        let found = client
            .recall(self.request(ext, request)?)
            .await?
            .into_inner();
        Ok(answers::recall(found))
    }

    async fn get_memory_call(&self, args: ChatArgs, ext: &Extensions) -> Result<Value, ToolError> {
        let mut client =
            pb::injection_service_client::InjectionServiceClient::new(self.channel().await?);
        let request = pb::GetInjectionRequest {
            chat_id: args.chat_id,
            key: None,
        };
        let injection = client
            .get_injection(self.request(ext, request)?)
            .await?
            .into_inner();
        Ok(answers::memory(&injection))
    }

    async fn list_chats_call(
        &self,
        args: ListChatsArgs,
        ext: &Extensions,
    ) -> Result<Value, ToolError> {
        let mut client = pb::memory_service_client::MemoryServiceClient::new(self.channel().await?);
        let request = pb::ListChatsRequest {
            page_size: 100,
            page_token: args.page_token.unwrap_or_default(),
        };
        let page = client
            .list_chats(self.request(ext, request)?)
            .await?
            .into_inner();
        Ok(answers::chats(page))
    }

    async fn search_lore_call(
        &self,
        args: SearchLoreArgs,
        ext: &Extensions,
    ) -> Result<Value, ToolError> {
        let mut client =
            pb::lorebook_service_client::LorebookServiceClient::new(self.channel().await?);
        let history = args
            .text
            .map(|text| {
                vec![pb::PromptMessage {
                    role: pb::InjectionRole::User.into(),
                    content: text,
                    ..Default::default()
                }]
            })
            .unwrap_or_default();
        let request = pb::ScanWorldInfoRequest {
            chat_id: args.chat_id,
            dry_run: true,
            history,
            ..Default::default()
        };
        let scan = client
            .scan_world_info(self.request(ext, request)?)
            .await?
            .into_inner();
        Ok(answers::lore(scan))
    }

    async fn render_prompt_call(
        &self,
        args: RenderPromptArgs,
        ext: &Extensions,
    ) -> Result<Value, ToolError> {
        let mode = match args.mode.as_deref().unwrap_or("chat") {
            "chat" => pb::PromptMode::ChatCompletion,
            "text" => pb::PromptMode::TextCompletion,
            other => {
                return Err(ToolError::Text(format!(
                    "INVALID_ARGUMENT: mode {other:?} is neither \"chat\" nor \"text\""
                )));
            }
        };
        let mut client = pb::prompt_service_client::PromptServiceClient::new(self.channel().await?);
        let request = pb::RenderPromptRequest {
            chat_id: args.chat_id,
            mode: mode.into(),
            dry_run: true,
            ..Default::default()
        };
        let prompt = client
            .render_prompt(self.request(ext, request)?)
            .await?
            .into_inner();
        Ok(answers::prompt(prompt, MAX_ANSWER_BYTES))
    }

    async fn add_memory_call(
        &self,
        args: AddMemoryArgs,
        ext: &Extensions,
    ) -> Result<Value, ToolError> {
        let mut client = pb::memory_service_client::MemoryServiceClient::new(self.channel().await?);
        match (args.kind.as_str(), args.message_id) {
            ("message_recap", Some(message_id)) => {
                let request = pb::SetMessageDataRequest {
                    chat_id: args.chat_id,
                    message_id: message_id.clone(),
                    data: Some(pb::MessageData {
                        memory: Some(args.text),
                        ..Default::default()
                    }),
                    edit: true,
                };
                client.set_message_data(self.request(ext, request)?).await?;
                Ok(json!({ "stored": "message_recap", "message_id": message_id }))
            }
            ("message_recap", None) => Err(ToolError::Text(
                "INVALID_ARGUMENT: message_id: a message_recap needs the message".into(),
            )),
            ("running_recap", _) => {
                let request = pb::AddRunningRecapRequest {
                    chat_id: args.chat_id,
                    content: args.text,
                    ..Default::default()
                };
                let added = client
                    .add_running_recap(self.request(ext, request)?)
                    .await?
                    .into_inner();
                Ok(json!({ "stored": "running_recap", "version": added.version }))
            }
            (other, _) => Err(ToolError::Text(format!(
                "INVALID_ARGUMENT: kind {other:?} is neither \"message_recap\" nor \"running_recap\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
