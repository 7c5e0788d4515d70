//! Settings between the wire (`pb::Settings`) and the domain, generated from
//! the settings table (`domain::settings::settings_table!`). Both directions
//! name every field of `pb::Settings` (a destructuring and a struct literal
//! without `..`), so a proto field without a table row, or a row without a
//! proto field, does not compile.

use super::{enum_value, pb};
use crate::domain::DomainError;
use crate::domain::settings::{
    ApiSettings, BookNames, CharacterStrategy, ChatIds, ContextType, EntityTypes, MaxTokensField,
    Position, Role, Settings, SettingsPatch, StructuredOutput, TokenizerKind, settings_table,
};

/// A setting's API form ([`crate::domain::settings::SettingValue::Api`])
/// and the type of its proto field (inside the field's `Option`).
trait Wire: Sized {
    /// The proto field's type.
    type Pb;
    /// Reads a present proto field; errors name `field` (`settings.NAME`).
    fn from_pb(field: &str, value: Self::Pb) -> Result<Self, DomainError>;
    /// The proto field's value.
    fn into_pb(self) -> Self::Pb;
}

/// Types the proto carries as they are (range checks are the domain's).
macro_rules! wire_as_is {
    ($($ty:ty),*) => {$(
        impl Wire for $ty {
            type Pb = $ty;
            fn from_pb(_field: &str, value: $ty) -> Result<$ty, DomainError> {
                Ok(value)
            }
            fn into_pb(self) -> $ty {
                self
            }
        }
    )*};
}
wire_as_is!(bool, i32, i64, f64, String);

/// Domain enums carried as a proto enum's number: UNSPECIFIED and unknown
/// numbers are refused.
macro_rules! wire_enums {
    ($($domain:ty => $proto:ty),*) => {$(
        impl Wire for $domain {
            type Pb = i32;
            fn from_pb(field: &str, value: i32) -> Result<$domain, DomainError> {
                enum_value::<$proto>(field, value).map(<$domain>::from)
            }
            fn into_pb(self) -> i32 {
                <$proto>::from(self).into()
            }
        }
    )*};
}
wire_enums!(
    Position => pb::InjectionPosition,
    Role => pb::InjectionRole,
    ContextType => pb::RecapContextType,
    TokenizerKind => pb::Tokenizer,
    StructuredOutput => pb::StructuredOutput,
    MaxTokensField => pb::MaxTokensField,
    CharacterStrategy => pb::WorldInfoCharacterStrategy
);

/// A list is a message on the wire so that an empty list can be present.
impl Wire for Vec<String> {
    type Pb = pb::CharacterKeys;
    fn from_pb(_field: &str, value: pb::CharacterKeys) -> Result<Self, DomainError> {
        let pb::CharacterKeys { keys } = value;
        Ok(keys)
    }
    fn into_pb(self) -> pb::CharacterKeys {
        pb::CharacterKeys { keys: self }
    }
}

/// A list of lorebook names is a message on the wire, for the same reason.
impl Wire for BookNames {
    type Pb = pb::StringList;
    fn from_pb(_field: &str, value: pb::StringList) -> Result<Self, DomainError> {
        let pb::StringList { values } = value;
        Ok(BookNames(values))
    }
    fn into_pb(self) -> pb::StringList {
        let BookNames(values) = self;
        pb::StringList { values }
    }
}

/// The entity types are a list of lines on the wire
/// (`<name>[(constant)]: <description>`), read and checked here: a bad
/// line is INVALID_ARGUMENT naming it (`settings.lore_entity_types[i]`).
impl Wire for EntityTypes {
    type Pb = pb::StringList;
    fn from_pb(field: &str, value: pb::StringList) -> Result<Self, DomainError> {
        let pb::StringList { values } = value;
        EntityTypes::parse(field, &values)
    }
    fn into_pb(self) -> pb::StringList {
        pb::StringList {
            values: self.to_lines(),
        }
    }
}

/// The chats recall also searches are a list of chat ids on the wire,
/// checked by the domain (`settings.recall_chats[i]`).
impl Wire for ChatIds {
    type Pb = pb::StringList;
    fn from_pb(_field: &str, value: pb::StringList) -> Result<Self, DomainError> {
        let pb::StringList { values } = value;
        Ok(ChatIds(values))
    }
    fn into_pb(self) -> pb::StringList {
        let ChatIds(values) = self;
        pb::StringList { values }
    }
}

/// Generates [`settings_patch`] and `From<&Settings> for pb::Settings` from
/// the table's rows (only the names are used here).
macro_rules! wire_settings {
    ($(
        $(#[$group_attr:meta])*
        $group:ident: $Group:ident {
            $(
                $(#[$attr:meta])*
                $name:ident => $field:ident: $ty:ty = $default:expr $(, checked by $check:expr)?;
            )*
        }
    )*) => {
        /// A settings update from the wire: every present field checked
        /// (enums first, then the domain's range checks, in field order).
        pub fn settings_patch(settings: Option<pb::Settings>) -> Result<SettingsPatch, DomainError> {
            let pb::Settings { $($($name,)*)* } = settings.unwrap_or_default();
            SettingsPatch::from_api(ApiSettings {
                $($($name: $name
                    .map(|value| Wire::from_pb(concat!("settings.", stringify!($name)), value))
                    .transpose()?,)*)*
            })
        }

        /// The fields a patch sets (a profile's), the others absent.
        pub fn patch_settings(patch: &SettingsPatch) -> pb::Settings {
            let ApiSettings { $($($name,)*)* } = patch.to_api();
            pb::Settings {
                $($($name: $name.map(Wire::into_pb),)*)*
            }
        }

        impl From<&Settings> for pb::Settings {
            fn from(settings: &Settings) -> Self {
                let ApiSettings { $($($name,)*)* } = settings.to_api();
                pb::Settings {
                    $($($name: $name.map(Wire::into_pb),)*)*
                }
            }
        }
    };
}

settings_table!(wire_settings);
