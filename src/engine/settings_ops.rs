//! The settings operations: a tenant's global settings (read afresh and
//! claimed with a shared store, then every chat refreshed) and a chat's own
//! overrides and enabled state.

use super::chats::Change;
use super::commit::Commit;
use super::slot::Resident;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::{ChatKey, ClaimKey, Tenant};
use crate::domain::refresh::Trigger;
use crate::domain::settings::{Settings, SettingsPatch, TokenizerKind};
use crate::llm::{FailureKind, LlmError};
use crate::model_tokenizers::TokenizerError;
use crate::store::{ChatSettings, Write};

/// A settings change: first the named fields are cleared, then the present
/// fields of `patch` are set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsUpdate {
    /// Fields to set.
    pub patch: SettingsPatch,
    /// Field names to clear (back to the default, or to the global value).
    pub clear: Vec<String>,
}

impl Chats {
    /// A tenant's global settings (`None`) or a chat's effective settings.
    pub async fn settings(
        &self,
        tenant: &Tenant,
        chat_id: Option<&ChatKey>,
    ) -> Result<Settings, EngineError> {
        let global = self.global(tenant);
        let Some(chat_id) = chat_id else {
            return Ok((*global.settings).clone());
        };
        self.read_chat(chat_id, |resident| {
            Ok((*resident.effective(&global, &chat_id.id)).clone())
        })
        .await
    }

    /// Changes the global settings (`None`; every chat is refreshed) or a
    /// chat's overrides (that chat is refreshed if it is known). Answers with
    /// the resulting (effective) settings.
    pub async fn update_settings(
        &self,
        tenant: &Tenant,
        chat_id: Option<&ChatKey>,
        update: SettingsUpdate,
    ) -> Result<Settings, EngineError> {
        let SettingsUpdate { patch, clear } = update;
        if let Some(template) = &patch.template {
            self.limits().check_text("settings.template", template)?;
        }
        if let Some(name) = patch.tokenizer_name.clone().filter(|n| !n.is_empty()) {
            // Read the file now, off the async workers and before any lock:
            // the check under the chat's lock then finds it loaded. Its
            // errors are the check's to report.
            let tokenizers = self.tokenizers().clone();
            tokio::task::spawn_blocking(move || tokenizers.preload(&name))
                .await
                .map_err(EngineError::from_join)?;
        }
        if patch.tokenizer == Some(TokenizerKind::LlmEndpoint) {
            self.probe_endpoint_tokenizer(patch.llm_model.as_deref().unwrap_or(""))
                .await?;
        }
        let Some(chat_id) = chat_id else {
            // In a task of its own: once the global change is durable, every
            // chat's refresh runs even if the caller goes away.
            let engine = self.clone();
            let tenant = tenant.clone();
            return self
                .spawn_tracked(async move { engine.update_global(&tenant, patch, clear).await })
                .await
                .map_err(EngineError::from_join)?;
        };
        self.update_chat_settings(chat_id, &patch, &clear).await
    }

    async fn update_chat_settings(
        &self,
        chat_id: &ChatKey,
        patch: &SettingsPatch,
        clear: &[String],
    ) -> Result<Settings, EngineError> {
        // Checked against the global settings while they cannot change.
        let _global_fixed = self.inner.global_changes.lock().await;
        self.update(chat_id, |_, resident| {
            let global = self.global(&chat_id.tenant);
            let mut own = resident.settings().clone();
            for name in clear {
                own.overrides.clear(name)?;
            }
            own.overrides.merge(patch);
            let identity = crate::domain::profiles::ChatIdentity {
                chat_id: &chat_id.id,
                character_key: resident.meta.character_key.as_deref(),
                group_id: resident.meta.group_id.as_deref(),
            };
            let effective = (*global.resolve(identity, Some(&own.overrides))).clone();
            effective.validate()?;
            if names_tokenizer(patch, clear) {
                self.check_tokenizer(&effective)?;
            }
            let commit = set_own_settings(resident, chat_id, own);
            Ok(Change::Commit(commit, effective))
        })
        .await
    }

    async fn update_global(
        &self,
        tenant: &Tenant,
        patch: SettingsPatch,
        clear: Vec<String>,
    ) -> Result<Settings, EngineError> {
        let _one_at_a_time = self.inner.global_changes.lock().await;
        let resolved = self
            .retrying(|| self.store_global_settings(tenant, &patch, &clear))
            .await?;
        self.refresh_every_chat(tenant, Trigger::SettingsChanged)
            .await?;
        Ok(resolved)
    }

