//! A JavaScript pattern rewritten in fancy-regex's syntax with the same
//! meaning (see the parent module for what that covers).

use super::Flags;
use super::fold::{legacy_icase, legacy_icase_class};

/// JavaScript's `\s` (and what `String.prototype.trim` strips), as class
/// members.
const JS_SPACE: &str = r"\t\n\x{B}\x{C}\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// JavaScript's word characters (`\w`, what `\b` looks at), as class
/// members.
const WORD: &str = "0-9A-Za-z_";
/// JavaScript's line terminators (`.` stops at them; `^`/`$` with `m`).
const LINE_END: &str = r"[\n\r\x{2028}\x{2029}]";

/// `\b` as recapd writes it (ASCII word characters, as in JavaScript).
pub(super) fn word_boundary() -> String {
    format!("(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))")
}

/// `\B` as recapd writes it.
pub(super) fn not_word_boundary() -> String {
    format!("(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))")
}

/// `^` with `m`.
pub(super) fn line_start() -> String {
    format!(r"(?:\A|(?<={LINE_END}))")
}

/// `$` with `m`.
pub(super) fn line_end() -> String {
    format!(r"(?:\z|(?={LINE_END}))")
}

/// Rewrites a JavaScript pattern (already accepted by regress) into
/// fancy-regex's syntax with the same meaning; `None` where that cannot be
/// written (a lone surrogate).
pub(super) fn translate(pattern: &str, flags: &Flags) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let flags = &Flags {
        groups: capture_groups(&chars),
        ..*flags
    };
    let mut out = String::with_capacity(pattern.len() * 2);
    if flags.ignore_case {
        out.push_str("(?i)");
    }
    if flags.sticky {
        out.push_str(r"\A(?:");
    }
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                i += 1;
                let (text, used) = escape(&chars, i, flags, false)?;
                // Without `u`, `i` adds nothing to `\w`, `\b` and the other
                // class escapes (ſ and the Kelvin sign are no word
                // characters then); Rust's `(?i)` would fold them in.
                let set_escape = chars.get(i).is_some_and(|e| "dDwWsSbB".contains(*e));
                if flags.ignore_case && !flags.unicode && set_escape {
                    out.push_str(&format!("(?-i:{text})"));
                } else {
                    out.push_str(&text);
                }
                i += used;
                continue;
            }
            '[' => {
                let (text, used) = if flags.ignore_case && !flags.unicode {
                    legacy_icase_class(&chars, i + 1, flags)?
                } else {
                    class(&chars, i + 1, flags)?
                };
                out.push_str(&text);
                i += 1 + used;
                continue;
            }
            '.' => out.push_str(if flags.dot_all {
                r"[\x{0}-\x{10FFFF}]"
            } else {
                r"[^\n\r\x{2028}\x{2029}]"
            }),
            '^' => {
                if flags.multiline {
                    out.push_str(&line_start());
                } else {
                    out.push_str(r"\A");
                }
            }
            '$' => {
                if flags.multiline {
                    out.push_str(&line_end());
                } else {
                    out.push_str(r"\z");
                }
            }
            '{' => match quantifier_len(&chars, i) {
                Some(len) => {
                    out.extend(&chars[i..i + len]);
                    i += len;
                    continue;
                }
                None => out.push_str(r"\{"),
            },
            '}' => out.push_str(r"\}"),
            ']' => out.push_str(r"\]"),
            c if flags.ignore_case && !flags.unicode => out.push_str(&legacy_icase(c)),
            c => out.push(c),
        }
        i += 1;
    }
    if flags.sticky {
        out.push(')');
    }
    Some(out)
}

/// The length of a valid `{n}`, `{n,}` or `{n,m}` starting at `start`.
fn quantifier_len(chars: &[char], start: usize) -> Option<usize> {
    let mut i = start + 1;
    let digits = |i: &mut usize| {
        let from = *i;
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    if !digits(&mut i) {
        return None;
    }
    if chars.get(i) == Some(&',') {
        i += 1;
        digits(&mut i);
    }
    (chars.get(i) == Some(&'}')).then_some(i + 1 - start)
}

/// A character written for use inside a Rust class or outside one.
pub(super) fn literal(c: char) -> String {
    if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_whitespace()) || c == '_' {
        c.to_string()
    } else {
        format!(r"\x{{{:X}}}", c as u32)
    }
}

