//! Settings profiles and group chats: a tenant's named settings patches,
//! which profile a chat uses, and the groups its chats may belong to.
//!
//! A chat's settings resolve as the defaults, then the tenant's global
//! settings, then its profile, then its own overrides. Its profile is the
//! first of these that names a profile the tenant has:
//!
//! 1. the chat's own `profile` override (an empty name there means "no
//!    profile", and stops the search);
//! 2. its group's binding (the group is the one the chat says it is in,
//!    else the group whose `chats` list it);
//! 3. its character's binding;
//! 4. the global settings' `profile` (the tenant's default profile).
//!
//! A name that names no profile is passed over (a deleted profile does not
//! make its chats fail). A profile's own `profile` field is never read.
//!
//! A group's disabled members are excluded from that group's chats only
//! ([`crate::inclusion::Exclusion::DisabledGroupMember`]): the resolved
//! settings carry them ([`crate::settings::Settings::group_disabled_members`]).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::DomainError;
use super::ids;
use super::settings::{Settings, SettingsPatch};

/// Most profiles a tenant may have.
pub const MAX_PROFILES: usize = 100;
/// Most character and group bindings a tenant may have, each kind.
pub const MAX_BINDINGS: usize = 10_000;
/// Most groups a tenant may have.
pub const MAX_GROUPS: usize = 1_000;
/// Most members (and most disabled members) of one group.
pub const MAX_GROUP_MEMBERS: usize = 1_000;
/// Most chats one group lists.
pub const MAX_GROUP_CHATS: usize = 10_000;
/// Longest SillyTavern group file ImportGroup reads, in bytes.
pub const MAX_GROUP_FILE_BYTES: usize = 4 * 1024 * 1024;

/// One group chat's group (SillyTavern's `groups/<id>.json`, the parts
/// recapd uses).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Group {
    /// Its display name.
    pub name: String,
    /// Its members' character keys (avatar file names).
    pub members: Vec<String>,
    /// The members whose messages its chats leave out (character keys).
    pub disabled_members: Vec<String>,
    /// Its chats' ids.
    pub chats: Vec<String>,
}

/// A tenant's profiles, bindings and groups, as stored (one row per
/// tenant).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Profiles {
    /// Profile name to its settings patch (over the global settings).
    pub profiles: BTreeMap<String, SettingsPatch>,
    /// Character key to the profile bound to it.
    pub character_profiles: BTreeMap<String, String>,
    /// Group id to the profile bound to it.
    pub group_profiles: BTreeMap<String, String>,
    /// Group id to the group.
    pub groups: BTreeMap<String, Group>,
}

/// What a chat says about itself that decides its profile and group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChatIdentity<'a> {
    /// The chat's id.
    pub chat_id: &'a str,
    /// The character the chat is with, when known.
    pub character_key: Option<&'a str>,
    /// The group the chat says it is in, when it says so.
    pub group_id: Option<&'a str>,
}

/// What a binding is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindTarget {
    /// A character (its key, the avatar file name).
    Character(String),
    /// A group (its id).
    Group(String),
}

/// Checks a profile name or a group id: the chat-id rules (non-empty, at
/// most [`ids::MAX_ID_BYTES`] bytes, no control characters).
pub fn check_name(field: &str, name: &str) -> Result<(), DomainError> {
    ids::check_chat_id(field, name)
}

impl Profiles {
    /// Sets (creates or replaces) a profile. Its `profile` field must be
    /// absent; at most [`MAX_PROFILES`] profiles.
    pub fn put_profile(&mut self, name: &str, patch: SettingsPatch) -> Result<(), DomainError> {
        check_name("name", name)?;
        if patch.profile.is_some() {
            return Err(DomainError::invalid(
                "settings.profile",
                "a profile cannot name another profile",
            ));
        }
        if !self.profiles.contains_key(name) && self.profiles.len() >= MAX_PROFILES {
            return Err(DomainError::ResourceExhausted(format!(
                "a tenant has at most {MAX_PROFILES} profiles"
            )));
        }
        self.profiles.insert(name.to_owned(), patch);
        Ok(())
    }