    /// Stores a tenant's new global settings (and that every chat of the
    /// tenant owes a refresh): a tenant's write, not a chat's, so not
    /// through [`Chats::commit`]; each chat's refresh then is. With a shared store the settings are read
    /// afresh and the change claims the tenant's settings, so two replicas
    /// changing them at once cannot lose either change.
    async fn store_global_settings(
        &self,
        tenant: &Tenant,
        patch: &SettingsPatch,
        clear: &[String],
    ) -> Result<Settings, EngineError> {
        let mut writes = Vec::new();
        let mut clock = 0;
        if self.shared() {
            // Read afresh (this replica may not have heard another's change
            // yet) and claimed, so a concurrent change is never lost.
            self.reload_global_settings().await?;
            clock = self.settings_clock(tenant);
            writes.push(Write::Claim {
                key: ClaimKey::GlobalSettings(tenant.clone()),
                clock,
            });
        }
        let mut global = (*self.global(tenant)).clone();
        for name in clear {
            global.clear(name)?;
        }
        global.merge(patch);
        let resolved = Settings::default().with(&global);
        resolved.validate()?;
        if names_tokenizer(patch, clear) {
            self.check_tokenizer(&resolved)?;
        }
        let overrides = self.inner.store.chat_settings_of(tenant).await?;
        for (chat, own) in overrides {
            resolved
                .with(&own.overrides)
                .validate()
                .map_err(|e| match e {
                    DomainError::Invalid { field, reason } => DomainError::invalid(
                        field,
                        format!(
                            "{reason} (for chat {:?}, whose overrides rely on it)",
                            chat.id
                        ),
                    ),
                    other => other,
                })?;
        }
        writes.extend([
            Write::GlobalSettings {
                tenant: tenant.clone(),
                patch: global.clone(),
            },
            Write::AllChatsOweRefresh {
                tenant: tenant.clone(),
            },
        ]);
        self.inner.store.commit(writes).await?;
        let committed = if self.shared() { clock + 1 } else { 0 };
        let profiles = self.global(tenant).profiles.profiles.clone();
        self.set_global(tenant, global, profiles, committed);
        Ok(resolved)
    }

    /// Sets whether memory is enabled for a chat, as the extension's toggle
    /// does: while the chat's `use_global_toggle_state` is on, the tenant's
    /// global `global_toggle_state` (every chat refreshed, as after an
    /// UpdateSettings), or the chat's own override of it when it has one;
    /// otherwise the chat's own enabled state (immediate
    /// refresh if the chat is known). Answers with whether memory is now
    /// enabled for the chat and its revision (0 for a chat not yet known).
    pub async fn set_chat_enabled(
        &self,
        chat_id: &ChatKey,
        enabled: bool,
    ) -> Result<(bool, u64), EngineError> {
        let tenant = &chat_id.tenant;
        let global = self.global(tenant);
        // One read: whether the chat follows a toggle, and whether the
        // switch it follows is its own override of `global_toggle_state`
        // (changing the tenant's would change the other chats and not this
        // one) or the tenant's.
        let (follows_toggle, own_switch) = self
            .read_chat(chat_id, |resident| {
                Ok((
                    resident
                        .effective(&global, &chat_id.id)
                        .chat
                        .use_global_toggle_state,
                    resident.settings().overrides.global_toggle_state.is_some(),
                ))
            })
            .await?;
        if follows_toggle {
            let update = SettingsUpdate {
                patch: SettingsPatch {
                    global_toggle_state: Some(enabled),
                    ..SettingsPatch::default()
                },
                clear: Vec::new(),
            };
            let scope = own_switch.then_some(chat_id);
            self.update_settings(tenant, scope, update).await?;
            let global = self.global(tenant);
            return self
                .read_chat(chat_id, |resident| {
                    let enabled = resident
                        .effective(&global, &chat_id.id)
                        .chat_enabled(resident.settings().enabled);
                    Ok((enabled, resident.meta.revision))
                })
                .await;
        }
        self.set_chat_own_enabled(chat_id, enabled).await
    }

    /// Sets a chat's own enabled state, whatever the global toggle says
    /// (a settings import's `chats_enabled`: it never changes the global
    /// switch); immediate refresh if the chat is known. Answers as
    /// [`Chats::set_chat_enabled`].
    pub async fn set_chat_own_enabled(
        &self,
        chat_id: &ChatKey,
        enabled: bool,
    ) -> Result<(bool, u64), EngineError> {
        self.update_revision(chat_id, |_, resident| {
            let global = self.global(&chat_id.tenant);
            let mut own = resident.settings().clone();
            own.enabled = Some(enabled);
            let commit = set_own_settings(resident, chat_id, own);
            let effective = resident
                .effective(&global, &chat_id.id)
                .chat_enabled(Some(enabled));
            Ok(Change::Commit(commit, effective))
        })
        .await
    }
}

/// Whether an update sets or clears the tokenizer: then the tokenizer it
/// leads to is checked (loaded), so the caller that named it hears of a
/// missing file. Other updates do not fail for a file gone since.
fn names_tokenizer(patch: &SettingsPatch, clear: &[String]) -> bool {
    patch.tokenizer.is_some()
        || patch.tokenizer_name.is_some()
        || clear
            .iter()
            .any(|name| name == "tokenizer" || name == "tokenizer_name")
}

