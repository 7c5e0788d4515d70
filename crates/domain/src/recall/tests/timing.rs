//! A rough timing of searches over a large chat, for profiling by hand
//! (`cargo test -p recapd-domain --release --lib recall::tests::timing
//! -- --ignored --nocapture`); asserts nothing about time.

use std::time::{Duration, Instant};

use super::super::index::RecallIndex;
use super::super::keyword::KeywordIndex;
use super::super::search::RecallQuery;
use super::super::tier::{moment_query, moment_search};
use super::super::{ChunkKey, Source, StoredVector};
use super::{message, words};
use crate::chat::{Chat, ChatEvent};
use crate::settings::Settings;

/// The median of `took`.
fn median(mut took: Vec<Duration>) -> Duration {
    took.sort();
    took.get(took.len() / 2).copied().unwrap_or_default()
}

/// Times `old` and `new` on each query, alternately (which goes first
/// alternating too: the second call of a pair found the first's rows in
/// the caches, about 10% faster), `rounds` times over, and gives their
/// medians in ms.
fn time<T>(
    queries: &[RecallQuery<'_>],
    rounds: usize,
    old: impl Fn(&RecallQuery<'_>) -> T,
    new: impl Fn(&RecallQuery<'_>) -> T,
) -> (f64, f64) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut first = true;
    for _ in 0..rounds {
        for query in queries {
            let timed = |call: &dyn Fn() -> T| {
                let started = Instant::now();
                std::hint::black_box(call());
                started.elapsed()
            };
            if first {
                before.push(timed(&|| old(query)));
                after.push(timed(&|| new(query)));
            } else {
                after.push(timed(&|| new(query)));
                before.push(timed(&|| old(query)));
            }
            first = !first;
        }
    }
    let ms = |took| median(took).as_secs_f64() * 1000.0;
    (ms(before), ms(after))
}

#[test]
#[ignore = "a timing for profiling by hand"]
fn timing_of_a_search_over_a_large_chat() {
    // As `bench/recall.sh`'s chats: twenty words a message drawn by
    // Zipf's law from 8,000, each message's vector the sum of its words'
    // (random) vectors, so that common words give every vector a shared
    // direction, as a model's vectors have.
    let mut next = super::super::vectors::tests::xorshift(7);
    let word_vectors: Vec<Vec<f32>> = (0..8000)
        .map(|_| {
            (0..384)
                .map(|_| (next() % 1000) as f32 / 1000.0 - 0.5)
                .collect()
        })
        .collect();
    let harmonic: Vec<f64> = (1..=8000)
        .scan(0.0, |sum, r| {
            *sum += 1.0 / f64::from(r);
            Some(*sum)
        })
        .collect();
    let mut zipf = move || {
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64 * harmonic[7999];
        harmonic.partition_point(|h| *h < u).min(7999)
    };
    let sum_of = |words: &[usize]| -> Vec<f32> {
        let mut sum = vec![0f32; 384];
        for &w in words {
            sum.iter_mut()
                .zip(&word_vectors[w])
                .for_each(|(s, x)| *s += x);
        }
        sum
    };
    let mut texts = Vec::new();
    let mut stored = Vec::new();
    let mut messages = Vec::new();
    for i in 0..100_000 {
        let words: Vec<usize> = (0..20).map(|_| zipf()).collect();
        let text = words
            .iter()
            .map(|w| format!("w{w}x"))
            .collect::<Vec<_>>()
            .join(" ");
        let id = format!("m{i}");
        stored.push(StoredVector {
            key: ChunkKey {
                message_id: id.as_str().into(),
                source: Source::Message,
                part: 0,
            },
            fingerprint: super::super::input_fingerprint(Some("A"), &text),
            model: "m".into(),
            vector: sum_of(&words),
        });
        texts.push((id, text));
        messages.push(words);
    }
    let settings = {
        let mut settings = Settings::default();
        settings.recall.enabled = true;
        settings
    };
    for size in [1000, 100_000] {
        let mut chat = Chat::default();
        for (id, text) in &texts[..size] {
            chat.apply(ChatEvent::MessageSent(message(id, "A", text)))
                .expect("appends");
        }
        let started = Instant::now();
        let index = RecallIndex::build(&chat, 1000, "m", stored[..size].to_vec());
        println!("{size} messages: build {:?}", started.elapsed());
        // Six words of a message, by keyword alone and with their
        // direction; the moment (the last three messages).
        let six: Vec<(String, Vec<f32>)> = (0..200)
            .map(|q| {
                let about = q * 457 % size;
                let six = &messages[about][..6];
                let text = six
                    .iter()
                    .map(|w| format!("w{w}x"))
                    .collect::<Vec<_>>()
                    .join(" ");
                (text, sum_of(six))
            })
            .collect();
        let keyword: Vec<RecallQuery<'_>> = six.iter().map(|(text, _)| words(text)).collect();
        let hybrid: Vec<RecallQuery<'_>> = six
            .iter()
            .map(|(text, direction)| RecallQuery {
                vector: Some(direction.as_slice()),
                ..words(text)
            })
            .collect();
        let moment = moment_query(&chat, &index, &settings);
        let moments = [moment_search(&moment, &settings, 10, true)];
        for query in keyword.iter().chain(&moments) {
            assert_eq!(
                index.keyword_phase(query, false),
                index.keyword_phase(query, true)
            );
        }
        let own = keyword
            .iter()
            .enumerate()
            .filter(|(q, query)| {
                index
                    .search(&chat, query)
                    .iter()
                    .any(|h| h.key.message_id.as_str() == format!("m{}", q * 457 % size))
            })
            .count();
        println!("  six words: its message in the top 10 for {own} of 200");
        // Old (every entry scored) and new (pruned), call by call.
        for round in 1..=2 {
            let whole = |query: &RecallQuery<'_>| index.candidates(query);
            let old_whole = |query: &RecallQuery<'_>| index.candidates_exhaustive(query);
            let phase = |query: &RecallQuery<'_>| index.keyword_phase(query, false);
            let old_phase = |query: &RecallQuery<'_>| index.keyword_phase(query, true);
            let show = |(old, new): (f64, f64)| format!("{old:.3} -> {new:.3}");
            println!(
                "  round {round}, p50 ms old -> new: keyword {} (phase {}), hybrid {} (phase {}), the moment {} (phase {})",
                show(time(&keyword, 3, old_whole, whole)),
                show(time(&keyword, 3, old_phase, phase)),
                show(time(&hybrid, 1, old_whole, whole)),
                show(time(&hybrid, 1, old_phase, phase)),
                show(time(&moments, 200, old_whole, whole)),
                show(time(&moments, 200, old_phase, phase)),
            );
        }
        // The vector phase alone (the sign pass, the 8-bit pass and the
        // rescoring), its first pass as before (plain) and now, call by
        // call; both give the same answer.
        for query in hybrid.iter().chain(&moments) {
            assert_eq!(
                index.vector_phase(query, true),
                index.vector_phase(query, false)
            );
        }
        for round in 1..=2 {
            let plain = |query: &RecallQuery<'_>| index.vector_phase(query, true);
            let now = |query: &RecallQuery<'_>| index.vector_phase(query, false);
            let show = |(old, new): (f64, f64)| format!("{old:.3} -> {new:.3}");
            println!(
                "  round {round}, vector phase p50 ms plain -> now: six words {}, the moment {}",
                show(time(&hybrid, 3, plain, now)),
                show(time(&moments, 200, plain, now)),
            );
        }
        // The keyword index alone: built one document at a time, then
        // one more at the end (a new slot), and one taken out and put
        // back in the middle (a reused slot).
        let mut keywords = KeywordIndex::default();
        let started = Instant::now();
        for (slot, (_, text)) in texts[..size].iter().enumerate() {
            keywords.insert(slot as u32, &format!("A {text}"));
        }
        let built = started.elapsed();
        let (mut added, mut moved) = (Vec::new(), Vec::new());
        for i in 0..200 {
            let (_, text) = &texts[i * 31 % size];
            let text = format!("A {text}");
            let started = Instant::now();
            keywords.insert(size as u32, &text);
            added.push(started.elapsed());
            keywords.remove(size as u32);
            let slot = (i * 97 % size) as u32;
            let (_, text) = &texts[slot as usize];
            let text = format!("A {text}");
            let started = Instant::now();
            keywords.remove(slot);
            keywords.insert(slot, &text);
            moved.push(started.elapsed());
        }
        println!(
            "  keyword index: built in {built:?}, p50 insert at the end {:?}, remove and insert in the middle {:?}; {} bytes, of which blocks and list headers {}",
            median(added),
            median(moved),
            keywords.heap_bytes(),
            keywords.block_overhead()
        );
    }
}
