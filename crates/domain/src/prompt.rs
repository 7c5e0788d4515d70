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
//!
//! # World Info ([`PromptInput::world_info`], facts file §3)
//!
//! Line numbers are SillyTavern 1.18.0 (51ad27f). recapd has no instruct
//! mode, no context-template or prompt-manager settings and no group
//! chats: SillyTavern's defaults stand for them, as said below.
//!
//! - At depth: [`Placement::depth_prompts`] are registered after the
//!   request's prompts (`customDepthWI_<depth>_<role>`, IN_CHAT), so they
//!   merge with every other IN_CHAT prompt of their depth and role in key
//!   order (`script.js:3251`, 4608-4614); one of those keys in the request
//!   is replaced by World Info's.
//! - Author's note ([`PromptInput::authors_note`], only when the request
//!   carries one, as SillyTavern wraps it only on turns that insert it):
//!   registered last under [`AUTHORS_NOTE_KEY`], its value AN-top, the note
//!   and AN-bottom joined with `\n`, one leading and one trailing `\n`
//!   removed (`world-info.js:5149-5153`). Without World Info its value is
//!   unchanged.
//! - Before/after (`wiBefore`/`wiAfter`): a story string holding
//!   `{{wiBefore}}` or `{{loreBefore}}` takes the before text there (every
//!   occurrence), one holding `{{wiAfter}}` or `{{loreAfter}}` the after
//!   text (`script.js:4652-4655`; exact spelling, as Handlebars reads
//!   names; recapd renders no other Handlebars). In both modes: SillyTavern
//!   knows these macros only in text completion's story string, but in
//!   recapd the story string is chat completion's main prompt too, and a
//!   client that wrote the macros wants the texts there. A text no macro
//!   took:
//!   - text completion: SillyTavern's default context template
//!     (`default/content/presets/context/Default.json`) writes anchorBefore,
//!     system, wiBefore, description, personality, scenario, wiAfter,
//!     persona, anchorAfter, each followed by `\n` when non-empty. recapd's
//!     story string stands for system..persona, so the text is
//!     BEFORE_PROMPT text + `\n`, then the non-empty of (before, story
//!     string, after) joined with `\n`, then `\n` + IN_PROMPT text + `\n`.
//!     (In SillyTavern wiBefore follows the system prompt and wiAfter
//!     precedes the persona; recapd cannot see inside the story string.)
//!   - chat completion: SillyTavern's default prompt order
//!     (`PromptManager.js:2087-2135`) is main, worldInfoBefore, persona,
//!     character description, personality, scenario, nsfw,
//!     worldInfoAfter, dialogueExamples, chatHistory, with BEFORE_PROMPT and
//!     IN_PROMPT extension prompts put at the start and end of main
//!     (`openai.js:1132-1138`). With the story string as main: the
//!     BEFORE_PROMPT messages, the story string, the IN_PROMPT messages,
//!     then a system message with the before text, one with the after
//!     text (each only when non-empty), the examples, the history. The
//!     texts are unchanged: SillyTavern's default `wi_format` is `{0}`
//!     (`openai.js:106`, 780-792).
//! - `{{outlet::name}}` (`macros.js:668`, the outlet macro of the default
//!   macro engine alike): substituted with [`Placement::outlet`] (empty
//!   when none, and always without World Info) wherever SillyTavern
//!   substitutes macros in a prompt: the story string after the before and
//!   after texts went in (so in them too, `power-user.js:2248-2251`), the
//!   before/after messages of chat completion, every joined extension
//!   prompt text (BEFORE_PROMPT, IN_PROMPT and each IN_CHAT message, after
//!   joining: `script.js:3266-3268`), so the author's note and depth
//!   prompts too, and the example texts. Never in the history.
//! - Examples ([`PromptInput::examples`]): World Info's examples-top texts,
//!   then the request's, then examples-bottom (`script.js:4580-4596`),
//!   each parsed into blocks as `parseMesExamples` does
//!   (`script.js:3442-3456`). All are kept: SillyTavern drops the ones past
//!   the context budget, recapd counts no budget here.
//!   - text completion: after everything else of `text` (after the
//!     IN_PROMPT text, as the story string is followed by the examples,
//!     `script.js:5133-5136`), each block `***\n`, the block and `\n`
//!     (the default template's `example_separator`), preceded by `\n`
//!     when `text` does not end with one (SillyTavern's story string
//!     always ends with a newline, `power-user.js:2256-2261`). recapd adds
//!     no `chat_start` before the history, as before World Info.
//!   - chat completion: after the before/after messages, before the
//!     history: per block, a system message `[Example Chat]` (the default
//!     `new_example_chat_prompt`), then the block's messages, each a
//!     system message named `example_user` or `example_assistant`, split
//!     at lines starting `<user_name>:` / `<char_name>:` as
//!     `parseExampleIntoIndividual` does (`openai.js:647-658`, 720-778,
//!     1092-1124).
//! - recapd runs no regex scripts (nor SillyTavern's other macros): texts
//!   are placed as given.
//!
//! With `world_info: None`, no author's note and no examples the output is
//! what it was before World Info, but an `{{outlet::…}}`, `{{wiBefore}}`,
//! `{{loreBefore}}`, `{{wiAfter}}` or `{{loreAfter}}` in a placed text
//! reads as empty, as in SillyTavern without activated entries.

