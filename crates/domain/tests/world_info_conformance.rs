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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use recapd_domain::settings::Role;
use recapd_domain::world_info::entry::Entry;
use recapd_domain::world_info::place::{Placement, place};
use recapd_domain::world_info::scan::{
    CharacterStrategy, CharacterSubject, GlobalTexts, ScanBook, ScanBooks, ScanInput, ScanLimits,
    ScanMessage, ScanOutcome, ScanSettings, check_world_info,
};
use recapd_domain::world_info::timed::TimedState;
use recapd_domain::world_info::types::{Activated, GenerationType};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The fixtures' directory.
fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/world_info/conformance")
}

/// A book's `entries` in the order the file writes them, each entry's
/// text as written (its hash covers the text in key order).
struct OrderedEntries(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for OrderedEntries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedEntries, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(OrderedEntries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A book file as the cases hold it (other members ignored, as the scan does).
#[derive(Deserialize)]
struct BookFile {
    entries: OrderedEntries,
}

/// A book's name and its entries in an order: a list keeps the cases' book order.
struct Books(Vec<(String, BookFile)>);

impl<'de> Deserialize<'de> for Books {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Books;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of books")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Books, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, BookFile>()? {
                    out.push((k, v));
                }
                Ok(Books(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct Character {
    name: String,
    avatar: String,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Deserialize)]
struct Message {
    name: String,
    text: String,
    #[serde(default)]
    is_system: bool,
}

#[derive(Deserialize)]
struct Prompt {
    value: String,
    scan: bool,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Texts {
    persona_description: String,
    character_description: String,
    character_personality: String,
    character_depth_prompt: String,
    scenario: String,
    creator_notes: String,
}

#[derive(Deserialize)]
struct Scan {
    messages: Vec<Message>,
    #[serde(default)]
    generation_type: Option<String>,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    global_texts: Texts,
    #[serde(default)]
    extension_prompts: Vec<Prompt>,
    #[serde(default)]
    books: Option<Books>,
    #[serde(default)]
    settings: Option<serde_json::Map<String, Value>>,
    expected: Value,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    about: String,
    user: String,
    character: Option<Character>,
    books: Books,
    global_books: Vec<String>,
    character_books: Vec<String>,
    chat_book: Option<String>,
    persona_book: Option<String>,
    settings: serde_json::Map<String, Value>,
    max_context: u32,
    #[serde(default)]
    timed_initial: Option<Value>,
    scans: Vec<Scan>,
}

/// JavaScript's `\s` (the oracle's tokenizer splits on it).
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The tokenizer stand-in: whitespace-separated words.
fn count_words(text: &str) -> u32 {
    let n = text.split(js_space).filter(|w| !w.is_empty()).count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The macro stand-in: `{{user}}` then `{{char}}`, ASCII case-insensitive.
fn substitute(text: &str, user: &str, char_name: &str) -> String {
    replace_ci(&replace_ci(text, "{{user}}", user), "{{char}}", char_name)
}

fn replace_ci(text: &str, pattern: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.char_indices().map(|(i, _)| i).find(|&i| {
        rest[i..].len() >= pattern.len()
            && rest.as_bytes()[i..i + pattern.len()].eq_ignore_ascii_case(pattern.as_bytes())
    }) {
        out.push_str(&rest[..i]);
        out.push_str(with);
        rest = &rest[i + pattern.len()..];
    }
    out.push_str(rest);
    out
}

/// SillyTavern's global settings (JS defaults, world-info.js:69-82) with
/// the case's members applied as `setWorldInfoSettings` reads them.
fn settings_from(members: &serde_json::Map<String, Value>, base: ScanSettings) -> ScanSettings {
    let mut s = base;
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let uint = |v: &Value| {
        let n = num(v);
        if n.is_finite() && n > 0.0 {
            n as u32
        } else {
            0
        }
    };
    let truthy = |v: &Value| match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(t) => !t.is_empty(),
        Value::Null => false,
        _ => true,
    };
    for (k, v) in members {
        match k.as_str() {
            "world_info_depth" => s.depth = uint(v),
            "world_info_min_activations" => s.min_activations = uint(v),
            "world_info_min_activations_depth_max" => s.min_activations_depth_max = uint(v),
            "world_info_budget" => s.budget_percent = uint(v),
            "world_info_budget_cap" => s.budget_cap = uint(v),
            "world_info_include_names" => s.include_names = truthy(v),
            "world_info_recursive" => s.recursive = truthy(v),
            "world_info_case_sensitive" => s.case_sensitive = truthy(v),
            "world_info_match_whole_words" => s.match_whole_words = truthy(v),
            "world_info_use_group_scoring" => s.use_group_scoring = truthy(v),
            "world_info_character_strategy" => {
                s.character_strategy = CharacterStrategy::from_number(num(v) as i64)
            }
            "world_info_max_recursion_steps" => s.max_recursion_steps = uint(v),
            other => panic!("the runner knows no setting {other} (add it here)"),
        }
    }
    s
}

fn js_defaults() -> ScanSettings {
    ScanSettings {
        depth: 2,
        min_activations: 0,
        min_activations_depth_max: 0,
        budget_percent: 25,
        budget_cap: 0,
        include_names: true,
        recursive: false,
        case_sensitive: false,
        match_whole_words: false,
        use_group_scoring: false,
        character_strategy: CharacterStrategy::CharacterFirst,
        max_recursion_steps: 0,
    }
}

fn role_number(role: Role) -> i64 {
    match role {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
    }
}

/// The text of a JSON value as a list line.
fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn short(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    format!("{t:?}")
}

/// One activated entry as a comparable line.
fn activated_line(a: &Activated) -> String {
    format!(
        "{}.{} pos={} depth={} role={} order={} {}",
        a.book,
        a.uid,
        a.position
            .map_or("none".to_string(), |p| p.number().to_string()),
        a.depth.map_or("none".to_string(), |d| d.to_string()),
        role_number(a.role),
        a.order,
        short(&a.content)
    )
}

/// SillyTavern's activated entry in the same form. Its `position` is
/// placed only when a number 0-7 (a switch with `===`); a `role` missing
/// or null is system where it matters (placement); an `order` missing is
/// shown as recapd's, since it only sorts.
fn expected_activated_line(e: &Value, got_order: Option<f64>) -> String {
    let position = match e["position"].as_i64() {
        Some(n @ 0..=7) if e["position"].is_i64() || e["position"].is_u64() => n.to_string(),
        _ => "none".to_string(),
    };
    let depth = match e["depth"].as_u64() {
        Some(d) => d.to_string(),
        None => "none".to_string(),
    };
    let role = e["role"].as_i64().unwrap_or(0);
    let order = match e["order"].as_f64() {
        Some(o) => o.to_string(),
        None => got_order.map_or("undefined".to_string(), |o| o.to_string()),
    };
    format!(
        "{}.{} pos={} depth={} role={} order={} {}",
        e["world"].as_str().unwrap_or("?"),
        e["uid"].as_str().unwrap_or("?"),
        position,
        depth,
        role,
        order,
        short(e["content"].as_str().unwrap_or(""))
    )
}

/// Compares two lists of lines, writing a readable difference.
fn diff_lists(out: &mut String, what: &str, expected: &[String], got: &[String]) {
    if expected == got {
        return;
    }
    let _ = writeln!(out, "    {what}:");
    let _ = writeln!(out, "      SillyTavern ({}):", expected.len());
    for l in expected {
        let mark = if got.contains(l) { " " } else { "-" };
        let _ = writeln!(out, "       {mark} {l}");
    }
    let _ = writeln!(out, "      recapd ({}):", got.len());
    for l in got {
        let mark = if expected.contains(l) { " " } else { "+" };
        let _ = writeln!(out, "       {mark} {l}");
    }
}

fn diff_text(out: &mut String, what: &str, expected: &str, got: &str) {
    if expected != got {
        let _ = writeln!(
            out,
            "    {what}:\n      SillyTavern: {expected:?}\n      recapd:      {got:?}"
        );
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Compares recapd's outcome and placement of one scan with SillyTavern's.
fn compare(out: &mut String, expected: &Value, outcome: &ScanOutcome, placement: &Placement) {
    let got: Vec<String> = outcome.activated.iter().map(activated_line).collect();
    let exp: Vec<String> = expected["activated"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let got_order = outcome
                        .activated
                        .iter()
                        .find(|g| {
                            Some(g.book.as_str()) == e["world"].as_str()
                                && Some(g.uid.as_str()) == e["uid"].as_str()
                        })
                        .map(|g| g.order);
                    expected_activated_line(e, got_order)
                })
                .collect()
        })
        .unwrap_or_default();
    diff_lists(out, "activated (in order)", &exp, &got);
    // Contents in full: the lines above shorten them.
    for (e, g) in expected["activated"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(&outcome.activated)
    {
        let ec = e["content"].as_str().unwrap_or("");
        if e["uid"].as_str() == Some(g.uid.as_str()) && ec != g.content {
            diff_text(
                out,
                &format!("content of {}.{}", g.book, g.uid),
                ec,
                &g.content,
            );
        }
    }

    diff_text(
        out,
        "before",
        expected["world_info_before"].as_str().unwrap_or(""),
        &placement.before,
    );
    diff_text(
        out,
        "after",
        expected["world_info_after"].as_str().unwrap_or(""),
        &placement.after,
    );

    let exp_depth: Vec<String> = expected["depth_prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "depth={} role={} {}",
                show(&p["depth"]),
                show(&p["role"]),
                show(&p["text"])
            )
        })
        .collect();
    let got_depth: Vec<String> = placement
        .depth
        .iter()
        .map(|p| {
            format!(
                "depth={} role={} {:?}",
                p.depth,
                role_number(p.role),
                p.text
            )
        })
        .collect();
    diff_lists(
        out,
        "at-depth prompts (by depth, role)",
        &exp_depth,
        &got_depth,
    );

    diff_text(
        out,
        "AN top",
        &strings(&expected["an_top"]).join("\n"),
        &placement.an_top,
    );
    diff_text(
        out,
        "AN bottom",
        &strings(&expected["an_bottom"]).join("\n"),
        &placement.an_bottom,
    );
    diff_lists(
        out,
        "examples top",
        &strings(&expected["examples_top"]),
        &placement.examples_top,
    );
    diff_lists(
        out,
        "examples bottom",
        &strings(&expected["examples_bottom"]),
        &placement.examples_bottom,
    );

    let exp_outlets: Vec<String> = expected["outlets"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k:?} = {:?}", strings(v).join("\n")))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let got_outlets: Vec<String> = placement
        .outlets
        .iter()
        .map(|(k, v)| format!("{k:?} = {v:?}"))
        .collect();
    diff_lists(out, "outlets", &exp_outlets, &got_outlets);

    let got_timed: Value = serde_json::from_str(&outcome.timed.to_json()).unwrap_or(Value::Null);
    if got_timed != expected["timed"] {
        let _ = writeln!(
            out,
            "    timed state after:\n      SillyTavern: {}\n      recapd:      {}",
            expected["timed"], got_timed
        );
    }
}

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
