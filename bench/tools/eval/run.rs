//! One conversation through recapd: import it as a SillyTavern chat, set
//! the settings, ask for a scene-break detection once, and follow the jobs
//! (WatchJobs for each failed attempt, ListJobs for the end) until every
//! job is terminal; then read the breaks, the metrics, with `auto_lore` the
//! chat's lorebook (the lore check), and with a judge ask the questions.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use super::chat;
use super::layout::{Conversation, Question};
use super::llm::ChatClient;
use super::lore::{self, BookEntry, LoreCheck};
use super::metrics::{self, KindFigures};
use super::qa::{self, Asked};
use super::server::Recapd;

type Error = Box<dyn std::error::Error>;

/// What to run a conversation with.
pub struct Setup<'a> {
    pub recapd: &'a Path,
    pub llm_url: &'a str,
    pub model: &'a str,
    pub settings: Option<&'a pb::Settings>,
    pub timeout: Duration,
    pub recent_messages: usize,
    pub max_questions: Option<usize>,
    /// The answering client and the judge; `None`: no questions asked.
    pub qa: Option<(&'a ChatClient, &'a ChatClient)>,
}

/// What one conversation gave.
pub struct ConversationRun {
    pub id: String,
    pub sessions: usize,
    pub messages: usize,
    /// True boundaries (chat indices).
    pub boundaries: Vec<usize>,
    /// Breaks recapd found (chat indices of visible scene breaks).
    pub breaks: Vec<usize>,
    /// Every job of the chat, as it ended.
    pub jobs: Vec<pb::Job>,
    /// Failed attempts whose error was an unusable answer, by job kind,
    /// as WatchJobs showed them.
    pub unusable_seen: BTreeMap<String, u32>,
    /// recapd's LLM metrics by the `kind` label.
    pub llm: BTreeMap<String, KindFigures>,
    /// DetectSceneBreaks calls made.
    pub detect_calls: u32,
    /// From the detection call to the last job's end.
    pub pipeline_seconds: f64,
    /// The time limit passed with jobs still open.
    pub timed_out: bool,
    /// The running recap injected at the end (empty: none).
    pub injection: String,
    pub asked: Vec<Asked>,
    /// Why the questions could not all be asked (the LLM or the judge
    /// failed); the pipeline's figures stand.
    pub qa_error: Option<String>,
    /// With `auto_lore` on: the dataset's per-session facts against the
    /// chat's book.
    pub lore: Option<LoreCheck>,
}

