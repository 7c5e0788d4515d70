//! `world-info`: the cost of SillyTavern World Info in recapd (issue 29).
//!
//! Against a running recapd: imports one generated chat (`synth::chat`) under
//! several ids, generated books (`synth::book`) of each size, and gives each
//! chat its own settings: `wi-base` applies no book (the baseline),
//! `wi-<n>` applies the book of `n` entries with recursion on. Then, per
//! configuration (each book size at `world_info_depth` 2, then each depth
//! with the `--depth-entries` book), rounds of four calls, one at a time
//! from one client: RenderPrompt of the baseline chat, ScanWorldInfo (not a
//! dry run), RenderPrompt of the World Info chat, ScanWorldInfo as a dry
//! run (odd rounds start with the last two). Interleaving them puts the
//! baseline under the same machine noise as the figures compared with it. Every call must answer OK; one line of
//! `key=value` figures per configuration.

mod lengths;
mod synth;

use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::transport::Channel;

use crate::drive::connect;
use crate::import::import_chat;
use crate::stats::{Summary, summarize};

type Error = Box<dyn std::error::Error>;

/// The baseline chat: the same messages, no book.
const BASE_CHAT: &str = "wi-base";
/// A story string of a few lines, as a character card gives.
const STORY: &str = "You are Seraphina, a guardian of the forest glade. Stay in character, \
write vivid prose, and keep track of who is where.\nScenario: Aric arrives wounded at the \
glade at dusk.";

/// `world-info`'s options.
#[derive(clap::Args)]
pub struct WorldInfo {
    /// recapd's address (host:port).
    #[arg(long)]
    addr: String,
    /// Book sizes measured at `world_info_depth` 2.
    #[arg(long, value_delimiter = ',', default_values_t = [100, 1000, 10_000])]
    entries: Vec<usize>,
    /// `world_info_depth` values measured with the `--depth-entries` book.
    #[arg(long, value_delimiter = ',', default_values_t = [2, 10, 100, 1000])]
    depths: Vec<i32>,
    /// The book size of the depth sweep.
    #[arg(long, default_value_t = 1000)]
    depth_entries: usize,
    /// Messages in the chat.
    #[arg(long, default_value_t = 10_000)]
    messages: usize,
    /// Measured rounds per configuration (each: four calls).
    #[arg(long, default_value_t = 400)]
    rounds: usize,
    /// At most this long per configuration's measured rounds: fewer
    /// rounds than `--rounds` when a round is slow (at least 20).
    #[arg(long, default_value_t = 90.0)]
    max_seconds: f64,
    /// Unmeasured rounds first, per configuration (fewer when they take
    /// more than 10 s; at least 3).
    #[arg(long, default_value_t = 30)]
    warmup: usize,
    /// recapd's metrics address (host:port), optional: then each line also
    /// gives the mean time of the activation itself inside the server
    /// (`recapd_world_info_scan_duration_seconds`), apart from the call.
    #[arg(long)]
    metrics: Option<String>,
    /// Chat lengths (messages) measured side by side instead of the book
    /// sizes and depths: ScanWorldInfo at depth 2 with a book of
    /// `--length-entries` entries, one chat per length.
    #[arg(long, value_delimiter = ',')]
    lengths: Vec<usize>,
    /// The book size of `--lengths`.
    #[arg(long, default_value_t = 20)]
    length_entries: usize,
    /// Seed of the book and chat generators.
    #[arg(long, default_value_t = 29)]
    seed: u64,
}

/// The clients of one connection.
struct Clients {
    books: LorebookServiceClient<Channel>,
    memory: MemoryServiceClient<Channel>,
    prompts: PromptServiceClient<Channel>,
    settings: SettingsServiceClient<Channel>,
}

pub async fn world_info(args: WorldInfo) -> Result<(), Error> {
    let channel = connect(&args.addr).await?;
    let mut c = Clients {
        books: LorebookServiceClient::new(channel.clone()),
        memory: MemoryServiceClient::new(channel.clone()),
        // A 10,000-message transcript comes back whole: past tonic's 4 MiB.
        prompts: PromptServiceClient::new(channel.clone()).max_decoding_message_size(usize::MAX),
        settings: SettingsServiceClient::new(channel),
    };
    if !args.lengths.is_empty() {
        return lengths::lengths(&mut c, &args).await;
    }
    let mut sizes = args.entries.clone();
    if !args.depths.is_empty() && !sizes.contains(&args.depth_entries) {
        sizes.push(args.depth_entries);
    }
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let entities = synth::entities(args.seed, largest);
    let chat = synth::chat(args.seed, &entities, args.messages);
    eprintln!(
        "world-info: chat of {} messages, {} bytes",
        args.messages,
        chat.len()
    );

    import_chat(&mut c.memory, BASE_CHAT, &chat).await?;
    set_chat(&mut c, BASE_CHAT, None, 2).await?;
    for &n in &sizes {
        let json = synth::book(args.seed, &entities, n);
        let name = format!("bench-{n}");
        let started = Instant::now();
        let stored = c
            .books
            .import_lorebook(pb::ImportLorebookRequest {
                name: name.clone(),
                json: json.clone(),
            })
            .await?
            .into_inner();
        println!(
            "world_info_book entries={} bytes={} import_ms={:.0} {}",
            stored.entry_count,
            json.len(),
            started.elapsed().as_secs_f64() * 1e3,
            shape(&json)?
        );
        let chat_id = format!("wi-{n}");
        import_chat(&mut c.memory, &chat_id, &chat).await?;
        set_chat(&mut c, &chat_id, Some(&name), 2).await?;
    }

    for &n in &args.entries {
        measure(&mut c, &args, n, 2).await?;
    }
    for &depth in &args.depths {
        let chat_id = format!("wi-{}", args.depth_entries);
        let book = format!("bench-{}", args.depth_entries);
        set_chat(&mut c, &chat_id, Some(&book), depth).await?;
        measure(&mut c, &args, args.depth_entries, depth).await?;
    }
    Ok(())
}

