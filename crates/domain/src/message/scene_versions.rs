//! Scene-recap versions: every recap a scene had, and which one is current.
//!
//! ST-Auto-Recap keeps each recap of a scene in `scene_recap_versions` and
//! the shown one's index in `scene_recap_current_index`, with
//! `scene_recap_memory` a copy of the current version. recapd keeps the
//! same three fields with one rule: whenever recapd changes a scene recap
//! (a recap it wrote, a client's SetMessageData, a selection), the memory
//! is the current version afterwards. Data read from a file is kept as
//! the file had it until it is changed.

use super::MessageData;
use crate::DomainError;

/// The most versions one scene keeps: adding one past it lets go of the
/// oldest.
pub const MAX_SCENE_RECAP_VERSIONS: usize = 1000;

/// What a scene-recap change asks for (the three fields of an update).
#[derive(Clone, Copy)]
pub(super) struct SceneRecapUpdate<'a> {
    pub versions: Option<&'a Vec<String>>,
    pub index: Option<u32>,
    pub memory: Option<&'a String>,
}

impl SceneRecapUpdate<'_> {
    fn is_empty(&self) -> bool {
        self.versions.is_none() && self.index.is_none() && self.memory.is_none()
    }
}

impl MessageData {
    /// The versions as recapd reads them: the stored list, or, for data
    /// that never had one, the scene recap alone (none when it is unset
    /// or empty, as the extension starts a list from an empty recap).
    pub fn scene_recap_version_list(&self) -> Vec<String> {
        match (&self.scene_recap_versions, &self.scene_recap_memory) {
            (Some(versions), _) => versions.clone(),
            (None, Some(memory)) if !memory.is_empty() => vec![memory.clone()],
            (None, _) => Vec::new(),
        }
    }

    /// The index of the current version in
    /// [`MessageData::scene_recap_version_list`] (a missing index reads
    /// as 0, as the extension reads it).
    pub fn scene_recap_index(&self) -> u32 {
        self.scene_recap_current_index.unwrap_or(0)
    }

    /// Makes version `index` current: the memory becomes its text.
    pub fn select_scene_recap_version(&mut self, index: u32) -> Result<(), DomainError> {
        let versions = self.scene_recap_version_list();
        let Some(text) = usize::try_from(index).ok().and_then(|i| versions.get(i)) else {
            return Err(out_of_range("index", index, versions.len()));
        };
        self.scene_recap_memory = Some(text.clone());
        self.scene_recap_versions = Some(versions);
        self.scene_recap_current_index = Some(index);
        Ok(())
    }

    /// Applies the scene-recap fields of an update, or refuses it whole:
    /// - `versions` replaces the list (the current index then the given
    ///   one, else the last);
    /// - `index` alone selects a version of the list held;
    /// - `memory` that differs from the current version is a new version,
    ///   appended and made current (the newest
    ///   [`MAX_SCENE_RECAP_VERSIONS`] are kept); equal to it, nothing.
    ///
    /// The memory is the current version afterwards.
    pub(super) fn merge_scene_recap(
        &mut self,
        update: SceneRecapUpdate<'_>,
    ) -> Result<(), DomainError> {
        if update.is_empty() {
            return Ok(());
        }
        let (mut versions, mut index) = match update.versions {
            Some(versions) => {
                let last = versions.len().saturating_sub(1);
                let index = update.index.map_or(Ok(last), |index| {
                    usize::try_from(index)
                        .ok()
                        .filter(|i| *i < versions.len())
                        .ok_or_else(|| out_of_range(INDEX_FIELD, index, versions.len()))
                })?;
                (versions.clone(), index)
            }
            None => {
                let versions = self.scene_recap_version_list();
                let index = match update.index {
                    Some(index) => usize::try_from(index)
                        .ok()
                        .filter(|i| *i < versions.len())
                        .ok_or_else(|| out_of_range(INDEX_FIELD, index, versions.len()))?,
                    None => usize::try_from(self.scene_recap_index()).unwrap_or(usize::MAX),
                };
                (versions, index)
            }
        };
        if let Some(memory) = update.memory
            && versions.get(index) != Some(memory)
        {
            versions.push(memory.clone());
            let excess = versions.len().saturating_sub(MAX_SCENE_RECAP_VERSIONS);
            versions.drain(..excess);
            index = versions.len() - 1;
        }
        match versions.get(index) {
            Some(current) => {
                self.scene_recap_memory = Some(current.clone());
                self.scene_recap_current_index = Some(u32::try_from(index).unwrap_or(u32::MAX));
            }
            // An empty list given by the client: no scene recap.
            None => {
                self.scene_recap_memory = None;
                self.scene_recap_current_index = None;
            }
        }
        self.scene_recap_versions = Some(versions);
        Ok(())
    }
}

/// The update's index field, as the API spells it.
const INDEX_FIELD: &str = "data.scene_recap_current_index";

fn out_of_range(field: &str, index: u32, len: usize) -> DomainError {
    DomainError::invalid(
        field,
        format!("{index} is not an index of the message's {len} scene-recap versions"),
    )
}