impl Chats {
    /// Asks the LLM endpoint to count a word with `model` (empty: the
    /// server's) before a settings update names LLM_ENDPOINT: an endpoint
    /// that answers 404, 405 or 501 has no `/tokenize` and the update is
    /// refused (FAILED_PRECONDITION); one that cannot be reached now is
    /// accepted (counts are estimated until it answers), with a warning.
    async fn probe_endpoint_tokenizer(&self, model: &str) -> Result<(), EngineError> {
        let Some(endpoint) = self.tokenizers().endpoint() else {
            return Err(EngineError::tokenizer(TokenizerError::NoEndpoint));
        };
        let probe = tokio::time::timeout(ENDPOINT_PROBE_WAIT, endpoint.probe(model));
        let Ok(probed) = probe.await else {
            tracing::warn!(
                wait = ?ENDPOINT_PROBE_WAIT,
                "the LLM endpoint did not answer POST /tokenize in time; accepting LLM_ENDPOINT, whose counts are estimated until it does"
            );
            return Ok(());
        };
        match probed {
            Ok(_) => Ok(()),
            Err(LlmError::Fatal {
                kind: FailureKind::Status(status @ (404 | 405 | 501)),
                ..
            }) => Err(EngineError::tokenizer(TokenizerError::EndpointCannotCount(
                format!("it answered {status} to POST /tokenize"),
            ))),
            Err(error) => {
                tracing::warn!(
                    reason = error.reason(),
                    "the LLM endpoint did not count tokens; accepting LLM_ENDPOINT, whose counts are estimated until it does"
                );
                Ok(())
            }
        }
    }

    /// Checks that `settings`' tokenizer can be used (see
    /// [`EngineError::tokenizer`]).
    fn check_tokenizer(&self, settings: &Settings) -> Result<(), EngineError> {
        self.tokenizers()
            .check(&settings.inclusion)
            .map_err(EngineError::tokenizer)
    }
}

/// Gives the locked chat `own` settings of its own, in memory and in a
/// commit that refreshes it.
fn set_own_settings(resident: &mut Resident, chat_id: &ChatKey, own: ChatSettings) -> Commit {
    resident.set_settings(own.clone());
    let writes = vec![Write::ChatSettings {
        chat: chat_id.clone(),
        settings: own,
    }];
    Commit::one(writes, Next::Refresh(Trigger::SettingsChanged))
}

/// The longest a settings change naming LLM_ENDPOINT waits for the
/// endpoint's `/tokenize` (not `--llm-timeout`, which a recap may need
/// whole): an endpoint that does not answer in time is accepted, as one
/// that fails is, and counts are estimated until it counts.
const ENDPOINT_PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Chats {
    /// Loads, off the async workers, the HUGGING_FACE tokenizers the
    /// stored settings name (each tenant's global settings, its profiles
    /// and its chats' own settings; at most `--max-cached-tokenizers` of
    /// them), so that the first refresh of a chat after a start does not
    /// read a tokenizer file under the chat's lock. Stops at `stop`. A
    /// name that does not load is left to its first use (which logs it and
    /// counts with o200k_base).
    pub async fn preload_tokenizers(self, stop: tokio_util::sync::CancellationToken) {
        let Some(most) = self.tokenizers().loadable() else {
            return;
        };
        let mut names = std::collections::BTreeSet::new();
        let mut tenants: std::collections::BTreeSet<Tenant> =
            self.tenants_with_settings().into_iter().collect();
        // Every chat's tenant: one with chats of its own settings may have
        // no global settings.
        let listing = self
            .store()
            .quiet_chats(crate::domain::time::UnixMicros(i64::MAX), usize::MAX >> 1);
        let listed = tokio::select! {
            listed = listing => listed,
            () = stop.cancelled() => return,
        };
        match listed {
            Ok(chats) => tenants.extend(chats.into_iter().map(|chat| chat.tenant)),
            Err(error) => {
                tracing::warn!(%error, "could not list the chats whose tokenizers to load at start");
            }
        }
        for tenant in tenants {
            if stop.is_cancelled() {
                return;
            }
            let global = self.global(&tenant);
            names.extend(global.patch.tokenizer_name.clone());
            for patch in global.profiles.profiles.profiles.values() {
                names.extend(patch.tokenizer_name.clone());
            }
            match self.store().chat_settings_of(&tenant).await {
                Ok(rows) => names.extend(
                    rows.into_iter()
                        .filter_map(|(_, own)| own.overrides.tokenizer_name),
                ),
                Err(error) => {
                    tracing::warn!(%tenant, %error, "could not read the chats' settings whose tokenizers to load at start");
                }
            }
        }
        for name in names.into_iter().filter(|n| !n.is_empty()).take(most) {
            if stop.is_cancelled() {
                return;
            }
            let tokenizers = self.tokenizers().clone();
            if let Err(error) = tokio::task::spawn_blocking(move || tokenizers.preload(&name)).await
            {
                tracing::warn!(%error, "loading a tokenizer at start failed");
            }
        }
    }
}
