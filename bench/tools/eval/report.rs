//! The evaluation's report: per conversation and in total, as JSON
//! (`--out`) and as a table on stdout.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::lore::LoreCheck;
use super::metrics::KindFigures;
use super::qa::{self, Accuracy, CONDITIONS};
use super::run::{ConversationRun, kind_name, state_name};
use super::scoring::{self, BreakScore};

/// The tolerances break scores are given at: within one message, exact.
pub const TOLERANCES: [usize; 2] = [1, 0];

/// What the report is about.
pub struct Labels<'a> {
    pub model: &'a str,
    pub prompt_set: &'a str,
    pub judge_model: Option<&'a str>,
    pub dataset: &'a str,
    pub max_sessions: Option<u32>,
    pub recent_messages: usize,
    pub wall_seconds: f64,
}

/// Jobs by kind then state, and attempts by kind.
fn job_counts(
    run: &ConversationRun,
) -> (
    BTreeMap<String, BTreeMap<String, u32>>,
    BTreeMap<String, u32>,
) {
    let mut by_kind: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let mut attempts: BTreeMap<String, u32> = BTreeMap::new();
    for job in &run.jobs {
        *by_kind
            .entry(kind_name(job.kind))
            .or_default()
            .entry(state_name(job.state))
            .or_default() += 1;
        *attempts.entry(kind_name(job.kind)).or_default() += job.attempts;
    }
    (by_kind, attempts)
}

/// Whether a job's `last_error` is that of an unusable answer: the
/// categories recapd gives one (not JSON, off its schema, a failed check),
/// or, from a recapd before them, a reason starting `unusable answer`.
pub(super) fn unusable_error(last_error: &str) -> bool {
    [
        "unusable answer",
        "the answer was not JSON",
        "the answer did not follow the schema",
        "the answer did not pass its checks",
    ]
    .iter()
    .any(|category| last_error.starts_with(category))
}

/// FAILED jobs whose last attempt gave an unusable answer, by kind.
fn unusable_final(run: &ConversationRun) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for job in run.jobs.iter().filter(|j| {
        j.state == recapd::grpc::pb::JobState::Failed as i32 && unusable_error(&j.last_error)
    }) {
        *out.entry(kind_name(job.kind)).or_default() += 1;
    }
    out
}

fn break_scores(run: &ConversationRun) -> Vec<BreakScore> {
    TOLERANCES
        .iter()
        .map(|&t| scoring::score(&run.breaks, &run.boundaries, t))
        .collect()
}

fn score_json(s: &BreakScore) -> Value {
    json!({
        "tolerance": s.tolerance, "found": s.found, "boundaries": s.boundaries,
        "matched": s.matched, "precision": s.precision(), "recall": s.recall(),
    })
}

fn llm_json(llm: &BTreeMap<String, KindFigures>) -> Value {
    let mut out = serde_json::Map::new();
    for (kind, f) in llm {
        let key = if kind.is_empty() {
            "(no kind label)"
        } else {
            kind
        };
        out.insert(
            key.to_owned(),
            json!({
                "seconds": f.seconds, "requests": f.requests, "attempts": f.attempts,
                "tokens_in": f.tokens_in, "tokens_out": f.tokens_out,
                "unusable_attempts": f.unusable_attempts,
            }),
        );
    }
    Value::Object(out)
}

fn accuracy_json(by: &BTreeMap<&'static str, Accuracy>) -> Value {
    let mut out = serde_json::Map::new();
    for (condition, accuracy) in by {
        let mut categories = serde_json::Map::new();
        for (category, (asked, correct)) in &accuracy.by_category {
            categories.insert(
                category.to_string(),
                json!({"asked": asked, "correct": correct}),
            );
        }
        let (asked, correct) = accuracy.total();
        out.insert(
            (*condition).to_owned(),
            json!({"asked": asked, "correct": correct,
                   "accuracy": (asked > 0).then(|| correct as f64 / asked as f64),
                   "by_category": categories}),
        );
    }
    Value::Object(out)
}

fn add_llm(total: &mut BTreeMap<String, KindFigures>, llm: &BTreeMap<String, KindFigures>) {
    for (kind, f) in llm {
        let t = total.entry(kind.clone()).or_default();
        t.seconds += f.seconds;
        t.requests += f.requests;
        t.attempts += f.attempts;
        t.tokens_in += f.tokens_in;
        t.tokens_out += f.tokens_out;
        if let Some(u) = f.unusable_attempts {
            *t.unusable_attempts.get_or_insert(0.0) += u;
        }
    }
}

/// The lore check as JSON: counts, and every fact with the entry found.
fn lore_json(check: &LoreCheck) -> Value {
    let facts = check.facts.len();
    let found = check.found();
    json!({
        "entries": check.entries, "facts": facts, "found": found,
        "ratio": (facts > 0).then(|| found as f64 / facts as f64),
        "by_fact": check.facts.iter().map(|f| json!({
            "session": f.session, "fact": f.fact, "entry": f.entry,
            "best_words": f.best_words, "words": f.words,
        })).collect::<Vec<_>>(),
    })
}

