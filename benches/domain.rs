//! Criterion micro-benchmarks of the domain: a refresh in chats of 1k, 10k
//! and 100k messages (cold, and after one appended message), the inclusion
//! pass under a token budget, and the template.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use recapd::domain::chat::{Chat, ChatEvent};
use recapd::domain::ids::ChatKey;
use recapd::domain::inclusion::{compute_inclusion, count_texts};
use recapd::domain::refresh::{RefreshContext, Trigger, refresh};
use recapd::domain::settings::{Settings, SettingsPatch};
use recapd::domain::time::UnixMicros;
use recapd::domain::{template, tokens};

#[path = "../bench/tools/fixtures.rs"]
mod fixtures;

static CHAT: std::sync::LazyLock<ChatKey> = std::sync::LazyLock::new(|| ChatKey::untenanted("c"));

/// The default vocabulary's counter.
static COUNTER: std::sync::LazyLock<recapd::domain::tokens::Counter> =
    std::sync::LazyLock::new(recapd::domain::tokens::Counter::default);

fn context(settings: &Settings) -> RefreshContext<'_> {
    RefreshContext {
        counter: &COUNTER,
        chat: &CHAT,
        settings,
        enabled: true,
        revision: 1,
        trigger: Trigger::MessageSent,
        now_us: UnixMicros(0),
    }
}

fn refreshes(c: &mut Criterion) {
    let settings = Settings::default();
    tokens::warm_up(settings.inclusion.tokenizer);
    let mut group = c.benchmark_group("refresh");
    group.sample_size(20);
    for n in [1_000, 10_000, 100_000] {
        let chat = fixtures::build_chat(n);
        let rows: Vec<_> = chat.messages().map(|(seq, m)| (seq, m.clone())).collect();
        let versions: Vec<_> = chat.recaps().versions().cloned().collect();
        // Cold: rebuild the chat from its rows, then refresh (text counted).
        group.bench_with_input(BenchmarkId::new("cold", n), &n, |b, _| {
            b.iter_batched(
                || (rows.clone(), versions.clone()),
                |(rows, versions)| {
                    let chat = Chat::from_parts(rows, versions, Some(0));
                    refresh(&chat, context(&settings), |t| {
                        tokens::count(settings.inclusion.tokenizer, t)
                    })
                },
                BatchSize::LargeInput,
            )
        });
        // After one change: append a message and refresh (text unchanged).
        let previous = refresh(&chat, context(&settings), |t| {
            tokens::count(settings.inclusion.tokenizer, t)
        });
        let mut chat = chat;
        let mut next_id = n;
        group.bench_with_input(BenchmarkId::new("after_append", n), &n, |b, _| {
            b.iter(|| {
                next_id += 1;
                chat.apply(ChatEvent::MessageSent(fixtures::message(
                    next_id,
                    fixtures::TEXT,
                )))
                .unwrap();
                refresh(&chat, context(&settings), |t| {
                    if t == previous.text {
                        previous.token_count
                    } else {
                        tokens::count(settings.inclusion.tokenizer, t)
                    }
                })
            })
        });
    }
    group.finish();
}

fn inclusion(c: &mut Criterion) {
    let settings = Settings::default().with(&SettingsPatch {
        message_recap_context_limit: Some(2_000),
        ..Default::default()
    });
    let mut group = c.benchmark_group("inclusion_with_2000_token_budget");
    group.sample_size(20);
    for n in [1_000, 10_000] {
        let mut chat = fixtures::build_chat(n);
        count_texts(&mut chat, &COUNTER);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| compute_inclusion(black_box(&chat), &settings, &COUNTER))
        });
    }
    group.finish();
}

fn templates(c: &mut Criterion) {
    let content = fixtures::TEXT.repeat(20);
    c.bench_function("template_2kb", |b| {
        b.iter(|| template::render(black_box(template_text()), Some(black_box(&content))))
    });
}

fn template_text() -> &'static str {
    recapd::domain::settings::DEFAULT_TEMPLATE
}

criterion_group!(benches, refreshes, inclusion, templates);
criterion_main!(benches);
