//! What `recall`'s phases ask recapd: chats imported, recall turned on or
//! off, index jobs waited for, memory and histograms read.

use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::transport::Channel;

use crate::import::import_chat;
use crate::scrape::{cpu_ns, metric_sum, scrape, status_kb};

type Error = Box<dyn std::error::Error>;

/// The clients of one connection.
pub struct Clients {
    pub events: EventServiceClient<Channel>,
    pub injections: InjectionServiceClient<Channel>,
    pub memory: MemoryServiceClient<Channel>,
    pub recall: RecallServiceClient<Channel>,
    pub recaps: RecapServiceClient<Channel>,
    pub settings: SettingsServiceClient<Channel>,
}

impl Clients {
    pub fn new(channel: Channel) -> Clients {
        Clients {
            events: EventServiceClient::new(channel.clone()),
            injections: InjectionServiceClient::new(channel.clone()),
            memory: MemoryServiceClient::new(channel.clone()),
            recall: RecallServiceClient::new(channel.clone()),
            recaps: RecapServiceClient::new(channel.clone()),
            settings: SettingsServiceClient::new(channel),
        }
    }

    /// Imports `jsonl` as `chat_id` through ImportChatStream; answers how
    /// long the call took. Fails when recapd repaired a line or stored
    /// another number of messages than `messages`.
    pub async fn import(
        &mut self,
        chat_id: &str,
        jsonl: &[u8],
        messages: usize,
    ) -> Result<Duration, Error> {
        let started = Instant::now();
        let answer = import_chat(&mut self.memory, chat_id, jsonl).await?;
        let took = started.elapsed();
        if answer.message_count as usize != messages {
            return Err(format!(
                "import of {chat_id} stored {} messages, not {messages}",
                answer.message_count
            )
            .into());
        }
        Ok(took)
    }

    /// Sets `recall_enabled` globally (`chat_id` empty) or for one chat.
    pub async fn set_recall(&mut self, chat_id: &str, on: bool) -> Result<(), Error> {
        self.settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: chat_id.to_owned(),
                settings: Some(pb::Settings {
                    recall_enabled: Some(on),
                    ..Default::default()
                }),
                clear: Vec::new(),
            })
            .await?;
        Ok(())
    }

    /// Every index job of `chat_id`.
    async fn index_jobs(&mut self, chat_id: &str) -> Result<Vec<pb::Job>, Error> {
        let mut jobs = Vec::new();
        let mut page_token = String::new();
        loop {
            let page = self
                .recaps
                .list_jobs(pb::ListJobsRequest {
                    chat_id: chat_id.to_owned(),
                    states: Vec::new(),
                    page_size: 1000,
                    page_token,
                })
                .await?
                .into_inner();
            jobs.extend(
                page.jobs
                    .into_iter()
                    .filter(|j| j.kind == pb::JobKind::Index as i32),
            );
            if page.next_page_token.is_empty() {
                return Ok(jobs);
            }
            page_token = page.next_page_token;
        }
    }

    /// Waits until each of `chat_ids` has an index job and every one of
    /// them has ended, the newest SUCCEEDED. Polls (every `poll`) one page
    /// of one open job of any chat, so that waiting on many chats costs
    /// the server one cheap call per poll; each chat's jobs are read only
    /// when none is open. Fails on a FAILED or CANCELLED one, or past
    /// `timeout`.
    pub async fn wait_indexed(
        &mut self,
        chat_ids: &[String],
        poll: Duration,
        timeout: Duration,
    ) -> Result<(), Error> {
        let started = Instant::now();
        loop {
            if !self.any_open("").await? && self.all_indexed(chat_ids).await? {
                return Ok(());
            }
            if started.elapsed() > timeout {
                return Err(
                    format!("index jobs not done after {:.0} s", timeout.as_secs_f64()).into(),
                );
            }
            tokio::time::sleep(poll).await;
        }
    }

    /// Whether every one of `chat_ids` has an index job and none open;
    /// fails when one FAILED or was CANCELLED.
    async fn all_indexed(&mut self, chat_ids: &[String]) -> Result<bool, Error> {
        for chat in chat_ids {
            let jobs = self.index_jobs(chat).await?;
            if let Some(bad) = jobs.iter().find(|j| {
                j.state == pb::JobState::Failed as i32 || j.state == pb::JobState::Cancelled as i32
            }) {
                return Err(format!(
                    "index job {} of {chat} ended {}: {} {}",
                    bad.job_id, bad.state, bad.result, bad.last_error
                )
                .into());
            }
            let open = jobs.iter().any(|j| {
                j.state == pb::JobState::Pending as i32 || j.state == pb::JobState::Running as i32
            });
            if jobs.is_empty() || open {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether a job is open (PENDING or RUNNING): of `chat_id`, or of any
    /// chat (`chat_id` empty). Only index jobs run in these benchmarks.
    async fn any_open(&mut self, chat_id: &str) -> Result<bool, Error> {
        let page = self
            .recaps
            .list_jobs(pb::ListJobsRequest {
                chat_id: chat_id.to_owned(),
                states: vec![pb::JobState::Pending as i32, pb::JobState::Running as i32],
                page_size: 1,
                page_token: String::new(),
            })
            .await?
            .into_inner();
        Ok(!page.jobs.is_empty())
    }

    /// Whether `chat_id` has an index job open (PENDING or RUNNING).
    pub async fn indexing(&mut self, chat_id: &str) -> Result<bool, Error> {
        self.any_open(chat_id).await
    }

    /// Appends a message (`message_sent`): the call's time.
    pub async fn append(
        &mut self,
        chat_id: &str,
        id: String,
        text: String,
    ) -> Result<Duration, Error> {
        let started = Instant::now();
        self.events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: chat_id.to_owned(),
                    kind: Some(pb::event::Kind::MessageSent(pb::MessageSent {
                        message: Some(pb::Message {
                            id,
                            name: "User".into(),
                            is_user: true,
                            text,
                            ..Default::default()
                        }),
                    })),
                }),
            })
            .await?;
        Ok(started.elapsed())
    }

    /// Refresh (the RPC): the call's time.
    pub async fn refresh(&mut self, chat_id: &str) -> Result<Duration, Error> {
        let started = Instant::now();
        self.injections
            .refresh(pb::RefreshRequest {
                chat_id: chat_id.to_owned(),
            })
            .await?;
        Ok(started.elapsed())
    }

    /// Recall: the answer and the call's time.
    pub async fn recall(
        &mut self,
        chat_id: &str,
        query: &str,
        limit: u32,
    ) -> Result<(pb::RecallResponse, Duration), Error> {
        let started = Instant::now();
        let answer = self
            .recall
            .recall(pb::RecallRequest {
                chat_id: chat_id.to_owned(),
                query: query.to_owned(),
                limit,
                min_score: Some(0.0),
            })
            .await?
            .into_inner();
        Ok((answer, started.elapsed()))
    }
}

