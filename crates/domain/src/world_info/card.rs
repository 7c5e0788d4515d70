//! A character card's embedded World Info (`character_book`), converted
//! to a book as SillyTavern's "Import Card Lore" converts it
//! (`importEmbeddedWorldInfo` and `convertCharacterBook`, world-info.js
//! :5498-5555 and :5612-5651 at 51ad27f).
//!
//! A card is a PNG carrying the character as base64 JSON in a `tEXt`
//! chunk (`ccv3` before `chara`, as `src/character-card-parser.js` reads
//! it), or the character's JSON text.

mod chunks;
mod convert;
mod js;

use serde_json::value::RawValue;

use crate::DomainError;

use super::book::json::object_members;
use super::book::{Book, BookLimits};

fn invalid(reason: impl Into<String>) -> DomainError {
    DomainError::invalid("card", reason)
}

/// The card's `character_book` converted as SillyTavern's
/// `convertCharacterBook` (world-info.js:5498-5555 at 51ad27f) converts it,
/// and the name SillyTavern gives the book: `character_book.name` when
/// truthy, else `<character name>'s Lorebook` (:5625).
///
/// Errors: [`DomainError::Invalid`] with field `card` for a card that is
/// neither a PNG with a `ccv3`/`chara` chunk nor JSON, that has no
/// `character_book`, or whose book SillyTavern cannot convert (the reason
/// says which), or whose converted book breaks SillyTavern's entry
/// types ([`Book::check_types`]: the field is the converted entry's,
/// `entries.<uid>.key`); [`DomainError::ResourceExhausted`] past `limits`.
pub fn character_book(card: &[u8], limits: &BookLimits) -> Result<(String, Book), DomainError> {
    let (name, book) = converted_book(card, limits)?;
    book.check_types().map_err(|e| match e {
        DomainError::Invalid { field, reason } => DomainError::Invalid {
            field,
            reason: format!("{reason} (in the card's book as SillyTavern converts it)"),
        },
        other => other,
    })?;
    Ok((name, book))
}

/// [`character_book`] without the entry type checks: the conversion alone.
fn converted_book(card: &[u8], limits: &BookLimits) -> Result<(String, Book), DomainError> {
    let is_png = card.starts_with(&chunks::SIGNATURE);
    let text = if is_png {
        chunks::character_text(card)?
    } else {
        String::from_utf8_lossy(card).into_owned()
    };
    let character = object_members(&text).map_err(|e| {
        if is_png {
            invalid(format!("the PNG's character is not a JSON object: {e}"))
        } else {
            invalid(format!("neither a PNG nor a JSON object: {e}"))
        }
    })?;
    let get = |members: &[(String, Box<RawValue>)], name: &str| -> Option<Box<RawValue>> {
        members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let data = get(&character, "data")
        .filter(|d| d.get().starts_with('{'))
        .and_then(|d| object_members(d.get()).ok());
    // `characters[chid].data.character_book` must be truthy (:5579).
    let book = data
        .as_ref()
        .and_then(|data| get(data, "character_book"))
        .filter(|b| js::truthy(b))
        .ok_or_else(|| invalid("the card has no `data.character_book`"))?;
    // The character's name as the server loads it: a card with `spec` reads
    // `data.name` when it is there (readFromV2, src/endpoints/characters.js
    // :504-556), any other keeps its top-level `name`.
    let name = match (get(&character, "spec"), &data) {
        (Some(_), Some(data)) => get(data, "name").or_else(|| get(&character, "name")),
        _ => get(&character, "name"),
    };
    let book_name = object_members(book.get())
        .ok()
        .and_then(|members| get(&members, "name"))
        .filter(|n| js::truthy(n))
        .map(|n| js::string(&n))
        .unwrap_or_else(|| {
            let name = name.map_or_else(|| "undefined".to_owned(), |n| js::string(&n));
            format!("{name}'s Lorebook")
        });
    let (rest, entries) = convert::convert(&book)?;
    let book = Book::from_parts(entries, rest, limits)?;
    Ok((book_name, book))
}

#[cfg(test)]
mod tests;
