//! The retrieval check (`--retrieval`): how often recall (issue 31) finds a
//! question's evidence. For each conversation and each mode, a recapd of
//! its own: `keyword` without an embeddings endpoint (BM25 alone),
//! `hybrid` with `--embedding-url` (BM25 and vector similarity, fused). The
//! conversation is imported with each message named by its turn's
//! `dia_id` and `recall_enabled` on; in hybrid mode the tool waits until
//! the chat's index job SUCCEEDED (every passage has its vector). Then each
//! question whose evidence names turns of the chat is asked as a
//! `RecallService.Recall` query (limit: the largest k, `min_score` 0), and
//! recall@k is the share of questions with at least one (`any`), and with
//! all (`all`), of their evidence turns among the top k passages.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use serde_json::{Value, json};

use super::chat;
use super::layout::Conversation;
use super::run::{kind_name, list_jobs, state_name};
use super::server::Recapd;

type Error = Box<dyn std::error::Error>;

/// What the check runs with.
pub struct Setup<'a> {
    pub recapd: &'a Path,
    /// The embeddings endpoint and model of the hybrid mode; `None`:
    /// keyword mode only.
    pub embedding: Option<(&'a str, &'a str)>,
    /// The k of recall@k, ascending.
    pub ks: &'a [usize],
    /// Most time a conversation's indexing may take.
    pub timeout: Duration,
    /// Questions asked per conversation (the first ones with evidence).
    pub max_questions: Option<usize>,
    /// The chats' `recall_min_similarity`; `None`: recapd's default.
    pub min_similarity: Option<f64>,
}

/// One question asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    pub question: String,
    pub category: u32,
    /// Its evidence turns that are messages of the chat.
    pub evidence: Vec<String>,
    /// The message ids of the passages found, best first.
    pub found: Vec<String>,
    /// Their BM25 scores and similarities (`None`: not in the vector
    /// ranking), in the same order: what `--out` keeps for studying other
    /// fusions of the two rankings offline.
    pub scores: Vec<(f64, Option<f64>)>,
}

impl Retrieved {
    /// The rank (0-based) of the first evidence message among the found.
    fn first_rank(&self) -> Option<usize> {
        self.found.iter().position(|id| self.evidence.contains(id))
    }

    /// Whether at least one evidence message is among the top `k`.
    pub fn any_within(&self, k: usize) -> bool {
        self.first_rank().is_some_and(|r| r < k)
    }

    /// Whether every evidence message is among the top `k`.
    pub fn all_within(&self, k: usize) -> bool {
        let top: HashSet<&str> = self.found.iter().take(k).map(String::as_str).collect();
        self.evidence.iter().all(|e| top.contains(e.as_str()))
    }
}

/// One conversation in one mode.
#[derive(Debug, Clone)]
pub struct ModeRun {
    pub conversation: String,
    pub mode: &'static str,
    pub messages: usize,
    /// From the import's answer to the index job's success (hybrid).
    pub index_seconds: Option<f64>,
    pub asked: Vec<Retrieved>,
    /// Questions left out: no evidence, or none of it a turn of the chat.
    pub skipped: usize,
    /// Evidence ids naming no turn of the chat (left out of the questions').
    pub unknown_evidence: usize,
    /// Recall calls' time, seconds in all.
    pub recall_seconds: f64,
}

