//! A tenant's settings profiles, their bindings and its groups: read from
//! memory, changed like the global settings (read afresh and claimed with
//! a shared store, stored, then every chat of the tenant refreshed), and a
//! chat's character and group.

use super::chats::Change;
use super::commit::Commit;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::{ChatKey, ClaimKey, Tenant};
use crate::domain::profiles::{self, BindTarget, Group, Profiles};
use crate::domain::refresh::Trigger;
use crate::domain::settings::SettingsPatch;
use crate::store::Write;

/// A change to a tenant's profiles, bindings or groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileChange {
    /// Creates or replaces a profile.
    Put {
        /// Its name.
        name: String,
        /// Its settings.
        settings: Box<SettingsPatch>,
    },
    /// Deletes a profile.
    Delete {
        /// Its name.
        name: String,
    },
    /// Binds a profile to a character or a group (empty: unbinds).
    Bind {
        /// What it is bound to.
        target: BindTarget,
        /// The profile's name; empty unbinds.
        profile: String,
    },
    /// Creates or replaces a group (ImportGroup).
    PutGroup {
        /// Its id.
        id: String,
        /// The group.
        group: Group,
    },
    /// Replaces a group's disabled members (the group is created when
    /// unknown).
    SetDisabledMembers {
        /// The group's id.
        id: String,
        /// Its disabled members' character keys.
        disabled_members: Vec<String>,
    },
    /// Adds disabled members to groups (an extension settings import's
    /// `disabled_group_characters`), creating the groups not known.
    AddDisabledMembers(Vec<(String, Vec<String>)>),
    /// Adds profiles, character and group bindings at once (an extension
    /// settings import's `profiles`, `character_profiles`, and the
    /// `chat_profiles` entries keyed by a group).
    Import {
        /// Profiles to create or replace.
        profiles: Vec<(String, SettingsPatch)>,
        /// Bindings to set.
        bindings: Vec<(BindTarget, String)>,
    },
}

impl ProfileChange {
    fn apply(self, profiles: &mut Profiles) -> Result<(), DomainError> {
        match self {
            ProfileChange::Put { name, settings } => profiles.put_profile(&name, *settings),
            ProfileChange::Delete { name } => profiles.delete_profile(&name),
            ProfileChange::Bind { target, profile } => profiles.bind(&target, &profile),
            ProfileChange::PutGroup { id, group } => profiles.put_group(&id, group),
            ProfileChange::SetDisabledMembers {
                id,
                disabled_members,
            } => {
                let mut group = profiles.groups.get(&id).cloned().unwrap_or_default();
                group.disabled_members = dedup(disabled_members);
                profiles.put_group(&id, group)
            }
            ProfileChange::AddDisabledMembers(groups) => {
                for (id, members) in groups {
                    let mut group = profiles.groups.get(&id).cloned().unwrap_or_default();
                    group.disabled_members.extend(members);
                    group.disabled_members = dedup(std::mem::take(&mut group.disabled_members));
                    profiles.put_group(&id, group)?;
                }
                Ok(())
            }
            ProfileChange::Import {
                profiles: new,
                bindings,
            } => {
                for (name, settings) in new {
                    profiles.put_profile(&name, settings)?;
                }
                for (target, profile) in bindings {
                    profiles.bind(&target, &profile)?;
                }
                Ok(())
            }
        }
    }
}

/// `values` without repeats, first occurrence kept.
fn dedup(values: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    values
        .into_iter()
        .filter(|v| seen.insert(v.clone()))
        .collect()
}

impl Chats {
    /// The tenant's profiles, bindings and groups as held here.
    pub fn profiles(&self, tenant: &Tenant) -> Profiles {
        self.global(tenant).profiles.profiles.clone()
    }

