//! `lore`: lorebook entries written by recapd (issue 30), against a fake
//! LLM this process serves (`--llm-listen`; recapd is started by
//! bench/lore.sh with `--llm-url` pointing at it) that answers at once
//! from a scripted story ([`story`]).
//!
//! With `auto_lore` on and scene-break detection off, each chat is told
//! the story scene by scene: the scene's messages are appended
//! (MessageSent / MessageReceived), GenerateSceneRecap makes its last
//! message a break, and the tool waits until no job of the chat is open.
//! The fake's log says which requests each scene cost, by kind, with their
//! tokens; next to them, the extension's requests for the same scene
//! ([`extension`]). From WatchJobs and the fake's log, per lore job: the
//! time from its queueing to its claim (RUNNING), from the claim to its
//! request, and from the answer to SUCCEEDED as a client sees it. At the
//! end, recapd's own LLM metrics by kind are checked against the fake's
//! log, and the chat's book (ExportLorebook of the chat's
//! `world_info_chat_book`) against the story: one entry per entity.

mod extension;
mod fake;
mod overhead;
mod story;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::routing::post;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use crate::drive::connect;
use crate::eval::run::{list_jobs, state_name};
use extension::ExtensionRequests;
use fake::{Fake, Served};
use story::{Counts, SCENES};

type Error = Box<dyn std::error::Error>;

/// The request kinds a scene costs recapd, in report order.
const KINDS: [&str; 6] = [
    "scene_recap",
    "running_recap",
    "lore_extract",
    "lore_resolve",
    "lore_merge",
    "lore_compact",
];

/// `lore`'s options.
#[derive(clap::Args)]
pub struct Lore {
    /// recapd (started with `--llm-url http://LLM_LISTEN/v1`).
    #[arg(long)]
    addr: String,
    /// recapd's Prometheus address (host:port), for the cross-check.
    #[arg(long)]
    metrics: String,
    /// Where this process serves the fake LLM.
    #[arg(long)]
    llm_listen: std::net::SocketAddr,
    /// Chats told the whole story, one after another.
    #[arg(long, default_value_t = 3)]
    chats: usize,
    /// `lore_compaction_threshold` (tokens), low enough that the story's
    /// most mentioned entry is compacted.
    #[arg(long, default_value_t = 120)]
    compaction_threshold: i32,
    /// Chat id prefix.
    #[arg(long, default_value = "lore")]
    prefix: String,
}

/// What one scene of one chat cost: requests and tokens in and out by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct SceneCost {
    by_kind: BTreeMap<String, (usize, u64, u64)>,
}

impl SceneCost {
    fn of(served: &[Served]) -> SceneCost {
        let mut by_kind: BTreeMap<String, (usize, u64, u64)> = BTreeMap::new();
        for s in served {
            let e = by_kind.entry(s.kind.clone()).or_default();
            e.0 += 1;
            e.1 += s.tokens_in;
            e.2 += s.tokens_out;
        }
        SceneCost { by_kind }
    }

    fn requests(&self, kind: &str) -> usize {
        self.by_kind.get(kind).map_or(0, |k| k.0)
    }

    /// Requests, tokens in, tokens out over the kinds `keep` accepts.
    fn sum(&self, keep: impl Fn(&str) -> bool) -> (usize, u64, u64) {
        self.by_kind
            .iter()
            .filter(|(k, _)| keep(k))
            .fold((0, 0, 0), |a, (_, v)| (a.0 + v.0, a.1 + v.1, a.2 + v.2))
    }
}

/// One chat told the story.
struct ChatRun {
    scenes: Vec<SceneCost>,
    /// Every job state WatchJobs showed, with when it arrived.
    watched: Vec<(pb::Job, SystemTime)>,
    /// The requests served for the chat.
    served: Vec<Served>,
    /// The chat's jobs at the end.
    jobs: Vec<pb::Job>,
    /// Entries of the chat's book, and comments held by more than one entry.
    entries: usize,
    duplicates: usize,
    /// The break message id of each scene.
    breaks: Vec<String>,
}