    /// Removes a profile (its bindings stay, and are passed over while it
    /// does not exist). `NotFound` when it does not exist.
    pub fn delete_profile(&mut self, name: &str) -> Result<(), DomainError> {
        check_name("name", name)?;
        self.profiles
            .remove(name)
            .map(drop)
            .ok_or_else(|| DomainError::NotFound(format!("profile {name:?}")))
    }

    /// Binds `profile` to `target`; an empty `profile` unbinds. Binding a
    /// profile that does not exist is `NotFound`.
    pub fn bind(&mut self, target: &BindTarget, profile: &str) -> Result<(), DomainError> {
        let (map, field, key) = match target {
            BindTarget::Character(key) => {
                (&mut self.character_profiles, "character_key", key.as_str())
            }
            BindTarget::Group(id) => (&mut self.group_profiles, "group_id", id.as_str()),
        };
        check_name(field, key)?;
        if profile.is_empty() {
            map.remove(key);
            return Ok(());
        }
        check_name("profile", profile)?;
        if !self.profiles.contains_key(profile) {
            return Err(DomainError::NotFound(format!("profile {profile:?}")));
        }
        if !map.contains_key(key) && map.len() >= MAX_BINDINGS {
            return Err(DomainError::ResourceExhausted(format!(
                "a tenant has at most {MAX_BINDINGS} bindings of each kind"
            )));
        }
        map.insert(key.to_owned(), profile.to_owned());
        Ok(())
    }

    /// Sets (creates or replaces) a group; at most [`MAX_GROUPS`].
    pub fn put_group(&mut self, id: &str, group: Group) -> Result<(), DomainError> {
        check_name("group_id", id)?;
        check_group(&group)?;
        if !self.groups.contains_key(id) && self.groups.len() >= MAX_GROUPS {
            return Err(DomainError::ResourceExhausted(format!(
                "a tenant has at most {MAX_GROUPS} groups"
            )));
        }
        self.groups.insert(id.to_owned(), group);
        Ok(())
    }

    /// Which chat is in which group, from the groups' `chats` lists (a
    /// chat listed by two groups is in the one whose id sorts first).
    pub fn chat_groups(&self) -> HashMap<String, String> {
        let mut index = HashMap::new();
        for (id, group) in self.groups.iter().rev() {
            for chat in &group.chats {
                index.insert(chat.clone(), id.clone());
            }
        }
        index
    }

    /// The group a chat is in: the one it says, else the one that lists it
    /// in `chat_groups` ([`Profiles::chat_groups`]).
    pub fn group_of<'a>(
        &'a self,
        chat: ChatIdentity<'a>,
        chat_groups: &'a HashMap<String, String>,
    ) -> Option<&'a str> {
        chat.group_id
            .filter(|id| !id.is_empty())
            .or_else(|| chat_groups.get(chat.chat_id).map(String::as_str))
    }

    /// The profile that applies to a chat (see the module's documentation),
    /// with its name. `own` is the chat's own `profile` override, `global`
    /// the global settings' `profile`, `group` the chat's group.
    pub fn profile_for<'a>(
        &'a self,
        own: Option<&'a str>,
        group: Option<&str>,
        character: Option<&str>,
        global: Option<&'a str>,
    ) -> Option<(&'a str, &'a SettingsPatch)> {
        if own.is_some_and(str::is_empty) {
            return None;
        }
        let group_binding = group.and_then(|g| self.group_profiles.get(g));
        let character_binding = character
            .filter(|c| !c.is_empty())
            .and_then(|c| self.character_profiles.get(c));
        [
            own,
            group_binding.map(String::as_str),
            character_binding.map(String::as_str),
            global.filter(|g| !g.is_empty()),
        ]
        .into_iter()
        .flatten()
        .find_map(|name| self.profiles.get_key_value(name))
        .map(|(name, patch)| (name.as_str(), patch))
    }
}

