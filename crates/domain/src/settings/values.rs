//! How each type a setting can have behaves in a patch and on the API.

use super::{
    BookNames, CharacterStrategy, ChatIds, ContextType, EntityTypes, MaxTokensField, Milli,
    Position, Role, StructuredOutput, TokenizerKind,
};

/// A type a setting can have (a row of the settings table). Plain types are
/// set by a patch and always present; `Option<T>` makes a setting whose
/// default is unset, which a patch can set but only `clear` unsets.
pub trait SettingValue: Clone {
    /// What a [`super::SettingsPatch`] holds when it sets the setting.
    type Set: Clone;
    /// How the API carries a set value: integers as the API's signed types,
    /// everything else as it is.
    type Api;
    /// This value with `patch`'s value, if any, laid over it.
    fn overlay(self, patch: Option<Self::Set>) -> Self;
    /// The value as the API carries it; `None` only for an unset optional
    /// setting. Numbers past the API's range saturate.
    fn to_api(&self) -> Option<Self::Api>;
}

/// Implements [`SettingValue`] for types a patch sets whole, with the
/// conversion of a value (`$v`, a reference) to the API's form.
macro_rules! plain_setting_values {
    ($($ty:ty => $api:ty, |$v:ident| $to_api:expr;)*) => {$(
        impl SettingValue for $ty {
            type Set = $ty;
            type Api = $api;
            fn overlay(self, patch: Option<$ty>) -> $ty {
                patch.unwrap_or(self)
            }
            fn to_api(&self) -> Option<$api> {
                let $v = self;
                Some($to_api)
            }
        }
    )*};
}

plain_setting_values! {
    bool => bool, |v| *v;
    String => String, |v| v.clone();
    Vec<String> => Vec<String>, |v| v.clone();
    u32 => i32, |v| i32::try_from(*v).unwrap_or(i32::MAX);
    u64 => i64, |v| i64::try_from(*v).unwrap_or(i64::MAX);
    Position => Position, |v| *v;
    Role => Role, |v| *v;
    ContextType => ContextType, |v| *v;
    TokenizerKind => TokenizerKind, |v| *v;
    StructuredOutput => StructuredOutput, |v| *v;
    MaxTokensField => MaxTokensField, |v| *v;
    Milli => f64, |v| v.value();
    CharacterStrategy => CharacterStrategy, |v| *v;
    BookNames => BookNames, |v| v.clone();
    EntityTypes => EntityTypes, |v| v.clone();
    ChatIds => ChatIds, |v| v.clone();
}

impl<T: SettingValue<Set = T>> SettingValue for Option<T> {
    type Set = T;
    type Api = T::Api;
    fn overlay(self, patch: Option<T>) -> Self {
        patch.or(self)
    }
    fn to_api(&self) -> Option<T::Api> {
        self.as_ref().and_then(T::to_api)
    }
}
