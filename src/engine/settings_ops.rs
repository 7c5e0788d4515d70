//! The settings operations: a tenant's global settings (read afresh and
//! claimed with a shared store, then every chat refreshed) and a chat's own
//! overrides and enabled state.

use super::ops::missing_state;
use super::{Engine, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::tenant_of;
use crate::domain::refresh::Trigger;
use crate::domain::settings::{Settings, SettingsPatch};
use crate::store::{StoreError, Write, global_settings_claim};

/// A settings change: first the named fields are cleared, then the present
/// fields of `patch` are set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsUpdate {
    /// Fields to set.
    pub patch: SettingsPatch,
    /// Field names to clear (back to the default, or to the global value).
    pub clear: Vec<String>,
}

impl Engine {
    /// A tenant's global settings (`None`) or a chat's effective settings.
    pub async fn settings(
        &self,
        tenant: &str,
        chat_id: Option<&str>,
    ) -> Result<Settings, EngineError> {
        let global = self.global(tenant);
        let Some(chat_id) = chat_id else {
            return Ok(Settings::default().with(&global));
        };
        self.read_chat(chat_id, |resident| Ok(resident.effective(&global)))
            .await
    }

    /// Changes the global settings (`None`; every chat is refreshed) or a
    /// chat's overrides (that chat is refreshed if it is known). Answers with
    /// the resulting (effective) settings.
    pub async fn update_settings(
        &self,
        tenant: &str,
        chat_id: Option<&str>,
        update: SettingsUpdate,
    ) -> Result<Settings, EngineError> {
        let SettingsUpdate { patch, clear } = update;
        if let Some(template) = &patch.template {
            self.limits().check_text("settings.template", template)?;
        }
        let Some(chat_id) = chat_id else {
            // In a task of its own: once the global change is durable, every
            // chat's refresh runs even if the caller goes away.
            let engine = self.clone();
            let tenant = tenant.to_owned();
            return tokio::spawn(async move { engine.update_global(&tenant, patch, clear).await })
                .await
                .map_err(|e| StoreError::Database(format!("settings task failed: {e}")))?;
        };
        self.retrying(|| self.update_chat_settings(chat_id, &patch, &clear))
            .await
    }

    async fn update_chat_settings(
        &self,
        chat_id: &str,
        patch: &SettingsPatch,
        clear: &[String],
    ) -> Result<Settings, EngineError> {
        // Checked against the global settings while they cannot change.
        let _global_fixed = self.inner.global_changes.lock().await;
        let global = self.global(tenant_of(chat_id));
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let mut own = resident.settings.clone();
        for name in clear {
            own.overrides.clear(name)?;
        }
        own.overrides.merge(patch);
        let effective = Settings::default().with(&global).with(&own.overrides);
        effective.validate()?;
        resident.settings = own.clone();
        let writes = vec![Write::ChatSettings {
            chat_id: chat_id.to_owned(),
            settings: own,
        }];
        self.finish(
            &slot,
            guard,
            writes,
            Next::Refresh(Trigger::SettingsChanged),
        )
        .await?;
        Ok(effective)
    }

    async fn update_global(
        &self,
        tenant: &str,
        patch: SettingsPatch,
        clear: Vec<String>,
    ) -> Result<Settings, EngineError> {
        let _one_at_a_time = self.inner.global_changes.lock().await;
        let resolved = self
            .retrying(|| self.commit_global(tenant, &patch, &clear))
            .await?;
        self.refresh_every_chat(tenant, Trigger::SettingsChanged)
            .await?;
        Ok(resolved)
    }

    /// Commits a tenant's new global settings (and that every chat of the
    /// tenant owes a refresh). With a shared store the settings are read
    /// afresh and the change claims the tenant's settings, so two replicas
    /// changing them at once cannot lose either change.
    async fn commit_global(
        &self,
        tenant: &str,
        patch: &SettingsPatch,
        clear: &[String],
    ) -> Result<Settings, EngineError> {
        let mut writes = Vec::new();
        let mut generation = 0;
        if self.inner.shared {
            // Read afresh (this replica may not have heard another's change
            // yet) and claimed, so a concurrent change is never lost.
            self.reload_global_settings().await?;
            generation = self.global_generation(tenant);
            writes.push(Write::Claim {
                chat_id: global_settings_claim(tenant),
                generation,
            });
        }
        let mut global = (*self.global(tenant)).clone();
        for name in clear {
            global.clear(name)?;
        }
        global.merge(patch);
        let resolved = Settings::default().with(&global);
        resolved.validate()?;
        let store = self.inner.store.clone();
        let overrides = tokio::task::spawn_blocking(move || store.all_chat_settings())
            .await
            .map_err(|e| StoreError::Database(format!("settings task failed: {e}")))??;
        for (chat_id, own) in overrides
            .into_iter()
            .filter(|(id, _)| tenant_of(id) == tenant)
        {
            resolved
                .with(&own.overrides)
                .validate()
                .map_err(|e| match e {
                    DomainError::Invalid { field, reason } => DomainError::invalid(
                        field,
                        format!("{reason} (for chat {chat_id:?}, whose overrides rely on it)"),
                    ),
                    other => other,
                })?;
        }
        writes.extend([
            Write::GlobalSettings {
                tenant: tenant.to_owned(),
                patch: global.clone(),
            },
            Write::AllChatsOweRefresh {
                tenant: tenant.to_owned(),
            },
        ]);
        self.inner.committer.commit(writes).await?;
        let committed = if self.inner.shared { generation + 1 } else { 0 };
        self.set_global(tenant, global, committed);
        Ok(resolved)
    }

    /// Sets a chat's own enabled state (immediate refresh if the chat is
    /// known). Answers with whether memory is now enabled and the revision.
    pub async fn set_chat_enabled(
        &self,
        chat_id: &str,
        enabled: bool,
    ) -> Result<(bool, u64), EngineError> {
        self.retrying(|| self.set_chat_enabled_once(chat_id, enabled))
            .await
    }

    async fn set_chat_enabled_once(
        &self,
        chat_id: &str,
        enabled: bool,
    ) -> Result<(bool, u64), EngineError> {
        let global = self.global(tenant_of(chat_id));
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = guard.as_mut().ok_or_else(missing_state)?;
        let mut own = resident.settings.clone();
        own.enabled = Some(enabled);
        resident.settings = own.clone();
        let effective = resident.effective(&global).chat_enabled(Some(enabled));
        let writes = vec![Write::ChatSettings {
            chat_id: chat_id.to_owned(),
            settings: own,
        }];
        let revision = self
            .finish(
                &slot,
                guard,
                writes,
                Next::Refresh(Trigger::SettingsChanged),
            )
            .await?;
        Ok((effective, revision))
    }
}
