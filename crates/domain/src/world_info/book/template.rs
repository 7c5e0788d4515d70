//! The entry SillyTavern's editor creates: `createWorldInfoEntry`
//! (world-info.js:4057-4069 at 51ad27f) puts `uid` first, then the
//! members of `newWorldInfoEntryTemplate` (:4002-4055: the definitions
//! not marked `excludeFromTemplate`, in their order); the editor then adds
//! `displayIndex` = uid when it first renders the entry (:2365).

use serde_json::value::RawValue;

use super::json::raw;

/// `newWorldInfoEntryTemplate`'s members and default values as JSON text,
/// in SillyTavern's order (`depth` is `DEFAULT_DEPTH` = 4 and
/// `groupWeight` is `DEFAULT_WEIGHT` = 100, world-info.js:96-97;
/// `selectiveLogic` is `AND_ANY` = 0, :34).
pub(in crate::world_info) const TEMPLATE: [(&str, &str); 39] = [
    ("key", "[]"),
    ("keysecondary", "[]"),
    ("comment", "\"\""),
    ("content", "\"\""),
    ("constant", "false"),
    ("vectorized", "false"),
    ("selective", "true"),
    ("selectiveLogic", "0"),
    ("addMemo", "false"),
    ("order", "100"),
    ("position", "0"),
    ("disable", "false"),
    ("ignoreBudget", "false"),
    ("excludeRecursion", "false"),
    ("preventRecursion", "false"),
    ("matchPersonaDescription", "false"),
    ("matchCharacterDescription", "false"),
    ("matchCharacterPersonality", "false"),
    ("matchCharacterDepthPrompt", "false"),
    ("matchScenario", "false"),
    ("matchCreatorNotes", "false"),
    ("delayUntilRecursion", "0"),
    ("probability", "100"),
    ("useProbability", "true"),
    ("depth", "4"),
    ("outletName", "\"\""),
    ("group", "\"\""),
    ("groupOverride", "false"),
    ("groupWeight", "100"),
    ("scanDepth", "null"),
    ("caseSensitive", "null"),
    ("matchWholeWords", "null"),
    ("useGroupScoring", "null"),
    ("automationId", "\"\""),
    ("role", "0"),
    ("sticky", "null"),
    ("cooldown", "null"),
    ("delay", "null"),
    ("triggers", "[]"),
];

/// A new entry's members for uid `n`, before the caller's fields apply.
pub(super) fn new_entry(n: u64) -> Vec<(String, Box<RawValue>)> {
    let uid = n.to_string();
    std::iter::once(("uid", uid.as_str()))
        .chain(TEMPLATE)
        .chain(std::iter::once(("displayIndex", uid.as_str())))
        .map(|(name, value)| (name.to_owned(), raw(value.to_owned())))
        .collect()
}
