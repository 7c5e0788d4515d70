//! Regex keys (`/pattern/flags`) with JavaScript's meaning and a bound.
//!
//! SillyTavern's `parseRegexFromString` (world-info.js:2821-2846) decides
//! whether a key is a regex; one that JavaScript's `new RegExp` refuses is
//! a plain key. recapd asks regress (an ECMAScript regex engine) the same
//! question. regress's matchers backtrack without any limit (both its
//! backends; upstream issue ridiculousfish/regress#140), so a pattern is
//! run instead by fancy-regex with a backtrack limit, after rewriting the
//! places where JavaScript's syntax or meaning differs from Rust's: `\d`
//! `\w` `\b` are ASCII, `\s` is JavaScript's white space, `.` stops at
//! `\r`, `\u2028` and `\u2029` too, `^`/`$` with `m` at those line ends as
//! well, `[^]` is anything, a `{` that starts no quantifier is literal, and
//! the escapes `\uXXXX`, `\xHH`, `\cX`, `\0`. The parts of a pattern with
//! no backreference or lookaround run on the `regex` crate's automata, in
//! linear time; the rest on fancy-regex's backtracker, which gives up past
//! the limit.
//!
//! Known differences from JavaScript, all rare in keys: without the `u`
//! flag JavaScript sees a character outside the BMP as two units (`.` and
//! classes here see one character); `i` folds case as Unicode simple case
//! folding rather than JavaScript's `toUpperCase` canonicalisation; a
//! lookbehind must have a bounded length; a pattern fancy-regex cannot run
//! (that, a backreference to a group that does not exist, or a program past
//! the regex crate's size limit) never matches and is reported like an
//! overrun.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use fancy_regex::RegexBuilder;

#[cfg(test)]
mod tests;

/// A regex key, ready to test haystacks.
#[derive(Debug)]
pub(crate) struct KeyRegex {
    /// The pattern as run; `None`: JavaScript accepts it but recapd cannot
    /// run it (every test reports an overrun).
    runnable: Option<fancy_regex::Regex>,
    /// The same pattern without the assertions recapd writes as lookarounds
    /// (`\b`, `\B`, `^`/`$` with `m`), when nothing else in it needs the
    /// backtracker: it matches whenever the pattern does, runs on the regex
    /// crate's automata, and so rejects most haystacks cheaply.
    prefilter: Option<fancy_regex::Regex>,
}

/// A test that did not finish within the bound (or could not run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overrun;

impl KeyRegex {
    /// `regex.test(haystack)` as a fresh JavaScript RegExp does it
    /// (`lastIndex` 0: `g` changes nothing, `y` anchors at the start).
    pub(crate) fn test(&self, haystack: &str) -> Result<bool, Overrun> {
        let Some(re) = &self.runnable else {
            return Err(Overrun);
        };
        if let Some(pre) = &self.prefilter
            && let Ok(false) = pre.is_match(haystack)
        {
            return Ok(false);
        }
        match re.is_match(haystack) {
            Ok(found) => Ok(found),
            Err(_) => Err(Overrun),
        }
    }
}

/// JavaScript's `\s` (and what `String.prototype.trim` strips), as class
/// members.
const JS_SPACE: &str = r"\t\n\x{B}\x{C}\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const WORD: &str = "0-9A-Za-z_";
const LINE_END: &str = r"[\n\r\x{2028}\x{2029}]";

/// Compiled keys kept between scans, by (key text, backtrack limit): a
/// book's regex keys are compiled once per process, not once per scan.
/// Past [`CACHE_CAPACITY`] keys the cache starts over (compiling is only
/// slower, never different).
static CACHE: OnceLock<Mutex<CompiledKeys>> = OnceLock::new();

/// The cache's table: (key text, backtrack limit) to the compiled key, or
/// `None` for a key JavaScript would not take as a regex.
type CompiledKeys = HashMap<(String, usize), Option<Arc<KeyRegex>>>;

/// Most compiled keys kept (a small compiled key takes tens of KiB).
const CACHE_CAPACITY: usize = 1024;

/// [`parse_key_regex`] through the process-wide cache.
pub(crate) fn cached_key_regex(key: &str, backtrack_limit: usize) -> Option<Arc<KeyRegex>> {
    // Keys not written `/.../flags` are told apart cheaply: not kept.
    split_key(key)?;
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let id = (key.to_string(), backtrack_limit);
    if let Some(hit) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return hit.clone();
    }
    let compiled = parse_key_regex(key, backtrack_limit).map(Arc::new);
    let mut guard = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if guard.len() >= CACHE_CAPACITY {
        guard.clear();
    }
    guard.insert(id, compiled.clone());
    compiled
}

/// `parseRegexFromString`: `None` when the key is not a regex key (then
/// it is matched as plain text); otherwise the regex, runnable or not.
/// `backtrack_limit` bounds each test.
pub(crate) fn parse_key_regex(key: &str, backtrack_limit: usize) -> Option<KeyRegex> {
    let (pattern, flags) = split_key(key)?;
    // An unescaped `/` inside makes it no regex (world-info.js:2833).
    if unescaped_slash(pattern) {
        return None;
    }
    // Only the first `\/` is unescaped (`String.replace` with a string).
    let pattern = pattern.replacen("\\/", "/", 1);
    let flags = Flags::parse(flags)?;
    let mut rflags = regress::Flags {
        icase: flags.ignore_case,
        multiline: flags.multiline,
        dot_all: flags.dot_all,
        unicode: flags.unicode,
        ..regress::Flags::default()
    };
    rflags.no_opt = true;
    regress::Regex::with_flags(&pattern, rflags).ok()?;
    let exact = translate(&pattern, &flags);
    let build = |t: &str| {
        RegexBuilder::new(t)
            .backtrack_limit(backtrack_limit)
            .build()
            .ok()
    };
    let runnable = exact.as_deref().and_then(build);
    let prefilter = exact
        .as_deref()
        .and_then(relax)
        .filter(|r| Some(r) != exact.as_ref())
        .and_then(|r| build(&r));
    Some(KeyRegex {
        runnable,
        prefilter,
    })
}

