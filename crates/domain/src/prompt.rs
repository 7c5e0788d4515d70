//! Prompt assembly with SillyTavern's placement of extension prompts, so a
//! backend that is not SillyTavern gets the exact prompt SillyTavern would
//! build (`RenderPrompt`).
//!
//! Rules (from SillyTavern's `script.js` and `openai.js`, see the reference
//! file): an empty value is never inserted; a later prompt under the same
//! key replaces an earlier one; prompts sharing a position (and, for
//! IN_CHAT, a depth and a role) are joined in key order, each trimmed, with
//! `\n`; an IN_CHAT message's joined text is trimmed at its start; NONE is
//! never placed. Each IN_CHAT depth is its own block of messages.
//!
//! With a chat ([`chat_history`], [`link_history`]): its stored transcript
//! can be the history, and its hidden state (by hand or by auto-hide)
//! applies to the history entries linked to its messages.

use std::collections::BTreeMap;

use super::DomainError;
use super::autohide::{AutoHide, auto_hide};
use super::chat::Chat;
use super::message::Message;
use super::settings::{MAX_DEPTH, Position, Role};

/// Text completion or chat completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptMode {
    /// One text: BEFORE_PROMPT text, story string, IN_PROMPT text.
    TextCompletion,
    /// Messages: BEFORE_PROMPT messages, the main prompt, IN_PROMPT
    /// messages, then the history.
    ChatCompletion,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// The speaker's name (empty for system messages).
    pub name: String,
    /// The text.
    pub content: String,
    /// Hidden from the prompt (SillyTavern's `is_system`); never in output.
    pub hidden: bool,
    /// The stored chat message this entry stands for; empty when none
    /// (always for injected messages). See [`link_history`].
    pub message_id: String,
}

/// One extension prompt (SillyTavern's `setExtensionPrompt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionPrompt {
    /// Registration key; a later prompt under the same key replaces it.
    pub key: String,
    /// The text; empty is never inserted. A blank value places nothing
    /// alone; in IN_CHAT it can leave an empty line after a non-blank value
    /// of the same depth and role (only the start of the joined text is
    /// trimmed).
    pub value: String,
    /// Where it goes.
    pub position: Position,
    /// For IN_CHAT: how many visible messages from the end (0..=1000).
    pub depth: u32,
    /// Its role (ignored in text completion outside IN_CHAT).
    pub role: Role,
    /// World Info scanning; never changes placement.
    pub scan: bool,
}

/// A rendered prompt.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RenderedPrompt {
    /// Text completion: the text before the history; empty in chat completion.
    pub text: String,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// What to render.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// Text or chat completion.
    pub mode: PromptMode,
    /// The story string (character card / system prompt block).
    pub story_string: &'a str,
    /// The chat history, oldest first, hidden messages included.
    pub history: &'a [PromptMessage],
    /// Whether the request continues the last message.
    pub continue_last: bool,
    /// Extension prompts in registration order.
    pub prompts: &'a [ExtensionPrompt],
}

/// The order of roles within one depth, as inserted into the reversed
/// history: after reversing back, assistant, then user, then system.
const IN_CHAT_ROLE_ORDER: [Role; 3] = [Role::System, Role::User, Role::Assistant];
/// The order of the per-role messages of BEFORE_PROMPT and IN_PROMPT in
/// chat completion.
const PROMPT_ROLE_ORDER: [Role; 3] = [Role::System, Role::User, Role::Assistant];

