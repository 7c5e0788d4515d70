//! A tenant's global settings as the engine holds them.

use std::sync::Arc;

use crate::domain::settings::{Settings, SettingsPatch};

/// A tenant's global settings as the engine holds them: the stored patch,
/// and the settings it makes over the defaults, worked out once per change
/// rather than at every operation (most chats have no settings of their
/// own, so these are their effective settings as they are). Cheap to
/// clone: two `Arc`s.
#[derive(Clone, Default)]
pub(super) struct GlobalSettings {
    /// The patch over the defaults, as stored.
    pub patch: Arc<SettingsPatch>,
    /// The defaults with `patch` applied.
    pub settings: Arc<Settings>,
}

impl GlobalSettings {
    /// The settings `patch` makes over the defaults.
    pub fn new(patch: SettingsPatch) -> GlobalSettings {
        GlobalSettings {
            settings: Arc::new(Settings::default().with(&patch)),
            patch: Arc::new(patch),
        }
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
    std::sync::LazyLock::new(|| GlobalSettings::new(SettingsPatch::default()));
