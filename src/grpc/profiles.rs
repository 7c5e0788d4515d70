//! `SettingsService`'s profile and group calls: each checks its request,
//! asks the engine (`engine::ProfileChange`) and converts the answer.

use tonic::{Response, Status};

use super::convert;
use super::pb;
use super::status::domain_status;
use crate::auth::Tenant;
use crate::domain::DomainError;
use crate::domain::profiles::{self, BindTarget, Group, Profiles};
use crate::domain::settings::SettingsPatch;
use crate::domain::st_settings::ImportedProfiles;
use crate::engine::{Engine, ProfileChange, SettingsUpdate};

/// A profile as the API shows it.
fn profile(name: &str, profiles: &Profiles) -> Result<pb::Profile, Status> {
    let patch = profiles
        .profiles
        .get(name)
        .ok_or_else(|| domain_status(DomainError::NotFound(format!("profile {name:?}"))))?;
    Ok(pb::Profile {
        name: name.to_owned(),
        settings: Some(convert::patch_settings(patch)),
    })
}

/// A group as the API shows it (`NotFound` when the tenant has none of
/// that id).
fn group(id: &str, profiles: &Profiles) -> Result<pb::Group, Status> {
    let Group {
        name,
        members,
        disabled_members,
        chats,
    } = profiles
        .groups
        .get(id)
        .cloned()
        .ok_or_else(|| domain_status(DomainError::NotFound(format!("group {id:?}"))))?;
    Ok(pb::Group {
        id: id.to_owned(),
        name,
        members,
        disabled_members,
        chats,
        profile: profiles.group_profiles.get(id).cloned().unwrap_or_default(),
    })
}

async fn change(
    engine: &Engine,
    tenant: &Tenant,
    change: ProfileChange,
) -> Result<Profiles, Status> {
    Ok(engine.chats().change_profiles(tenant, change).await?)
}

/// PutProfile.
pub(super) async fn put_profile(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::PutProfileRequest,
) -> Result<Response<pb::Profile>, Status> {
    let pb::PutProfileRequest { name, settings } = request;
    profiles::check_name("name", &name).map_err(domain_status)?;
    let settings = convert::settings_patch(settings).map_err(domain_status)?;
    if let Some(template) = &settings.template {
        engine
            .limits()
            .check_text("settings.template", template)
            .map_err(domain_status)?;
    }
    let changed = change(
        engine,
        tenant,
        ProfileChange::Put {
            name: name.clone(),
            settings: Box::new(settings),
        },
    )
    .await?;
    Ok(Response::new(profile(&name, &changed)?))
}

/// GetProfile.
pub(super) fn get_profile(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::GetProfileRequest,
) -> Result<Response<pb::Profile>, Status> {
    let pb::GetProfileRequest { name } = request;
    profiles::check_name("name", &name).map_err(domain_status)?;
    Ok(Response::new(profile(
        &name,
        &engine.chats().profiles(tenant),
    )?))
}

/// ListProfiles.
pub(super) fn list_profiles(
    engine: &Engine,
    tenant: &Tenant,
) -> Response<pb::ListProfilesResponse> {
    let Profiles {
        profiles,
        character_profiles,
        group_profiles,
        groups: _,
    } = engine.chats().profiles(tenant);
    Response::new(pb::ListProfilesResponse {
        profiles: profiles
            .iter()
            .map(|(name, patch)| pb::Profile {
                name: name.clone(),
                settings: Some(convert::patch_settings(patch)),
            })
            .collect(),
        character_profiles: character_profiles.into_iter().collect(),
        group_profiles: group_profiles.into_iter().collect(),
    })
}

/// DeleteProfile.
pub(super) async fn delete_profile(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::DeleteProfileRequest,
) -> Result<Response<pb::DeleteProfileResponse>, Status> {
    let pb::DeleteProfileRequest { name } = request;
    profiles::check_name("name", &name).map_err(domain_status)?;
    change(engine, tenant, ProfileChange::Delete { name }).await?;
    Ok(Response::new(pb::DeleteProfileResponse {}))
}

/// BindProfile.
pub(super) async fn bind_profile(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::BindProfileRequest,
) -> Result<Response<pb::BindProfileResponse>, Status> {
    use pb::bind_profile_request::Target;
    let pb::BindProfileRequest { target, profile } = request;
    let target = match target {
        Some(Target::CharacterKey(key)) => BindTarget::Character(key),
        Some(Target::GroupId(id)) => BindTarget::Group(id),
        None => {
            return Err(domain_status(DomainError::invalid(
                "target",
                "is required (character_key or group_id)",
            )));
        }
    };
    change(engine, tenant, ProfileChange::Bind { target, profile }).await?;
    Ok(Response::new(pb::BindProfileResponse {}))
}

