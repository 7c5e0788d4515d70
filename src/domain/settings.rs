//! Settings: their defaults, the checks on every value, and how global
//! settings and a chat's overrides combine into the effective settings.

use serde::{Deserialize, Serialize};

use super::DomainError;

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

/// A tiktoken vocabulary.
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
}

/// Deepest accepted `depth` (SillyTavern's MAX_INJECTION_DEPTH).
pub const MAX_DEPTH: u32 = 1000;
/// Longest accepted `debounce_ms`: one hour.
pub const MAX_DEBOUNCE_MS: u64 = 3_600_000;

/// The seeds' default running-recap template.
pub const DEFAULT_TEMPLATE: &str = "# Story Memory\n\nThe following is a cumulative memory of key scenes and developments from the roleplay so far.\n\n{{running_recap}}";

/// The message-recap tier's default template.
pub const DEFAULT_MESSAGE_RECAPS_TEMPLATE: &str = "# Recent Events\n\n{{message_recaps}}";

/// Fully resolved settings: what a refresh of one chat runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Injection position.
    pub position: Position,
    /// Injection depth, 0..=[`MAX_DEPTH`]; matters only for IN_CHAT.
    pub depth: u32,
    /// Injection role.
    pub role: Role,
    /// Whether World Info scans the injection.
    pub scan: bool,
    /// The running-recap template; `{{running_recap}}` is replaced.
    pub template: String,
    /// Whether user messages can be included.
    pub include_user_messages: bool,
    /// Whether hidden messages can be included.
    pub include_system_messages: bool,
    /// Whether narrator messages can be included.
    pub include_narrator_messages: bool,
    /// Messages whose text has fewer tokens are excluded.
    pub message_length_threshold: u64,
    /// Token budget for message recaps; `None` is no limit.
    pub message_recap_context_limit: Option<u64>,
    /// How the budget is read.
    pub message_recap_context_type: ContextType,
    /// The model's context size, needed by PERCENT budgets.
    pub max_context_tokens: Option<u64>,
    /// Vocabulary for every token count of the chat.
    pub tokenizer: TokenizerKind,
    /// Auto-hide keeps this many scenes visible; 0 disables auto-hide.
    pub auto_hide_scene_count: u32,
    /// Whether `prefill` is put in front of a message's memory.
    pub show_prefill: bool,
    /// Enabled state of a chat that has no state of its own.
    pub default_chat_enabled: bool,
    /// When true, `global_toggle_state` decides for every chat.
    pub use_global_toggle_state: bool,
    /// The global on/off switch, used when `use_global_toggle_state` is on.
    pub global_toggle_state: bool,
    /// Characters whose messages are excluded (group chats).
    pub disabled_character_keys: Vec<String>,
    /// Quiet time before a debounced refresh runs; 0 makes it immediate.
    pub debounce_ms: u64,
    /// Whether the message-recap tier (`auto_recap_messages`) is injected.
    pub message_recaps_enabled: bool,
    /// The message-recap tier's position.
    pub message_recaps_position: Position,
    /// The message-recap tier's depth, for IN_CHAT.
    pub message_recaps_depth: u32,
    /// The message-recap tier's role.
    pub message_recaps_role: Role,
    /// Whether World Info scans the message-recap tier.
    pub message_recaps_scan: bool,
    /// The message-recap tier's template; `{{message_recaps}}` is replaced
    /// by the included recaps, oldest first, one per line.
    pub message_recaps_template: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            position: Position::BeforePrompt,
            depth: 2,
            role: Role::System,
            scan: false,
            template: DEFAULT_TEMPLATE.to_owned(),
            include_user_messages: true,
            include_system_messages: true,
            include_narrator_messages: true,
            message_length_threshold: 0,
            message_recap_context_limit: None,
            message_recap_context_type: ContextType::Absolute,
            max_context_tokens: None,
            tokenizer: TokenizerKind::O200kBase,
            auto_hide_scene_count: 2,
            show_prefill: false,
            default_chat_enabled: true,
            use_global_toggle_state: false,
            global_toggle_state: true,
            disabled_character_keys: Vec::new(),
            debounce_ms: 300,
            message_recaps_enabled: false,
            message_recaps_position: Position::InChat,
            message_recaps_depth: 4,
            message_recaps_role: Role::System,
            message_recaps_scan: false,
            message_recaps_template: DEFAULT_MESSAGE_RECAPS_TEMPLATE.to_owned(),
        }
    }
}