    /// Changes a tenant's profiles, bindings or groups, then refreshes
    /// every chat of the tenant (as a global settings change does: each
    /// chat's settings may have changed). Answers with the profiles as
    /// changed.
    pub async fn change_profiles(
        &self,
        tenant: &Tenant,
        change: ProfileChange,
    ) -> Result<Profiles, EngineError> {
        // In a task of its own, as a global settings change: once the
        // change is durable, every chat's refresh runs even if the caller
        // goes away.
        let engine = self.clone();
        let tenant = tenant.clone();
        self.spawn_tracked(async move {
            let _one_at_a_time = engine.inner.global_changes.lock().await;
            let changed = engine
                .retrying(|| engine.store_profiles(&tenant, change.clone()))
                .await?;
            engine
                .refresh_every_chat(&tenant, Trigger::SettingsChanged)
                .await?;
            Ok(changed)
        })
        .await
        .map_err(EngineError::from_join)?
    }

    /// Stores a tenant's changed profiles (and that every chat owes a
    /// refresh), claimed with the tenant's global settings on a shared
    /// store, as [`Chats::update_settings`] stores global settings.
    async fn store_profiles(
        &self,
        tenant: &Tenant,
        change: ProfileChange,
    ) -> Result<Profiles, EngineError> {
        let mut writes = Vec::new();
        let mut clock = 0;
        if self.shared() {
            self.reload_global_settings().await?;
            clock = self.settings_clock(tenant);
            writes.push(Write::Claim {
                key: ClaimKey::GlobalSettings(tenant.clone()),
                clock,
            });
        }
        let global = self.global(tenant);
        let mut profiles = global.profiles.profiles.clone();
        let checked = match &change {
            ProfileChange::Put { name, .. } => vec![name.clone()],
            ProfileChange::Import { profiles, .. } => {
                profiles.iter().map(|(name, _)| name.clone()).collect()
            }
            _ => Vec::new(),
        };
        change.apply(&mut profiles)?;
        for name in checked {
            if let Some(patch) = profiles.profiles.get(&name) {
                global
                    .settings
                    .with(patch)
                    .validate()
                    .map_err(|e| match e {
                        DomainError::Invalid { field, reason } => DomainError::invalid(
                            format!("settings.{field}"),
                            format!("{reason} (in profile {name:?})"),
                        ),
                        other => other,
                    })?;
            }
        }
        writes.extend([
            Write::Profiles {
                tenant: tenant.clone(),
                profiles: profiles.clone(),
            },
            Write::AllChatsOweRefresh {
                tenant: tenant.clone(),
            },
        ]);
        self.inner.store.commit(writes).await?;
        let committed = if self.shared() { clock + 1 } else { 0 };
        self.set_global(tenant, (*global.patch).clone(), profiles.clone(), committed);
        Ok(profiles)
    }

    /// Says which character a chat is with and which group it is in (each
    /// `None`: left as it is; `Some("")`: none); the chat is refreshed when
    /// that changes it. `NotFound` for a chat no event has named.
    pub async fn set_chat_identity(
        &self,
        chat_id: &ChatKey,
        character_key: Option<String>,
        group_id: Option<String>,
    ) -> Result<(), EngineError> {
        if let Some(key) = character_key.as_deref().filter(|k| !k.is_empty()) {
            profiles::check_name("character_key", key)?;
        }
        if let Some(id) = group_id.as_deref().filter(|g| !g.is_empty()) {
            profiles::check_name("group_id", id)?;
        }
        self.update(chat_id, |_, resident| {
            if resident.chat.is_none() {
                return Err(EngineError::unknown_chat(chat_id));
            }
            let mut meta = resident.meta.clone();
            if let Some(key) = &character_key {
                meta.character_key = Some(key.clone()).filter(|k| !k.is_empty());
            }
            if let Some(id) = &group_id {
                meta.group_id = Some(id.clone()).filter(|g| !g.is_empty());
            }
            if meta == resident.meta {
                return Ok(Change::Answer(()));
            }
            resident.meta = meta;
            let commit = Commit::one(Vec::new(), Next::Refresh(Trigger::SettingsChanged));
            Ok(Change::Commit(commit, ()))
        })
        .await
    }
}
