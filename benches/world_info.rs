//! Criterion micro-benchmarks of World Info's activation (issue 29): one
//! `check_world_info` in process, the domain's share of a ScanWorldInfo
//! call, over the seeded book and chat `bench/world_info.sh` drives through
//! the server (bench/tools/world_info/synth.rs): a chat of 10,000 messages,
//! recursion on, by book size (100, 1,000 and 10,000 entries at
//! `world_info_depth` 2) and by scan depth (2, 10, 100 and 1000 with the
//! 1,000-entry book). SillyTavern's other defaults (budget 25% of
//! maxContext, 7,842 tokens as its shipped settings give: 8,192 minus 350
//! for the answer; names included; no min activations), the default
//! tokenizer, a dry run.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use recapd::domain::settings::Settings;
use recapd::domain::tokens;
use recapd::domain::world_info::entry::Entry;
use recapd::domain::world_info::scan::{
    CharacterStrategy, CompiledKeys, GlobalTexts, ScanBook, ScanBooks, ScanInput, ScanLimits,
    ScanMessage, WorldInfoSettings, check_world_info,
};
use recapd::domain::world_info::timed::TimedState;
use recapd::domain::world_info::types::GenerationType;

#[path = "../bench/tools/world_info/synth.rs"]
mod synth;

const SEED: u64 = 29;
const MESSAGES: usize = 10_000;
const BOOK: &str = "bench";

/// The book of `entries` entries as the scanner reads it.
fn read_book(all: &[synth::Entity], entries: usize) -> Vec<Entry> {
    let json: serde_json::Value =
        serde_json::from_str(&synth::book(SEED, all, entries)).expect("the generator writes JSON");
    json["entries"]
        .as_object()
        .expect("the generator writes an entries object")
        .iter()
        .map(|(uid, value)| {
            let raw = serde_json::value::to_raw_value(value).expect("a JSON value re-serializes");
            Entry::read(uid, BOOK, &raw)
        })
        .collect()
}

/// The chat's (name, text) pairs, oldest first.
fn read_chat(all: &[synth::Entity]) -> Vec<(String, String)> {
    let jsonl =
        String::from_utf8(synth::chat(SEED, all, MESSAGES)).expect("the generator writes UTF-8");
    jsonl
        .lines()
        .skip(1)
        .map(|line| {
            let m: serde_json::Value =
                serde_json::from_str(line).expect("the generator writes JSON lines");
            (
                m["name"].as_str().unwrap_or_default().to_owned(),
                m["mes"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn settings(depth: u32) -> WorldInfoSettings {
    WorldInfoSettings {
        depth,
        min_activations: 0,
        min_activations_depth_max: 0,
        budget: 25,
        budget_cap: 0,
        include_names: true,
        recursive: true,
        case_sensitive: false,
        match_whole_words: false,
        use_group_scoring: false,
        character_strategy: CharacterStrategy::CharacterFirst,
        max_recursion_steps: 0,
        ..WorldInfoSettings::default()
    }
}

/// The book's compiled regex keys, kept across scans as the server keeps
/// them per book version.
static KEYS: std::sync::LazyLock<CompiledKeys> = std::sync::LazyLock::new(CompiledKeys::default);

/// One activation; returns how many entries it activated.
fn scan(entries: &[Entry], messages: &[ScanMessage<'_>], settings: &WorldInfoSettings) -> usize {
    let tokenizer = Settings::default().inclusion.tokenizer;
    let count = |text: &str| tokens::count(tokenizer, text);
    let substitute = |text: &str| text.to_owned();
    let timed = TimedState::default();
    let limits = ScanLimits::default();
    let input = ScanInput {
        settings,
        books: ScanBooks::new(
            None,
            None,
            vec![ScanBook {
                name: BOOK,
                entries,
                compiled: Some(&KEYS),
            }],
            vec![],
        ),
        messages,
        chat_len: messages.len(),
        texts: GlobalTexts::default(),
        scan_prompts: &[],
        generation_type: GenerationType::Normal,
        character: None,
        max_context_tokens: 8192 - 350,
        count_tokens: &count,
        substitute: &substitute,
        timed: &timed,
        dry_run: true,
        seed: 1,
        limits: &limits,
        interrupt: &|| None,
    };
    check_world_info(input).map_or(0, |outcome| outcome.activated.len())
}

fn world_info(c: &mut Criterion) {
    tokens::warm_up(Settings::default().inclusion.tokenizer);
    let all = synth::entities(SEED, 10_000);
    let chat = read_chat(&all);
    let messages: Vec<ScanMessage<'_>> = chat
        .iter()
        .map(|(name, text)| ScanMessage { name, text })
        .collect();

    let mut group = c.benchmark_group("world_info_entries");
    group.sample_size(20);
    for entries in [100, 1000, 10_000] {
        let book = read_book(&all, entries);
        let settings = settings(2);
        eprintln!(
            "entries {entries}, depth 2: {} activated",
            scan(&book, &messages, &settings)
        );
        group.bench_with_input(BenchmarkId::from_parameter(entries), &book, |b, book| {
            b.iter(|| black_box(scan(book, &messages, &settings)))
        });
    }
    group.finish();

    let book = read_book(&all, 1000);
    let mut group = c.benchmark_group("world_info_depth");
    group.sample_size(20);
    for depth in [2, 10, 100, 1000] {
        let settings = settings(depth);
        eprintln!(
            "entries 1000, depth {depth}: {} activated",
            scan(&book, &messages, &settings)
        );
        group.bench_with_input(
            BenchmarkId::from_parameter(depth),
            &settings,
            |b, settings| b.iter(|| black_box(scan(&book, &messages, settings))),
        );
    }
    group.finish();
}

criterion_group!(benches, world_info);
criterion_main!(benches);