/// ImportGroup.
pub(super) async fn import_group(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::ImportGroupRequest,
) -> Result<Response<pb::Group>, Status> {
    let pb::ImportGroupRequest { json } = request;
    let (id, parsed) = profiles::parse_st_group(&json).map_err(domain_status)?;
    let changed = change(
        engine,
        tenant,
        ProfileChange::PutGroup {
            id: id.clone(),
            group: parsed,
        },
    )
    .await?;
    Ok(Response::new(group(&id, &changed)?))
}

/// GetGroup.
pub(super) fn get_group(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::GetGroupRequest,
) -> Result<Response<pb::Group>, Status> {
    let pb::GetGroupRequest { group_id } = request;
    profiles::check_name("group_id", &group_id).map_err(domain_status)?;
    Ok(Response::new(group(
        &group_id,
        &engine.chats().profiles(tenant),
    )?))
}

/// ListGroups.
pub(super) fn list_groups(engine: &Engine, tenant: &Tenant) -> Response<pb::ListGroupsResponse> {
    let held = engine.chats().profiles(tenant);
    Response::new(pb::ListGroupsResponse {
        groups: held
            .groups
            .keys()
            .filter_map(|id| group(id, &held).ok())
            .collect(),
    })
}

/// SetGroupMembers.
pub(super) async fn set_group_members(
    engine: &Engine,
    tenant: &Tenant,
    request: pb::SetGroupMembersRequest,
) -> Result<Response<pb::Group>, Status> {
    let pb::SetGroupMembersRequest {
        group_id,
        disabled_members,
    } = request;
    profiles::check_name("group_id", &group_id).map_err(domain_status)?;
    let changed = change(
        engine,
        tenant,
        ProfileChange::SetDisabledMembers {
            id: group_id.clone(),
            disabled_members,
        },
    )
    .await?;
    Ok(Response::new(group(&group_id, &changed)?))
}

/// Stores what an extension settings import read of profiles (see
/// `ImportSettingsRequest.json`). A tenant-wide import (`chat` `None`)
/// stores the groups' disabled characters (added to each group's disabled
/// members; a group not known yet is created), the profiles and the
/// character bindings; a `chat_profiles` key that is a known group id
/// (after those) binds the group, any other key sets that chat's own
/// `profile`. A chat's import applies its own `chat_profiles` entry only.
/// A binding to a profile that neither the tenant nor the import has is
/// left out and listed in `ignored` (`character_profiles.<key>`,
/// `chat_profiles.<key>`), which is sorted again.
pub(super) async fn import_extension_profiles(
    engine: &Engine,
    tenant: &Tenant,
    chat: Option<&str>,
    imported: ImportedProfiles,
    ignored: &mut Vec<String>,
) -> Result<(), Status> {
    let ImportedProfiles {
        profiles: new_profiles,
        character_profiles,
        chat_profiles,
        disabled_group_characters,
    } = imported;
    let held = engine.chats().profiles(tenant);
    let exists = |name: &str| {
        held.profiles.contains_key(name) || new_profiles.iter().any(|(n, _)| n == name)
    };
    let mut groups = held
        .groups
        .keys()
        .cloned()
        .collect::<std::collections::BTreeSet<_>>();
    if chat.is_none() {
        groups.extend(disabled_group_characters.iter().map(|(id, _)| id.clone()));
    }
    let mut bindings = Vec::new();
    let mut chat_choices = Vec::new();
    for (key, profile) in character_profiles {
        if chat.is_some() {
            continue;
        }
        if exists(&profile) {
            bindings.push((BindTarget::Character(key), profile));
        } else {
            ignored.push(format!("character_profiles.{key}"));
        }
    }
    for (key, profile) in chat_profiles {
        if chat.is_some_and(|only| only != key) {
            continue;
        }
        if !exists(&profile) {
            ignored.push(format!("chat_profiles.{key}"));
        } else if chat.is_none() && groups.contains(&key) {
            bindings.push((BindTarget::Group(key), profile));
        } else {
            chat_choices.push((key, profile));
        }
    }
    ignored.sort();
    if chat.is_none() {
        if !disabled_group_characters.is_empty() {
            change(
                engine,
                tenant,
                ProfileChange::AddDisabledMembers(disabled_group_characters),
            )
            .await?;
        }
        if !new_profiles.is_empty() || !bindings.is_empty() {
            change(
                engine,
                tenant,
                ProfileChange::Import {
                    profiles: new_profiles,
                    bindings,
                },
            )
            .await?;
        }
    }
    for (id, profile) in chat_choices {
        let update = SettingsUpdate {
            patch: SettingsPatch {
                profile: Some(profile),
                ..SettingsPatch::default()
            },
            clear: Vec::new(),
        };
        engine
            .chats()
            .update_settings(tenant, Some(&tenant.chat(&id)), update)
            .await?;
    }
    Ok(())
}