/// A chat's effective settings: `global` (the defaults with the global
/// settings), then its profile, then `own` (its overrides); `profile` set
/// to the applied profile's name (unset when none applies) and
/// `group_disabled_members` to its group's disabled members.
pub fn resolve(
    global: &Settings,
    profiles: &Profiles,
    chat_groups: &HashMap<String, String>,
    chat: ChatIdentity<'_>,
    own: Option<&SettingsPatch>,
) -> Settings {
    let group = profiles.group_of(chat, chat_groups);
    let applied = profiles.profile_for(
        own.and_then(|o| o.profile.as_deref()),
        group,
        chat.character_key,
        global.chat.profile.as_deref(),
    );
    let mut settings = match applied {
        Some((_, patch)) => global.with(patch),
        None => global.clone(),
    };
    if let Some(own) = own {
        settings = settings.with(own);
    }
    settings.chat.profile = applied.map(|(name, _)| name.to_owned());
    settings.group_disabled_members = group
        .and_then(|g| profiles.groups.get(g))
        .map(|g| g.disabled_members.clone())
        .unwrap_or_default();
    settings
}

fn check_group(group: &Group) -> Result<(), DomainError> {
    let lists = [
        ("members", &group.members, MAX_GROUP_MEMBERS),
        (
            "disabled_members",
            &group.disabled_members,
            MAX_GROUP_MEMBERS,
        ),
        ("chats", &group.chats, MAX_GROUP_CHATS),
    ];
    for (field, list, max) in lists {
        if list.len() > max {
            return Err(DomainError::invalid(
                field,
                format!("has {} entries; at most {max}", list.len()),
            ));
        }
        for (i, value) in list.iter().enumerate() {
            check_name(&format!("{field}[{i}]"), value)?;
        }
    }
    if group.name.len() > ids::MAX_ID_BYTES * 4 {
        return Err(DomainError::invalid("name", "is too long"));
    }
    Ok(())
}

/// Reads SillyTavern's `groups/<id>.json`: its `id` and the parts recapd
/// keeps (`name`, `members`, `disabled_members`, `chats`; every other
/// member is left as it is in SillyTavern). Errors name `json.<member>`.
pub fn parse_st_group(json: &str) -> Result<(String, Group), DomainError> {
    if json.len() > MAX_GROUP_FILE_BYTES {
        return Err(DomainError::invalid(
            "json",
            format!("is over {MAX_GROUP_FILE_BYTES} bytes"),
        ));
    }
    let object = match serde_json::from_str(json) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return Err(DomainError::invalid("json", "must be a JSON object")),
        Err(e) => return Err(DomainError::invalid("json", format!("does not parse: {e}"))),
    };
    let id = match object.get("id") {
        Some(Value::String(id)) => id.clone(),
        // SillyTavern's ids are `String(Date.now())`; older files may hold
        // the number.
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(DomainError::invalid("json.id", "must be a string")),
    };
    check_name("json.id", &id)?;
    let name = match object.get("name") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(name)) => name.clone(),
        Some(_) => return Err(DomainError::invalid("json.name", "must be a string")),
    };
    let list = |key: &str, max: usize| -> Result<Vec<String>, DomainError> {
        let field = format!("json.{key}");
        let values = match object.get(key) {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(values)) => values,
            Some(_) => return Err(DomainError::invalid(field, "must be an array of strings")),
        };
        if values.len() > max {
            return Err(DomainError::invalid(
                field,
                format!("has {} entries; at most {max}", values.len()),
            ));
        }
        let mut out: Vec<String> = Vec::with_capacity(values.len());
        let mut seen = std::collections::HashSet::new();
        for (i, value) in values.iter().enumerate() {
            let Value::String(value) = value else {
                return Err(DomainError::invalid(
                    format!("{field}[{i}]"),
                    "must be a string",
                ));
            };
            check_name(&format!("{field}[{i}]"), value)?;
            if seen.insert(value.as_str()) {
                out.push(value.clone());
            }
        }
        Ok(out)
    };
    let group = Group {
        name,
        members: list("members", MAX_GROUP_MEMBERS)?,
        disabled_members: list("disabled_members", MAX_GROUP_MEMBERS)?,
        chats: list("chats", MAX_GROUP_CHATS)?,
    };
    check_group(&group)?;
    Ok((id, group))
}

#[cfg(test)]
mod tests;