/// The book's make-up, counted from its JSON: what the figures were
/// measured on.
fn shape(json: &str) -> Result<String, Error> {
    let book: serde_json::Value = serde_json::from_str(json)?;
    let entries = book["entries"]
        .as_object()
        .ok_or("generated book without entries")?;
    let count =
        |test: &dyn Fn(&serde_json::Value) -> bool| entries.values().filter(|e| test(e)).count();
    let regex = count(&|e| {
        e["key"].as_array().is_some_and(|keys| {
            keys.iter()
                .any(|k| k.as_str().is_some_and(|k| k.starts_with('/')))
        })
    });
    let secondary = count(&|e| e["keysecondary"].as_array().is_some_and(|k| !k.is_empty()));
    let constant = count(&|e| e["constant"] == true);
    let at_depth = count(&|e| e["position"] == 4);
    let grouped = count(&|e| e["group"] != "");
    Ok(format!(
        "regex_key_entries={regex} secondary_key_entries={secondary} constant={constant} \
         at_depth={at_depth} in_groups={grouped}"
    ))
}

/// maxContext of SillyTavern's shipped settings: `max_context` 8192 minus
/// `amount_gen` 350 (default/content/settings.json); World Info's budget
/// is 25% of it. Unset, recapd's budget would have no bound.
const MAX_CONTEXT_TOKENS: i64 = 8192 - 350;

