//! `eval`: how well recapd's recaps serve a model and a prompt set, on a
//! long-conversation dataset in the LoCoMo layout (see docs/evaluation.md).
//!
//! For each conversation it starts a recapd of its own (a child process on
//! loopback ports, a temporary data directory), imports the conversation as
//! a SillyTavern chat, applies the `--settings` overrides, asks for one
//! scene-break detection and waits until every job has ended. It reports
//! jobs by kind and state, attempts, unusable answers, LLM time and tokens
//! per kind (from recapd's metrics), scene-break precision and recall
//! against the session boundaries, with `auto_lore` on how many of the
//! dataset's per-session facts ended up in an entry of the chat's book, and
//! with a judge, question-answering accuracy with the memory injected and
//! without it. With `--retrieval` it runs the retrieval check instead
//! (`retrieval.rs`): recall@k of the questions' evidence through
//! `RecallService.Recall`, keyword alone and, with `--embedding-url`,
//! hybrid.

mod chat;
mod layout;
mod llm;
mod lore;
pub(crate) mod metrics;
mod qa;
mod report;
mod retrieval;
pub(crate) mod run;
mod scoring;
mod server;
mod settings;

use std::path::PathBuf;
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

/// `eval`: run a dataset through recapd and score it.
#[derive(clap::Args, Debug, Clone)]
pub struct Eval {
    /// The OpenAI-compatible API recapd writes recaps with, and the
    /// questions are answered with (e.g. http://127.0.0.1:8080/v1);
    /// required but with --retrieval.
    #[arg(long, required_unless_present = "retrieval")]
    llm_url: Option<String>,
    /// The model asked; required but with --retrieval.
    #[arg(long, required_unless_present = "retrieval")]
    model: Option<String>,
    /// The judge's API; without it no question is asked.
    #[arg(long)]
    judge_llm_url: Option<String>,
    /// The judge's model (default: --model).
    #[arg(long)]
    judge_model: Option<String>,
    /// The recapd binary (default: next to this program, else
    /// target/release/recapd, else target/debug/recapd).
    #[arg(long)]
    recapd: Option<PathBuf>,
    /// A JSON object of settings overrides (recap.v1.Settings field names);
    /// its file name labels the prompt set.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Sessions kept per conversation (session_N with N above are dropped,
    /// with the questions about them).
    #[arg(long)]
    max_sessions: Option<u32>,
    /// Questions asked per conversation (the first ones left).
    #[arg(long)]
    max_questions: Option<usize>,
    /// Messages of the chat's end the questions are asked after.
    #[arg(long, default_value_t = 8)]
    recent_messages: usize,
    /// Most time a conversation's jobs may take: a number of seconds, or
    /// with a unit (90s, 30m, 1h).
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    timeout: Duration,
    /// Most time one question or judge request may take (same format).
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    request_timeout: Duration,
    /// Where the full report goes as JSON.
    #[arg(long)]
    out: Option<PathBuf>,
    /// The retrieval check instead of the recap pipeline: each question
    /// with evidence asked of RecallService.Recall, recall@k of its
    /// evidence turns, keyword alone and (with --embedding-url) hybrid.
    #[arg(long)]
    retrieval: bool,
    /// With --retrieval: the OpenAI-compatible embeddings API of the
    /// hybrid mode (recapd's --embedding-url); without it, keyword only.
    #[arg(long, requires = "retrieval")]
    embedding_url: Option<String>,
    /// With --retrieval: the embeddings model (recapd's --embedding-model).
    #[arg(long, default_value = "all-MiniLM-L6-v2")]
    embedding_model: String,
    /// With --retrieval: the chats' `recall_min_similarity` (0 keeps every
    /// similarity in the hits' scores, for studying fusions with --out);
    /// unset: recapd's default.
    #[arg(long, requires = "retrieval")]
    min_similarity: Option<f64>,
    /// With --retrieval: the k of recall@k (at most 100).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 5, 10])]
    k: Vec<usize>,
    /// The dataset: files of one LoCoMo conversation or an array of them.
    #[arg(required = true)]
    conversations: Vec<PathBuf>,
}

/// `90`, `90s`, `30m`, `1h`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        _ => return Err(format!("{text:?}: the unit is s, m or h")),
    };
    Ok(Duration::from_secs(seconds))
}