/// The server's memory at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    /// VmRSS, MiB (0 without a pid).
    pub rss_mib: f64,
    /// `recapd_resident_bytes`, MiB.
    pub resident_mib: f64,
    pub chats_resident: f64,
    pub loads: f64,
    pub evictions: f64,
}

/// Reads `recapd`'s memory: its VmRSS (with `pid`) and its metrics.
pub async fn memory(metrics: &str, pid: Option<u32>) -> Result<Memory, Error> {
    let exposition = scrape(metrics).await?;
    let sum = |name| metric_sum(&exposition, name).unwrap_or(0.0);
    Ok(Memory {
        rss_mib: match pid {
            Some(pid) => status_kb(pid, "VmRSS")? as f64 / 1024.0,
            None => 0.0,
        },
        resident_mib: sum("recapd_resident_bytes") / 1048576.0,
        chats_resident: sum("recapd_chats_resident"),
        loads: sum("recapd_chat_loads_total"),
        evictions: sum("recapd_chat_evictions_total"),
    })
}

/// The CPU time recapd (`pid`) has used so far, ms; 0 without a pid.
pub fn cpu_ms(pid: Option<u32>) -> Result<f64, Error> {
    Ok(match pid {
        Some(pid) => cpu_ns(pid)? as f64 / 1e6,
        None => 0.0,
    })
}

/// A histogram's cumulative buckets `(le, count)`, in order, summed over
/// its label sets; `+Inf` last.
pub fn buckets(exposition: &str, name: &str) -> Vec<(f64, f64)> {
    let prefix = format!("{name}_bucket{{");
    let mut by_le: Vec<(f64, f64)> = Vec::new();
    for line in exposition.lines() {
        let Some(rest) = line.strip_prefix(&prefix) else {
            continue;
        };
        let Some(le) = rest.split("le=\"").nth(1).and_then(|s| s.split('"').next()) else {
            continue;
        };
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap_or(f64::NAN)
        };
        let Some(count) = line
            .rsplit_once(' ')
            .and_then(|(_, v)| v.parse::<f64>().ok())
        else {
            continue;
        };
        match by_le.iter_mut().find(|(l, _)| *l == le) {
            Some(entry) => entry.1 += count,
            None => by_le.push((le, count)),
        }
    }
    by_le.sort_by(|a, b| a.0.total_cmp(&b.0));
    by_le
}

/// The `q` quantile, in ms, of the observations between two scrapes of a
/// histogram (`before`, `after`: [`buckets`]), interpolated linearly
/// within its bucket as Prometheus' `histogram_quantile` does; `None`
/// without observations.
pub fn quantile_ms(before: &[(f64, f64)], after: &[(f64, f64)], q: f64) -> Option<f64> {
    let counts: Vec<(f64, f64)> = after
        .iter()
        .map(|(le, n)| {
            let was = before
                .iter()
                .find(|(l, _)| l == le)
                .map_or(0.0, |(_, c)| *c);
            (*le, n - was)
        })
        .collect();
    let total = counts.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for (le, count) in counts {
        if count >= rank {
            let upper = if le.is_finite() { le } else { lower };
            let share = if count > below {
                (rank - below) / (count - below)
            } else {
                1.0
            };
            return Some((lower + (upper - lower) * share) * 1e3);
        }
        lower = le;
        below = count;
    }
    None
}

#[cfg(test)]
mod tests;