/// The chat's own World Info settings: `book` (none: no book), recursion
/// on, scan depth `depth`, SillyTavern's context size.
async fn set_chat(
    c: &mut Clients,
    chat_id: &str,
    book: Option<&str>,
    depth: i32,
) -> Result<(), Error> {
    c.settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat_id.to_owned(),
            settings: Some(pb::Settings {
                world_info_global_books: Some(pb::StringList {
                    values: book.map(str::to_owned).into_iter().collect(),
                }),
                world_info_recursive: Some(true),
                world_info_depth: Some(depth),
                max_context_tokens: Some(MAX_CONTEXT_TOKENS),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await?;
    Ok(())
}

fn render_request(chat_id: &str) -> pb::RenderPromptRequest {
    pb::RenderPromptRequest {
        chat_id: chat_id.to_owned(),
        mode: pb::PromptMode::TextCompletion as i32,
        story_string: STORY.to_owned(),
        ..Default::default()
    }
}

fn scan_request(chat_id: &str, dry_run: bool, seed: u64) -> pb::ScanWorldInfoRequest {
    pb::ScanWorldInfoRequest {
        chat_id: chat_id.to_owned(),
        generation_type: "normal".to_owned(),
        dry_run,
        seed,
        ..Default::default()
    }
}

/// The server's counters so far, when `--metrics` is given: total time in
/// activations (seconds) and regex keys that hit their step bound.
async fn scan_seconds(args: &WorldInfo) -> Result<Option<(f64, f64)>, Error> {
    let Some(addr) = &args.metrics else {
        return Ok(None);
    };
    let exposition = crate::scrape::scrape(addr).await?;
    let sum = |name| crate::scrape::metric_sum(&exposition, name).unwrap_or(0.0);
    Ok(Some((
        sum("recapd_world_info_scan_duration_seconds_sum"),
        sum("recapd_world_info_regex_overruns_total"),
    )))
}

/// Bytes of a rendered prompt: its text and every message's content.
fn rendered_bytes(answer: &pb::RenderPromptResponse) -> usize {
    answer.text.len()
        + answer
            .messages
            .iter()
            .map(|m| m.content.len())
            .sum::<usize>()
}

/// What one configuration's rounds collected.
#[derive(Default)]
struct Samples {
    base: Vec<Duration>,
    scan: Vec<Duration>,
    render: Vec<Duration>,
    dry: Vec<Duration>,
    activated: usize,
    extra_bytes: usize,
}

/// Runs the rounds of one configuration and prints its line.
async fn measure(
    c: &mut Clients,
    args: &WorldInfo,
    entries: usize,
    depth: i32,
) -> Result<(), Error> {
    let chat_id = format!("wi-{entries}");
    let mut samples = Samples::default();
    let budget = Duration::from_secs_f64(args.max_seconds);
    let warming = Instant::now();
    let mut started = warming;
    let mut keep = false;
    let mut measured = 0;
    let mut scanned_before = None;
    for round in 0.. {
        // Warm-up ends after `--warmup` rounds, or after 10 s and 3 rounds.
        if !keep
            && (round >= args.warmup || (round >= 3 && warming.elapsed() > Duration::from_secs(10)))
        {
            keep = true;
            started = Instant::now();
        }
        if keep && measured == 0 && scanned_before.is_none() {
            scanned_before = scan_seconds(args).await?;
        }
        if keep && (measured >= args.rounds || (measured >= 20 && started.elapsed() > budget)) {
            break;
        }
        let seed = round as u64 + 1;
        // Even rounds call the baseline first, odd rounds the World Info
        // chat first: neither side always runs right after the other.
        let mut base = None;
        let mut scan = None;
        let mut render = None;
        let mut times = [Duration::ZERO; 4];
        let order: [usize; 4] = if round % 2 == 0 {
            [0, 1, 2, 3]
        } else {
            [2, 3, 0, 1]
        };
        for call in order {
            let t = Instant::now();
            match call {
                0 => {
                    base = Some(
                        c.prompts
                            .render_prompt(render_request(BASE_CHAT))
                            .await?
                            .into_inner(),
                    )
                }
                1 => {
                    let request = scan_request(&chat_id, false, seed);
                    scan = Some(c.books.scan_world_info(request).await?.into_inner());
                }
                2 => {
                    render = Some(
                        c.prompts
                            .render_prompt(render_request(&chat_id))
                            .await?
                            .into_inner(),
                    )
                }
                _ => {
                    c.books
                        .scan_world_info(scan_request(&chat_id, true, seed))
                        .await?;
                }
            }
            times[call] = t.elapsed();
        }
        let [base_time, scan_time, render_time, dry_time] = times;
        let (Some(base), Some(scan), Some(render)) = (base, scan, render) else {
            return Err("a round left a call out".into());
        };

        if keep {
            measured += 1;
            samples.base.push(base_time);
            samples.scan.push(scan_time);
            samples.render.push(render_time);
            samples.dry.push(dry_time);
            samples.activated += scan.activated.len();
            samples.extra_bytes += rendered_bytes(&render).saturating_sub(rendered_bytes(&base));
        }
    }
    let elapsed = started.elapsed();
    // Three activations of the book per round (ScanWorldInfo, its dry run,
    // RenderPrompt); the baseline's RenderPrompt has no book to scan.
    let (in_server, overruns) = match (scanned_before, scan_seconds(args).await?) {
        (Some((before, overruns_before)), Some((after, overruns_after))) if measured > 0 => (
            format!("{:.3}", (after - before) * 1e3 / (3 * measured) as f64),
            format!(
                "{:.1}",
                (overruns_after - overruns_before) / (3 * measured) as f64
            ),
        ),
        _ => ("none".to_owned(), "none".to_owned()),
    };
    let rounds = measured.max(1);
    let [base, scan, render, dry] =
        [samples.base, samples.scan, samples.render, samples.dry].map(|s| summarize(s, elapsed));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ratio = |a: &Summary, b: &Summary| ms(a.p99) / ms(b.p99).max(1e-9);
    let activated = samples.activated as f64 / rounds as f64;
    let extra = samples.extra_bytes / rounds;
    if activated > 0.0 && extra == 0 {
        eprintln!("world-info: entries were activated but RenderPrompt placed no World Info");
    }
    println!(
        "world_info entries={entries} depth={depth} messages={} rounds={} activated_mean={activated:.1} \
         render_extra_bytes={extra} scan_p50_ms={:.3} scan_p99_ms={:.3} dry_p50_ms={:.3} dry_p99_ms={:.3} \
         render_p50_ms={:.3} render_p99_ms={:.3} base_p50_ms={:.3} base_p99_ms={:.3} \
         render_over_base_p50={:.2} render_over_base_p99={:.2} activation_in_server_mean_ms={in_server} \
         regex_overruns_per_activation={overruns}",
        args.messages,
        measured,
        ms(scan.p50),
        ms(scan.p99),
        ms(dry.p50),
        ms(dry.p99),
        ms(render.p50),
        ms(render.p99),
        ms(base.p50),
        ms(base.p99),
        ms(render.p50) / ms(base.p50).max(1e-9),
        ratio(&render, &base),
    );
    Ok(())
}