use std::collections::BTreeMap;

use super::DomainError;
use super::autohide::{AutoHide, auto_hide};
use super::chat::Chat;
use super::message::Message;
use super::settings::{Position, Role};
use super::world_info::place::Placement;
pub use crate::settings::ExtensionPrompt;

mod world_info;

pub use world_info::AUTHORS_NOTE_KEY;

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
    /// One World Info activation's placement; `None`: no World Info (the
    /// story-string macros and outlets then read as empty).
    pub world_info: Option<&'a Placement>,
    /// The request's author's note, when this generation inserts one:
    /// registered after `prompts` under `2_floating_prompt` (replacing any
    /// prompt of that key), World Info's AN top/bottom texts around its
    /// value. `None`: no author's note (AN top/bottom go nowhere).
    pub authors_note: Option<&'a ExtensionPrompt>,
    /// The example messages, as SillyTavern's character `mes_example`
    /// texts with macros already substituted: each is parsed into blocks
    /// at its `<START>` lines (a text without one is one block).
    pub examples: &'a [String],
    /// The user's name (SillyTavern's `name1`): in chat completion, an
    /// example line starting `<user_name>:` starts a user example message.
    pub user_name: &'a str,
    /// The character's name (`name2`): in chat completion, an example line
    /// starting `<char_name>:` starts a character example message.
    pub char_name: &'a str,
}

/// The deepest IN_CHAT depth SillyTavern places (`script.js:499`, its
/// injection loops run `0..=` it: `script.js:5575`, `openai.js:811`).
pub const MAX_INJECTION_DEPTH: u32 = 10_000;

/// The order of roles within one depth, as inserted into the reversed
/// history: after reversing back, assistant, then user, then system.
const IN_CHAT_ROLE_ORDER: [Role; 3] = [Role::System, Role::User, Role::Assistant];
/// The order of the per-role messages of BEFORE_PROMPT and IN_PROMPT in
/// chat completion.
const PROMPT_ROLE_ORDER: [Role; 3] = [Role::System, Role::User, Role::Assistant];

