//! Settings: their defaults, the checks on every value, and how global
//! settings and a chat's overrides combine into the effective settings.
//!
//! Every setting is declared once, in the table of `settings/fields.rs`
//! (which says how to add one), in the group of the feature that owns it;
//! [`Settings`] (one field per group: [`InjectionSettings`],
//! [`InclusionSettings`], [`ChatSettings`], [`TierSettings`],
//! [`WritingSettings`], [`WorldInfoSettings`], [`LoreSettings`],
//! [`RecallSettings`]), the flat [`SettingsPatch`] and [`ApiSettings`]
//! (the API's and the store's form, one field per setting) and their
//! field-by-field operations are generated from it by
//! `settings/declare.rs`. What spans several fields
//! ([`Settings::validate`], [`Settings::token_limit`],
//! [`Settings::chat_enabled`]) is written here by hand.

use serde::{Deserialize, Serialize};

use super::DomainError;
pub use entity_types::EntityTypes;
pub use lore_instructions::{
    DEFAULT_LORE_BOOK_NAME_TEMPLATE, DEFAULT_LORE_COMPACT_PROMPT, DEFAULT_LORE_EXTRACT_PROMPT,
    DEFAULT_LORE_MERGE_PROMPT, DEFAULT_LORE_RESOLVE_PROMPT,
};
pub use writing_instructions::{
    DEFAULT_MESSAGE_RECAP_PROMPT, DEFAULT_RUNNING_RECAP_PROMPT, DEFAULT_SCENE_BREAK_PROMPT,
    DEFAULT_SCENE_RECAP_PROMPT,
};

/// `lore_compaction_threshold`'s upper bound, in tokens.
pub const LORE_TOKENS_MAX: u32 = 100_000;
/// `lore_max_entries`' upper bound (a book holds at most
/// `--max-lorebook-entries` entries whatever this says).
pub const LORE_MAX_ENTRIES_MAX: u32 = 100_000;
/// `lore_max_keys`' upper bound.
pub const LORE_MAX_KEYS_MAX: u32 = 100;

/// One extension prompt (SillyTavern's `setExtensionPrompt`): a text and
/// where it goes. Beside [`Position`] and [`Role`], below both World Info
/// and prompt assembly ([`crate::prompt`]), which hand such prompts on.
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
    /// For IN_CHAT: how many visible messages from the end (a request's
    /// are 0..=1000; World Info's can be deeper); past
    /// [`MAX_INJECTION_DEPTH`](crate::prompt::MAX_INJECTION_DEPTH) never placed.
    pub depth: u32,
    /// Its role (ignored in text completion outside IN_CHAT).
    pub role: Role,
    /// World Info scanning; never changes placement.
    pub scan: bool,
}

/// Where the injection goes in the prompt (SillyTavern's extension prompt
/// types; there is no AFTER_PROMPT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Position {
    /// Never inserted (SillyTavern -1).
    None,
    /// Right after the story string / main prompt (SillyTavern 0).
    InPrompt,
    /// Inside the chat history at `depth` (SillyTavern 1).
    InChat,
    /// Before the story string / main prompt (SillyTavern 2).
    BeforePrompt,
}

/// The role of the injected message (SillyTavern's extension prompt roles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// SillyTavern 0.
    System,
    /// SillyTavern 1.
    User,
    /// SillyTavern 2.
    Assistant,
}

/// How the message-recap token limit is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContextType {
    /// `floor(max_context_tokens * limit / 100)`.
    Percent,
    /// The limit itself.
    Absolute,
}

/// What counts a chat's tokens: a tiktoken vocabulary, or a model's own
/// tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TokenizerKind {
    /// GPT-4o's vocabulary; the default.
    O200kBase,
    /// GPT-4 / GPT-3.5's vocabulary.
    Cl100kBase,
    /// Codex / text-davinci-002/003's vocabulary.
    P50kBase,
    /// GPT-3's vocabulary.
    R50kBase,
    /// A model's own tokenizer: the `tokenizer.json` named by
    /// `tokenizer_name`, in the server's tokenizers directory.
    HuggingFace,
    /// The LLM endpoint's own tokenizer (llama.cpp's and vLLM's
    /// `/tokenize`), asked once per text and remembered; a text not counted
    /// yet is estimated with o200k_base until its count arrives.
    LlmEndpoint,
}

/// How a job asks the LLM for a JSON answer (`response_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StructuredOutput {
    /// `json_schema` first; when the endpoint refuses it (a 400 naming
    /// `response_format` or the schema), `json_object`, then nothing,
    /// remembered per endpoint and model for the process's life. The
    /// default.
    Auto,
    /// Always the answer's JSON schema (`type: json_schema`, strict); an
    /// endpoint that refuses it fails the job.
    JsonSchema,
    /// Always `type: json_object` (any JSON object).
    JsonObject,
    /// No `response_format`: the answer is looked for in the text.
    Off,
}