/// Renders a prompt.
pub fn render_prompt(input: PromptInput<'_>) -> RenderedPrompt {
    let prompts = effective_prompts(input.prompts);
    let visible: Vec<&PromptMessage> = input.history.iter().filter(|m| !m.hidden).collect();
    let history = place_in_chat(&visible, &prompts, input.continue_last);
    match input.mode {
        PromptMode::TextCompletion => {
            let before = joined(&prompts, |p| p.position == Position::BeforePrompt);
            let after = joined(&prompts, |p| p.position == Position::InPrompt);
            let mut text = String::new();
            if !before.is_empty() {
                text.push_str(&before);
                text.push('\n');
            }
            text.push_str(input.story_string);
            if !after.is_empty() {
                text.push('\n');
                text.push_str(&after);
                text.push('\n');
            }
            RenderedPrompt {
                text,
                messages: history,
            }
        }
        PromptMode::ChatCompletion => {
            let mut messages = role_messages(&prompts, Position::BeforePrompt);
            messages.push(PromptMessage {
                role: Role::System,
                name: String::new(),
                content: input.story_string.to_owned(),
                hidden: false,
                message_id: String::new(),
            });
            messages.extend(role_messages(&prompts, Position::InPrompt));
            messages.extend(history);
            RenderedPrompt {
                text: String::new(),
                messages,
            }
        }
    }
}

/// The prompts that take part: the last registration of each key, in key
/// order, without empty values or NONE. A blank (whitespace-only) value
/// stays: in IN_CHAT it joins its block as an empty line, as in SillyTavern.
fn effective_prompts(prompts: &[ExtensionPrompt]) -> Vec<ExtensionPrompt> {
    let mut by_key: BTreeMap<&str, &ExtensionPrompt> = BTreeMap::new();
    for prompt in prompts {
        by_key.insert(&prompt.key, prompt);
    }
    by_key
        .into_values()
        .filter(|p| p.position != Position::None && !p.value.is_empty())
        .cloned()
        .collect()
}

/// The non-blank values of the prompts `select` picks, in key order,
/// trimmed, joined with `\n` (BEFORE_PROMPT and IN_PROMPT).
fn joined(prompts: &[ExtensionPrompt], select: impl Fn(&ExtensionPrompt) -> bool) -> String {
    prompts
        .iter()
        .filter(|p| select(p) && !p.value.trim().is_empty())
        .map(|p| p.value.trim())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Chat completion's BEFORE_PROMPT or IN_PROMPT messages: one per role.
fn role_messages(prompts: &[ExtensionPrompt], position: Position) -> Vec<PromptMessage> {
    PROMPT_ROLE_ORDER
        .iter()
        .filter_map(|&role| {
            let content = joined(prompts, |p| p.position == position && p.role == role);
            (!content.is_empty()).then(|| PromptMessage {
                role,
                name: String::new(),
                content,
                hidden: false,
                message_id: String::new(),
            })
        })
        .collect()
}

/// The name an injected message of `role` carries: empty for system, else
/// the name of the latest visible history message of that role.
fn speaker(visible: &[&PromptMessage], role: Role) -> String {
    if role == Role::System {
        return String::new();
    }
    visible
        .iter()
        .rev()
        .find(|m| m.role == role)
        .map(|m| m.name.clone())
        .unwrap_or_default()
}

/// The visible history with the IN_CHAT prompts placed, SillyTavern's way.
///
/// The history is reversed (newest first). Depths are walked in increasing
/// order; each depth that has prompts gives one block: at most one message
/// per role (system, user, assistant in the reversed array, so assistant,
/// user, system once reversed back), each holding the prompts of exactly
/// that depth and role. A block goes in at `min(d + inserted, len)`, where
/// `d` is the depth (1 for depth 0 when continuing), `inserted` counts the
/// messages of the blocks already placed and `len` is the current length
/// of the array, placed messages included. Blocks of different depths stay
/// separate even when they land at the same place.
fn place_in_chat(
    visible: &[&PromptMessage],
    prompts: &[ExtensionPrompt],
    continue_last: bool,
) -> Vec<PromptMessage> {
    let in_chat: Vec<&ExtensionPrompt> = prompts
        .iter()
        .filter(|p| p.position == Position::InChat)
        .collect();
    let depth_of = |p: &ExtensionPrompt| p.depth.min(MAX_DEPTH);
    let mut reversed: Vec<PromptMessage> = visible
        .iter()
        .rev()
        .map(|m| PromptMessage {
            hidden: false,
            ..(*m).clone()
        })
        .collect();
    let mut depths: Vec<u32> = in_chat.iter().map(|p| depth_of(p)).collect();
    depths.sort_unstable();
    depths.dedup();
    let mut inserted = 0usize;
    for depth in depths {
        let block: Vec<PromptMessage> = IN_CHAT_ROLE_ORDER
            .iter()
            .filter_map(|&role| {
                let joined = in_chat
                    .iter()
                    .filter(|p| depth_of(p) == depth && p.role == role)
                    .map(|p| p.value.trim())
                    .collect::<Vec<_>>()
                    .join("\n");
                let content = joined.trim_start();
                (!content.is_empty()).then(|| PromptMessage {
                    role,
                    name: speaker(visible, role),
                    content: content.to_owned(),
                    hidden: false,
                    message_id: String::new(),
                })
            })
            .collect();
        if block.is_empty() {
            continue;
        }
        let distance = if continue_last && depth == 0 {
            1
        } else {
            depth as usize
        };
        let index = (distance + inserted).min(reversed.len());
        inserted += block.len();
        reversed.splice(index..index, block);
    }
    reversed.reverse();
    reversed
}

/// Which of a chat's stored messages are hidden from the prompt: those
/// hidden by hand and those in the prefix auto-hide hides with the chat's
/// current `auto_hide_scene_count` (the rule `GetInclusion` reports as
/// `hidden`; a refresh computes the same prefix).
struct ChatHides<'a> {
    chat: &'a Chat,
    auto: AutoHide,
}

