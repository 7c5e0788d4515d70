//! `recap.v1.PromptService`: the prompt SillyTavern would build, with a
//! chat's injections, its World Info and the caller's own prompts placed.

use tonic::{Request, Response, Status};

use super::convert::{prompt, world_info};
use super::pb;
use super::pb::prompt_service_server::PromptService;
use super::services::{scoped, split};
use super::status::domain_status;
use crate::domain::prompt::{AUTHORS_NOTE_KEY, PromptInput, render_prompt};
use crate::engine::{Engine, ScanRequest};

/// `recap.v1.PromptService`.
#[derive(Clone)]
pub struct PromptApi {
    engine: Engine,
}

impl PromptApi {
    /// Renders prompts, with the chats of `engine`.
    pub fn new(engine: Engine) -> Self {
        PromptApi { engine }
    }
}

#[tonic::async_trait]
impl PromptService for PromptApi {
    async fn render_prompt(
        &self,
        request: Request<pb::RenderPromptRequest>,
    ) -> Result<Response<pb::RenderPromptResponse>, Status> {
        let (
            tenant,
            pb::RenderPromptRequest {
                chat_id,
                mode,
                story_string,
                history,
                continue_last,
                extra,
                generation_type,
                dry_run,
                seed,
                authors_note,
                examples,
                texts,
            },
        ) = split(request);
        let limits = self.engine.limits();
        let mode = prompt::mode(mode).map_err(domain_status)?;
        limits
            .check_text("story_string", &story_string)
            .map_err(domain_status)?;
        let chat = match chat_id.as_str() {
            "" => None,
            id => Some(scoped(&tenant, id)?),
        };
        let history = prompt::history(history, chat.is_some(), limits).map_err(domain_status)?;
        let extra = prompt::extension_prompts(extra, limits).map_err(domain_status)?;
        let generation_type =
            world_info::generation_type(&generation_type).map_err(domain_status)?;
        let texts = world_info::texts(texts, limits).map_err(domain_status)?;
        // The note's own `key` is ignored (the proto): it is always
        // SillyTavern's author's-note key, so an empty one is no error.
        let authors_note = authors_note
            .map(|p| {
                let p = pb::ExtensionPrompt {
                    key: AUTHORS_NOTE_KEY.to_owned(),
                    ..p
                };
                prompt::extension_prompt(p, "authors_note", limits)
            })
            .transpose()
            .map_err(domain_status)?;
        for (i, example) in examples.iter().enumerate() {
            limits
                .check_text(format_args!("examples[{i}]"), example)
                .map_err(domain_status)?;
        }
        let Some(chat) = chat else {
            let rendered = render_prompt(PromptInput {
                mode,
                story_string: &story_string,
                history: &history,
                continue_last,
                prompts: &extra,
                world_info: None,
                authors_note: authors_note.as_ref(),
                examples: &examples,
                user_name: &texts.user_name,
                char_name: &texts.character_name,
            });
            return Ok(Response::new(pb::RenderPromptResponse {
                text: rendered.text,
                messages: rendered.messages.into_iter().map(Into::into).collect(),
                world_info: None,
            }));
        };
        // The author's note is registered before SillyTavern's scan
        // (script.js:4560, then 4576) with its own `scan` flag
        // (authors-note.js:383-388), so the scan reads it like the caller's
        // extension prompts; it is placed, wrapped, by `render_prompt`.
        let mut scanned = extra.clone();
        scanned.extend(authors_note.iter().cloned());
        // One read of the chat: its injections, transcript and hidden
        // state, scanned for World Info (committing the timed effects the
        // scan advanced unless `dry_run`).
        let request = ScanRequest {
            generation_type,
            dry_run,
            seed,
            history,
            // The rendered prompt places the whole transcript.
            whole_history: true,
            extra: scanned,
            texts,
        };
        let scan = self
            .engine
            .world_info()
            .scan_world_info(&chat, &request)
            .await?;
        let mut prompts = Vec::with_capacity(extra.len() + 2);
        prompts.extend(scan.prompt.injections.iter().map(|i| i.extension_prompt()));
        prompts.extend(extra);
        let rendered = render_prompt(PromptInput {
            mode,
            story_string: &story_string,
            history: &scan.prompt.history,
            continue_last,
            prompts: &prompts,
            world_info: Some(&scan.placement),
            authors_note: authors_note.as_ref(),
            examples: &examples,
            user_name: &scan.user_name,
            char_name: &scan.char_name,
        });
        Ok(Response::new(pb::RenderPromptResponse {
            text: rendered.text,
            messages: rendered.messages.into_iter().map(Into::into).collect(),
            // The prompt carries World Info's text: the activation is
            // answered without it, so each entry's content comes once.
            world_info: Some(world_info::prompt_scan_response(&scan.activated)),
        }))
    }
}