/// Renders a prompt; the module doc says where each part goes.
pub fn render_prompt(input: PromptInput<'_>) -> RenderedPrompt {
    let no_world_info = Placement::default();
    let wi = input.world_info.unwrap_or(&no_world_info);
    let mut registered: Vec<ExtensionPrompt> = input.prompts.to_vec();
    registered.extend(wi.depth_prompts());
    if let Some(note) = input.authors_note {
        registered.push(world_info::authors_note(note, wi));
    }
    let prompts = effective_prompts(&registered);
    let visible: Vec<&PromptMessage> = input.history.iter().filter(|m| !m.hidden).collect();
    let history = place_in_chat(&visible, &prompts, input.continue_last, wi);
    match input.mode {
        PromptMode::TextCompletion => {
            let before = joined(&prompts, wi, |p| p.position == Position::BeforePrompt);
            let after = joined(&prompts, wi, |p| p.position == Position::InPrompt);
            let story = world_info::story_string(input.story_string, wi, true);
            let mut text = String::new();
            if !before.is_empty() {
                text.push_str(&before);
                text.push('\n');
            }
            text.push_str(&world_info::substitute_outlets(&story.text, wi));
            if !after.is_empty() {
                text.push('\n');
                text.push_str(&after);
                text.push('\n');
            }
            let examples = world_info::text_examples(input.examples, wi);
            if !examples.is_empty() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&examples);
            }
            RenderedPrompt {
                text,
                messages: history,
            }
        }
        PromptMode::ChatCompletion => {
            let story = world_info::story_string(input.story_string, wi, false);
            let mut messages = role_messages(&prompts, Position::BeforePrompt, wi);
            messages.push(PromptMessage {
                role: Role::System,
                name: String::new(),
                content: world_info::substitute_outlets(&story.text, wi),
                hidden: false,
                message_id: String::new(),
            });
            messages.extend(role_messages(&prompts, Position::InPrompt, wi));
            let untaken = [
                (!story.took_before).then_some(&wi.before),
                (!story.took_after).then_some(&wi.after),
            ];
            for text in untaken.into_iter().flatten() {
                let content = world_info::substitute_outlets(text, wi);
                if !content.is_empty() {
                    messages.push(PromptMessage {
                        role: Role::System,
                        name: String::new(),
                        content,
                        hidden: false,
                        message_id: String::new(),
                    });
                }
            }
            messages.extend(world_info::chat_examples(
                input.examples,
                wi,
                input.user_name,
                input.char_name,
            ));
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
/// trimmed, joined with `\n`, then outlets substituted and the whole
/// trimmed (BEFORE_PROMPT and IN_PROMPT; `script.js:3251-3268`, 4641-4642,
/// 4656-4657).
fn joined(
    prompts: &[ExtensionPrompt],
    wi: &Placement,
    select: impl Fn(&ExtensionPrompt) -> bool,
) -> String {
    let values = prompts
        .iter()
        .filter(|p| select(p) && !p.value.trim().is_empty())
        .map(|p| p.value.trim())
        .collect::<Vec<_>>()
        .join("\n");
    world_info::substitute_outlets(&values, wi)
        .trim()
        .to_owned()
}

/// Chat completion's BEFORE_PROMPT or IN_PROMPT messages: one per role.
fn role_messages(
    prompts: &[ExtensionPrompt],
    position: Position,
    wi: &Placement,
) -> Vec<PromptMessage> {
    PROMPT_ROLE_ORDER
        .iter()
        .filter_map(|&role| {
            let content = joined(prompts, wi, |p| p.position == position && p.role == role);
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
/// separate even when they land at the same place. A prompt deeper than
/// [`MAX_INJECTION_DEPTH`] is never placed. The joined text of a message
/// has its outlets substituted before its start is trimmed.
fn place_in_chat(
    visible: &[&PromptMessage],
    prompts: &[ExtensionPrompt],
    continue_last: bool,
    wi: &Placement,
) -> Vec<PromptMessage> {
    let in_chat: Vec<&ExtensionPrompt> = prompts
        .iter()
        .filter(|p| p.position == Position::InChat && p.depth <= MAX_INJECTION_DEPTH)
        .collect();
    let depth_of = |p: &ExtensionPrompt| p.depth;
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
                let joined = world_info::substitute_outlets(&joined, wi);
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

    /// Number of messages not hidden: those after the auto-hidden prefix
    /// less those hidden by hand there. O(log n + hidden by hand).
    fn visible_count(&self) -> usize {
        let after_prefix = self.chat.len().saturating_sub(self.auto.count);
        after_prefix.saturating_sub(self.chat.hidden_by_hand_after(self.auto.through))
    }
}

/// A stored message as prompt history (see [`chat_history`]).
fn history_entry(message: &Message) -> PromptMessage {
    PromptMessage {
        role: stored_role(message),
        name: message.name.as_str().to_owned(),
        content: message.text().to_owned(),
        hidden: false,
        message_id: message.id.as_str().to_owned(),
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
    chat_history_tail(chat, auto_hide_scene_count, usize::MAX).messages
}

/// The newest messages of a chat's stored transcript as prompt history
/// ([`HistoryTail::messages`]), with the number of visible messages the
/// whole transcript holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryTail {
    /// The last (at most) `limit` visible messages, oldest first, as
    /// [`chat_history`] gives them.
    pub messages: Vec<PromptMessage>,
    /// How many visible messages the chat holds in all (at least
    /// `messages.len()`).
    pub visible: usize,
}

/// The last `limit` visible messages of a chat as [`chat_history`] gives
/// them, and how many visible messages it holds: reads the messages from
/// the end and stops at the `limit`-th visible one or at the auto-hidden
/// prefix, so a scan that reads the newest few messages of a long chat
/// costs what it does in a short one.
pub fn chat_history_tail(chat: &Chat, auto_hide_scene_count: u32, limit: usize) -> HistoryTail {
    let hides = ChatHides::new(chat, auto_hide_scene_count);
    let mut messages: Vec<PromptMessage> = chat
        .messages()
        .rev()
        .take_while(|(seq, _)| !hides.auto.hides(*seq))
        .filter(|(seq, message)| !hides.hides(*seq, message))
        .take(limit)
        .map(|(_, message)| history_entry(message))
        .collect();
    messages.reverse();
    HistoryTail {
        messages,
        visible: hides.visible_count(),
    }
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
