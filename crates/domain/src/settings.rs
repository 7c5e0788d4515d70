//! Settings: their defaults, the checks on every value, and how global
//! settings and a chat's overrides combine into the effective settings.
//!
//! Every setting is declared once, in the table of `settings/fields.rs`
//! (which says how to add one); [`Settings`], [`SettingsPatch`],
//! [`ApiSettings`] and their field-by-field operations are generated from
//! it by `settings/declare.rs`. What spans several fields
//! ([`Settings::validate`], [`Settings::token_limit`],
//! [`Settings::chat_enabled`]) is written here by hand.

use serde::{Deserialize, Serialize};

use super::DomainError;
pub use super::writing::instructions::{
    DEFAULT_MESSAGE_RECAP_PROMPT, DEFAULT_RUNNING_RECAP_PROMPT, DEFAULT_SCENE_BREAK_PROMPT,
    DEFAULT_SCENE_RECAP_PROMPT,
};

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

mod declare;
mod fields;
mod values;

pub use crate::settings_table;
use declare::{checked, declare_settings};
pub use values::SettingValue;

// Settings, SettingsPatch, ApiSettings, FIELD_NAMES and their operations.
settings_table!(declare_settings);

impl Settings {
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

/// Checks a wire `depth`: 0..=[`MAX_DEPTH`]; errors name `depth`.
pub fn check_depth(value: i32) -> Result<u32, DomainError> {
    depth_in_range("depth")(value)
}

/// The check of a depth setting whose errors name `field`: 0..=[`MAX_DEPTH`].
pub fn depth_in_range(field: &'static str) -> impl Fn(i32) -> Result<u32, DomainError> {
    move |value| {
        u32::try_from(value)
            .ok()
            .filter(|d| *d <= MAX_DEPTH)
            .ok_or_else(|| {
                DomainError::invalid(field, format!("{value} is outside 0..={MAX_DEPTH}"))
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
    if !(0.0..=2.0).contains(&value) {
        return Err(DomainError::invalid(
            "settings.llm_temperature",
            format!("{value} is outside 0..=2"),
        ));
    }
    Ok(Milli((value * 1000.0).round() as u32))
}

fn in_range(field: &str, value: i32, low: u32, high: u32) -> Result<u32, DomainError> {
    u32::try_from(value)
        .ok()
        .filter(|v| (low..=high).contains(v))
        .ok_or_else(|| DomainError::invalid(field, format!("{value} is outside {low}..={high}")))
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
mod tests {
    use super::*;

    /// The stored JSON of two patches as written by recapd before the
    /// settings table existed (captured from that code): the key order,
    /// the `null`s and the enum spellings are what databases hold.
    const STORED_FULL: &str = concat!(
        r#"{"position":"InChat","#,
        r#""depth":7,"#,
        r#""role":"User","#,
        r#""scan":true,"#,
        r#""template":"T {{running_recap}}","#,
        r#""include_user_messages":false,"#,
        r#""include_system_messages":true,"#,
        r#""include_narrator_messages":false,"#,
        r#""message_length_threshold":3,"#,
        r#""message_recap_context_limit":15,"#,
        r#""message_recap_context_type":"Percent","#,
        r#""max_context_tokens":1001,"#,
        r#""tokenizer":"Cl100kBase","#,
        r#""auto_hide_scene_count":0,"#,
        r#""show_prefill":true,"#,
        r#""default_chat_enabled":false,"#,
        r#""use_global_toggle_state":true,"#,
        r#""global_toggle_state":false,"#,
        r#""disabled_character_keys":["alice","bob"],"#,
        r#""debounce_ms":0,"#,
        r#""message_recaps_enabled":true,"#,
        r#""message_recaps_position":"BeforePrompt","#,
        r#""message_recaps_depth":9,"#,
        r#""message_recaps_role":"Assistant","#,
        r#""message_recaps_scan":true,"#,
        r#""message_recaps_template":"R {{message_recaps}}"}"#,
    );
    const STORED_SPARSE: &str = concat!(
        r#"{"position":null,"#,
        r#""depth":4,"#,
        r#""role":null,"#,
        r#""scan":null,"#,
        r#""template":null,"#,
        r#""include_user_messages":null,"#,
        r#""include_system_messages":null,"#,
        r#""include_narrator_messages":null,"#,
        r#""message_length_threshold":null,"#,
        r#""message_recap_context_limit":null,"#,
        r#""message_recap_context_type":null,"#,
        r#""max_context_tokens":null,"#,
        r#""tokenizer":"R50kBase","#,
        r#""auto_hide_scene_count":null,"#,
        r#""show_prefill":null,"#,
        r#""default_chat_enabled":null,"#,
        r#""use_global_toggle_state":null,"#,
        r#""global_toggle_state":null,"#,
        r#""disabled_character_keys":[],"#,
        r#""debounce_ms":null,"#,
        r#""message_recaps_enabled":null,"#,
        r#""message_recaps_position":null,"#,
        r#""message_recaps_depth":null,"#,
        r#""message_recaps_role":null,"#,
        r#""message_recaps_scan":null,"#,
        r#""message_recaps_template":null}"#,
    );

    /// `json` re-serialised, minus the `null` keys of settings added after
    /// it was written (a new setting is stored as one more `null` key).
    fn reserialised(patch: &SettingsPatch, json: &str) -> String {
        let mut text = serde_json::to_string(patch).unwrap();
        for name in FIELD_NAMES {
            if !json.contains(&format!("\"{name}\":")) {
                text = text.replace(&format!(",\"{name}\":null"), "");
            }
        }
        text
    }

    #[test]
    // `..Default::default()` covers settings added after the capture,
    // which such rows leave absent.
    #[allow(clippy::needless_update)]
    fn stored_patches_read_back_the_same_and_write_identically() {
        let full: SettingsPatch = serde_json::from_str(STORED_FULL).unwrap();
        assert_eq!(
            full,
            SettingsPatch {
                position: Some(Position::InChat),
                depth: Some(7),
                role: Some(Role::User),
                scan: Some(true),
                template: Some("T {{running_recap}}".into()),
                include_user_messages: Some(false),
                include_system_messages: Some(true),
                include_narrator_messages: Some(false),
                message_length_threshold: Some(3),
                message_recap_context_limit: Some(15),
                message_recap_context_type: Some(ContextType::Percent),
                max_context_tokens: Some(1001),
                tokenizer: Some(TokenizerKind::Cl100kBase),
                auto_hide_scene_count: Some(0),
                show_prefill: Some(true),
                default_chat_enabled: Some(false),
                use_global_toggle_state: Some(true),
                global_toggle_state: Some(false),
                disabled_character_keys: Some(vec!["alice".into(), "bob".into()]),
                debounce_ms: Some(0),
                message_recaps_enabled: Some(true),
                message_recaps_position: Some(Position::BeforePrompt),
                message_recaps_depth: Some(9),
                message_recaps_role: Some(Role::Assistant),
                message_recaps_scan: Some(true),
                message_recaps_template: Some("R {{message_recaps}}".into()),
                ..Default::default()
            }
        );
        assert_eq!(reserialised(&full, STORED_FULL), STORED_FULL);

        let sparse: SettingsPatch = serde_json::from_str(STORED_SPARSE).unwrap();
        assert_eq!(
            sparse,
            SettingsPatch {
                depth: Some(4),
                tokenizer: Some(TokenizerKind::R50kBase),
                disabled_character_keys: Some(vec![]),
                ..Default::default()
            }
        );
        assert_eq!(reserialised(&sparse, STORED_SPARSE), STORED_SPARSE);

        // Keys missing from older rows read as absent.
        let short: SettingsPatch = serde_json::from_str(r#"{"depth":3}"#).unwrap();
        assert_eq!(
            short,
            SettingsPatch {
                depth: Some(3),
                ..Default::default()
            }
        );
    }

    #[test]
    fn every_setting_passes_through_the_api_form() {
        let full: SettingsPatch = serde_json::from_str(STORED_FULL).unwrap();
        let settings = Settings::default().with(&full);
        let back = SettingsPatch::from_api(settings.to_api()).unwrap();
        assert_eq!(Settings::default().with(&back), settings);
        // Unset optional settings stay absent.
        let api = Settings::default().to_api();
        assert_eq!(
            (api.max_context_tokens, api.message_recap_context_limit),
            (None, None)
        );
    }

    #[test]
    fn api_checks_name_the_field_as_before() {
        let refused = |api: ApiSettings| SettingsPatch::from_api(api).unwrap_err().to_string();
        for (api, message) in [
            (
                ApiSettings {
                    depth: Some(-1),
                    ..Default::default()
                },
                "invalid depth: -1 is outside 0..=1000",
            ),
            (
                ApiSettings {
                    message_recaps_depth: Some(1001),
                    ..Default::default()
                },
                "invalid settings.message_recaps_depth: 1001 is outside 0..=1000",
            ),
            (
                ApiSettings {
                    max_context_tokens: Some(-3),
                    ..Default::default()
                },
                "invalid settings.max_context_tokens: -3 must not be negative",
            ),
            (
                ApiSettings {
                    auto_hide_scene_count: Some(-2),
                    ..Default::default()
                },
                "invalid auto_hide_scene_count: -2 must not be negative",
            ),
            (
                ApiSettings {
                    debounce_ms: Some(3_600_001),
                    ..Default::default()
                },
                "invalid debounce_ms: 3600001 is over the maximum of 3600000",
            ),
        ] {
            assert_eq!(refused(api), message);
        }
    }

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
