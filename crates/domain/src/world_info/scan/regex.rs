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
//! well, `[^]` is anything, a `{` that starts no quantifier is literal,
//! the escapes `\uXXXX`, `\xHH`, `\cX`, `\0` and legacy octal, a
//! backreference to a group that has not matched matches empty, and `i`
//! without `u` compares letters by JavaScript's `Canonicalize`. The parts
//! of a pattern with no backreference or lookaround run on the `regex`
//! crate's automata, in linear time; the rest on fancy-regex's
//! backtracker, which gives up past the limit. A key is compiled once per
//! process (a bounded cache) and tested first, when it can be, without
//! the lookarounds recapd writes (a cheap prefilter).
//!
//! Known differences from JavaScript, all rare in keys: without the `u`
//! flag JavaScript sees a character outside the BMP as two units (`.` and
//! classes here see one character); `i` without `u` on a class of more
//! than 20,000 characters folds as Unicode simple case folding; captures
//! are not reset between iterations of a quantified group; a pattern fancy-regex cannot run (a repetition count past the
//! regex crate's size limit, say) never matches and is reported like an
//! overrun.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use fancy_regex::RegexBuilder;

mod fold;
#[cfg(test)]
mod tests;
mod translate;

use translate::{line_end, line_start, not_word_boundary, translate, word_boundary};

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

/// The flags of a regex key, and what translating it needs to know of its
/// capture groups.
#[derive(Debug, Default)]
struct Flags {
    /// `i`.
    ignore_case: bool,
    /// `m`.
    multiline: bool,
    /// `s`.
    dot_all: bool,
    /// `u`.
    unicode: bool,
    /// `y`.
    sticky: bool,
    /// The pattern's capture groups in order, with their names.
    groups: Vec<Option<String>>,
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
