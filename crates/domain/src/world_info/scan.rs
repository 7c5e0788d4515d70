//! One activation: SillyTavern's `checkWorldInfo` (world-info.js:4597-5159)
//! over recapd's data, with the same passes, gates, draws and budget.
//!
//! [`check_world_info`] reads the books that apply ([`ScanBooks`], with
//! SillyTavern's load-once rules), the chat's messages and the texts an
//! entry may ask to scan, and gives the entries activated in SillyTavern's
//! order with the chat's timed effects after the scan. Every random draw
//! comes from one ChaCha stream seeded by [`ScanInput::seed`].
//!
//! Where recapd knowingly differs from SillyTavern:
//! - random draws come from the seeded stream, not `Math.random()`;
//! - macros in keys are substituted once per scan (SillyTavern substitutes
//!   at every test; only random macros such as `{{random}}` can tell);
//! - regex keys are bounded ([`ScanLimits::regex_step_limit`],
//!   [`ScanLimits::regex_work_limit`]) and run by
//!   fancy-regex after translation; the rare differences are listed in the
//!   `regex` module (characters outside the BMP without `u`, `i` inside
//!   classes without `u`);
//! - entries with and without an `order` mixed in one list of 64 or more
//!   sort by a stable merge sort where V8 would gallop (the same result
//!   whenever every order is a number, or none is);
//! - lower-casing and case mappings come from Rust's Unicode tables, whose
//!   version may differ from the browser's.

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

use crate::DomainError;

use super::entry::Entry;
use super::entry::js::array_index;
use super::timed::{self, TimedEntry, TimedState};
use super::types::{Activated, GenerationType};

mod buffer;
mod groups;
mod interrupt;
mod keys;
mod regex;
mod run;
mod sort;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_groups;
#[cfg(test)]
mod tests_keys;
#[cfg(test)]
mod tests_passes;
#[cfg(test)]
mod tests_timed;

pub use interrupt::ScanStop;
pub use regex::CompiledKeys;

/// SillyTavern's `sortFn` under V8's sort, for placement's own sort too.
pub(crate) use sort::sort_by_order_desc;

/// A scan reads the chat's World Info settings as they are
/// ([`WorldInfoSettings`]: SillyTavern's `world_info_*` globals, names
/// after them, world-info.js:69-82); the books they name are loaded
/// by the caller and handed in as [`ScanBooks`].
pub use crate::settings::{CharacterStrategy, WorldInfoSettings};

/// One book: its name and its entries.
#[derive(Debug, Clone, Copy)]
pub struct ScanBook<'a> {
    /// The book's name (entries are named `"<book>.<uid>"`).
    pub name: &'a str,
    /// Its entries, in any order: the scan puts them in the order
    /// JavaScript's `Object.keys` gives (uids that are array indexes
    /// ascending, then the others as given).
    pub entries: &'a [Entry],
    /// The book version's compiled regex keys
    /// ([`crate::world_info::book::Book::compiled_keys`]), so that they
    /// are compiled once per version; `None`: compiled for this scan only.
    pub compiled: Option<&'a CompiledKeys>,
}

/// Which books apply, by role; [`ScanBooks::new`] applies SillyTavern's
/// load-once rules (world-info.js:4363-4476): a chat book that is
/// also global is skipped; a persona book that is the chat's or global is
/// skipped; a character book that is global, the chat's or the persona's,
/// or named twice, is skipped.
#[derive(Debug, Clone)]
pub struct ScanBooks<'a> {
    chat: Option<ScanBook<'a>>,
    persona: Option<ScanBook<'a>>,
    global: Vec<ScanBook<'a>>,
    character: Vec<ScanBook<'a>>,
}

