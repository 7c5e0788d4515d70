//! World Info conformance: every case of
//! `tests/fixtures/world_info/conformance/*.json` run through recapd's
//! `check_world_info` and `place`, compared with what SillyTavern's own
//! `checkWorldInfo` (world-info.js at 1.18.0, 51ad27f, run unmodified
//! under Node by `tools/st-oracle`) produced for the same input.
//!
//! Each fixture holds the input (books as written, which books apply,
//! settings by SillyTavern's names, the chat, scans in a row) and, per
//! scan, SillyTavern's output. Both sides count tokens as
//! whitespace-separated words (JavaScript's `\s`) and substitute only
//! `{{user}}` and `{{char}}` (ASCII case-insensitive), the stand-ins the
//! oracle gives SillyTavern. Scans of one case run in order, the timed
//! state recapd returns carried to the next scan (as a chat would); the
//! first scan starts from the fixture's `timed_initial` (SillyTavern's own
//! state where a case took it from another case's run).
//!
//! No case depends on a random draw: the oracle checks each one with
//! draws near 0 and near 1 and refuses a case whose result changes.
//!
//! Compared per scan: the activated entries in order (book, uid, position,
//! depth, role, order, content), before/after, the at-depth prompts as
//! SillyTavern's prompt builder ends up with them, the author's note
//! top/bottom, the example texts top/bottom, the outlets, the timed state
//! (hashes included: state imported from SillyTavern must keep working).
//! A failing case prints what differs; `CONFORMANCE_CASE=<substring>`
//! runs only the matching cases.

#[path = "world_info_conformance/compare.rs"]
mod compare;
#[path = "world_info_conformance/fixture.rs"]
mod fixture;
#[path = "world_info_conformance/stand_in.rs"]
mod stand_in;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use recapd_domain::world_info::entry::Entry;
use recapd_domain::world_info::place::place;
use recapd_domain::world_info::scan::{
    CharacterSubject, CompiledKeys, GlobalTexts, ScanBook, ScanBooks, ScanInput, ScanLimits,
    ScanMessage, check_world_info,
};
use recapd_domain::world_info::timed::TimedState;
use recapd_domain::world_info::types::GenerationType;
use serde_json::Value;

use compare::compare;
use fixture::{BookFile, Books, Case, fixture_dir};
use stand_in::{count_words, js_defaults, settings_from, substitute};

