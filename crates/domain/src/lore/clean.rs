//! What an LLM's text may put in a book: the model's answer is data, so
//! its names, keywords and facts are cleaned before anything is stored.
//!
//! - Hidden characters ([`is_hidden_char`]: C0 and C1 controls, DEL, the
//!   bidirectional marks and overrides, the byte order mark) never reach a
//!   name or a key: a line break or tab in a name becomes a space, every
//!   other one is removed, and spaces are collapsed ([`clean_name`]).
//! - Content keeps its line breaks (a carriage return becomes one) and
//!   tabs, and loses the other hidden characters ([`clean_content`]).
//! - A keyword is never a regex key nor a macro ([`defuse_key`]): it loses
//!   `{`, `}`, `<` and `>` (so neither SillyTavern's `{{macros}}` nor its
//!   legacy `<USER>` forms can rewrite it when the book is scanned), and a
//!   key SillyTavern would read as `/pattern/flags` loses its leading `/`
//!   (and the spaces a scan trims before it), so it is plain text that
//!   still finds the literal words in the chat (`/a+b/i` is kept as
//!   `a+b/i`, which the text `/a+b/i` holds).

use crate::world_info::entry::js::is_js_space;

/// Whether `c` is a character an LLM's text may not store in a name or a
/// key: C0 controls (U+0000 to U+001F), DEL, C1 controls (U+0080 to
/// U+009F), the bidirectional marks and controls (U+061C, U+200E, U+200F,
/// U+202A to U+202E, U+2066 to U+2069) and the byte order mark (U+FEFF,
/// which a scan trims as space).
pub fn is_hidden_char(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// A name or keyword as it may be stored: hidden characters that are
/// white space (tab, line breaks, NEL) become spaces, the others are
/// removed; white space runs become one space; trimmed. Idempotent; the
/// result holds no [`is_hidden_char`].
pub fn clean_name(text: &str) -> String {
    let visible: String = text
        .chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_hidden_char(c) {
                None
            } else {
                Some(c)
            }
        })
        .collect();
    visible.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Content as it may be stored: a carriage return (alone or before a line
/// feed) becomes one line feed; line feeds and tabs are kept; every other
/// [`is_hidden_char`] is removed.
pub fn clean_content(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\n' | '\t' => out.push(c),
            c if is_hidden_char(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Characters a key from an LLM loses: the delimiters of SillyTavern's
/// macros (`{{...}}`) and legacy macros (`<USER>`, `<BOT>`...), which a
/// scan substitutes before it reads a key.
const MACRO_DELIMITERS: [char; 4] = ['{', '}', '<', '>'];

/// A keyword from an LLM as plain text SillyTavern and recapd read as
/// plain text: [`clean_name`], the macro delimiters removed, and, when what
/// is left has the shape of a regex key ([`is_regex_shaped`]), its leading
/// `/` and spaces removed. The result is never regex-shaped, holds no
/// hidden character and no macro delimiter; without macro delimiters it
/// still matches the literal text it came from (`/a+b/i` becomes `a+b/i`,
/// found inside `/a+b/i`).
pub fn defuse_key(text: &str) -> String {
    let plain: String = clean_name(text)
        .chars()
        .filter(|c| !MACRO_DELIMITERS.contains(c))
        .collect();
    let plain = clean_name(&plain);
    // Keys are lowercased where they are written: `/A/G` is no regex key
    // until then.
    if is_regex_shaped(&plain) || is_regex_shaped(&plain.to_lowercase()) {
        plain
            .trim_start_matches(|c: char| c == '/' || is_js_space(c))
            .to_owned()
    } else {
        plain
    }
}

/// Whether SillyTavern's `parseRegexFromString` would split `key`, once
/// trimmed as a scan trims it, as `^\/([\w\W]+?)\/([gimsuy]*)$`: a `/`,
/// at least one character, a `/`, then only flag letters. (Whether the
/// pattern then compiles is not asked: a shape alone is refused.)
pub fn is_regex_shaped(key: &str) -> bool {
    let Some(rest) = key.trim_matches(is_js_space).strip_prefix('/') else {
        return false;
    };
    rest.char_indices()
        .skip(1)
        .any(|(at, c)| c == '/' && rest[at + 1..].chars().all(|flag| "gimsuy".contains(flag)))
}

#[cfg(test)]
mod tests;
