//! SillyTavern's World Info (lorebooks): books kept as their files, the
//! activation SillyTavern's `checkWorldInfo` computes before a generation,
//! and where activated entries go in the prompt.
//!
//! - [`book`]: a World Info file kept losslessly (every member as written),
//!   its entries editable one by one, with limits.
//! - [`card`]: a character card's `character_book` converted to a book, as
//!   SillyTavern's "Import Card Lore" does.
//! - [`entry`]: what the scanner reads of one entry, with SillyTavern's
//!   reading of missing fields (JavaScript truthiness).
//! - [`scan`]: one activation ([`scan::check_world_info`]): the scan buffer,
//!   key matching, gates, inclusion groups, probability, recursion, min
//!   activations, the budget; [`timed`]: sticky, cooldown and delay.
//! - [`types`]: the vocabulary the parts share (positions, generation
//!   types, the activated entries); [`place`]: activated entries grouped by
//!   where SillyTavern places them.

pub mod book;
pub mod card;
pub mod entry;
pub mod place;
pub mod scan;
pub mod timed;
pub mod types;