impl Settings {
    /// These settings with every field present in `patch` replaced.
    pub fn with(&self, patch: &SettingsPatch) -> Settings {
        let SettingsPatch {
            position,
            depth,
            role,
            scan,
            template,
            include_user_messages,
            include_system_messages,
            include_narrator_messages,
            message_length_threshold,
            message_recap_context_limit,
            message_recap_context_type,
            max_context_tokens,
            tokenizer,
            auto_hide_scene_count,
            show_prefill,
            default_chat_enabled,
            use_global_toggle_state,
            global_toggle_state,
            disabled_character_keys,
            debounce_ms,
            message_recaps_enabled,
            message_recaps_position,
            message_recaps_depth,
            message_recaps_role,
            message_recaps_scan,
            message_recaps_template,
        } = patch;
        let base = self.clone();
        Settings {
            position: position.unwrap_or(base.position),
            depth: depth.unwrap_or(base.depth),
            role: role.unwrap_or(base.role),
            scan: scan.unwrap_or(base.scan),
            template: template.clone().unwrap_or(base.template),
            include_user_messages: include_user_messages.unwrap_or(base.include_user_messages),
            include_system_messages: include_system_messages
                .unwrap_or(base.include_system_messages),
            include_narrator_messages: include_narrator_messages
                .unwrap_or(base.include_narrator_messages),
            message_length_threshold: message_length_threshold
                .unwrap_or(base.message_length_threshold),
            message_recap_context_limit: message_recap_context_limit
                .or(base.message_recap_context_limit),
            message_recap_context_type: message_recap_context_type
                .unwrap_or(base.message_recap_context_type),
            max_context_tokens: max_context_tokens.or(base.max_context_tokens),
            tokenizer: tokenizer.unwrap_or(base.tokenizer),
            auto_hide_scene_count: auto_hide_scene_count.unwrap_or(base.auto_hide_scene_count),
            show_prefill: show_prefill.unwrap_or(base.show_prefill),
            default_chat_enabled: default_chat_enabled.unwrap_or(base.default_chat_enabled),
            use_global_toggle_state: use_global_toggle_state
                .unwrap_or(base.use_global_toggle_state),
            global_toggle_state: global_toggle_state.unwrap_or(base.global_toggle_state),
            disabled_character_keys: disabled_character_keys
                .clone()
                .unwrap_or(base.disabled_character_keys),
            debounce_ms: debounce_ms.unwrap_or(base.debounce_ms),
            message_recaps_enabled: message_recaps_enabled.unwrap_or(base.message_recaps_enabled),
            message_recaps_position: message_recaps_position
                .unwrap_or(base.message_recaps_position),
            message_recaps_depth: message_recaps_depth.unwrap_or(base.message_recaps_depth),
            message_recaps_role: message_recaps_role.unwrap_or(base.message_recaps_role),
            message_recaps_scan: message_recaps_scan.unwrap_or(base.message_recaps_scan),
            message_recaps_template: message_recaps_template
                .clone()
                .unwrap_or(base.message_recaps_template),
        }
    }

    /// Checks rules that span several fields: a PERCENT budget needs
    /// `max_context_tokens`.
    pub fn validate(&self) -> Result<(), DomainError> {
        if self.message_recap_context_type == ContextType::Percent
            && self.message_recap_context_limit.is_some()
            && self.max_context_tokens.is_none()
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
        let limit = self.message_recap_context_limit?;
        match self.message_recap_context_type {
            ContextType::Absolute => Some(limit),
            ContextType::Percent => {
                // validate() makes max_context_tokens present; treat a missing
                // one as a zero-sized context rather than panicking.
                let context = u128::from(self.max_context_tokens.unwrap_or(0));
                let budget = context * u128::from(limit) / 100;
                Some(u64::try_from(budget).unwrap_or(u64::MAX))
            }
        }
    }

    /// Whether memory is enabled for a chat whose own state is `chat_state`:
    /// `use_global_toggle_state ? global_toggle_state : (chat_state ?? default_chat_enabled)`.
    pub fn chat_enabled(&self, chat_state: Option<bool>) -> bool {
        if self.use_global_toggle_state {
            self.global_toggle_state
        } else {
            chat_state.unwrap_or(self.default_chat_enabled)
        }
    }
}

/// A partial update of [`Settings`]: `None` leaves a field as it is. Stored
/// as the global settings (over the defaults) and as a chat's overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)] // each field is the Settings field of the same name
pub struct SettingsPatch {
    pub position: Option<Position>,
    pub depth: Option<u32>,
    pub role: Option<Role>,
    pub scan: Option<bool>,
    pub template: Option<String>,
    pub include_user_messages: Option<bool>,
    pub include_system_messages: Option<bool>,
    pub include_narrator_messages: Option<bool>,
    pub message_length_threshold: Option<u64>,
    pub message_recap_context_limit: Option<u64>,
    pub message_recap_context_type: Option<ContextType>,
    pub max_context_tokens: Option<u64>,
    pub tokenizer: Option<TokenizerKind>,
    pub auto_hide_scene_count: Option<u32>,
    pub show_prefill: Option<bool>,
    pub default_chat_enabled: Option<bool>,
    pub use_global_toggle_state: Option<bool>,
    pub global_toggle_state: Option<bool>,
    pub disabled_character_keys: Option<Vec<String>>,
    pub debounce_ms: Option<u64>,
    pub message_recaps_enabled: Option<bool>,
    pub message_recaps_position: Option<Position>,
    pub message_recaps_depth: Option<u32>,
    pub message_recaps_role: Option<Role>,
    pub message_recaps_scan: Option<bool>,
    pub message_recaps_template: Option<String>,
}

