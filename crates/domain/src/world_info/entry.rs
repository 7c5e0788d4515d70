//! What the scanner reads of one World Info entry.
//!
//! SillyTavern's scanner reads the entry's raw JSON with JavaScript's
//! truthiness: defaults are filled only by its editor, so a missing
//! `selective` turns secondary keys off, a missing `useProbability` means
//! no roll, a missing `position` activates the entry but places it nowhere.
//! [`Entry::read`] reads exactly that way.

use crate::settings::Role;

use super::types::{GenerationType, WiPosition};

pub(crate) mod js;
mod read;
#[cfg(test)]
mod tests;

pub(crate) use js::is_js_space;

/// How secondary keys combine with the primary match (`selectiveLogic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelectiveLogic {
    /// 0: at least one secondary key matches.
    #[default]
    AndAny,
    /// 1: at least one secondary key does not match.
    NotAll,
    /// 2: no secondary key matches.
    NotAny,
    /// 3: every secondary key matches.
    AndAll,
}

/// An entry's character filter (`characterFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CharacterFilter {
    /// The names and tags exclude instead of include.
    pub is_exclude: bool,
    /// Character names (avatar file names in SillyTavern).
    pub names: Vec<String>,
    /// Tag names.
    pub tags: Vec<String>,
}

/// The extra texts an entry may ask to be scanned (`match*` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchExtras {
    /// `matchPersonaDescription`.
    pub persona_description: bool,
    /// `matchCharacterDescription`.
    pub character_description: bool,
    /// `matchCharacterPersonality`.
    pub character_personality: bool,
    /// `matchCharacterDepthPrompt`.
    pub character_depth_prompt: bool,
    /// `matchScenario`.
    pub scenario: bool,
    /// `matchCreatorNotes`.
    pub creator_notes: bool,
}

/// One entry as the scanner reads it. Fields are named after SillyTavern's.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key of the entry in the book's `entries` object.
    pub uid: String,
    /// Primary keys (`key`).
    pub key: Vec<String>,
    /// Secondary keys (`keysecondary`).
    pub keysecondary: Vec<String>,
    /// The title (`comment`).
    pub comment: String,
    /// The text put into the prompt.
    pub content: String,
    /// Always active.
    pub constant: bool,
    /// Secondary keys apply (missing: false, as SillyTavern reads it).
    pub selective: bool,
    /// How secondary keys apply.
    pub selective_logic: SelectiveLogic,
    /// Sort order within a position; higher goes later. `Number()` of what
    /// is written; NaN when missing (SillyTavern's sort then treats it as
    /// equal to anything).
    pub order: f64,
    /// Where it goes; `None` places it nowhere.
    pub position: Option<WiPosition>,
    /// Never activates.
    pub disable: bool,
    /// Goes in even past the budget.
    pub ignore_budget: bool,
    /// Not activated by recursion.
    pub exclude_recursion: bool,
    /// Its content does not feed recursion.
    pub prevent_recursion: bool,
    /// Activates only in recursion passes of at least this level; 0: off.
    pub delay_until_recursion: u32,
    /// Chance in percent, when `use_probability`; NaN when missing (every
    /// roll then fails, as `roll <= undefined` does in SillyTavern).
    pub probability: f64,
    /// Whether the probability roll happens.
    pub use_probability: bool,
    /// At-depth depth; `None` when missing.
    pub depth: Option<u32>,
    /// At-depth role.
    pub role: Role,
    /// The outlet's name (position 7).
    pub outlet_name: String,
    /// Inclusion groups, comma-separated as written.
    pub group: String,
    /// Wins its groups over weights (highest `order` among overriders).
    pub group_override: bool,
    /// Weight in its groups' draw.
    pub group_weight: f64,
    /// Messages scanned for this entry; `None`: the global depth.
    pub scan_depth: Option<i64>,
    /// Case sensitivity; `None`: the global setting.
    pub case_sensitive: Option<bool>,
    /// Whole-word matching; `None`: the global setting.
    pub match_whole_words: Option<bool>,
    /// Group scoring; `None`: the global setting.
    pub use_group_scoring: Option<bool>,
    /// Sticky for this many messages, the number as JavaScript reads it
    /// (an effect ends once the chat has `start + sticky` messages, so a
    /// fraction counts as the next whole number and a negative number ends
    /// the effect at the next scan, as in SillyTavern); whether there is an
    /// effect at all is [`Entry::has_sticky`].
    pub sticky: f64,
    /// Cooldown for this many messages, read as `sticky` is; see
    /// [`Entry::has_cooldown`].
    pub cooldown: f64,
    /// Not before the chat has this many messages; 0: none.
    pub delay: u32,
    /// Generation types it fires on; empty: all.
    pub triggers: Vec<GenerationType>,
    /// Which characters it applies to.
    pub character_filter: CharacterFilter,
    /// Extra texts scanned for it.
    pub match_extras: MatchExtras,
    /// SillyTavern's hash of the entry (timed effects compare it to tell an
    /// edited entry from the one that started an effect): `getStringHash`
    /// of `JSON.stringify` of the entry as SillyTavern loads it (`uid`,
    /// then `world` = the book's name, then the other members as written,
    /// `content` without its decorator lines, `decorators` appended;
    /// world-info.js:4471,4515-4521, utils.js:522-539), so timed effects
    /// imported from SillyTavern keep applying. It depends on the order of
    /// the entry's members, as SillyTavern's does (facts §7).
    pub hash: u64,
    /// `String(entry.uid)`: the entry's own `uid` member as JavaScript
    /// writes it (`"undefined"` when absent). SillyTavern names an entry
    /// `<book>.<uid member>` when it activates and in timed effects
    /// (world-info.js:4386, 4682, 543-545), and two entries with the same
    /// one are the same entry there; it equals [`Entry::uid`] in any book
    /// SillyTavern wrote.
    pub uid_member: String,
    /// Loading this entry makes SillyTavern's `getSortedEntries` throw,
    /// after which the scan sees no entry of any book (world-info.js:
    /// 4525-4528): the entry is JSON `null`, or its `content` is truthy
    /// but not a string.
    pub breaks_loading: bool,
    /// `sticky` is truthy: activating starts a sticky effect, even one of
    /// 0 messages (`"0"`).
    pub has_sticky: bool,
    /// `cooldown` is truthy: activating (or a sticky ending) starts a
    /// cooldown, even one of 0 messages.
    pub has_cooldown: bool,
    /// The content's first lines held the decorator `@@activate`
    /// (world-info.js:4540-4590, 4741-4745).
    pub activate_decorator: bool,
    /// The content's first lines held the decorator `@@dont_activate`.
    pub dont_activate_decorator: bool,
    /// `triggers` is a non-empty array: the entry fires only on the
    /// generation types in [`Entry::triggers`] (none, when every name in it
    /// is unknown; world-info.js:4689-4695).
    pub has_triggers: bool,
    /// `selectiveLogic` as written: `None` when missing or null, NaN for a
    /// value that is not a number. The scanner compares this, not
    /// [`Entry::selective_logic`]: activation reads `?? 0` and then only
    /// 0-3 mean anything (any other value never satisfies the secondary
    /// keys, world-info.js:4816-4866), group scoring reads it without a
    /// default (world-info.js:462-470).
    pub selective_logic_raw: Option<f64>,
}