/// Runs the evaluation and writes its report; the JSON report is returned
/// too (the tests read it).
pub async fn eval(args: Eval) -> Result<serde_json::Value, Error> {
    let started = Instant::now();
    let recapd = match &args.recapd {
        Some(path) => path.clone(),
        None => server::default_recapd_path()?,
    };
    let mut conversations = Vec::new();
    for path in &args.conversations {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "conversation".into());
        conversations.extend(layout::parse(&text, &stem)?);
    }
    if let Some(max) = args.max_sessions {
        for c in &mut conversations {
            c.truncate_sessions(max);
        }
        conversations.retain(|c| !c.sessions.is_empty());
    }
    if args.retrieval {
        return retrieval_check(&args, &recapd, &conversations, started).await;
    }
    let (Some(llm_url), Some(model)) = (args.llm_url.clone(), args.model.clone()) else {
        return Err("--llm-url and --model are required (but with --retrieval)".into());
    };
    let (overrides, prompt_set) = match &args.settings {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let value: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let object = value
                .as_object()
                .ok_or_else(|| format!("{}: not a JSON object", path.display()))?;
            let label = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (Some(settings::from_json(object)?), label)
        }
        None => (None, "default".to_owned()),
    };
    let judge_model = args.judge_model.clone().unwrap_or_else(|| model.clone());
    let clients = match &args.judge_llm_url {
        Some(judge_url) => Some((
            llm::ChatClient::new(&llm_url, &model, args.request_timeout)?,
            llm::ChatClient::new(judge_url, &judge_model, args.request_timeout)?,
        )),
        None => None,
    };
    let setup = run::Setup {
        recapd: &recapd,
        llm_url: &llm_url,
        model: &model,
        settings: overrides.as_ref(),
        timeout: args.timeout,
        recent_messages: args.recent_messages,
        max_questions: args.max_questions,
        qa: clients.as_ref().map(|(a, j)| (a, j)),
    };
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for conversation in &conversations {
        eprintln!(
            "eval: {} ({} sessions, {} messages)...",
            conversation.id,
            conversation.sessions.len(),
            conversation.turns().count()
        );
        match run::run(&setup, conversation).await {
            Ok(done) => {
                eprintln!("eval: {} done in {:.1} s", done.id, done.pipeline_seconds);
                runs.push(done);
            }
            Err(e) => {
                eprintln!("eval: {} failed: {e}", conversation.id);
                errors.push((conversation.id.clone(), e.to_string()));
            }
        }
    }
    let labels = report::Labels {
        model: &model,
        prompt_set: &prompt_set,
        judge_model: args.judge_llm_url.as_ref().map(|_| judge_model.as_str()),
        dataset: &dataset(&args.conversations),
        max_sessions: args.max_sessions,
        recent_messages: args.recent_messages,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    let json = report::json_report(&labels, &runs, &errors);
    print!("{}", report::table(&json));
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&json)?)
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if runs.is_empty() {
        return Err("no conversation could be evaluated".into());
    }
    Ok(json)
}

/// The dataset files' names, for the report.
fn dataset(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--retrieval`: the retrieval check on `conversations`, its table on
/// stdout and, with `--out`, its JSON.
async fn retrieval_check(
    args: &Eval,
    recapd: &std::path::Path,
    conversations: &[layout::Conversation],
    started: Instant,
) -> Result<serde_json::Value, Error> {
    let mut ks = args.k.clone();
    ks.sort_unstable();
    ks.dedup();
    if ks.is_empty() || ks.iter().any(|&k| k == 0 || k > 100) {
        return Err("--k: each k must be 1..=100".into());
    }
    let setup = retrieval::Setup {
        recapd,
        embedding: args
            .embedding_url
            .as_deref()
            .map(|url| (url, args.embedding_model.as_str())),
        ks: &ks,
        timeout: args.timeout,
        max_questions: args.max_questions,
        min_similarity: args.min_similarity,
    };
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for result in retrieval::run_all(&setup, conversations).await {
        match result {
            Ok(run) => runs.push(run),
            Err(e) => errors.push(e),
        }
    }
    println!(
        "dataset {}  embeddings {}  wall {:.1} s",
        dataset(&args.conversations),
        args.embedding_url
            .as_deref()
            .map_or("none (keyword only)".to_owned(), |u| format!(
                "{} at {u}",
                args.embedding_model
            )),
        started.elapsed().as_secs_f64()
    );
    print!("{}", retrieval::table(&runs, &ks));
    for e in &errors {
        println!("failed: {e}");
    }
    let json = retrieval::json(&runs, &ks, &errors);
    if let Some(out) = &args.out {
        std::fs::write(out, serde_json::to_string_pretty(&json)?)
            .map_err(|e| format!("{}: {e}", out.display()))?;
    }
    if runs.is_empty() {
        return Err("no conversation could be checked".into());
    }
    Ok(json)
}

#[cfg(test)]
mod tests;