impl<'a> ChatHides<'a> {
    fn new(chat: &'a Chat, auto_hide_scene_count: u32) -> Self {
        ChatHides {
            chat,
            auto: auto_hide(chat, auto_hide_scene_count),
        }
    }

    fn hides(&self, seq: i64, message: &Message) -> bool {
        message.hidden || self.auto.hides(seq)
    }
}

/// The role a stored message speaks with in a prompt, as SillyTavern sends
/// its chat: a narrator message is SYSTEM (whoever sent it), a user message
/// USER, every other message ASSISTANT.
pub fn stored_role(message: &Message) -> Role {
    if message.is_narrator {
        Role::System
    } else if message.is_user {
        Role::User
    } else {
        Role::Assistant
    }
}

/// A chat's stored transcript as prompt history, oldest first: each visible
/// message with its [`stored_role`], its name, its current swipe's text and
/// its id as `message_id`. Messages hidden by hand or by auto-hide (with
/// `auto_hide_scene_count`) are left out, as rendering would drop them.
pub fn chat_history(chat: &Chat, auto_hide_scene_count: u32) -> Vec<PromptMessage> {
    let hides = ChatHides::new(chat, auto_hide_scene_count);
    chat.messages()
        .filter(|(seq, message)| !hides.hides(*seq, message))
        .map(|(_, message)| PromptMessage {
            role: stored_role(message),
            name: message.name.as_str().to_owned(),
            content: message.text().to_owned(),
            hidden: false,
            message_id: message.id.as_str().to_owned(),
        })
        .collect()
}

/// Links a request's history to the chat: every entry with a non-empty
/// `message_id` takes that stored message's hidden state (by hand or by
/// auto-hide with `auto_hide_scene_count`) in place of its own `hidden`;
/// its role, name and content stay its own. Entries without one are left
/// as they are.
///
/// # Errors
/// [`DomainError::NotFound`] naming the first entry (`history[i].message_id`)
/// whose id the chat does not hold.
pub fn link_history(
    history: &mut [PromptMessage],
    chat: &Chat,
    auto_hide_scene_count: u32,
) -> Result<(), DomainError> {
    let hides = ChatHides::new(chat, auto_hide_scene_count);
    for (i, entry) in history.iter_mut().enumerate() {
        if entry.message_id.is_empty() {
            continue;
        }
        let Some((seq, message)) = hides.chat.message(&entry.message_id) else {
            return Err(DomainError::NotFound(format!(
                "message {:?} (history[{i}].message_id)",
                entry.message_id
            )));
        };
        entry.hidden = hides.hides(seq, message);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