/// Runs the check on every conversation, keyword mode then (with an
/// endpoint) hybrid mode on each.
pub async fn run_all(
    setup: &Setup<'_>,
    conversations: &[Conversation],
) -> Vec<Result<ModeRun, String>> {
    let mut runs = Vec::new();
    for conversation in conversations {
        let mut modes: Vec<(&'static str, Vec<String>)> = vec![("keyword", Vec::new())];
        if let Some((url, model)) = setup.embedding {
            modes.push((
                "hybrid",
                ["--embedding-url", url, "--embedding-model", model]
                    .map(str::to_owned)
                    .to_vec(),
            ));
        }
        for (mode, args) in modes {
            eprintln!("eval: retrieval {} ({mode})...", conversation.id);
            let result = run(setup, conversation, mode, &args).await;
            match &result {
                Ok(r) => eprintln!(
                    "eval: retrieval {} ({mode}): {} questions{}",
                    r.conversation,
                    r.asked.len(),
                    r.index_seconds
                        .map_or(String::new(), |s| format!(", indexed in {s:.1} s"))
                ),
                Err(e) => eprintln!("eval: retrieval {} ({mode}) failed: {e}", conversation.id),
            }
            runs.push(result.map_err(|e| format!("{} ({mode}): {e}", conversation.id)));
        }
    }
    runs
}

async fn run(
    setup: &Setup<'_>,
    conversation: &Conversation,
    mode: &'static str,
    args: &[String],
) -> Result<ModeRun, Error> {
    let recapd = Recapd::start_with(setup.recapd, args).await?;
    let result = run_on(setup, conversation, mode, &recapd).await;
    let result =
        result.map_err(|e| -> Error { format!("{e} (recapd log: {})", recapd.log_tail()).into() });
    recapd.stop().await;
    result
}

async fn run_on(
    setup: &Setup<'_>,
    conversation: &Conversation,
    mode: &'static str,
    recapd: &Recapd,
) -> Result<ModeRun, Error> {
    let channel = recapd.channel.clone();
    let chat_id = conversation.id.clone();
    SettingsServiceClient::new(channel.clone())
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat_id.clone(),
            settings: Some(pb::Settings {
                recall_enabled: Some(true),
                recall_min_similarity: setup.min_similarity,
                ..Default::default()
            }),
            clear: Vec::new(),
        })
        .await?;
    let imported = MemoryServiceClient::new(channel.clone())
        .max_decoding_message_size(usize::MAX)
        .import_chat(pb::ImportChatRequest {
            chat_id: chat_id.clone(),
            jsonl: chat::sillytavern_jsonl_with_ids(conversation).into_bytes(),
            ..Default::default()
        })
        .await?
        .into_inner();
    let index_seconds = if mode == "hybrid" {
        let started = Instant::now();
        wait_indexed(
            &mut RecapServiceClient::new(channel.clone()),
            &chat_id,
            setup.timeout,
        )
        .await?;
        Some(started.elapsed().as_secs_f64())
    } else {
        None
    };
    let turns: HashSet<&str> = conversation
        .turns()
        .map(|(_, t)| t.dia_id.as_str())
        .filter(|id| !id.is_empty())
        .collect();
    let limit = setup.ks.iter().copied().max().unwrap_or(10).clamp(1, 100) as u32;
    let mut recall = RecallServiceClient::new(channel);
    let (mut asked, mut skipped, mut unknown_evidence) = (Vec::new(), 0, 0);
    let mut recall_seconds = 0.0;
    for question in &conversation.questions {
        if setup.max_questions.is_some_and(|max| asked.len() >= max) {
            break;
        }
        let evidence: Vec<String> = question
            .evidence
            .iter()
            .filter(|e| turns.contains(e.as_str()))
            .cloned()
            .collect();
        unknown_evidence += question.evidence.len() - evidence.len();
        if evidence.is_empty() {
            skipped += 1;
            continue;
        }
        let started = Instant::now();
        let answer = recall
            .recall(pb::RecallRequest {
                chat_id: chat_id.clone(),
                query: question.question.clone(),
                limit,
                min_score: Some(0.0),
            })
            .await?
            .into_inner();
        recall_seconds += started.elapsed().as_secs_f64();
        if answer.used_vectors != (mode == "hybrid") {
            return Err(format!(
                "Recall answered used_vectors={} in {mode} mode",
                answer.used_vectors
            )
            .into());
        }
        asked.push(Retrieved {
            question: question.question.clone(),
            category: question.category,
            evidence,
            scores: answer
                .hits
                .iter()
                .map(|h| (h.keyword_score, h.vector_score))
                .collect(),
            found: answer.hits.into_iter().map(|h| h.message_id).collect(),
        });
    }
    Ok(ModeRun {
        conversation: chat_id,
        mode,
        messages: imported.message_count as usize,
        index_seconds,
        asked,
        skipped,
        unknown_evidence,
        recall_seconds,
    })
}