impl<'a> ScanBooks<'a> {
    /// The books of a scan, each loaded once.
    pub fn new(
        chat: Option<ScanBook<'a>>,
        persona: Option<ScanBook<'a>>,
        global: Vec<ScanBook<'a>>,
        character: Vec<ScanBook<'a>>,
    ) -> Self {
        let is_global = |name: &str| global.iter().any(|b| b.name == name);
        let chat_name = chat.map(|b| b.name);
        let persona_name = persona.map(|b| b.name);
        let kept_chat = chat.filter(|b| !is_global(b.name));
        let kept_persona = persona.filter(|b| Some(b.name) != chat_name && !is_global(b.name));
        let mut kept_character: Vec<ScanBook<'a>> = Vec::new();
        for book in character {
            let seen = kept_character.iter().any(|b| b.name == book.name);
            if seen
                || is_global(book.name)
                || Some(book.name) == chat_name
                || Some(book.name) == persona_name
            {
                continue;
            }
            kept_character.push(book);
        }
        ScanBooks {
            chat: kept_chat,
            persona: kept_persona,
            global,
            character: kept_character,
        }
    }
}

/// One chat message as the scan reads it.
#[derive(Debug, Clone, Copy)]
pub struct ScanMessage<'a> {
    /// The speaker's name.
    pub name: &'a str,
    /// The text.
    pub text: &'a str,
}

/// The texts an entry may ask to scan (its `match*` flags).
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobalTexts<'a> {
    /// The persona's description.
    pub persona_description: &'a str,
    /// The character's description.
    pub character_description: &'a str,
    /// The character's personality.
    pub character_personality: &'a str,
    /// The character's depth prompt.
    pub character_depth_prompt: &'a str,
    /// The scenario.
    pub scenario: &'a str,
    /// The creator's notes.
    pub creator_notes: &'a str,
}

/// The character a scan is for, as entries' character filters see it.
#[derive(Debug, Clone, Copy)]
pub struct CharacterSubject<'a> {
    /// The name filters compare (SillyTavern: the avatar's file name
    /// without extension).
    pub filter_name: &'a str,
    /// The character's tags (as filters name them).
    pub tags: &'a [String],
}

/// Bounds on one scan's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Most passes; past it the scan fails with ResourceExhausted.
    pub max_passes: u32,
    /// Most backtracking steps one regex key may take on one haystack
    /// (fancy-regex's backtrack limit); past it the key counts as not
    /// matching for the rest of the scan and is reported. Compiled keys
    /// are kept per book version ([`CompiledKeys`]), so a book's regexes
    /// are compiled once, not once per scan.
    pub regex_step_limit: u64,
    /// Most work one test of a regex key that needs the backtracker may
    /// be estimated to take on one haystack (units of about a nanosecond:
    /// the scans inside lookarounds and the comparisons of
    /// backreferences, which the step limit does not see). A key past it
    /// is not run: it counts as not matching for the rest of the scan and
    /// is reported, as past the step limit. Keys with neither run in
    /// linear time and are never refused.
    pub regex_work_limit: u64,
}

/// [`ScanLimits::regex_work_limit`]'s default. Measured in release on the
/// 2-core machine recapd is benchmarked on (thread CPU time,
/// `calibrate_work` in regex/tests.rs): 1 to 4.4 ns a unit, so the worst
/// key test under it takes about 90 ms (a variable-width lookbehind;
/// lookaheads about 60 ms, the two-lookahead idiom about 20 ms).
pub const DEFAULT_REGEX_WORK_LIMIT: u64 = 20_000_000;

impl Default for ScanLimits {
    fn default() -> Self {
        ScanLimits {
            max_passes: 100,
            regex_step_limit: 1_000_000,
            regex_work_limit: DEFAULT_REGEX_WORK_LIMIT,
        }
    }
}

/// How many of a chat's newest messages a scan with `settings` over
/// `entries` can read: the deepest of the global depth, an entry's own
/// scan depth and the depth min activations can go to (one past its
/// maximum; the whole buffer when it has none), never more than the
/// buffer holds (`MAX_SCAN_DEPTH`, 1,000). A caller may give the scan
/// only that many messages ([`ScanInput::messages`]) and the same
/// entries activate.
pub fn scan_reach<'e>(
    settings: &WorldInfoSettings,
    entries: impl IntoIterator<Item = &'e Entry>,
) -> usize {
    let min_activations = match (settings.min_activations, settings.min_activations_depth_max) {
        (0, _) => 0,
        (_, 0) => buffer::MAX_SCAN_DEPTH,
        (_, max) => usize::try_from(max).unwrap_or(usize::MAX).saturating_add(1),
    };
    let own_depths = entries
        .into_iter()
        .filter_map(|entry| entry.scan_depth)
        .map(|depth| usize::try_from(depth).unwrap_or(0))
        .max()
        .unwrap_or(0);
    usize::try_from(settings.depth)
        .unwrap_or(usize::MAX)
        .max(min_activations)
        .max(own_depths)
        .min(buffer::MAX_SCAN_DEPTH)
}