/// The names of the settings fields, as spelled in the API, in field order.
pub const FIELD_NAMES: [&str; 26] = [
    "position",
    "depth",
    "role",
    "scan",
    "template",
    "include_user_messages",
    "include_system_messages",
    "include_narrator_messages",
    "message_length_threshold",
    "message_recap_context_limit",
    "message_recap_context_type",
    "max_context_tokens",
    "tokenizer",
    "auto_hide_scene_count",
    "show_prefill",
    "default_chat_enabled",
    "use_global_toggle_state",
    "global_toggle_state",
    "disabled_character_keys",
    "debounce_ms",
    "message_recaps_enabled",
    "message_recaps_position",
    "message_recaps_depth",
    "message_recaps_role",
    "message_recaps_scan",
    "message_recaps_template",
];

impl SettingsPatch {
    /// Layers `update` over this patch: fields present in `update` win.
    pub fn merge(&mut self, update: &SettingsPatch) {
        macro_rules! take {
            ($($field:ident),*) => {
                let SettingsPatch { $($field),* } = update;
                $(if $field.is_some() { self.$field = $field.clone(); })*
            };
        }
        take!(
            position,
            depth,
            role,
            scan,
            template,
            include_user_messages,
            include_system_messages,
            include_narrator_messages,
            message_length_threshold,
            message_recap_context_limit,
            message_recap_context_type,
            max_context_tokens,
            tokenizer,
            auto_hide_scene_count,
            show_prefill,
            default_chat_enabled,
            use_global_toggle_state,
            global_toggle_state,
            disabled_character_keys,
            debounce_ms,
            message_recaps_enabled,
            message_recaps_position,
            message_recaps_depth,
            message_recaps_role,
            message_recaps_scan,
            message_recaps_template
        );
    }

    /// Removes the field named `name` (one of [`FIELD_NAMES`]) from the patch.
    pub fn clear(&mut self, name: &str) -> Result<(), DomainError> {
        match name {
            "position" => self.position = None,
            "depth" => self.depth = None,
            "role" => self.role = None,
            "scan" => self.scan = None,
            "template" => self.template = None,
            "include_user_messages" => self.include_user_messages = None,
            "include_system_messages" => self.include_system_messages = None,
            "include_narrator_messages" => self.include_narrator_messages = None,
            "message_length_threshold" => self.message_length_threshold = None,
            "message_recap_context_limit" => self.message_recap_context_limit = None,
            "message_recap_context_type" => self.message_recap_context_type = None,
            "max_context_tokens" => self.max_context_tokens = None,
            "tokenizer" => self.tokenizer = None,
            "auto_hide_scene_count" => self.auto_hide_scene_count = None,
            "show_prefill" => self.show_prefill = None,
            "default_chat_enabled" => self.default_chat_enabled = None,
            "use_global_toggle_state" => self.use_global_toggle_state = None,
            "global_toggle_state" => self.global_toggle_state = None,
            "disabled_character_keys" => self.disabled_character_keys = None,
            "debounce_ms" => self.debounce_ms = None,
            "message_recaps_enabled" => self.message_recaps_enabled = None,
            "message_recaps_position" => self.message_recaps_position = None,
            "message_recaps_depth" => self.message_recaps_depth = None,
            "message_recaps_role" => self.message_recaps_role = None,
            "message_recaps_scan" => self.message_recaps_scan = None,
            "message_recaps_template" => self.message_recaps_template = None,
            other => {
                return Err(DomainError::invalid(
                    "clear",
                    format!("{other:?} is not a settings field"),
                ));
            }
        }
        Ok(())
    }
}

/// Checks a wire `depth`: 0..=[`MAX_DEPTH`].
pub fn check_depth(value: i32) -> Result<u32, DomainError> {
    u32::try_from(value)
        .ok()
        .filter(|d| *d <= MAX_DEPTH)
        .ok_or_else(|| DomainError::invalid("depth", format!("{value} is outside 0..={MAX_DEPTH}")))
}

