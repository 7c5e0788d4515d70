//! `world-info --lengths`: what one scan costs as a chat grows (issue 44).
//!
//! Imports one generated chat of each length and one book of
//! `--length-entries` entries at `world_info_depth` 2, then rounds of one
//! ScanWorldInfo (not a dry run) per chat, one at a time from one client,
//! the order turned each round so no length always follows another. One
//! line per length, with its median's ratio to the first (shortest)
//! length's: a scan that reads only what its depth reaches costs the same
//! at every length.

use std::time::{Duration, Instant};

use recapd::grpc::pb;

use super::{Clients, Error, WorldInfo, scan_request, set_chat, synth};
use crate::import::import_chat;
use crate::stats::summarize;

/// The book's name.
const BOOK: &str = "bench-lengths";

/// Measures `args.lengths` side by side and prints a line per length.
pub(super) async fn lengths(c: &mut Clients, args: &WorldInfo) -> Result<(), Error> {
    let entities = synth::entities(args.seed, args.length_entries);
    let json = synth::book(args.seed, &entities, args.length_entries);
    c.books
        .import_lorebook(pb::ImportLorebookRequest {
            name: BOOK.to_owned(),
            json,
        })
        .await?;
    let mut chats = Vec::new();
    for &length in &args.lengths {
        let chat = synth::chat(args.seed, &entities, length);
        let chat_id = format!("wi-length-{length}");
        let started = Instant::now();
        import_chat(&mut c.memory, &chat_id, &chat).await?;
        eprintln!(
            "world-info: chat of {length} messages ({} bytes) imported in {:.1} s",
            chat.len(),
            started.elapsed().as_secs_f64()
        );
        set_chat(c, &chat_id, Some(BOOK), 2).await?;
        chats.push(chat_id);
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); chats.len()];
    let mut activated = vec![0usize; chats.len()];
    let budget = Duration::from_secs_f64(args.max_seconds);
    let mut started = Instant::now();
    for round in 0..args.warmup + args.rounds {
        if round == args.warmup {
            started = Instant::now();
        }
        if round > args.warmup + 20 && started.elapsed() > budget {
            break;
        }
        for turn in 0..chats.len() {
            let i = (turn + round) % chats.len();
            let request = scan_request(&chats[i], false, round as u64 + 1);
            let t = Instant::now();
            let scan = c.books.scan_world_info(request).await?.into_inner();
            let took = t.elapsed();
            if round >= args.warmup {
                samples[i].push(took);
                activated[i] += scan.activated.len();
            }
        }
    }
    let elapsed = started.elapsed();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut first_p50 = None;
    for (i, length) in args.lengths.iter().enumerate() {
        let rounds = samples[i].len().max(1);
        let summary = summarize(std::mem::take(&mut samples[i]), elapsed);
        let first = *first_p50.get_or_insert(ms(summary.p50));
        println!(
            "world_info_length messages={length} entries={} depth=2 rounds={} activated_mean={:.1} \
             scan_p50_ms={:.3} scan_p99_ms={:.3} p50_over_first={:.2}",
            args.length_entries,
            summary.count,
            activated[i] as f64 / rounds as f64,
            ms(summary.p50),
            ms(summary.p99),
            ms(summary.p50) / first.max(1e-9),
        );
    }
    Ok(())
}
