//! The vocabulary the World Info parts share.

use crate::settings::Role;

/// Where an activated entry goes (SillyTavern's `world_info_position`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WiPosition {
    /// 0: before the character definitions (`wiBefore`).
    Before,
    /// 1: after the character definitions (`wiAfter`).
    After,
    /// 2: above the author's note.
    AnTop,
    /// 3: below the author's note.
    AnBottom,
    /// 4: in the chat at `depth`, with `role`.
    AtDepth,
    /// 5: above the example messages.
    ExamplesTop,
    /// 6: below the example messages.
    ExamplesBottom,
    /// 7: in the named outlet (`{{outlet::name}}`).
    Outlet,
}

impl WiPosition {
    /// SillyTavern's number for the position; `None` for any other number
    /// (such an entry activates but is placed nowhere, as in SillyTavern).
    pub fn from_number(n: i64) -> Option<WiPosition> {
        Some(match n {
            0 => WiPosition::Before,
            1 => WiPosition::After,
            2 => WiPosition::AnTop,
            3 => WiPosition::AnBottom,
            4 => WiPosition::AtDepth,
            5 => WiPosition::ExamplesTop,
            6 => WiPosition::ExamplesBottom,
            7 => WiPosition::Outlet,
            _ => return None,
        })
    }

    /// SillyTavern's number for the position.
    pub fn number(self) -> i64 {
        match self {
            WiPosition::Before => 0,
            WiPosition::After => 1,
            WiPosition::AnTop => 2,
            WiPosition::AnBottom => 3,
            WiPosition::AtDepth => 4,
            WiPosition::ExamplesTop => 5,
            WiPosition::ExamplesBottom => 6,
            WiPosition::Outlet => 7,
        }
    }
}

/// What kind of generation a scan is for (an entry's `triggers` name
/// these; SillyTavern's `constants.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GenerationType {
    /// A new reply.
    #[default]
    Normal,
    /// Continuing the last message.
    Continue,
    /// Writing the user's message.
    Impersonate,
    /// A new swipe.
    Swipe,
    /// Regenerating the last reply.
    Regenerate,
    /// A background (quiet) generation.
    Quiet,
}

impl GenerationType {
    /// All of them, in SillyTavern's order.
    pub const ALL: [GenerationType; 6] = [
        GenerationType::Normal,
        GenerationType::Continue,
        GenerationType::Impersonate,
        GenerationType::Swipe,
        GenerationType::Regenerate,
        GenerationType::Quiet,
    ];

    /// SillyTavern's name for it.
    pub fn name(self) -> &'static str {
        match self {
            GenerationType::Normal => "normal",
            GenerationType::Continue => "continue",
            GenerationType::Impersonate => "impersonate",
            GenerationType::Swipe => "swipe",
            GenerationType::Regenerate => "regenerate",
            GenerationType::Quiet => "quiet",
        }
    }

    /// The type SillyTavern's name names; `None` for any other text.
    pub fn from_name(name: &str) -> Option<GenerationType> {
        GenerationType::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// One entry an activation put in, as the scan hands it to placement.
#[derive(Debug, Clone, PartialEq)]
pub struct Activated {
    /// The book it comes from.
    pub book: String,
    /// Its uid (the key of the book's `entries` object).
    pub uid: String,
    /// Where it goes; `None` (a missing or unknown `position`) places it
    /// nowhere, as in SillyTavern.
    pub position: Option<WiPosition>,
    /// For [`WiPosition::AtDepth`]: its depth; `None` when the entry has
    /// no `depth` (SillyTavern then never inserts it).
    pub depth: Option<u32>,
    /// For [`WiPosition::AtDepth`]: its role.
    pub role: Role,
    /// Its `order` (higher goes later within a position).
    pub order: f64,
    /// For [`WiPosition::Outlet`]: the outlet's name.
    pub outlet_name: String,
    /// Its content, macros substituted.
    pub content: String,
}

/// What a generation knows of its character and persona, as World Info
/// reads it: the texts an entry's `match*` flags add to its scan, and the
/// names its macros and character filter read. Empty: absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScanTexts {
    /// Scanned for entries with `matchPersonaDescription`.
    pub persona_description: String,
    /// Scanned for entries with `matchCharacterDescription`.
    pub character_description: String,
    /// Scanned for entries with `matchCharacterPersonality`.
    pub character_personality: String,
    /// Scanned for entries with `matchCharacterDepthPrompt`.
    pub character_depth_prompt: String,
    /// Scanned for entries with `matchScenario`.
    pub scenario: String,
    /// Scanned for entries with `matchCreatorNotes`.
    pub creator_notes: String,
    /// `{{char}}`; empty: the chat's latest character message's speaker.
    pub character_name: String,
    /// What `characterFilter.names` is compared with; empty:
    /// `character_name`.
    pub character_filter_name: String,
    /// What `characterFilter.tags` is compared with.
    pub character_tags: Vec<String>,
    /// `{{user}}`; empty: the chat's latest user message's speaker.
    pub user_name: String,
}
