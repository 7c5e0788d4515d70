//! A tenant's global settings and settings profiles as the engine holds
//! them.

use std::collections::HashMap;
use std::sync::Arc;

use crate::domain::profiles::{self, ChatIdentity, Profiles};
use crate::domain::settings::{Settings, SettingsPatch};

/// A tenant's global settings as the engine holds them: the stored patch,
/// and the settings it makes over the defaults, worked out once per change
/// rather than at every operation (most chats have no settings of their
/// own, so these are their effective settings as they are); and the
/// tenant's profiles, bindings and groups. Cheap to clone: three `Arc`s.
#[derive(Clone, Default)]
pub(super) struct GlobalSettings {
    /// The patch over the defaults, as stored.
    pub patch: Arc<SettingsPatch>,
    /// The defaults with `patch` applied.
    pub settings: Arc<Settings>,
    /// The tenant's profiles, bindings and groups.
    pub profiles: Arc<TenantProfiles>,
}

/// A tenant's profiles with which chat each group lists, worked out once
/// per change.
#[derive(Default)]
pub(super) struct TenantProfiles {
    /// As stored.
    pub profiles: Profiles,
    /// Chat id to the group that lists it ([`Profiles::chat_groups`]).
    chat_groups: HashMap<String, String>,
}

impl GlobalSettings {
    /// The settings `patch` makes over the defaults, with `profiles`.
    pub fn new(patch: SettingsPatch, profiles: Profiles) -> GlobalSettings {
        GlobalSettings {
            settings: Arc::new(Settings::default().with(&patch)),
            patch: Arc::new(patch),
            profiles: Arc::new(TenantProfiles {
                chat_groups: profiles.chat_groups(),
                profiles,
            }),
        }
    }

    /// A chat's effective settings: these, then its profile, then `own`
    /// (its overrides); see `domain::profiles`. A chat of a tenant without
    /// profiles or groups, without overrides, shares these settings.
    pub fn resolve(&self, chat: ChatIdentity<'_>, own: Option<&SettingsPatch>) -> Arc<Settings> {
        let tenant = &self.profiles;
        let plain = tenant.profiles.profiles.is_empty()
            && tenant.profiles.groups.is_empty()
            && self.settings.chat.profile.is_none();
        match own {
            None if plain => self.settings.clone(),
            Some(own) if plain && own.profile.is_none() => Arc::new(self.settings.with(own)),
            _ => Arc::new(profiles::resolve(
                &self.settings,
                &tenant.profiles,
                &tenant.chat_groups,
                chat,
                own,
            )),
        }
    }
}

impl GlobalSettings {
    /// The group a chat is in: the one it says, else the one that lists it.
    pub fn group_of<'a>(&'a self, chat: ChatIdentity<'a>) -> Option<&'a str> {
        let tenant = &self.profiles;
        tenant.profiles.group_of(chat, &tenant.chat_groups)
    }
}

impl std::ops::Deref for GlobalSettings {
    type Target = SettingsPatch;

    fn deref(&self) -> &SettingsPatch {
        &self.patch
    }
}

/// The global settings of a tenant that has set none.
pub(super) static DEFAULT_GLOBAL: std::sync::LazyLock<GlobalSettings> =
    std::sync::LazyLock::new(|| GlobalSettings::new(SettingsPatch::default(), Profiles::default()));