/// `JOB_KIND_SCENE_RECAP` → `scene_recap`, as recapd's metrics name kinds.
pub fn kind_name(kind: i32) -> String {
    pb::JobKind::try_from(kind)
        .map(|k| {
            k.as_str_name()
                .trim_start_matches("JOB_KIND_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| format!("kind_{kind}"))
}

/// `JOB_STATE_SUCCEEDED` → `succeeded`.
pub fn state_name(state: i32) -> String {
    pb::JobState::try_from(state)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("JOB_STATE_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| format!("state_{state}"))
}

fn is_open(job: &pb::Job) -> bool {
    job.state == pb::JobState::Pending as i32 || job.state == pb::JobState::Running as i32
}

/// Runs one conversation on a recapd of its own.
pub async fn run(setup: &Setup<'_>, conversation: &Conversation) -> Result<ConversationRun, Error> {
    let recapd = Recapd::start(setup.recapd, setup.llm_url, setup.model).await?;
    let result = run_on(setup, conversation, &recapd).await;
    let result =
        result.map_err(|e| -> Error { format!("{e} (recapd log: {})", recapd.log_tail()).into() });
    recapd.stop().await;
    result
}

async fn run_on(
    setup: &Setup<'_>,
    conversation: &Conversation,
    recapd: &Recapd,
) -> Result<ConversationRun, Error> {
    let channel = recapd.channel.clone();
    let chat_id = conversation.id.clone();
    let mut memory = MemoryServiceClient::new(channel.clone());
    let mut settings = SettingsServiceClient::new(channel.clone());
    let mut recaps = RecapServiceClient::new(channel.clone());
    let imported = memory
        .import_chat(pb::ImportChatRequest {
            chat_id: chat_id.clone(),
            jsonl: chat::sillytavern_jsonl(conversation).into_bytes(),
            ..Default::default()
        })
        .await?
        .into_inner();
    let messages = imported.message_count as usize;
    if let Some(overrides) = setup.settings {
        settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: String::new(),
                settings: Some(overrides.clone()),
                clear: Vec::new(),
            })
            .await?;
    }
    let effective = settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat_id.clone(),
        })
        .await?
        .into_inner();
    // A detection needs this many messages in the open scene.
    let detection_needs = (effective.scene_break_min_messages.unwrap_or(10)
        + 1
        + effective.scene_break_offset.unwrap_or(8))
    .max(0) as usize;

    let unusable_seen = Arc::new(Mutex::new(BTreeMap::<String, u32>::new()));
    let mut watch = recaps
        .watch_jobs(pb::WatchJobsRequest {
            chat_ids: vec![chat_id.clone()],
        })
        .await?
        .into_inner();
    let counter = unusable_seen.clone();
    let watcher = tokio::spawn(async move {
        let mut last_state: BTreeMap<String, i32> = BTreeMap::new();
        while let Some(Ok(job)) = watch.next().await {
            let was_running = last_state.insert(job.job_id.clone(), job.state)
                == Some(pb::JobState::Running as i32);
            let attempt_ended = job.state == pb::JobState::Pending as i32
                || job.state == pb::JobState::Failed as i32;
            if was_running
                && attempt_ended
                && super::report::unusable_error(&job.last_error)
                && let Ok(mut counts) = counter.lock()
            {
                *counts.entry(kind_name(job.kind)).or_default() += 1;
            }
        }
    });

    let started = Instant::now();
    recaps
        .detect_scene_breaks(pb::DetectSceneBreaksRequest {
            chat_id: chat_id.clone(),
        })
        .await?;
    let mut detect_calls = 1;
    let mut timed_out = false;
    let mut jobs;
    let mut breaks;
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        jobs = list_jobs(&mut recaps, &chat_id).await?;
        if jobs.iter().any(is_open) {
            if started.elapsed() > setup.timeout {
                timed_out = true;
                breaks = scene_breaks(&mut memory, &chat_id, messages).await?;
                break;
            }
            continue;
        }
        breaks = scene_breaks(&mut memory, &chat_id, messages).await?;
        // recapd goes on detecting after each break by itself; should the
        // newest detection have found a break and none follow, ask again.
        let newest_detection = jobs
            .iter()
            .filter(|j| j.kind == pb::JobKind::DetectSceneBreak as i32)
            .max_by_key(|j| j.created_at.map(|t| (t.seconds, t.nanos)));
        let found_a_break = newest_detection.is_some_and(|j| {
            j.state == pb::JobState::Succeeded as i32 && j.result.starts_with("scene break at")
        });
        let open_scene = messages - breaks.last().map_or(0, |b| b + 1);
        if found_a_break && open_scene >= detection_needs && started.elapsed() < setup.timeout {
            recaps
                .detect_scene_breaks(pb::DetectSceneBreaksRequest {
                    chat_id: chat_id.clone(),
                })
                .await?;
            detect_calls += 1;
            continue;
        }
        break;
    }
    let pipeline_seconds = started.elapsed().as_secs_f64();
    watcher.abort();
    let lore = if effective.auto_lore == Some(true) {
        Some(lore_check(&channel, &chat_id, conversation).await?)
    } else {
        None
    };
    let exposition = crate::scrape::scrape(&recapd.metrics_addr)
        .await
        .unwrap_or_default();
    let llm = metrics::llm_figures(&exposition);
    let injection =
        recapd::grpc::pb::injection_service_client::InjectionServiceClient::new(channel.clone())
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat_id.clone(),
                ..Default::default()
            })
            .await?
            .into_inner()
            .text;

    let mut asked = Vec::new();
    let mut qa_error = None;
    if let Some((answerer, judge)) = setup.qa {
        let questions: Vec<Question> = conversation
            .questions
            .iter()
            .take(setup.max_questions.unwrap_or(usize::MAX))
            .cloned()
            .collect();
        match qa::ask(
            channel,
            &chat_id,
            conversation,
            &questions,
            setup.recent_messages,
            answerer,
            judge,
        )
        .await
        {
            Ok(done) => asked = done,
            Err(e) => qa_error = Some(e.to_string()),
        }
    }
    let unusable_seen = unusable_seen.lock().map(|c| c.clone()).unwrap_or_default();
    Ok(ConversationRun {
        id: chat_id,
        sessions: conversation.sessions.len(),
        messages,
        boundaries: chat::session_boundaries(conversation),
        breaks,
        jobs,
        unusable_seen,
        llm,
        detect_calls,
        pipeline_seconds,
        timed_out,
        injection,
        asked,
        qa_error,
        lore,
    })
}

/// The lore check of the chat: its book (`world_info_chat_book`, read with
/// ExportLorebook; none yet: no entry) against the conversation's facts.
async fn lore_check(
    channel: &Channel,
    chat_id: &str,
    conversation: &Conversation,
) -> Result<LoreCheck, Error> {
    let book = SettingsServiceClient::new(channel.clone())
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat_id.to_owned(),
        })
        .await?
        .into_inner()
        .world_info_chat_book
        .unwrap_or_default();
    let entries = if book.is_empty() {
        Vec::new()
    } else {
        let json = LorebookServiceClient::new(channel.clone())
            .export_lorebook(pb::ExportLorebookRequest { name: book })
            .await?
            .into_inner()
            .json;
        BookEntry::of_book(&json)?
    };
    Ok(lore::check(&conversation.facts, &entries))
}

/// Every job of the chat, all pages.
pub async fn list_jobs(
    recaps: &mut RecapServiceClient<Channel>,
    chat_id: &str,
) -> Result<Vec<pb::Job>, Error> {
    let mut jobs = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = recaps
            .list_jobs(pb::ListJobsRequest {
                chat_id: chat_id.to_owned(),
                states: Vec::new(),
                page_size: 1000,
                page_token,
            })
            .await?
            .into_inner();
        jobs.extend(page.jobs);
        if page.next_page_token.is_empty() {
            return Ok(jobs);
        }
        page_token = page.next_page_token;
    }
}

/// Chat indices of the visible scene breaks.
async fn scene_breaks(
    memory: &mut MemoryServiceClient<Channel>,
    chat_id: &str,
    messages: usize,
) -> Result<Vec<usize>, Error> {
    let mut breaks = Vec::new();
    for index in 0..messages {
        let data = memory
            .get_message_data(pb::GetMessageDataRequest {
                swipe_id: None,
                chat_id: chat_id.to_owned(),
                message_id: chat::message_id(index),
            })
            .await?
            .into_inner();
        if data.scene_break == Some(true) && data.scene_break_visible != Some(false) {
            breaks.push(index);
        }
    }
    Ok(breaks)
}