/// Which field carries the answer's token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MaxTokensField {
    /// `max_tokens`; `max_completion_tokens` when the endpoint refuses
    /// `max_tokens` (a 400 naming it), remembered per endpoint and model.
    /// The default.
    Auto,
    /// Always `max_tokens`.
    MaxTokens,
    /// Always `max_completion_tokens`.
    MaxCompletionTokens,
}

/// Deepest accepted `depth` (SillyTavern's MAX_INJECTION_DEPTH).
pub const MAX_DEPTH: u32 = 1000;
/// Longest accepted `debounce_ms`: one hour.
pub const MAX_DEBOUNCE_MS: u64 = 3_600_000;

/// The seeds' default running-recap template.
pub const DEFAULT_TEMPLATE: &str = "# Story Memory\n\nThe following is a cumulative memory of key scenes and developments from the roleplay so far.\n\n{{running_recap}}";

/// The message-recap tier's default template.
pub const DEFAULT_MESSAGE_RECAPS_TEMPLATE: &str = "# Recent Events\n\n{{message_recaps}}";

mod declare;
pub mod entity_types;
mod fields;
mod lore_instructions;
mod recall;
mod tokenizer;
mod values;
mod world_info;
mod writing_instructions;

pub use recall::{
    ChatIds, DEFAULT_RECALL_TEMPLATE, MAX_CHUNK_CHARS, MAX_RECALL_CHATS, MIN_CHUNK_CHARS,
    check_recall_chats, recall_fraction,
};

pub use crate::settings_table;
use declare::{checked, declare_settings};
pub use tokenizer::{MAX_TOKENIZER_NAME_BYTES, check_tokenizer_name, tokenizer_name};
pub use values::SettingValue;
pub use world_info::{
    BookNames, CharacterStrategy, MAX_BOOK_NAME_BYTES, MAX_BOOKS_PER_LIST, WI_BUDGET_CAP_MAX,
    WI_BUDGET_MAX, WI_BUDGET_MIN, WI_DEPTH_MAX, WI_MAX_RECURSION_STEPS_MAX,
    WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX, WI_MIN_ACTIVATIONS_MAX, book_names, check_book_name,
    optional_book_name,
};

// Settings, SettingsPatch, ApiSettings, FIELD_NAMES and their operations.
settings_table!(declare_settings);

impl Settings {
    /// Checks rules that span several fields: a PERCENT budget needs
    /// `max_context_tokens`; the HUGGING_FACE tokenizer needs
    /// `tokenizer_name`.
    pub fn validate(&self) -> Result<(), DomainError> {
        if self.inclusion.tokenizer == TokenizerKind::HuggingFace
            && self.inclusion.tokenizer_name.is_empty()
        {
            return Err(DomainError::invalid(
                "settings.tokenizer_name",
                "the HUGGING_FACE tokenizer needs a tokenizer_name",
            ));
        }
        if self.inclusion.message_recap_context_type == ContextType::Percent
            && self.inclusion.message_recap_context_limit.is_some()
            && self.inclusion.max_context_tokens.is_none()
        {
            return Err(DomainError::invalid(
                "message_recap_context_limit",
                "a PERCENT limit needs max_context_tokens",
            ));
        }
        Ok(())
    }

    /// The message-recap token budget: `None` when unlimited; for PERCENT,
    /// `floor(max_context_tokens * limit / 100)`.
    pub fn token_limit(&self) -> Option<u64> {
        let limit = self.inclusion.message_recap_context_limit?;
        match self.inclusion.message_recap_context_type {
            ContextType::Absolute => Some(limit),
            ContextType::Percent => {
                // validate() makes max_context_tokens present; treat a missing
                // one as a zero-sized context rather than panicking.
                let context = u128::from(self.inclusion.max_context_tokens.unwrap_or(0));
                let budget = context * u128::from(limit) / 100;
                Some(u64::try_from(budget).unwrap_or(u64::MAX))
            }
        }
    }

    /// Whether memory is enabled for a chat whose own state is `chat_state`:
    /// `use_global_toggle_state ? global_toggle_state : (chat_state ?? default_chat_enabled)`.
    pub fn chat_enabled(&self, chat_state: Option<bool>) -> bool {
        if self.chat.use_global_toggle_state {
            self.chat.global_toggle_state
        } else {
            chat_state.unwrap_or(self.chat.default_chat_enabled)
        }
    }
}

/// Checks a `profile` setting: empty (no profile), or a profile name
/// (the chat-id rules: at most 256 bytes, no control characters).
pub fn check_profile_name(name: String) -> Result<String, DomainError> {
    if !name.is_empty() {
        crate::ids::check_chat_id("settings.profile", &name)?;
    }
    Ok(name)
}

