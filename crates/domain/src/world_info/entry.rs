//! What the scanner reads of one World Info entry.
//!
//! SillyTavern's scanner reads the entry's raw JSON with JavaScript's
//! truthiness: defaults are filled only by its editor, so a missing
//! `selective` turns secondary keys off, a missing `useProbability` means
//! no roll, a missing `position` activates the entry but places it nowhere.
//! [`Entry::read`] reads exactly that way.

use crate::settings::Role;

use super::types::{GenerationType, WiPosition};

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
    /// Sort order within a position; higher goes later.
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
    /// Chance in percent, when `use_probability`.
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
    /// Sticky for this many messages; 0: not sticky.
    pub sticky: u32,
    /// Cooldown for this many messages; 0: none.
    pub cooldown: u32,
    /// Not before the chat has this many messages; 0: none.
    pub delay: u32,
    /// Generation types it fires on; empty: all.
    pub triggers: Vec<GenerationType>,
    /// Which characters it applies to.
    pub character_filter: CharacterFilter,
    /// Extra texts scanned for it.
    pub match_extras: MatchExtras,
    /// A hash of the entry's whole JSON text (timed effects compare it to
    /// tell an edited entry from the one that started an effect).
    pub hash: u64,
}
