//! The running scene recap: numbered versions, one of them current.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::DomainError;
use super::footprint::Footprint;
use super::time::UnixMillis;
use super::verbatim::StVersion;

/// One version of a chat's running scene recap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecapVersion {
    /// Highest earlier version + 1; the first is 0.
    pub version: u32,
    /// When it was added, in milliseconds since the Unix epoch.
    pub created_at_ms: UnixMillis,
    /// The recap text the template wraps.
    pub content: String,
    /// How many scenes it combines.
    pub scene_count: u32,
    /// How many scenes it left out.
    pub excluded_count: u32,
    /// The scene message the previous version ended at, if any.
    pub prev_scene_message_id: Option<String>,
    /// The scene message this version covers up to, if any.
    pub new_scene_message_id: Option<String>,
    /// What the version had in a SillyTavern file that recapd keeps as it
    /// was (`event_keys`, ...); `None` for versions added through the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub st: Option<Box<StVersion>>,
    /// The chat whose running recap this version carries over (a chat
    /// started from another, StartChatFrom); `None` for the chat's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<String>,
}

/// What a client supplies for a new version; the number and time are assigned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(missing_docs)] // fields as in RecapVersion
pub struct NewRecap {
    pub content: String,
    pub scene_count: u32,
    pub excluded_count: u32,
    pub prev_scene_message_id: Option<String>,
    pub new_scene_message_id: Option<String>,
}

/// All versions of a chat's running recap. `current` names an existing
/// version, except in a chat read from a SillyTavern file whose current
/// version named none: that number is kept (and written back on export)
/// and nothing is current until a version is added or selected, as in the
/// extension, which then finds no current recap to inject.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunningRecaps {
    versions: BTreeMap<u32, RecapVersion>,
    current: Option<u32>,
}

/// The versions' map (built in bulk on load, so counted as grown one at a
/// time: the larger of the two) and their heap.
impl Footprint for RunningRecaps {
    fn heap_bytes(&self) -> usize {
        let RunningRecaps {
            versions,
            current: _,
        } = self;
        versions.heap_bytes()
    }
}

impl RunningRecaps {
    /// Rebuilds the set from stored (or imported) versions and the current
    /// number as given: a `current` that names no version, or none at all,
    /// stays so (no fall-back to the highest version).
    pub fn from_parts(versions: Vec<RecapVersion>, current: Option<u32>) -> Self {
        let versions: BTreeMap<u32, RecapVersion> =
            versions.into_iter().map(|v| (v.version, v)).collect();
        RunningRecaps { versions, current }
    }

    /// The current version's number, as set; it may name no version (see
    /// [`RunningRecaps`]).
    pub fn current_version(&self) -> Option<u32> {
        self.current
    }

    /// The current version; `None` when the current number names none.
    pub fn current(&self) -> Option<&RecapVersion> {
        self.current.and_then(|c| self.versions.get(&c))
    }

    /// One version by number.
    pub fn get(&self, version: u32) -> Option<&RecapVersion> {
        self.versions.get(&version)
    }

    /// Every version, ascending.
    pub fn versions(&self) -> impl Iterator<Item = &RecapVersion> {
        self.versions.values()
    }

    /// Adds a version numbered highest + 1 (0 for the first) and makes it current.
    pub fn add(&mut self, new: NewRecap, created_at_ms: UnixMillis) -> Result<u32, DomainError> {
        let version = match self.versions.keys().next_back() {
            None => 0,
            Some(highest) => highest.checked_add(1).ok_or_else(|| {
                DomainError::invalid("version", "the highest version number is in use")
            })?,
        };
        let NewRecap {
            content,
            scene_count,
            excluded_count,
            prev_scene_message_id,
            new_scene_message_id,
        } = new;
        self.versions.insert(
            version,
            RecapVersion {
                version,
                created_at_ms,
                content,
                scene_count,
                excluded_count,
                prev_scene_message_id,
                new_scene_message_id,
                st: None,
                carried_from: None,
            },
        );
        self.current = Some(version);
        Ok(version)
    }

    /// Makes an existing version current.
    pub fn select(&mut self, version: u32) -> Result<(), DomainError> {
        if !self.versions.contains_key(&version) {
            return Err(not_found(version));
        }
        self.current = Some(version);
        Ok(())
    }

    /// Deletes a version; if it was current, the highest remaining one
    /// becomes current.
    pub fn delete(&mut self, version: u32) -> Result<(), DomainError> {
        if self.versions.remove(&version).is_none() {
            return Err(not_found(version));
        }
        if self.current == Some(version) {
            self.current = self.versions.keys().next_back().copied();
        }
        Ok(())
    }

    /// `cleanup_invalid_running_recaps`: deletes every version whose scene
    /// message is not valid according to `scene_is_valid` (a version without
    /// a scene reference is kept). Returns the deleted version numbers.
    pub fn cleanup(&mut self, scene_is_valid: impl Fn(&str) -> bool) -> Vec<u32> {
        let invalid: Vec<u32> = self
            .versions
            .values()
            .filter(|v| {
                v.new_scene_message_id
                    .as_deref()
                    .is_some_and(|id| !scene_is_valid(id))
            })
            .map(|v| v.version)
            .collect();
        for version in &invalid {
            // Each number was just read from the map, so delete cannot fail.
            let _ = self.delete(*version);
        }
        invalid
    }
}

fn not_found(version: u32) -> DomainError {
    DomainError::NotFound(format!("running recap version {version}"))
}

#[cfg(test)]
mod tests;