/// Reads a `\uXXXX` unit at `i` (after the `u`); a high surrogate followed
/// by `\uXXXX` low surrogate is one character.
fn hex_digits(chars: &[char], i: usize, n: usize) -> Option<u32> {
    let s: String = chars.get(i..i + n)?.iter().collect();
    if s.len() != n || !s.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(&s, 16).ok()
}

/// Translates the escape whose letter is at `i`; returns the text and how
/// many characters it used (from `i`). `in_class`: inside `[...]`.
pub(super) fn escape(
    chars: &[char],
    i: usize,
    flags: &Flags,
    in_class: bool,
) -> Option<(String, usize)> {
    let Some(&c) = chars.get(i) else {
        return Some((r"\\".to_string(), 0));
    };
    let set = |members: &str, negated: bool| {
        if negated {
            format!("[^{members}]")
        } else if in_class {
            members.to_string()
        } else {
            format!("[{members}]")
        }
    };
    let text = match c {
        'd' => set("0-9", false),
        'D' => set("0-9", true),
        'w' => set(WORD, false),
        'W' => set(WORD, true),
        's' => set(JS_SPACE, false),
        'S' => set(JS_SPACE, true),
        'b' if in_class => literal('\u{8}'),
        'b' => word_boundary(),
        'B' if !in_class => not_word_boundary(),
        'n' => literal('\n'),
        'r' => literal('\r'),
        't' => literal('\t'),
        'f' => literal('\u{c}'),
        'v' => literal('\u{b}'),
        '0'..='9' => return digit_escape(chars, i, flags, in_class),
        'x' => match hex_digits(chars, i + 1, 2) {
            Some(v) => return Some((literal(char::from_u32(v)?), 3)),
            None => literal('x'),
        },
        'u' => return unicode_escape(chars, i, flags),
        'c' => match chars.get(i + 1) {
            Some(l) if l.is_ascii_alphabetic() => {
                return Some((literal(char::from_u32(*l as u32 % 32)?), 2));
            }
            _ => format!(r"\\{}", literal('c')),
        },
        // `\k<name>` is a backreference when the pattern names groups
        // (or with `u`); otherwise the letter k (Annex B).
        'k' if chars.get(i + 1) == Some(&'<')
            && !in_class
            && (flags.unicode || flags.groups.iter().any(Option::is_some)) =>
        {
            let end = chars[i..].iter().position(|&x| x == '>')?;
            let name: String = chars[i + 2..i + end].iter().collect();
            let number = flags
                .groups
                .iter()
                .position(|g| g.as_deref() == Some(name.as_str()))?
                + 1;
            return Some((backreference(number), end + 1));
        }
        'p' | 'P' if flags.unicode && chars.get(i + 1) == Some(&'{') => {
            let end = chars[i..].iter().position(|&x| x == '}')?;
            let body: String = chars[i..=i + end].iter().collect();
            return Some((format!(r"\{body}"), end + 1));
        }
        other => literal(other),
    };
    Some((text, 1))
}

/// `\0`, legacy octal, or a backreference.
fn digit_escape(
    chars: &[char],
    i: usize,
    flags: &Flags,
    in_class: bool,
) -> Option<(String, usize)> {
    let mut end = i;
    while chars.get(end).is_some_and(char::is_ascii_digit) {
        end += 1;
    }
    let digits: String = chars[i..end].iter().collect();
    let number: usize = digits.parse().unwrap_or(usize::MAX);
    // A decimal escape past the group count is a legacy octal escape, or
    // for 8 and 9 the digit itself (Annex B; with `u` it is an error that
    // regress already refused).
    if digits.starts_with('0') || in_class || number > flags.groups.len() {
        // Octal (Annex B; in `u` mode only `\0` is allowed).
        let mut value = 0u32;
        let mut used = 0;
        for d in chars[i..].iter().take(3) {
            match d.to_digit(8) {
                Some(v) if value * 8 + v <= 0o377 && !(flags.unicode && used > 0) => {
                    value = value * 8 + v;
                    used += 1;
                }
                _ => break,
            }
        }
        if used == 0 {
            // `\8`, `\9` in a class: the digit itself.
            return Some((literal(chars[i]), 1));
        }
        return Some((literal(char::from_u32(value)?), used));
    }
    Some((backreference(number), end - i))
}