/// Checks a wire count or limit that must not be negative.
pub fn check_non_negative(field: &str, value: i64) -> Result<u64, DomainError> {
    u64::try_from(value)
        .map_err(|_| DomainError::invalid(field, format!("{value} must not be negative")))
}

/// Checks a wire `auto_hide_scene_count`: not negative.
pub fn check_scene_count(value: i32) -> Result<u32, DomainError> {
    u32::try_from(value).map_err(|_| {
        DomainError::invalid(
            "auto_hide_scene_count",
            format!("{value} must not be negative"),
        )
    })
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
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_table() {
        let s = Settings::default();
        assert_eq!(s.position, Position::BeforePrompt);
        assert_eq!(s.depth, 2);
        assert_eq!(s.role, Role::System);
        assert!(!s.scan);
        assert!(s.template.starts_with("# Story Memory"));
        assert!(s.template.ends_with("{{running_recap}}"));
        assert!(
            s.include_user_messages && s.include_system_messages && s.include_narrator_messages
        );
        assert_eq!(s.message_length_threshold, 0);
        assert_eq!(s.token_limit(), None);
        assert_eq!(s.auto_hide_scene_count, 2);
        assert!(!s.show_prefill);
        assert!(s.default_chat_enabled && !s.use_global_toggle_state && s.global_toggle_state);
        assert_eq!(s.tokenizer, TokenizerKind::O200kBase);
        assert_eq!(s.debounce_ms, 300);
    }

    #[test]
    fn percent_limit_is_floored_share_of_the_context() {
        let s = Settings::default().with(&SettingsPatch {
            message_recap_context_limit: Some(15),
            message_recap_context_type: Some(ContextType::Percent),
            max_context_tokens: Some(1001),
            ..Default::default()
        });
        assert_eq!(s.token_limit(), Some(150)); // floor(1001 * 15 / 100) = 150
        let absolute = s.with(&SettingsPatch {
            message_recap_context_type: Some(ContextType::Absolute),
            ..Default::default()
        });
        assert_eq!(absolute.token_limit(), Some(15));
    }

    #[test]
    fn percent_limit_without_context_size_is_invalid() {
        let s = Settings::default().with(&SettingsPatch {
            message_recap_context_limit: Some(10),
            message_recap_context_type: Some(ContextType::Percent),
            ..Default::default()
        });
        let err = s.validate().unwrap_err();
        assert!(err.to_string().contains("max_context_tokens"), "{err}");
        // A PERCENT type without a limit is still "no limit", which is fine.
        let no_limit = Settings::default().with(&SettingsPatch {
            message_recap_context_type: Some(ContextType::Percent),
            ..Default::default()
        });
        assert!(no_limit.validate().is_ok());
        assert_eq!(no_limit.token_limit(), None);
    }

    #[test]
    fn enabled_follows_global_toggle_then_chat_then_default() {
        let s = Settings::default();
        assert!(s.chat_enabled(None));
        assert!(!s.chat_enabled(Some(false)));
        let default_off = s.with(&SettingsPatch {
            default_chat_enabled: Some(false),
            ..Default::default()
        });
        assert!(!default_off.chat_enabled(None));
        assert!(default_off.chat_enabled(Some(true)));
        let global_off = s.with(&SettingsPatch {
            use_global_toggle_state: Some(true),
            global_toggle_state: Some(false),
            ..Default::default()
        });
        assert!(!global_off.chat_enabled(Some(true)));
    }

    #[test]
    fn merge_keeps_absent_fields_and_clear_removes_one() {
        let mut patch = SettingsPatch {
            depth: Some(4),
            scan: Some(true),
            ..Default::default()
        };
        patch.merge(&SettingsPatch {
            depth: Some(7),
            disabled_character_keys: Some(vec![]),
            ..Default::default()
        });
        assert_eq!(patch.depth, Some(7));
        assert_eq!(patch.scan, Some(true));
        assert_eq!(patch.disabled_character_keys, Some(vec![]));
        patch.clear("scan").unwrap();
        assert_eq!(patch.scan, None);
        for name in FIELD_NAMES {
            patch.clear(name).unwrap();
        }
        assert_eq!(patch, SettingsPatch::default());
        assert!(patch.clear("colour").is_err());
    }

    #[test]
    fn range_checks_name_their_field() {
        assert_eq!(check_depth(0), Ok(0));
        assert_eq!(check_depth(1000), Ok(1000));
        assert!(check_depth(1001).unwrap_err().to_string().contains("depth"));
        assert!(check_depth(-1).is_err());
        assert!(check_non_negative("max_context_tokens", -5).is_err());
        assert!(check_scene_count(-1).is_err());
        assert_eq!(check_debounce_ms(0), Ok(0));
        assert!(check_debounce_ms(3_600_001).is_err());
    }
}