pub async fn lore(args: Lore) -> Result<(), Error> {
    let fake = Arc::new(Fake::default());
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(fake::complete))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind(args.llm_listen).await?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    let channel = connect(&args.addr).await?;
    SettingsServiceClient::new(channel.clone())
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: String::new(),
            settings: Some(pb::Settings {
                auto_lore: Some(true),
                auto_scene_break_detection: Some(false),
                auto_hide_scene_count: Some(0),
                lore_compaction_threshold: Some(args.compaction_threshold),
                ..Default::default()
            }),
            clear: Vec::new(),
        })
        .await?;
    let mut runs = Vec::new();
    for c in 0..args.chats {
        let chat = format!("{}-{c}", args.prefix);
        runs.push(tell_story(&channel, &fake, &chat).await?);
    }
    report(&runs)?;
    overhead::report(&runs)?;
    cross_check(&args.metrics, &fake.log()).await?;
    Ok(())
}

/// Tells the whole story to `chat`, one scene at a time.
async fn tell_story(channel: &Channel, fake: &Fake, chat: &str) -> Result<ChatRun, Error> {
    let mut events = EventServiceClient::new(channel.clone());
    let mut recaps = RecapServiceClient::new(channel.clone());
    let watched = Arc::new(Mutex::new(Vec::new()));
    let mut stream = recaps
        .watch_jobs(pb::WatchJobsRequest {
            chat_ids: vec![chat.to_owned()],
        })
        .await?
        .into_inner();
    let sink = watched.clone();
    let watcher = tokio::spawn(async move {
        while let Some(Ok(job)) = stream.next().await {
            if let Ok(mut seen) = sink.lock() {
                seen.push((job, SystemTime::now()));
            }
        }
    });
    let started = fake.log().len();
    let mut scenes = Vec::new();
    let mut breaks = Vec::new();
    let mut next_id = 0;
    for (i, scene) in SCENES.iter().enumerate() {
        for (is_user, text) in story::messages(i + 1, scene) {
            let message = pb::Message {
                id: format!("m{next_id}"),
                name: if is_user { "Ann" } else { "Bram" }.into(),
                is_user,
                text,
                ..Default::default()
            };
            next_id += 1;
            let kind = if is_user {
                pb::event::Kind::MessageSent(pb::MessageSent {
                    message: Some(message),
                })
            } else {
                pb::event::Kind::MessageReceived(pb::MessageReceived {
                    message: Some(message),
                })
            };
            events
                .publish(pb::PublishRequest {
                    event: Some(pb::Event {
                        chat_id: chat.to_owned(),
                        kind: Some(kind),
                    }),
                })
                .await?;
        }
        let before = fake.log().len();
        let last = format!("m{}", next_id - 1);
        recaps
            .generate_scene_recap(pb::GenerateSceneRecapRequest {
                chat_id: chat.to_owned(),
                message_id: last.clone(),
            })
            .await?;
        wait_idle(&mut recaps, chat).await?;
        scenes.push(SceneCost::of(&fake.log()[before..]));
        breaks.push(last);
    }
    // The last states reach the stream after ListJobs shows them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    watcher.abort();
    let jobs = list_jobs(&mut recaps, chat).await?;
    let (entries, duplicates) = book_of(channel, chat).await?;
    let watched = watched.lock().map(|w| w.clone()).unwrap_or_default();
    Ok(ChatRun {
        scenes,
        watched,
        served: fake.log()[started..].to_vec(),
        jobs,
        entries,
        duplicates,
        breaks,
    })
}

