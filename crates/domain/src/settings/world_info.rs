//! The value types and checks of the World Info settings (the
//! `world_info_*` rows of the settings table): SillyTavern's global World
//! Info settings and which lorebooks apply to a chat.
//!
//! The ranges are those of SillyTavern's own settings panel (the sliders
//! of `public/index.html` at 51ad27f, lines 4712-4756), so every value a
//! SillyTavern user can set is accepted and nothing else is.

use serde::{Deserialize, Serialize};

use crate::DomainError;

/// How character lorebooks and global lorebooks are ordered against each
/// other (SillyTavern's `world_info_character_strategy`,
/// `world_info_insertion_strategy` in world-info.js). The chat's book and
/// the persona's book always come first, whatever the strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CharacterStrategy {
    /// Character and global entries merged, sorted by `order` (SillyTavern 0,
    /// "Sorted Evenly").
    Evenly,
    /// Character entries first, then global ones (SillyTavern 1, "Character
    /// Lore First"); SillyTavern's default.
    CharacterFirst,
    /// Global entries first, then character ones (SillyTavern 2, "Global
    /// Lore First").
    GlobalFirst,
}

impl CharacterStrategy {
    /// SillyTavern's number for the strategy (`world_info_character_strategy`
    /// in its settings.json).
    pub fn st_number(self) -> i64 {
        match self {
            CharacterStrategy::Evenly => 0,
            CharacterStrategy::CharacterFirst => 1,
            CharacterStrategy::GlobalFirst => 2,
        }
    }

    /// The strategy SillyTavern's number names; `None` for any other number.
    pub fn from_st_number(number: i64) -> Option<CharacterStrategy> {
        match number {
            0 => Some(CharacterStrategy::Evenly),
            1 => Some(CharacterStrategy::CharacterFirst),
            2 => Some(CharacterStrategy::GlobalFirst),
            _ => None,
        }
    }
}

/// Lorebook names, in the order given (a setting that lists books:
/// `world_info_global_books`, `world_info_character_books`). Every name
/// follows [`check_book_name`]; a name may name no stored book (a book
/// deleted or not imported yet simply does not apply). Duplicates are
/// kept as given; a book applies once whatever its count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BookNames(pub Vec<String>);

impl BookNames {
    /// The names, in the order given.
    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// The longest lorebook name, in bytes of UTF-8 (as `Lorebook.name` in the
/// proto says).
pub const MAX_BOOK_NAME_BYTES: usize = 256;

/// The most names a book-list setting holds. SillyTavern has no such
/// limit; a list this long is far past any real setup (SillyTavern loads
/// every selected book on every generation).
pub const MAX_BOOKS_PER_LIST: usize = 1000;

/// Checks a lorebook name: 1..=[`MAX_BOOK_NAME_BYTES`] bytes of UTF-8, no
/// control characters (the rule of `Lorebook.name`). Errors name `field`.
pub fn check_book_name(field: &str, name: &str) -> Result<(), DomainError> {
    if name.is_empty() {
        return Err(DomainError::invalid(field, "a book name must not be empty"));
    }
    if name.len() > MAX_BOOK_NAME_BYTES {
        return Err(DomainError::invalid(
            field,
            format!(
                "a book name has at most {MAX_BOOK_NAME_BYTES} bytes, not {}",
                name.len()
            ),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            field,
            format!("the book name {name:?} has a control character"),
        ));
    }
    Ok(())
}

/// The check of a book-list setting whose errors name `field`: at most
/// [`MAX_BOOKS_PER_LIST`] names, each a valid book name.
pub fn book_names(field: &'static str) -> impl Fn(BookNames) -> Result<BookNames, DomainError> {
    move |books| {
        if books.0.len() > MAX_BOOKS_PER_LIST {
            return Err(DomainError::invalid(
                field,
                format!(
                    "{} books is over the maximum of {MAX_BOOKS_PER_LIST}",
                    books.0.len()
                ),
            ));
        }
        for (i, name) in books.0.iter().enumerate() {
            check_book_name(&format!("{field}[{i}]"), name)?;
        }
        Ok(books)
    }
}

/// The check of a one-book setting whose errors name `field`: empty (no
/// book) or a valid book name.
pub fn optional_book_name(field: &'static str) -> impl Fn(String) -> Result<String, DomainError> {
    move |name| {
        if !name.is_empty() {
            check_book_name(field, &name)?;
        }
        Ok(name)
    }
}

/// `world_info_depth`'s range: SillyTavern's slider, 0..=1000
/// (index.html:4712, `MAX_SCAN_DEPTH` world-info.js:98).
pub const WI_DEPTH_MAX: u32 = 1000;
/// `world_info_budget`'s range, percent: 1..=100 (index.html:4720).
pub const WI_BUDGET_MIN: u32 = 1;
/// See [`WI_BUDGET_MIN`].
pub const WI_BUDGET_MAX: u32 = 100;
/// `world_info_budget_cap`'s range, tokens: 0..=65536 (index.html:4729).
pub const WI_BUDGET_CAP_MAX: u32 = 65536;
/// `world_info_min_activations`'s range: 0..=100 (index.html:4738).
pub const WI_MIN_ACTIVATIONS_MAX: u32 = 100;
/// `world_info_min_activations_depth_max`'s range: 0..=100
/// (index.html:4747).
pub const WI_MIN_ACTIVATIONS_DEPTH_MAX_MAX: u32 = 100;
/// `world_info_max_recursion_steps`'s range: 0..=10 (index.html:4755).
pub const WI_MAX_RECURSION_STEPS_MAX: u32 = 10;