/// Everything one scan reads.
pub struct ScanInput<'a> {
    /// The settings.
    pub settings: &'a WorldInfoSettings,
    /// The books that apply.
    pub books: ScanBooks<'a>,
    /// The chat's newest messages that are not hidden, OLDEST FIRST (the
    /// scan reverses them): all of them, or at least the newest
    /// [`scan_reach`] of them.
    pub messages: &'a [ScanMessage<'a>],
    /// How many messages that are not hidden the chat holds in all (at
    /// least `messages.len()`): timed effects and min activations count
    /// them, whether or not `messages` carries them.
    pub chat_len: usize,
    /// Texts entries may ask to scan.
    pub texts: GlobalTexts<'a>,
    /// Texts of every extension prompt flagged `scan` (already
    /// macro-substituted), in key order.
    pub scan_prompts: &'a [String],
    /// The generation's type (entries' `triggers`).
    pub generation_type: GenerationType,
    /// The character, when the chat has one.
    pub character: Option<CharacterSubject<'a>>,
    /// maxContext: context size minus response tokens.
    pub max_context_tokens: u32,
    /// The chat's tokenizer. It must never answer more tokens than the
    /// text has bytes (true of every byte-level BPE, tiktoken's included):
    /// the budget check skips counting while the bytes stay under it.
    pub count_tokens: &'a dyn Fn(&str) -> u32,
    /// Macro substitution for keys and content ({{char}}, {{user}}, ...).
    pub substitute: &'a dyn Fn(&str) -> String,
    /// The chat's timed effects as stored.
    pub timed: &'a TimedState,
    /// A dry run reads and changes no sticky or cooldown effect.
    pub dry_run: bool,
    /// Seeds every random draw (probability, group weights); the same seed
    /// and input give the same result.
    pub seed: u64,
    /// Bounds on the work.
    pub limits: &'a ScanLimits,
    /// Asked between passes, between entries and between key tests: a
    /// [`ScanStop`] ends the scan at once with [`ScanStop::error`]
    /// (nothing of it is returned). The domain reads no clock, so a time
    /// budget or a cancellation is the caller's; `&|| None` never stops.
    /// It is asked often (once per key test): it must be cheap.
    pub interrupt: &'a dyn Fn() -> Option<ScanStop>,
}

/// What one scan gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanOutcome {
    /// The activated entries in SillyTavern's order of activation (its
    /// `allActivatedEntries`), which is what its placement step receives:
    /// placement sorts them by `order` (stable) itself. Each names its
    /// entry by [`Entry::uid_member`], as SillyTavern does.
    pub activated: Vec<Activated>,
    /// The timed state after this scan (unchanged for a dry run).
    pub timed: TimedState,
    /// Regex keys that hit the bound (or that recapd cannot run): (book,
    /// the entry's key in the book's `entries`, the key as tested), once
    /// each. The engine logs and counts them.
    pub regex_overruns: Vec<(String, String, String)>,
    /// Passes run.
    pub passes: u32,
}

/// One entry of the scan with its book and name.
#[derive(Debug, Clone)]
pub(crate) struct Cand<'a> {
    /// The book's name.
    pub(crate) book: &'a str,
    /// The entry.
    pub(crate) entry: &'a Entry,
    /// `"<book>.<uid member>"` (SillyTavern's name for it).
    pub(crate) key: String,
    /// The book version's compiled keys, when kept.
    pub(crate) compiled: Option<&'a CompiledKeys>,
}