/// Waits until the chat has no PENDING or RUNNING job (60 s at most).
async fn wait_idle(recaps: &mut RecapServiceClient<Channel>, chat: &str) -> Result<(), Error> {
    let started = Instant::now();
    loop {
        let open = recaps
            .list_jobs(pb::ListJobsRequest {
                chat_id: chat.to_owned(),
                states: vec![pb::JobState::Pending as i32, pb::JobState::Running as i32],
                page_size: 1,
                page_token: String::new(),
            })
            .await?
            .into_inner();
        if open.jobs.is_empty() {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(60) {
            return Err(format!("{chat}: jobs still open after 60 s: {:?}", open.jobs).into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The chat's book: its entries, and how many comments more than one
/// entry has.
async fn book_of(channel: &Channel, chat: &str) -> Result<(usize, usize), Error> {
    let settings = SettingsServiceClient::new(channel.clone())
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat.to_owned(),
        })
        .await?
        .into_inner();
    let name = settings.world_info_chat_book.unwrap_or_default();
    if name.is_empty() {
        return Err(format!("{chat}: no world_info_chat_book after the story").into());
    }
    let json = LorebookServiceClient::new(channel.clone())
        .export_lorebook(pb::ExportLorebookRequest { name })
        .await?
        .into_inner()
        .json;
    let book: serde_json::Value = serde_json::from_str(&json)?;
    let entries = book["entries"].as_object().cloned().unwrap_or_default();
    let mut comments: BTreeMap<String, usize> = BTreeMap::new();
    for entry in entries.values() {
        let comment = entry["comment"].as_str().unwrap_or_default().to_lowercase();
        *comments.entry(comment).or_default() += 1;
    }
    let duplicates = comments.values().filter(|&&n| n > 1).count();
    Ok((entries.len(), duplicates))
}

/// One line per scene, one in total, one for the book.
fn report(runs: &[ChatRun]) -> Result<(), Error> {
    let first = runs.first().ok_or("no chat was run")?;
    let agree = runs.iter().all(|r| r.scenes == first.scenes);
    let mut totals: BTreeMap<&str, usize> = BTreeMap::new();
    let mut add = |key: &'static str, n: usize| *totals.entry(key).or_default() += n;
    for (i, (scene, cost)) in SCENES.iter().zip(&first.scenes).enumerate() {
        let counts = Counts::of(scene);
        let compactions = cost.requests("lore_compact");
        let typical = ExtensionRequests::for_scene(&counts, i == 0, compactions, false);
        let fewest = ExtensionRequests::for_scene(&counts, i == 0, compactions, true);
        let (requests, tokens_in, tokens_out) = cost.sum(|_| true);
        let (lore, lore_in, lore_out) = cost.sum(|k| k.starts_with("lore_"));
        let kinds: Vec<String> = KINDS
            .iter()
            .map(|k| format!("{k}={}", cost.requests(k)))
            .collect();
        println!(
            "lore_scene scene={} entities={} new={} known={} ambiguous_same={} ambiguous_new={} {} \
             recapd={requests} recapd_lore={lore} tokens_in={tokens_in} tokens_out={tokens_out} \
             lore_tokens_in={lore_in} lore_tokens_out={lore_out} ext_typical={} ext_fewest={} \
             ext_lookups={} ext_resolutions={} ext_merges={}",
            i + 1,
            counts.entities(),
            counts.new,
            counts.known,
            counts.ambiguous_same,
            counts.ambiguous_new,
            kinds.join(" "),
            typical.total(),
            fewest.total(),
            typical.lookups,
            typical.resolutions,
            typical.merges,
        );
        add("entities", counts.entities());
        add("recapd", requests);
        add("recapd_lore", lore);
        add("tokens_in", tokens_in as usize);
        add("tokens_out", tokens_out as usize);
        add("lore_tokens_in", lore_in as usize);
        add("lore_tokens_out", lore_out as usize);
        add("ext_typical", typical.total());
        add("ext_fewest", fewest.total());
        for k in KINDS {
            add(k, cost.requests(k));
        }
    }
    let line: Vec<String> = totals.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!(
        "lore_total scenes={} {} same_in_all_chats={agree}",
        SCENES.len(),
        line.join(" ")
    );
    for (c, run) in runs.iter().enumerate() {
        let mut states: BTreeMap<String, usize> = BTreeMap::new();
        for job in &run.jobs {
            *states.entry(state_name(job.state)).or_default() += 1;
        }
        let states: Vec<String> = states.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!(
            "lore_book chat={c} entries={} expected={} duplicate_comments={} jobs {}",
            run.entries,
            story::expected_entries(),
            run.duplicates,
            states.join(" ")
        );
    }
    Ok(())
}

/// recapd's LLM metrics by kind against the fake's log: requests and
/// tokens must agree (each request the fake answered was counted once).
async fn cross_check(metrics: &str, served: &[Served]) -> Result<(), Error> {
    let text = crate::scrape::scrape(metrics).await?;
    let figures = crate::eval::metrics::llm_figures(&text);
    let fake = SceneCost::of(served);
    for kind in KINDS {
        let ours = fake.by_kind.get(kind).copied().unwrap_or_default();
        let theirs = figures.get(kind).cloned().unwrap_or_default();
        println!(
            "lore_metrics kind={kind} recapd_requests={} recapd_tokens_in={} recapd_tokens_out={} \
             fake_requests={} fake_tokens_in={} fake_tokens_out={}",
            theirs.requests, theirs.tokens_in, theirs.tokens_out, ours.0, ours.1, ours.2
        );
        if theirs.requests as usize != ours.0 || theirs.tokens_in as u64 != ours.1 {
            return Err(format!(
                "{kind}: recapd's metrics count {} requests, {} tokens in; the fake served {}, {}",
                theirs.requests, theirs.tokens_in, ours.0, ours.1
            )
            .into());
        }
    }
    Ok(())
}