/// Checks a wire `depth`: 0..=[`MAX_DEPTH`]; errors name `depth`.
pub fn check_depth(value: i32) -> Result<u32, DomainError> {
    depth_in_range("depth")(value)
}

/// The check of a depth setting whose errors name `field`: 0..=[`MAX_DEPTH`].
pub fn depth_in_range(field: &'static str) -> impl Fn(i32) -> Result<u32, DomainError> {
    range(field, 0, MAX_DEPTH)
}

/// The one check of an integer setting whose errors name `field`:
/// `low..=high` (every feature's ranged settings use it).
pub fn range(field: &'static str, low: u32, high: u32) -> impl Fn(i32) -> Result<u32, DomainError> {
    move |value| {
        u32::try_from(value)
            .ok()
            .filter(|v| (low..=high).contains(v))
            .ok_or_else(|| {
                DomainError::invalid(field, format!("{value} is outside {low}..={high}"))
            })
    }
}

/// Checks a wire count or limit that must not be negative.
pub fn check_non_negative(field: &str, value: i64) -> Result<u64, DomainError> {
    non_negative(field)(value)
}

/// The check of a count or limit whose errors name `field`: not negative.
pub fn non_negative<W, T>(field: &str) -> impl Fn(W) -> Result<T, DomainError> + '_
where
    W: Copy + std::fmt::Display,
    T: TryFrom<W>,
{
    move |value| {
        T::try_from(value)
            .map_err(|_| DomainError::invalid(field, format!("{value} must not be negative")))
    }
}

/// Checks a wire `auto_hide_scene_count`: not negative.
pub fn check_scene_count(value: i32) -> Result<u32, DomainError> {
    non_negative("auto_hide_scene_count")(value)
}

/// Checks a wire `scene_break_min_messages`: 1..=1000.
pub fn check_min_messages(value: i32) -> Result<u32, DomainError> {
    in_range("settings.scene_break_min_messages", value, 1, 1000)
}

/// Checks a wire `message_recap_lag`: 0..=100.
pub fn check_message_recap_lag(value: i32) -> Result<u32, DomainError> {
    in_range("settings.message_recap_lag", value, 0, 100)
}

/// Checks a wire `running_recap_exclude_latest`: 0..=100.
pub fn check_exclude_latest(value: i32) -> Result<u32, DomainError> {
    in_range("settings.running_recap_exclude_latest", value, 0, 100)
}

/// Checks a wire `llm_max_tokens`: 1..=1000000.
pub fn check_llm_max_tokens(value: i64) -> Result<u64, DomainError> {
    u64::try_from(value)
        .ok()
        .filter(|v| (1..=1_000_000).contains(v))
        .ok_or_else(|| {
            DomainError::invalid(
                "settings.llm_max_tokens",
                format!("{value} is outside 1..=1000000"),
            )
        })
}

/// Checks a wire `llm_temperature`: a number in 0..=2, kept to thousandths.
pub fn check_temperature(value: f64) -> Result<Milli, DomainError> {
    milli_in_range("settings.llm_temperature", value, 2)
}

fn in_range(field: &'static str, value: i32, low: u32, high: u32) -> Result<u32, DomainError> {
    range(field, low, high)(value)
}

/// Checks a wire `running_recap_min_ratio`: a number in 0..=1, kept to
/// thousandths.
pub fn check_min_ratio(value: f64) -> Result<Milli, DomainError> {
    milli_in_range("settings.running_recap_min_ratio", value, 1)
}

/// `value` in thousandths when it is in `0..=max` (NaN is not); errors
/// name `field`.
fn milli_in_range(field: &str, value: f64, max: u32) -> Result<Milli, DomainError> {
    if !(0.0..=f64::from(max)).contains(&value) {
        return Err(DomainError::invalid(
            field,
            format!("{value} is outside 0..={max}"),
        ));
    }
    Ok(Milli((value * 1000.0).round() as u32))
}

/// A number kept in thousandths, so that settings compare exactly (the
/// API carries it as a decimal number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Milli(pub u32);

impl Milli {
    /// The number it stands for.
    pub fn value(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

/// Checks a wire `debounce_ms`: 0..=[`MAX_DEBOUNCE_MS`].
pub fn check_debounce_ms(value: i64) -> Result<u64, DomainError> {
    let ms = check_non_negative("debounce_ms", value)?;
    if ms > MAX_DEBOUNCE_MS {
        return Err(DomainError::invalid(
            "debounce_ms",
            format!("{ms} is over the maximum of {MAX_DEBOUNCE_MS}"),
        ));
    }
    Ok(ms)
}

#[cfg(test)]
mod tests;
