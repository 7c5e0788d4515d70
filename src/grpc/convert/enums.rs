//! Enum conversions between the wire and the domain. Wire enums carry
//! UNSPECIFIED, which requests never reach here with (see `enum_value`).

use super::pb;
use crate::domain::refresh::Trigger;
use crate::domain::settings::{
    CharacterStrategy, ContextType, MaxTokensField, Position, Role, StructuredOutput, TokenizerKind,
};

impl From<pb::InjectionPosition> for Position {
    fn from(p: pb::InjectionPosition) -> Self {
        match p {
            pb::InjectionPosition::None | pb::InjectionPosition::Unspecified => Position::None,
            pb::InjectionPosition::InPrompt => Position::InPrompt,
            pb::InjectionPosition::InChat => Position::InChat,
            pb::InjectionPosition::BeforePrompt => Position::BeforePrompt,
        }
    }
}

impl From<Position> for pb::InjectionPosition {
    fn from(p: Position) -> Self {
        match p {
            Position::None => pb::InjectionPosition::None,
            Position::InPrompt => pb::InjectionPosition::InPrompt,
            Position::InChat => pb::InjectionPosition::InChat,
            Position::BeforePrompt => pb::InjectionPosition::BeforePrompt,
        }
    }
}

impl From<pb::InjectionRole> for Role {
    fn from(r: pb::InjectionRole) -> Self {
        match r {
            pb::InjectionRole::System | pb::InjectionRole::Unspecified => Role::System,
            pb::InjectionRole::User => Role::User,
            pb::InjectionRole::Assistant => Role::Assistant,
        }
    }
}

impl From<Role> for pb::InjectionRole {
    fn from(r: Role) -> Self {
        match r {
            Role::System => pb::InjectionRole::System,
            Role::User => pb::InjectionRole::User,
            Role::Assistant => pb::InjectionRole::Assistant,
        }
    }
}

impl From<pb::RecapContextType> for ContextType {
    fn from(t: pb::RecapContextType) -> Self {
        match t {
            pb::RecapContextType::Percent => ContextType::Percent,
            pb::RecapContextType::Absolute | pb::RecapContextType::Unspecified => {
                ContextType::Absolute
            }
        }
    }
}

impl From<ContextType> for pb::RecapContextType {
    fn from(t: ContextType) -> Self {
        match t {
            ContextType::Percent => pb::RecapContextType::Percent,
            ContextType::Absolute => pb::RecapContextType::Absolute,
        }
    }
}

impl From<pb::Tokenizer> for TokenizerKind {
    fn from(t: pb::Tokenizer) -> Self {
        match t {
            pb::Tokenizer::O200kBase | pb::Tokenizer::Unspecified => TokenizerKind::O200kBase,
            pb::Tokenizer::Cl100kBase => TokenizerKind::Cl100kBase,
            pb::Tokenizer::P50kBase => TokenizerKind::P50kBase,
            pb::Tokenizer::R50kBase => TokenizerKind::R50kBase,
            pb::Tokenizer::HuggingFace => TokenizerKind::HuggingFace,
            pb::Tokenizer::LlmEndpoint => TokenizerKind::LlmEndpoint,
        }
    }
}

impl From<TokenizerKind> for pb::Tokenizer {
    fn from(t: TokenizerKind) -> Self {
        match t {
            TokenizerKind::O200kBase => pb::Tokenizer::O200kBase,
            TokenizerKind::Cl100kBase => pb::Tokenizer::Cl100kBase,
            TokenizerKind::P50kBase => pb::Tokenizer::P50kBase,
            TokenizerKind::R50kBase => pb::Tokenizer::R50kBase,
            TokenizerKind::HuggingFace => pb::Tokenizer::HuggingFace,
            TokenizerKind::LlmEndpoint => pb::Tokenizer::LlmEndpoint,
        }
    }
}

impl From<pb::StructuredOutput> for StructuredOutput {
    fn from(s: pb::StructuredOutput) -> Self {
        match s {
            pb::StructuredOutput::Auto | pb::StructuredOutput::Unspecified => {
                StructuredOutput::Auto
            }
            pb::StructuredOutput::JsonSchema => StructuredOutput::JsonSchema,
            pb::StructuredOutput::JsonObject => StructuredOutput::JsonObject,
            pb::StructuredOutput::Off => StructuredOutput::Off,
        }
    }
}