/// Runs one case; returns the differences found (empty: it conforms).
fn run_case(case: &Case) -> String {
    let mut out = String::new();
    let mut books: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    let load = |books: &mut BTreeMap<String, Vec<Entry>>, from: &Books| {
        for (name, file) in &from.0 {
            let entries = file
                .entries
                .0
                .iter()
                .map(|(uid, raw)| Entry::read(uid, name, raw))
                .collect();
            books.insert(name.clone(), entries);
        }
    };
    load(&mut books, &case.books);
    for (name, text) in &case.books_raw {
        let file: BookFile = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("case {}: book {name}: {e}", case.name));
        load(&mut books, &Books(vec![(name.clone(), file)]));
    }
    let mut settings = settings_from(&case.settings, js_defaults());
    let mut timed = match &case.timed_initial {
        Some(v) => TimedState::from_json(&v.to_string()),
        None => TimedState::from_json("{}"),
    };
    let char_name = case.character.as_ref().map_or("", |c| c.name.as_str());
    let user = case.user.as_str();
    let sub = |t: &str| substitute(t, user, char_name);
    let limits = ScanLimits::default();
    let filter_name = case.character.as_ref().map(|c| {
        let a = c.avatar.as_str();
        // The avatar's file name without its extension (utils.js getCharaFilename).
        match a.rfind('.') {
            Some(i) if !a[i + 1..].contains('/') && i + 1 < a.len() => a[..i].to_string(),
            _ => a.to_string(),
        }
    });

    // Compiled keys kept across the case's scans, as the server keeps a
    // book version's (the same key text compiles to the same key).
    let compiled = CompiledKeys::default();
    for (i, scan) in case.scans.iter().enumerate() {
        if let Some(s) = &scan.settings {
            settings = settings_from(s, settings);
        }
        if let Some(b) = &scan.books {
            load(&mut books, b);
        }
        let book = |name: &String| {
            books.get_key_value(name).map(|(n, e)| ScanBook {
                name: n.as_str(),
                entries: e.as_slice(),
                compiled: Some(&compiled),
            })
        };
        let scan_books = ScanBooks::new(
            case.chat_book.as_ref().and_then(book),
            case.persona_book.as_ref().and_then(book),
            case.global_books.iter().filter_map(book).collect(),
            if case.character.is_some() {
                case.character_books.iter().filter_map(book).collect()
            } else {
                Vec::new()
            },
        );
        let messages: Vec<ScanMessage> = scan
            .messages
            .iter()
            .filter(|m| !m.is_system)
            .map(|m| ScanMessage {
                name: &m.name,
                text: &m.text,
            })
            .collect();
        let scan_prompts: Vec<String> = scan
            .extension_prompts
            .iter()
            .filter(|p| p.scan)
            .map(|p| sub(&p.value))
            .filter(|t| !t.is_empty())
            .collect();
        if Value::from(scan_prompts.clone()) != scan.expected["scan_prompts"] {
            let _ = writeln!(
                out,
                "  scan {i}: the runner's scan prompts {:?} are not SillyTavern's {} (runner bug)",
                scan_prompts, scan.expected["scan_prompts"]
            );
        }
        let generation_type = match &scan.generation_type {
            Some(n) => GenerationType::from_name(n)
                .unwrap_or_else(|| panic!("case {}: unknown generation type {n}", case.name)),
            None => GenerationType::Normal,
        };
        let character = case
            .character
            .as_ref()
            .zip(filter_name.as_deref())
            .map(|(c, f)| CharacterSubject {
                filter_name: f,
                tags: c.tags.as_slice(),
            });
        let t = &scan.global_texts;
        let input = ScanInput {
            settings: &settings,
            books: scan_books,
            messages: &messages,
            chat_len: messages.len(),
            texts: GlobalTexts {
                persona_description: &t.persona_description,
                character_description: &t.character_description,
                character_personality: &t.character_personality,
                character_depth_prompt: &t.character_depth_prompt,
                scenario: &t.scenario,
                creator_notes: &t.creator_notes,
            },
            scan_prompts: &scan_prompts,
            generation_type,
            character,
            max_context_tokens: case.max_context,
            count_tokens: &count_words,
            substitute: &sub,
            timed: &timed,
            dry_run: scan.dry_run,
            seed: 29,
            limits: &limits,
            interrupt: &|| None,
        };
        let outcome = match check_world_info(input) {
            Ok(o) => o,
            Err(e) => {
                let _ = writeln!(out, "  scan {i}: check_world_info failed: {e}");
                break;
            }
        };
        let placement = place(&outcome.activated);
        let mut diff = String::new();
        compare(&mut diff, &scan.expected, &outcome, &placement);
        if !diff.is_empty() {
            let _ = write!(out, "  scan {i} of {}:\n{diff}", case.scans.len());
        }
        timed = outcome.timed;
    }
    out
}

/// Cases where recapd knowingly differs from SillyTavern, each with the
/// reason (docs/world-info.md lists them for users). The test checks that
/// each still differs, so a fix must remove it from here.
const DECLARED_DIFFERENCES: &[(&str, &str)] = &[(
    "regex-utf16-units",
    "without the `u` flag JavaScript matches UTF-16 code units (`.` matches half \
     of an emoji); recapd's regex engine matches whole characters",
)];

#[test]
fn sillytavern_conformance() {
    let filter = std::env::var("CONFORMANCE_CASE").ok();
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .expect("invariant: the conformance fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 60,
        "expected the conformance cases, found {}",
        files.len()
    );

    let mut failed = Vec::new();
    let mut report = String::new();
    let mut ran = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("invariant: a listed fixture is readable");
        let case: Case =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if filter.as_deref().is_some_and(|f| !case.name.contains(f)) {
            continue;
        }
        ran += 1;
        let diff = run_case(&case);
        if let Some((_, why)) = DECLARED_DIFFERENCES.iter().find(|(n, _)| *n == case.name) {
            if diff.is_empty() {
                let _ = write!(
                    report,
                    "\n✗ {} now agrees with SillyTavern: remove it from DECLARED_DIFFERENCES ({why})\n",
                    case.name
                );
                failed.push(case.name.clone());
            }
            continue;
        }
        if !diff.is_empty() {
            let _ = write!(report, "\n✗ {} — {}\n{diff}", case.name, case.about);
            failed.push(case.name.clone());
        }
    }
    assert!(ran > 0, "no case matched CONFORMANCE_CASE={filter:?}");
    if !failed.is_empty() {
        panic!(
            "{report}\n{} of {ran} cases differ from SillyTavern: {}\n",
            failed.len(),
            failed.join(", ")
        );
    }
}
