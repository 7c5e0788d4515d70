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
//! backtracker, which gives up past the limit. What that limit does not
//! see (the regex crate's scans inside lookarounds, backreferences'
//! comparisons) is bounded by an estimate made before each test (the
//! `cost` module): past the work limit the key is not run, an overrun. A
//! key is compiled once per book version ([`CompiledKeys`]) and tested
//! first, when it can be, without the lookarounds recapd writes (a cheap
//! prefilter).
//!
//! Known differences from JavaScript, all rare in keys: without the `u`
//! flag JavaScript sees a character outside the BMP as two units (`.` and
//! classes here see one character); `i` without `u` on a class of more
//! than 20,000 characters folds as Unicode simple case folding; captures
//! are not reset between iterations of a quantified group; a pattern fancy-regex cannot run (a repetition count past the
//! regex crate's size limit, say) never matches and is reported like an
//! overrun.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use fancy_regex::RegexBuilder;

mod cost;
mod fold;
#[cfg(test)]
mod tests;
mod translate;

use cost::Cost;

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
    /// The work model of the pattern as run; `None`: it runs whole on the
    /// regex crate, in linear time.
    cost: Option<Cost>,
    /// The backtrack limit `runnable` was built with.
    backtrack_limit: usize,
}

/// A test that did not finish within the bound (or could not run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overrun;

impl KeyRegex {
    /// `regex.test(haystack)` as a fresh JavaScript RegExp does it
    /// (`lastIndex` 0: `g` changes nothing, `y` anchors at the start).
    /// A pattern that needs the backtracker is not run when its estimated
    /// work on this haystack ([`Cost::estimate`]) passes `work_limit`:
    /// that is an overrun, as passing the backtrack limit is.
    pub(crate) fn test(&self, haystack: &str, work_limit: u64) -> Result<bool, Overrun> {
        let Some(re) = &self.runnable else {
            return Err(Overrun);
        };
        if let Some(pre) = &self.prefilter
            && let Ok(false) = pre.is_match(haystack)
        {
            return Ok(false);
        }
        if let Some(cost) = &self.cost
            && cost.estimate(haystack.len(), self.backtrack_limit) > work_limit as f64
        {
            return Err(Overrun);
        }
        match re.is_match(haystack) {
            Ok(found) => Ok(found),
            Err(_) => Err(Overrun),
        }
    }
}

/// The regex keys of one book version, compiled as scans first test them
/// and kept with the book (a [`crate::world_info::book::Book`] owns one,
/// replaced by an empty one at every change of its entries): a book's
/// keys are compiled once per version, whatever its size, and go away
/// with the version. Only keys written in the book's entries are kept
/// here (a key whose text changes with macros is compiled per scan), so
/// the set is bounded by the book. Also remembers which keys have been
/// reported as overrunning, so that the server warns once per version and
/// key.
#[derive(Debug, Default)]
pub struct CompiledKeys {
    /// (key text, backtrack limit) to the compiled key, or `None` for a
    /// key JavaScript would not take as a regex.
    table: Mutex<KeyTable>,
    /// Keys compiled so far (every miss of `table`).
    compiled: AtomicUsize,
    /// The estimated bytes of the keys in `table` ([`key_footprint`]).
    bytes: AtomicUsize,
    /// Keys already reported as overrunning.
    warned: Mutex<HashSet<String>>,
}

/// (key text, backtrack limit) to the compiled key, or `None` for a key
/// JavaScript would not take as a regex.
type KeyTable = HashMap<(String, usize), Option<Arc<KeyRegex>>>;

/// Estimated bytes of one compiled key of `pattern_bytes` bytes: the
/// regex crate does not tell its compiled size, so this is a deliberately
/// generous estimate (a fixed part for the automata's tables and caches,
/// and a part per pattern byte for its program), not a measurement.
pub(crate) fn key_footprint(pattern_bytes: usize) -> usize {
    KEY_BASE_BYTES + KEY_BYTES_PER_PATTERN_BYTE * pattern_bytes
}

/// A compiled key's fixed cost, in bytes (see [`key_footprint`]).
const KEY_BASE_BYTES: usize = 24 * 1024;
/// A compiled key's cost per byte of its pattern (see [`key_footprint`]).
const KEY_BYTES_PER_PATTERN_BYTE: usize = 512;

/// Most compiled keys one book version keeps (a 10,000-entry book with
/// two regex keys per entry fits); past it keys are compiled per test, so
/// a hostile book costs compile time, bounded by the scan's time budget,
/// instead of memory.
const MAX_KEYS_PER_BOOK: usize = 32 * 1024;

/// Most overrunning keys remembered per book version for the warning;
/// past it every further overrun is warned about again.
const WARNED_CAPACITY: usize = 4096;

impl CompiledKeys {
    /// [`parse_key_regex`] of a key of this book, compiled on first use.
    pub(crate) fn get(&self, key: &str, backtrack_limit: usize) -> Option<Arc<KeyRegex>> {
        // Keys not written `/.../flags` are told apart cheaply: not kept.
        split_key(key)?;
        let id = (key.to_string(), backtrack_limit);
        if let Some(hit) = self
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
        {
            return hit.clone();
        }
        let compiled = parse_key_regex(key, backtrack_limit).map(Arc::new);
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        // Past the cap, a key is compiled for this test only: a book of a
        // million tiny regex keys cannot make its version hold them all.
        if table.len() >= MAX_KEYS_PER_BOOK {
            return compiled;
        }
        if let std::collections::hash_map::Entry::Vacant(slot) = table.entry(id) {
            self.compiled.fetch_add(1, Ordering::Relaxed);
            if compiled.is_some() {
                self.bytes
                    .fetch_add(key_footprint(key.len()), Ordering::Relaxed);
            }
            slot.insert(compiled.clone());
        }
        compiled
    }

    /// How many keys were compiled into this set (a key compiled again,
    /// because two scans raced for it, counts once).
    pub fn compiled(&self) -> usize {
        self.compiled.load(Ordering::Relaxed)
    }

    /// The estimated memory of the compiled keys, in bytes (what the
    /// server counts against its cache budget for parsed books).
    pub fn footprint_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Whether `key`'s overrun is news for this book version: true the
    /// first time a key is named, false after (a warning per version and
    /// key, not per scan).
    pub fn first_overrun(&self, key: &str) -> bool {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.contains(key) {
            return false;
        }
        if warned.len() < WARNED_CAPACITY {
            warned.insert(key.to_string());
        }
        true
    }
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
    let cost = exact.as_deref().and_then(Cost::of);
    let prefilter = exact
        .as_deref()
        .and_then(relax)
        .filter(|r| Some(r) != exact.as_ref())
        .and_then(|r| build(&r));
    Some(KeyRegex {
        runnable,
        prefilter,
        cost,
        backtrack_limit,
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