/// Waits until the chat has an index job and every one has ended; fails
/// when one did not succeed, or past `timeout`.
async fn wait_indexed(
    recaps: &mut RecapServiceClient<tonic::transport::Channel>,
    chat_id: &str,
    timeout: Duration,
) -> Result<(), Error> {
    let started = Instant::now();
    loop {
        let jobs: Vec<pb::Job> = list_jobs(recaps, chat_id)
            .await?
            .into_iter()
            .filter(|j| j.kind == pb::JobKind::Index as i32)
            .collect();
        let open = jobs.iter().any(|j| {
            j.state == pb::JobState::Pending as i32 || j.state == pb::JobState::Running as i32
        });
        if !jobs.is_empty() && !open {
            if let Some(bad) = jobs
                .iter()
                .find(|j| j.state != pb::JobState::Succeeded as i32)
            {
                return Err(format!(
                    "{} job {} ended {}: {} {}",
                    kind_name(bad.kind),
                    bad.job_id,
                    state_name(bad.state),
                    bad.result,
                    bad.last_error
                )
                .into());
            }
            return Ok(());
        }
        if started.elapsed() > timeout {
            return Err(format!("indexing not done after {:.0} s", timeout.as_secs_f64()).into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// recall@k of `asked`: `(any, all)` shares per k, in `ks`' order.
pub fn recall_at(asked: &[&Retrieved], ks: &[usize]) -> Vec<(f64, f64)> {
    let n = asked.len().max(1) as f64;
    ks.iter()
        .map(|&k| {
            let any = asked.iter().filter(|q| q.any_within(k)).count() as f64 / n;
            let all = asked.iter().filter(|q| q.all_within(k)).count() as f64 / n;
            (any, all)
        })
        .collect()
}

/// The check's table: recall@k per mode over every conversation, then
/// per mode and category, then per conversation.
pub fn table(runs: &[ModeRun], ks: &[usize]) -> String {
    let mut out = String::new();
    let heads: Vec<String> = ks
        .iter()
        .map(|k| format!("any@{k}"))
        .chain(ks.iter().map(|k| format!("all@{k}")))
        .collect();
    out.push_str(&format!(
        "== retrieval: recall@k, share of questions with evidence among the top k passages\n{:<24} {:>9} {}\n",
        "mode / category",
        "questions",
        heads
            .iter()
            .map(|h| format!("{h:>7}"))
            .collect::<String>()
    ));
    let row = |label: String, asked: Vec<&Retrieved>| -> String {
        let shares = recall_at(&asked, ks);
        let cells: String = shares
            .iter()
            .map(|(any, _)| format!("{any:>7.3}"))
            .chain(shares.iter().map(|(_, all)| format!("{all:>7.3}")))
            .collect();
        format!("{label:<24} {:>9} {cells}\n", asked.len())
    };
    let mut modes: Vec<&str> = Vec::new();
    for run in runs {
        if !modes.contains(&run.mode) {
            modes.push(run.mode);
        }
    }
    for mode in &modes {
        let of_mode = || runs.iter().filter(|r| r.mode == *mode);
        out.push_str(&row(
            (*mode).to_owned(),
            of_mode().flat_map(|r| r.asked.iter()).collect(),
        ));
        let mut by_category: BTreeMap<u32, Vec<&Retrieved>> = BTreeMap::new();
        for q in of_mode().flat_map(|r| r.asked.iter()) {
            by_category.entry(q.category).or_default().push(q);
        }
        for (category, asked) in by_category {
            out.push_str(&row(format!("{mode} cat {category}"), asked));
        }
    }
    for r in runs {
        out.push_str(&row(
            format!("{} {}", r.mode, r.conversation),
            r.asked.iter().collect(),
        ));
    }
    for mode in &modes {
        let of_mode: Vec<&ModeRun> = runs.iter().filter(|r| r.mode == *mode).collect();
        let asked: usize = of_mode.iter().map(|r| r.asked.len()).sum();
        let seconds: f64 = of_mode.iter().map(|r| r.recall_seconds).sum();
        let indexed: f64 = of_mode.iter().filter_map(|r| r.index_seconds).sum();
        out.push_str(&format!(
            "{mode}: {} conversations, {} messages, {asked} questions asked, {} skipped (no evidence in the chat), \
             {} evidence ids naming no turn; Recall mean {:.1} ms{}\n",
            of_mode.len(),
            of_mode.iter().map(|r| r.messages).sum::<usize>(),
            of_mode.iter().map(|r| r.skipped).sum::<usize>(),
            of_mode.iter().map(|r| r.unknown_evidence).sum::<usize>(),
            seconds * 1e3 / asked.max(1) as f64,
            if indexed > 0.0 {
                format!("; indexing {indexed:.1} s in all")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// The check as JSON: per mode and conversation, every question with its
/// evidence and the ids found.
pub fn json(runs: &[ModeRun], ks: &[usize], errors: &[String]) -> Value {
    let per_run: Vec<Value> = runs
        .iter()
        .map(|r| {
            let asked: Vec<&Retrieved> = r.asked.iter().collect();
            json!({
                "conversation": r.conversation,
                "mode": r.mode,
                "messages": r.messages,
                "index_seconds": r.index_seconds,
                "skipped": r.skipped,
                "unknown_evidence": r.unknown_evidence,
                "recall_at": ks.iter().zip(recall_at(&asked, ks)).map(|(k, (any, all))| json!({"k": k, "any": any, "all": all})).collect::<Vec<_>>(),
                "questions": r.asked.iter().map(|q| json!({
                    "question": q.question,
                    "category": q.category,
                    "evidence": q.evidence,
                    "found": q.found,
                    "scores": q.scores,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({"ks": ks, "runs": per_run, "errors": errors})
}

#[cfg(test)]
mod tests;