fn add_counts(total: &mut BTreeMap<String, u32>, counts: &BTreeMap<String, u32>) {
    for (k, v) in counts {
        *total.entry(k.clone()).or_default() += v;
    }
}

/// The whole report as JSON.
pub fn json_report(
    labels: &Labels<'_>,
    runs: &[ConversationRun],
    errors: &[(String, String)],
) -> Value {
    let mut conversations = Vec::new();
    let mut jobs_total: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
    let mut attempts_total = BTreeMap::new();
    let mut unusable_seen_total = BTreeMap::new();
    let mut unusable_final_total = BTreeMap::new();
    let mut llm_total = BTreeMap::new();
    let mut scores_total: Vec<BreakScore> = TOLERANCES
        .iter()
        .map(|&t| scoring::score(&[], &[], t))
        .collect();
    let mut accuracy_total: BTreeMap<&'static str, Accuracy> = BTreeMap::new();
    let mut lore_total: Option<(usize, usize, usize)> = None;
    for run in runs {
        if let Some(check) = &run.lore {
            let t = lore_total.get_or_insert((0, 0, 0));
            *t = (
                t.0 + check.entries,
                t.1 + check.facts.len(),
                t.2 + check.found(),
            );
        }
        let (jobs, attempts) = job_counts(run);
        let scores = break_scores(run);
        let accuracy = qa::accuracy(&run.asked);
        for (kind, states) in &jobs {
            add_counts(jobs_total.entry(kind.clone()).or_default(), states);
        }
        add_counts(&mut attempts_total, &attempts);
        add_counts(&mut unusable_seen_total, &run.unusable_seen);
        add_counts(&mut unusable_final_total, &unusable_final(run));
        add_llm(&mut llm_total, &run.llm);
        for (total, s) in scores_total.iter_mut().zip(&scores) {
            total.add(s);
        }
        for (condition, a) in &accuracy {
            accuracy_total.entry(condition).or_default().add(a);
        }
        let questions: Vec<Value> = run
            .asked
            .iter()
            .map(|a| {
                let mut answers = serde_json::Map::new();
                for (condition, g) in &a.graded {
                    answers.insert(
                        (*condition).to_owned(),
                        json!({"answer": g.answer, "correct": g.correct}),
                    );
                }
                json!({"question": a.question.question, "gold": a.question.answer,
                       "category": a.question.category, "answers": answers})
            })
            .collect();
        conversations.push(json!({
            "id": run.id, "sessions": run.sessions, "messages": run.messages,
            "boundaries": run.boundaries, "breaks": run.breaks,
            "break_scores": scores.iter().map(score_json).collect::<Vec<_>>(),
            "jobs": jobs, "attempts": attempts,
            "unusable_attempts_seen": run.unusable_seen,
            "jobs_failed_unusable": unusable_final(run),
            "llm": llm_json(&run.llm),
            "detect_calls": run.detect_calls,
            "pipeline_seconds": run.pipeline_seconds, "timed_out": run.timed_out,
            "injection": run.injection,
            "qa": accuracy_json(&accuracy), "questions": questions, "qa_error": run.qa_error,
            "lore": run.lore.as_ref().map(lore_json),
            "job_list": run.jobs.iter().map(|j| json!({
                "kind": kind_name(j.kind), "state": state_name(j.state), "message_id": j.message_id,
                "attempts": j.attempts, "last_error": j.last_error, "result": j.result,
            })).collect::<Vec<_>>(),
        }));
    }
    json!({
        "model": labels.model, "prompt_set": labels.prompt_set, "judge_model": labels.judge_model,
        "dataset": labels.dataset, "max_sessions": labels.max_sessions,
        "recent_messages": labels.recent_messages, "wall_seconds": labels.wall_seconds,
        "conversations": conversations,
        "errors": errors.iter().map(|(id, e)| json!({"id": id, "error": e})).collect::<Vec<_>>(),
        "total": {
            "jobs": jobs_total, "attempts": attempts_total,
            "unusable_attempts_seen": unusable_seen_total,
            "jobs_failed_unusable": unusable_final_total,
            "llm": llm_json(&llm_total),
            "break_scores": scores_total.iter().map(score_json).collect::<Vec<_>>(),
            "qa": accuracy_json(&accuracy_total),
            "lore": lore_total.map(|(entries, facts, found)| json!({
                "entries": entries, "facts": facts, "found": found,
                "ratio": (facts > 0).then(|| found as f64 / facts as f64),
            })),
        },
    })
}

fn ratio(v: &Value) -> String {
    v.as_f64().map_or("-".into(), |r| format!("{r:.2}"))
}