/// `\b` as recapd writes it (ASCII word characters, as in JavaScript).
fn word_boundary() -> String {
    format!("(?:(?<=[{WORD}])(?![{WORD}])|(?<![{WORD}])(?=[{WORD}]))")
}

/// `\B` as recapd writes it.
fn not_word_boundary() -> String {
    format!("(?:(?<=[{WORD}])(?=[{WORD}])|(?<![{WORD}])(?![{WORD}]))")
}

/// `^` with `m`.
fn line_start() -> String {
    format!(r"(?:\A|(?<={LINE_END}))")
}

/// `$` with `m`.
fn line_end() -> String {
    format!(r"(?:\z|(?={LINE_END}))")
}

/// The translation without recapd's own lookarounds, when what is left
/// needs no backtracker (no lookaround or backreference of the key's own);
/// dropping a zero-width assertion only lets more text match.
fn relax(exact: &str) -> Option<String> {
    let relaxed = exact
        .replace(&word_boundary(), "")
        .replace(&not_word_boundary(), "")
        .replace(&line_start(), "")
        .replace(&line_end(), "");
    if ["(?=", "(?!", "(?<=", "(?<!", r"\k<"]
        .iter()
        .any(|f| relaxed.contains(f))
    {
        return None;
    }
    let mut chars = relaxed.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.next().is_some_and(|d| d.is_ascii_digit()) {
            return None;
        }
    }
    Some(relaxed)
}

/// `^\/([\w\W]+?)\/([gimsuy]*)$`: the shortest pattern (at least one
/// character) after which come `/` and only flag letters.
fn split_key(key: &str) -> Option<(&str, &str)> {
    let rest = key.strip_prefix('/')?;
    let mut chars = rest.char_indices();
    chars.next()?; // the pattern's first character, whatever it is
    for (i, c) in chars {
        if c == '/' {
            let flags = &rest[i + 1..];
            if flags.chars().all(|f| "gimsuy".contains(f)) {
                return Some((&rest[..i], flags));
            }
        }
    }
    None
}

/// `/(^|[^\\])\//`: a `/` at the start or after anything but a backslash.
fn unescaped_slash(pattern: &str) -> bool {
    let mut prev: Option<char> = None;
    for c in pattern.chars() {
        if c == '/' && prev != Some('\\') {
            return true;
        }
        prev = Some(c);
    }
    false
}

/// The flags of a regex key.
#[derive(Debug, Default)]
struct Flags {
    ignore_case: bool,
    multiline: bool,
    dot_all: bool,
    unicode: bool,
    sticky: bool,
}

impl Flags {
    /// `None` for a repeated flag (`new RegExp` throws).
    fn parse(flags: &str) -> Option<Flags> {
        let mut out = Flags::default();
        let mut seen = String::new();
        for f in flags.chars() {
            if seen.contains(f) {
                return None;
            }
            seen.push(f);
            match f {
                'i' => out.ignore_case = true,
                'm' => out.multiline = true,
                's' => out.dot_all = true,
                'u' => out.unicode = true,
                'y' => out.sticky = true,
                _ => {}
            }
        }
        Some(out)
    }
}

/// Rewrites a JavaScript pattern (already accepted by regress) into
/// fancy-regex's syntax with the same meaning; `None` where that cannot be
/// written (a lone surrogate).
fn translate(pattern: &str, flags: &Flags) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
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
                out.push_str(&text);
                i += used;
                continue;
            }
            '[' => {
                let (text, used) = class(&chars, i + 1, flags)?;
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

/// A literal under `i` without `u`: JavaScript then folds a character to
/// its `toUpperCase` but never a non-ASCII one onto ASCII (ſ is not s,
/// the Kelvin sign is not k), while Unicode simple case folding, which
/// Rust's `(?i)` uses, joins them. Those letters are written with case
/// sensitivity off and their JavaScript matches spelled out.
fn legacy_icase(c: char) -> String {
    match c {
        's' | 'S' => "(?-i:[sS])".to_string(),
        'k' | 'K' => "(?-i:[kK])".to_string(),
        '\u{e5}' | '\u{c5}' => "(?-i:[\u{e5}\u{c5}])".to_string(),
        '\u{3c9}' | '\u{3a9}' => "(?-i:[\u{3c9}\u{3a9}])".to_string(),
        '\u{17f}' | '\u{131}' | '\u{212a}' | '\u{212b}' | '\u{2126}' => format!("(?-i:{c})"),
        c => c.to_string(),
    }
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
fn literal(c: char) -> String {
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
fn escape(chars: &[char], i: usize, flags: &Flags, in_class: bool) -> Option<(String, usize)> {
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
        'k' if chars.get(i + 1) == Some(&'<') && !in_class => {
            let end = chars[i..].iter().position(|&x| x == '>')?;
            let name: String = chars[i + 2..i + end].iter().collect();
            return Some((format!(r"\k<{name}>"), end + 1));
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
    if digits.starts_with('0') || in_class {
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
    Some((format!(r"\{digits}"), end - i))
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
fn class(chars: &[char], i: usize, flags: &Flags) -> Option<(String, usize)> {
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
