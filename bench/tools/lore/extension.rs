//! The requests ST-Auto-Summarize (the extension recapd follows; its
//! queue pipeline at commit 5083d00) makes for one scene with its
//! lorebook on, computed from what the scene is: what its code does per
//! scene and per entity, counted (BENCHMARKS.md, "Lore writing", gives the
//! formula with the code lines it comes from). Scene-break detection is
//! left out on both sides.
//!
//! Per scene: four stage requests (extraction, organisation, parsing,
//! the filter against active lore), then per entity a lookup request
//! unless the book was empty when the scene started (or the fourth stage
//! tagged the entity with its entry's uid), a resolution when the lookup
//! is unsure, a merge request per entity merged (a creation makes none), a
//! compaction before a merge into an entry past the threshold, and one
//! request combining the scene into the running recap.

use super::story::Counts;

/// The extension's stage requests per scene: GENERATE_SCENE_RECAP,
/// ORGANIZE_SCENE_RECAP, PARSE_SCENE_RECAP, FILTER_SCENE_RECAP_SL.
pub const STAGES: usize = 4;
/// COMBINE_SCENE_WITH_RUNNING: one per scene.
pub const COMBINE: usize = 1;

/// The extension's requests for one scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtensionRequests {
    /// Stages 1 to 4.
    pub stages: usize,
    /// LOREBOOK_ENTRY_LOOKUP requests.
    pub lookups: usize,
    /// RESOLVE_LOREBOOK_ENTRY requests.
    pub resolutions: usize,
    /// Merge requests (creations make none).
    pub merges: usize,
    /// Compactions before merges.
    pub compactions: usize,
    /// The running recap's combine.
    pub combine: usize,
}

impl ExtensionRequests {
    /// The requests for a scene of `counts` entities, the book empty or
    /// not when it started, `compactions` entries past the threshold when
    /// merged into (the same as recapd's: the same facts merged the same
    /// way). `fewest`: every model answer as favourable to the extension as
    /// it can be (the fourth stage tags every known entity with its uid, so
    /// it skips the lookup; every lookup is sure, so no resolution);
    /// otherwise every entity is looked up and the ambiguous ones resolved,
    /// as recapd resolves them.
    pub fn for_scene(
        counts: &Counts,
        book_empty: bool,
        compactions: usize,
        fewest: bool,
    ) -> ExtensionRequests {
        let (lookups, resolutions) = match (book_empty, fewest) {
            (true, _) => (0, 0),
            (false, false) => (counts.entities(), counts.ambiguous()),
            (false, true) => (counts.entities() - counts.known, 0),
        };
        ExtensionRequests {
            stages: STAGES,
            lookups,
            resolutions,
            merges: counts.known + counts.ambiguous_same,
            compactions,
            combine: COMBINE,
        }
    }

    /// All of them.
    pub fn total(&self) -> usize {
        self.stages
            + self.lookups
            + self.resolutions
            + self.merges
            + self.compactions
            + self.combine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCENE: Counts = Counts {
        new: 2,
        known: 3,
        ambiguous_same: 1,
        ambiguous_new: 1,
    };

    #[test]
    fn every_entity_is_looked_up_once_the_book_has_entries() {
        let typical = ExtensionRequests::for_scene(&SCENE, false, 1, false);
        // 4 stages + 7 lookups + 2 resolutions + 4 merges + 1 compaction + 1 combine.
        assert_eq!(typical.total(), 19);
    }

    #[test]
    fn known_entities_tagged_by_the_fourth_stage_skip_the_lookup() {
        let fewest = ExtensionRequests::for_scene(&SCENE, false, 0, true);
        // 4 + 4 lookups (new and ambiguous) + 0 + 4 merges + 0 + 1.
        assert_eq!(fewest.total(), 13);
    }

    #[test]
    fn an_empty_book_skips_every_lookup() {
        let first = Counts {
            new: 5,
            ..Counts::default()
        };
        assert_eq!(
            ExtensionRequests::for_scene(&first, true, 0, false).total(),
            5
        );
    }
}
