//! Turns the settings table ([`super::fields`]) into the settings types and
//! their operations. Nothing here names a setting: every item is generated
//! once per row, in table order.

/// Declares [`super::Settings`], [`super::SettingsPatch`],
/// [`super::ApiSettings`] and [`super::FIELD_NAMES`] from the rows of
/// `settings_table!`, with the defaults, merging, clearing and the checked
/// conversion from the API.
macro_rules! declare_settings {
    // A row without a check keeps the API's value as it is (its API form
    // and its value type are the same).
    (@check) => { Ok };
    (@check $check:expr) => { $check };
    ($(
        $(#[$group_attr:meta])*
        $group:ident: $Group:ident {
            $(
                $(#[$attr:meta])*
                $name:ident => $field:ident: $ty:ty = $default:expr $(, checked by $check:expr)?;
            )*
        }
    )*) => {
        /// Fully resolved settings: what a refresh of one chat runs with,
        /// one group per feature (the API and the stored patches are flat:
        /// [`SettingsPatch`], [`ApiSettings`]).
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct Settings {
            $($(#[$group_attr])* pub $group: $Group,)*
            /// Not a setting: the disabled members of the chat's group
            /// (character keys), whose messages the chat leaves out; set
            /// when a chat's settings are resolved (`crate::profiles`),
            /// empty for a chat in no group and in the global settings.
            pub group_disabled_members: Vec<String>,
        }

        $(
            $(#[$group_attr])*
            #[derive(Debug, Clone, PartialEq, Eq)]
            pub struct $Group {
                $(
                    $(#[$attr])*
                    #[doc = concat!("\n\nIn the API: `", stringify!($name), "`.")]
                    pub $field: $ty,
                )*
            }

            impl Default for $Group {
                fn default() -> Self {
                    $Group { $($field: $default,)* }
                }
            }
        )*

        /// A partial update of [`Settings`]: `None` leaves a field as it is.
        /// Stored (as JSON, one key per field, `null` when absent) as the
        /// global settings (over the defaults) and as a chat's overrides.
        /// Flat, one field per setting named as in the API.
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct SettingsPatch {
            $($(
                #[doc = concat!("Sets [`", stringify!($Group), "::", stringify!($field), "`] when present.")]
                pub $name: Option<<$ty as SettingValue>::Set>,
            )*)*
        }

        impl crate::footprint::Footprint for SettingsPatch {
            fn heap_bytes(&self) -> usize {
                0 $($(+ crate::footprint::Footprint::heap_bytes(&self.$name))*)*
            }
        }

        /// Settings as the API carries them, unchecked: every field
        /// optional, integers signed. [`SettingsPatch::from_api`] checks
        /// them; [`Settings::to_api`] gives every field. (Not `Eq`: the
        /// API carries `llm_temperature` as a float.)
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct ApiSettings {
            $($(
                #[doc = concat!("[`", stringify!($Group), "::", stringify!($field), "`] in the API's form.")]
                pub $name: Option<<$ty as SettingValue>::Api>,
            )*)*
        }

        /// The names of the settings fields, as spelled in the API, in field order.
        pub const FIELD_NAMES: [&str; [$($(stringify!($name)),*),*].len()] =
            [$($(stringify!($name)),*),*];

        impl Settings {
            /// These settings with every field present in `patch` replaced.
            pub fn with(&self, patch: &SettingsPatch) -> Settings {
                Settings {
                    $($group: $Group {
                        $($field: SettingValue::overlay(
                            self.$group.$field.clone(),
                            patch.$name.clone(),
                        ),)*
                    },)*
                    group_disabled_members: self.group_disabled_members.clone(),
                }
            }

            /// Every field in the API's form (unset optional fields absent).
            pub fn to_api(&self) -> ApiSettings {
                ApiSettings {
                    $($($name: SettingValue::to_api(&self.$group.$field),)*)*
                }
            }
        }

        impl SettingsPatch {
            /// The fields this patch sets, in the API's form (the others
            /// absent).
            pub fn to_api(&self) -> ApiSettings {
                ApiSettings {
                    $($($name: self.$name.as_ref().and_then(SettingValue::to_api),)*)*
                }
            }

            /// Layers `update` over this patch: fields present in `update` win.
            pub fn merge(&mut self, update: &SettingsPatch) {
                $($(
                    if update.$name.is_some() {
                        self.$name.clone_from(&update.$name);
                    }
                )*)*
            }

            /// Removes the field named `name` (one of [`FIELD_NAMES`]) from the patch.
            pub fn clear(&mut self, name: &str) -> Result<(), DomainError> {
                match name {
                    $($(stringify!($name) => self.$name = None,)*)*
                    other => {
                        return Err(DomainError::invalid(
                            "clear",
                            format!("{other:?} is not a settings field"),
                        ));
                    }
                }
                Ok(())
            }

            /// The patch setting every field present in `api`, each checked
            /// by its row's check, in field order; the first failure is the
            /// error.
            pub fn from_api(api: ApiSettings) -> Result<SettingsPatch, DomainError> {
                Ok(SettingsPatch {
                    $($($name: checked(api.$name, declare_settings!(@check $($check)?))?,)*)*
                })
            }
        }
    };
}
pub(super) use declare_settings;

use crate::DomainError;

/// Applies a row's check to a present value.
pub(super) fn checked<A, T>(
    value: Option<A>,
    check: impl Fn(A) -> Result<T, DomainError>,
) -> Result<Option<T>, DomainError> {
    value.map(check).transpose()
}