/// A readable summary of the JSON report.
pub fn table(report: &Value) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "model {}  prompt set {}  judge {}  wall {:.1} s",
        report["model"].as_str().unwrap_or("?"),
        report["prompt_set"].as_str().unwrap_or("?"),
        report["judge_model"].as_str().unwrap_or("-"),
        report["wall_seconds"].as_f64().unwrap_or(0.0)
    );
    let mut sections: Vec<(String, &Value)> = report["conversations"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| {
                    (
                        format!("conversation {}", c["id"].as_str().unwrap_or("?")),
                        c,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    sections.push(("total".to_owned(), &report["total"]));
    for (title, section) in sections {
        let _ = writeln!(out, "\n== {title}");
        if let Some(messages) = section.get("messages") {
            let _ = writeln!(
                out,
                "messages {}  sessions {}  pipeline {:.1} s{}",
                messages,
                section["sessions"],
                section["pipeline_seconds"].as_f64().unwrap_or(0.0),
                if section["timed_out"] == true {
                    "  TIMED OUT"
                } else {
                    ""
                }
            );
        }
        let _ = writeln!(
            out,
            "{:<20} {:<40} {:>8} {:>8} {:>9} {:>9} {:>9}",
            "job kind", "jobs by state", "attempts", "unusable", "LLM s", "tok in", "tok out"
        );
        let llm = &section["llm"];
        // Without a `kind` label on time and tokens, the per-kind columns are unknown.
        let unlabelled = llm.get("(no kind label)").is_some();
        if let Some(jobs) = section["jobs"].as_object() {
            for (kind, states) in jobs {
                let states = states
                    .as_object()
                    .map(|s| {
                        s.iter()
                            .map(|(k, v)| format!("{k} {v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                let figures = &llm[kind.as_str()];
                let unusable = figures["unusable_attempts"]
                    .as_f64()
                    .map(|u| u as u64)
                    .or_else(|| section["unusable_attempts_seen"][kind.as_str()].as_u64())
                    .unwrap_or(0);
                let number = |key: &str, decimals: usize| match figures[key].as_f64() {
                    Some(v) if !unlabelled => format!("{v:.decimals$}"),
                    _ => "-".into(),
                };
                let _ = writeln!(
                    out,
                    "{:<20} {:<40} {:>8} {:>8} {:>9} {:>9} {:>9}",
                    kind,
                    states,
                    section["attempts"][kind.as_str()],
                    unusable,
                    number("seconds", 1),
                    number("tokens_in", 0),
                    number("tokens_out", 0),
                );
            }
        }
        for job in section["job_list"].as_array().into_iter().flatten() {
            let error = job["last_error"].as_str().unwrap_or_default();
            if job["state"] == "failed" || job["state"] == "cancelled" {
                let why = if error.is_empty() {
                    job["result"].as_str().unwrap_or_default()
                } else {
                    error
                };
                let _ = writeln!(
                    out,
                    "  {} {} {}: {}",
                    job["kind"].as_str().unwrap_or("?"),
                    job["state"].as_str().unwrap_or("?"),
                    job["message_id"].as_str().unwrap_or_default(),
                    why.chars().take(160).collect::<String>()
                );
            }
        }
        if let Some(error) = section["qa_error"].as_str() {
            let _ = writeln!(out, "questions not all asked: {error}");
        }
        if let Some(all) = llm.get("(no kind label)") {
            let _ = writeln!(
                out,
                "LLM (no kind label): {:.1} s over {} requests, tokens in {} out {}",
                all["seconds"].as_f64().unwrap_or(0.0),
                all["requests"],
                all["tokens_in"],
                all["tokens_out"]
            );
        }
        if let Some(scores) = section["break_scores"].as_array() {
            for s in scores {
                let _ = writeln!(
                    out,
                    "breaks {}: found {} boundaries {} matched {} precision {} recall {}",
                    if s["tolerance"] == 0 {
                        "exact"
                    } else {
                        "within 1"
                    },
                    s["found"],
                    s["boundaries"],
                    s["matched"],
                    ratio(&s["precision"]),
                    ratio(&s["recall"])
                );
            }
        }
        let lore = &section["lore"];
        if lore.is_object() {
            let _ = writeln!(
                out,
                "lore: {}/{} session facts in an entry ({})  book entries {}",
                lore["found"],
                lore["facts"],
                ratio(&lore["ratio"]),
                lore["entries"]
            );
        }
        for condition in CONDITIONS {
            let a = &section["qa"][condition];
            if a.is_null() {
                continue;
            }
            let categories = a["by_category"]
                .as_object()
                .map(|c| {
                    c.iter()
                        .map(|(k, v)| format!("cat {k} {}/{}", v["correct"], v["asked"]))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "QA {condition:<9}: {}/{} correct ({})  {categories}",
                a["correct"],
                a["asked"],
                ratio(&a["accuracy"])
            );
        }
    }
    if let Some(errors) = report["errors"].as_array().filter(|e| !e.is_empty()) {
        let _ = writeln!(out, "\nerrors:");
        for e in errors {
            let _ = writeln!(
                out,
                "  {}: {}",
                e["id"].as_str().unwrap_or("?"),
                e["error"].as_str().unwrap_or("?")
            );
        }
    }
    out
}