impl From<StructuredOutput> for pb::StructuredOutput {
    fn from(s: StructuredOutput) -> Self {
        match s {
            StructuredOutput::Auto => pb::StructuredOutput::Auto,
            StructuredOutput::JsonSchema => pb::StructuredOutput::JsonSchema,
            StructuredOutput::JsonObject => pb::StructuredOutput::JsonObject,
            StructuredOutput::Off => pb::StructuredOutput::Off,
        }
    }
}

impl From<pb::MaxTokensField> for MaxTokensField {
    fn from(f: pb::MaxTokensField) -> Self {
        match f {
            pb::MaxTokensField::Auto | pb::MaxTokensField::Unspecified => MaxTokensField::Auto,
            pb::MaxTokensField::MaxTokens => MaxTokensField::MaxTokens,
            pb::MaxTokensField::MaxCompletionTokens => MaxTokensField::MaxCompletionTokens,
        }
    }
}

impl From<MaxTokensField> for pb::MaxTokensField {
    fn from(f: MaxTokensField) -> Self {
        match f {
            MaxTokensField::Auto => pb::MaxTokensField::Auto,
            MaxTokensField::MaxTokens => pb::MaxTokensField::MaxTokens,
            MaxTokensField::MaxCompletionTokens => pb::MaxTokensField::MaxCompletionTokens,
        }
    }
}

impl From<pb::WorldInfoCharacterStrategy> for CharacterStrategy {
    fn from(s: pb::WorldInfoCharacterStrategy) -> Self {
        match s {
            pb::WorldInfoCharacterStrategy::Evenly => CharacterStrategy::Evenly,
            pb::WorldInfoCharacterStrategy::CharacterFirst
            | pb::WorldInfoCharacterStrategy::Unspecified => CharacterStrategy::CharacterFirst,
            pb::WorldInfoCharacterStrategy::GlobalFirst => CharacterStrategy::GlobalFirst,
        }
    }
}

impl From<CharacterStrategy> for pb::WorldInfoCharacterStrategy {
    fn from(s: CharacterStrategy) -> Self {
        match s {
            CharacterStrategy::Evenly => pb::WorldInfoCharacterStrategy::Evenly,
            CharacterStrategy::CharacterFirst => pb::WorldInfoCharacterStrategy::CharacterFirst,
            CharacterStrategy::GlobalFirst => pb::WorldInfoCharacterStrategy::GlobalFirst,
        }
    }
}

impl From<Trigger> for pb::RefreshTrigger {
    fn from(t: Trigger) -> Self {
        match t {
            Trigger::ChatChanged => pb::RefreshTrigger::ChatChanged,
            Trigger::MessageSent => pb::RefreshTrigger::MessageSent,
            Trigger::MessageReceived => pb::RefreshTrigger::MessageReceived,
            Trigger::MessageEdited => pb::RefreshTrigger::MessageEdited,
            Trigger::MessageDeleted => pb::RefreshTrigger::MessageDeleted,
            Trigger::MessageSwiped => pb::RefreshTrigger::MessageSwiped,
            Trigger::MoreMessagesLoaded => pb::RefreshTrigger::MoreMessagesLoaded,
            Trigger::RefreshRequested => pb::RefreshTrigger::RefreshRequested,
            Trigger::MessageDataChanged => pb::RefreshTrigger::MessageDataChanged,
            Trigger::SettingsChanged => pb::RefreshTrigger::SettingsChanged,
            Trigger::RunningRecapChanged => pb::RefreshTrigger::RunningRecapChanged,
            Trigger::Startup => pb::RefreshTrigger::Startup,
            Trigger::RecapGenerated => pb::RefreshTrigger::RecapGenerated,
            Trigger::RecallIndexed => pb::RefreshTrigger::RecallIndexed,
            Trigger::TokensCounted => pb::RefreshTrigger::TokensCounted,
            Trigger::RecallSearched => pb::RefreshTrigger::RecallSearched,
            Trigger::ChatDeleted => pb::RefreshTrigger::ChatDeleted,
        }
    }
}