/// A backreference with JavaScript's meaning: a group that has not
/// matched (not yet, or not in this alternative) matches the empty string.
fn backreference(group: usize) -> String {
    format!(r"(?:(?({group})\{group}|))")
}

/// The capture groups of a pattern, in order, with their names: every `(`
/// outside a class not followed by `?`, and every `(?<name>`.
fn capture_groups(chars: &[char]) -> Vec<Option<String>> {
    let mut groups = Vec::new();
    let mut in_class = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '[' => in_class = true,
            ']' => in_class = false,
            '(' if !in_class => {
                if chars.get(i + 1) != Some(&'?') {
                    groups.push(None);
                } else if chars.get(i + 2) == Some(&'<')
                    && !matches!(chars.get(i + 3), Some('=') | Some('!'))
                {
                    let name: String = chars[i + 3..].iter().take_while(|&&x| x != '>').collect();
                    groups.push(Some(name));
                }
            }
            _ => {}
        }
        i += 1;
    }
    groups
}

/// `\uXXXX`, a surrogate pair of them, or `\u{...}` with `u`.
fn unicode_escape(chars: &[char], i: usize, flags: &Flags) -> Option<(String, usize)> {
    if flags.unicode && chars.get(i + 1) == Some(&'{') {
        let end = chars[i..].iter().position(|&x| x == '}')?;
        let hex: String = chars[i + 2..i + end].iter().collect();
        let v = u32::from_str_radix(&hex, 16).ok()?;
        return Some((literal(char::from_u32(v)?), end + 1));
    }
    let Some(unit) = hex_digits(chars, i + 1, 4) else {
        return Some((literal('u'), 1));
    };
    if (0xD800..0xDC00).contains(&unit)
        && chars.get(i + 5) == Some(&'\\')
        && chars.get(i + 6) == Some(&'u')
        && let Some(low) = hex_digits(chars, i + 7, 4)
        && (0xDC00..0xE000).contains(&low)
    {
        let v = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        return Some((literal(char::from_u32(v)?), 11));
    }
    Some((literal(char::from_u32(unit)?), 5))
}

/// Translates a class whose body starts at `i` (after `[`); returns the
/// text and how many characters it used, `]` included.
pub(super) fn class(chars: &[char], i: usize, flags: &Flags) -> Option<(String, usize)> {
    let mut j = i;
    let negated = chars.get(j) == Some(&'^');
    if negated {
        j += 1;
    }
    if chars.get(j) == Some(&']') {
        // `[]` matches nothing, `[^]` anything.
        let text = if negated {
            r"[\x{0}-\x{10FFFF}]"
        } else {
            r"[^\x{0}-\x{10FFFF}]"
        };
        return Some((text.to_string(), j + 1 - i));
    }
    let mut body = String::new();
    // Whether the last member was a class escape (`\d`...): a `-` next to
    // one is a literal in JavaScript.
    let mut last_was_set = false;
    while let Some(&c) = chars.get(j) {
        match c {
            ']' => {
                let text = format!("[{}{body}]", if negated { "^" } else { "" });
                return Some((text, j + 1 - i));
            }
            '\\' => {
                let is_set = chars.get(j + 1).is_some_and(|e| "dDwWsS".contains(*e));
                let (text, used) = escape(chars, j + 1, flags, true)?;
                body.push_str(&text);
                last_was_set = is_set;
                j += 1 + used;
                continue;
            }
            '-' => {
                let next_is_set = chars.get(j + 1) == Some(&'\\')
                    && chars.get(j + 2).is_some_and(|e| "dDwWsS".contains(*e));
                let at_edge = j == i + usize::from(negated) || chars.get(j + 1) == Some(&']');
                if last_was_set || next_is_set || at_edge {
                    body.push_str(r"\-");
                } else {
                    body.push('-');
                }
            }
            c => body.push_str(&literal(c)),
        }
        last_was_set = false;
        j += 1;
    }
    None
}