/// `Math.random()` from the scan's stream: 53 random bits in [0, 1).
pub(crate) fn js_random<R: RngCore>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A book's entries in `Object.keys` order.
fn book_entries<'a>(book: &ScanBook<'a>) -> Vec<Cand<'a>> {
    let mut indexed: Vec<(u32, &'a Entry)> = Vec::new();
    let mut named: Vec<&'a Entry> = Vec::new();
    for e in book.entries {
        match array_index(&e.uid) {
            Some(i) => indexed.push((i, e)),
            None => named.push(e),
        }
    }
    indexed.sort_by_key(|(i, _)| *i);
    indexed
        .into_iter()
        .map(|(_, e)| e)
        .chain(named)
        .map(|entry| Cand {
            book: book.name,
            entry,
            key: format!("{}.{}", book.name, entry.uid_member),
            compiled: book.compiled,
        })
        .collect()
}

fn all_entries<'a>(books: &[ScanBook<'a>]) -> Vec<Cand<'a>> {
    books.iter().flat_map(book_entries).collect()
}

fn sorted<'a>(mut cands: Vec<Cand<'a>>) -> Vec<Cand<'a>> {
    sort_by_order_desc(&mut cands, |c| c.entry.order);
    cands
}

/// `getSortedEntries` (world-info.js:4478-4530): chat lore, persona lore,
/// then global and character lore by strategy.
fn sorted_entries<'a>(books: &ScanBooks<'a>, strategy: CharacterStrategy) -> Vec<Cand<'a>> {
    let global = all_entries(&books.global);
    let character = all_entries(&books.character);
    let rest = match strategy {
        CharacterStrategy::Evenly => sorted(global.into_iter().chain(character).collect()),
        CharacterStrategy::CharacterFirst => {
            let mut v = sorted(character);
            v.extend(sorted(global));
            v
        }
        CharacterStrategy::GlobalFirst => {
            let mut v = sorted(global);
            v.extend(sorted(character));
            v
        }
    };
    let mut out = sorted(books.chat.iter().flat_map(book_entries).collect());
    out.extend(sorted(
        books.persona.iter().flat_map(book_entries).collect(),
    ));
    out.extend(rest);
    out
}

/// Runs one activation, as SillyTavern's `checkWorldInfo` does.
///
/// Fails only with ResourceExhausted: when the passes would exceed
/// `limits.max_passes`, or when [`ScanInput::interrupt`] answers a stop.
pub fn check_world_info(input: ScanInput<'_>) -> Result<ScanOutcome, DomainError> {
    let mut cands = sorted_entries(&input.books, input.settings.character_strategy);
    if cands.iter().any(|c| c.entry.breaks_loading) {
        cands.clear();
    }
    let mut state = input.timed.clone();
    let chat_len = input.chat_len.max(input.messages.len());
    let timed_entries: Vec<TimedEntry<'_>> = cands
        .iter()
        .map(|c| TimedEntry {
            key: c.key.clone(),
            entry: c.entry,
        })
        .collect();
    let effects = timed::check(&mut state, chat_len, &timed_entries, input.dry_run);
    if cands.is_empty() {
        return Ok(ScanOutcome {
            activated: Vec::new(),
            timed: if input.dry_run {
                input.timed.clone()
            } else {
                state
            },
            regex_overruns: Vec::new(),
            passes: 0,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(input.seed);
    let result = run::passes(&input, &cands, &effects, &mut rng)?;
    let activated_timed: Vec<TimedEntry<'_>> = result
        .activated
        .iter()
        .map(|&(i, _)| TimedEntry {
            key: cands[i].key.clone(),
            entry: cands[i].entry,
        })
        .collect();
    timed::start_effects(&mut state, chat_len, &activated_timed, input.dry_run);
    let activated = result
        .activated
        .into_iter()
        .map(|(i, content)| {
            let e = cands[i].entry;
            Activated {
                book: cands[i].book.to_string(),
                uid: e.uid_member.clone(),
                position: e.position,
                depth: e.depth,
                role: e.role,
                order: e.order,
                outlet_name: e.outlet_name.clone(),
                content,
            }
        })
        .collect();
    Ok(ScanOutcome {
        activated,
        timed: if input.dry_run {
            input.timed.clone()
        } else {
            state
        },
        regex_overruns: result.overruns,
        passes: result.passes,
    })
}
