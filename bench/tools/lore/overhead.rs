//! The queue's overhead per lore job, with a fake that answers at once,
//! and per recap job of the same run (scene recaps and running-recap
//! merges, the baseline): each SUCCEEDED job of one attempt is paired with
//! the request the fake served for it (same kind, same subject: the scene
//! for an extraction, the entity for a resolution or merge; in the job's
//! lifetime), and timed:
//!
//! - queued → claimed: `created_at` to the RUNNING state's `updated_at`
//!   (server clock): time spent waiting, behind the chat's earlier jobs
//!   too (one chat's jobs run one at a time);
//! - claimed → request: the RUNNING state to the request's arrival at the
//!   fake (the claim's commit, building the request, sending it);
//! - answer → SUCCEEDED: the fake's answer to the SUCCEEDED state reaching
//!   the WatchJobs client (reading the answer, the commit that applies it
//!   to the book and ends the job, the stream's delivery).
//!
//! Server, fake and client run on one machine and read one clock.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime};

use recapd::grpc::pb;

use super::ChatRun;
use crate::eval::run::kind_name;

type Error = Box<dyn std::error::Error>;

fn time(ts: Option<&prost_types::Timestamp>) -> Option<SystemTime> {
    SystemTime::try_from(*ts?).ok()
}

fn since(later: SystemTime, earlier: SystemTime) -> Duration {
    later.duration_since(earlier).unwrap_or_default()
}

/// One lore job's figures.
struct Timed {
    kind: String,
    queued_to_claimed: Duration,
    claimed_to_request: Duration,
    answer_to_succeeded: Duration,
}

/// The timed jobs of one chat, and the lore jobs left unpaired.
fn timed(run: &ChatRun) -> (Vec<Timed>, usize) {
    let scene_of: BTreeMap<&str, usize> = run
        .breaks
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i + 1))
        .collect();
    let mut used = HashSet::new();
    let mut out = Vec::new();
    let mut unpaired = 0;
    for job in run
        .jobs
        .iter()
        .filter(|j| j.state == pb::JobState::Succeeded as i32 && j.attempts == 1)
    {
        let kind = kind_name(job.kind);
        let states = || run.watched.iter().filter(|(j, _)| j.job_id == job.job_id);
        let claimed = states()
            .find(|(j, _)| j.state == pb::JobState::Running as i32)
            .and_then(|(j, _)| time(j.updated_at.as_ref()));
        let succeeded = states()
            .find(|(j, _)| j.state == pb::JobState::Succeeded as i32)
            .map(|(_, seen)| *seen);
        let (Some(created), Some(claimed), Some(succeeded)) =
            (time(job.created_at.as_ref()), claimed, succeeded)
        else {
            unpaired += 1;
            continue;
        };
        let about = match kind.as_str() {
            "lore_extract" => scene_of
                .get(job.message_id.as_str())
                .map(|n| format!("scene {n}"))
                .unwrap_or_default(),
            "lore_resolve" | "lore_merge" => job.subject.clone(),
            _ => String::new(),
        };
        let request = run.served.iter().enumerate().find(|(i, s)| {
            !used.contains(i)
                && s.kind == kind
                && s.about == about
                && s.arrived >= created
                && s.arrived <= succeeded
        });
        let Some((i, served)) = request else {
            unpaired += 1;
            continue;
        };
        used.insert(i);
        out.push(Timed {
            kind,
            queued_to_claimed: since(claimed, created),
            claimed_to_request: since(served.arrived, claimed),
            answer_to_succeeded: since(succeeded, served.answered),
        });
    }
    (out, unpaired)
}

/// `p50/p90/max` in ms of `samples`.
fn quantiles(mut samples: Vec<Duration>) -> String {
    samples.sort_unstable();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    format!("{:.2}/{:.2}/{:.2}", at(0.5), at(0.9), at(1.0))
}

/// One line per job kind, and one for all lore kinds.
pub fn report(runs: &[ChatRun]) -> Result<(), Error> {
    let mut all = Vec::new();
    let mut unpaired = 0;
    for run in runs {
        let (t, u) = timed(run);
        all.extend(t);
        unpaired += u;
    }
    if all.is_empty() {
        return Err("no job could be paired with its request".into());
    }
    let mut kinds: Vec<String> = all.iter().map(|t| t.kind.clone()).collect();
    kinds.sort();
    kinds.dedup();
    kinds.push("all_lore".into());
    for kind in kinds {
        let picked: Vec<&Timed> = all
            .iter()
            .filter(|t| t.kind == kind || (kind == "all_lore" && t.kind.starts_with("lore_")))
            .collect();
        println!(
            "lore_overhead kind={kind} jobs={} queued_to_claimed_ms={} claimed_to_request_ms={} \
             answer_to_succeeded_ms={}{}",
            picked.len(),
            quantiles(picked.iter().map(|t| t.queued_to_claimed).collect()),
            quantiles(picked.iter().map(|t| t.claimed_to_request).collect()),
            quantiles(picked.iter().map(|t| t.answer_to_succeeded).collect()),
            if kind == "all_lore" {
                format!(" unpaired={unpaired}")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
