//! Recaps written by recapd (RecapService) over a real socket, against a
//! fake OpenAI-compatible LLM on loopback that answers by the prompt
//! macros: each chat gets prompts of its own (as a client would set them)
//! whose first line names the job kind, so the fake can tell what it is
//! asked and answer from the macros' expansions alone.
//!
//! Every guarantee here holds whatever `llm_structured_output` says and
//! whether the model follows the schema it is sent: `scripts/test.sh` runs
//! these tests once per setting (`RECAPD_TEST_STRUCTURED_OUTPUT`: AUTO,
//! JSON_SCHEMA, JSON_OBJECT or OFF, set on every chat [`open_chat`] opens;
//! default AUTO) and fake model (`RECAPD_TEST_FAKE_MODEL`: `follows`, bare
//! JSON that the schema allows when one is sent; `ignores`, the default,
//! prose around JSON).

use std::time::Duration;

use recapd::grpc::pb;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use tonic::transport::Channel;

use crate::common::fake_llm::Reply;
use crate::common::{self, Server};

mod deleted_chat;
mod failures;
mod order;
mod pipeline;
mod private_errors;
mod regenerate;
mod restart;
mod stale;
mod structured;

/// The `llm_structured_output` of the chats these tests open, from
/// `RECAPD_TEST_STRUCTURED_OUTPUT` (default AUTO).
pub fn structured_output() -> pb::StructuredOutput {
    let name = std::env::var("RECAPD_TEST_STRUCTURED_OUTPUT").unwrap_or_default();
    match name.as_str() {
        "" | "AUTO" => pb::StructuredOutput::Auto,
        "JSON_SCHEMA" => pb::StructuredOutput::JsonSchema,
        "JSON_OBJECT" => pb::StructuredOutput::JsonObject,
        "OFF" => pb::StructuredOutput::Off,
        other => {
            panic!("RECAPD_TEST_STRUCTURED_OUTPUT={other}: AUTO, JSON_SCHEMA, JSON_OBJECT or OFF")
        }
    }
}

/// Whether the fake model follows the schema it is sent, from
/// `RECAPD_TEST_FAKE_MODEL` (`follows` or `ignores`, the default).
pub fn model_follows_schema() -> bool {
    match std::env::var("RECAPD_TEST_FAKE_MODEL")
        .unwrap_or_default()
        .as_str()
    {
        "" | "ignores" => false,
        "follows" => true,
        other => panic!("RECAPD_TEST_FAKE_MODEL={other}: follows or ignores"),
    }
}

/// Per-chat prompts a client could set: one line naming the kind, then the
/// macros the fake reads; and the chat's [`structured_output`].
pub fn scripted_prompts() -> pb::Settings {
    pb::Settings {
        llm_structured_output: Some(structured_output().into()),
        scene_break_prompt: Some(
            "KIND=detect\nEARLIEST={{earliest_allowed_break}}\n{{messages}}".into(),
        ),
        scene_recap_prompt: Some("KIND=scene\n{{scene_messages}}".into()),
        running_recap_prompt: Some(
            "KIND=merge\nBASE={{current_running_recap}}\nSCENE={{scene_recap}}".into(),
        ),
        message_recap_prompt: Some("KIND=message\n{{message}}".into()),
        ..Default::default()
    }
}

/// The kind line of a scripted prompt.
pub fn kind_of(prompt: &str) -> &str {
    prompt
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("KIND="))
        .unwrap_or("")
}

/// The fake's answer to a scripted prompt, as a careful model would give
/// it: a break at the first eligible message at or after the earliest
/// allowed one whose text holds `[END]`; a scene recap naming the scene's
/// first and last lines; a merge that appends the scene recap to the base.
/// Answers come in a code fence or with prose around them, as models write.
pub fn story_answer(prompt: &str) -> String {
    let body: Vec<&str> = prompt.lines().skip(1).collect();
    match kind_of(prompt) {
        "detect" => {
            let earliest: usize = body[0]
                .strip_prefix("EARLIEST=")
                .and_then(|n| n.parse().ok())
                .unwrap_or(usize::MAX);
            let found = body[1..].iter().find_map(|line| {
                let rest = line.strip_prefix('#')?;
                let (n, rest) = rest.split_once(' ')?;
                let n: usize = n.parse().ok()?;
                (!rest.starts_with("(not eligible)") && n >= earliest && rest.contains("[END]"))
                    .then_some(n)
            });
            match found {
                Some(n) => format!(
                    "```json\n{{\"scene_break_at\": {n}, \"rationale\": \"the scene closes\"}}\n```"
                ),
                None => r#"{"scene_break_at": false, "rationale": "still going"}"#.to_owned(),
            }
        }
        "scene" => {
            let first = body.first().copied().unwrap_or("");
            let last = body.last().copied().unwrap_or("");
            format!(
                "Here is the recap:\n{{\"scene_name\": \"from {first}\", \"recap\": \"{} lines, {first} to {last}\"}}",
                body.len()
            )
        }
        "merge" => {
            let base = body[0].strip_prefix("BASE=").unwrap_or("");
            let scene = body[1].strip_prefix("SCENE=").unwrap_or("");
            let merged = if base.is_empty() {
                scene.to_owned()
            } else {
                format!("{base} / {scene}")
            };
            serde_json::json!({ "recap": merged }).to_string()
        }
        "message" => {
            serde_json::json!({ "recap": format!("short: {}", body.join(" ")) }).to_string()
        }
        other => panic!("the fake was sent an unscripted prompt of kind {other:?}: {prompt}"),
    }
}

/// The fake's script: [`story_answer`] for every request, given as the
/// [`model_follows_schema`] setting says.
pub fn story(request: &crate::common::fake_llm::SeenRequest) -> Reply {
    Reply::Answer(as_the_model_writes(request, story_answer(&request.prompt)))
}

/// `answer` (JSON with prose or a fence around it) as the fake model
/// writes it to `request`: [`following_the_schema`] when the model follows
/// schemas ([`model_follows_schema`]), as it is otherwise.
pub fn as_the_model_writes(
    request: &crate::common::fake_llm::SeenRequest,
    answer: String,
) -> String {
    if model_follows_schema() {
        following_the_schema(request, answer)
    } else {
        answer
    }
}

/// `answer` as a model that follows the schema of `request` writes it:
/// the bare JSON object when a schema was sent (a test fails when it names
/// a break the schema forbids), as it is otherwise.
pub fn following_the_schema(
    request: &crate::common::fake_llm::SeenRequest,
    answer: String,
) -> String {
    let Some(schema) = request.schema() else {
        return answer;
    };
    let start = answer.find('{').expect("the story answer holds JSON");
    let object: serde_json::Value = serde_json::Deserializer::from_str(&answer[start..])
        .into_iter()
        .next()
        .expect("one value")
        .expect("valid JSON");
    if let Some(at) = object.get("scene_break_at").filter(|v| v.is_number()) {
        let allowed = &schema["properties"]["scene_break_at"]["anyOf"][0]["enum"];
        assert!(
            allowed.as_array().is_some_and(|a| a.contains(at)),
            "the schema {allowed} forbids the break {at}"
        );
    }
    object.to_string()
}

/// A chat of `count` messages, alternating a user and a character; the
/// messages whose index is in `ends` say `[END]`.
pub fn story_chat(count: usize, ends: &[usize]) -> Vec<pb::Message> {
    (0..count)
        .map(|i| {
            let end = if ends.contains(&i) { " [END]" } else { "" };
            pb::Message {
                id: format!("m{i}"),
                text: format!("line {i}{end}"),
                name: if i % 2 == 0 { "Ann" } else { "Bob" }.into(),
                is_user: i % 2 == 0,
                ..Default::default()
            }
        })
        .collect()
}

/// A server configured to write recaps with the LLM at `llm_url`, with
/// `tune` applied to its config.
pub async fn start_with_llm(
    dir: &std::path::Path,
    llm_url: &str,
    tune: impl FnOnce(&mut recapd::config::Config),
) -> (Server, RecapServiceClient<Channel>) {
    let mut config = common::test_config(dir);
    config.llm.llm_url = Some(llm_url.to_owned());
    config.llm.llm_model = "fake-model".into();
    config.llm.llm_backoff_base = std::time::Duration::from_millis(10);
    tune(&mut config);
    let server = Server::start_with(config).await;
    let recaps = RecapServiceClient::new(server.channel.clone());
    (server, recaps)
}

/// Opens `chat` with `messages` and the scripted prompts.
pub async fn open_chat(server: &mut Server, chat: &str, messages: Vec<pb::Message>) {
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat.into(),
            settings: Some(scripted_prompts()),
            clear: vec![],
        })
        .await
        .expect("per-chat prompts");
    server
        .publish(chat, common::chat_changed(messages))
        .await
        .expect("chat opened");
}

/// Every job of `chat`, newest first.
pub async fn jobs_of(recaps: &mut RecapServiceClient<Channel>, chat: &str) -> Vec<pb::Job> {
    recaps
        .list_jobs(pb::ListJobsRequest {
            chat_id: chat.into(),
            states: vec![],
            page_size: 1000,
            page_token: String::new(),
        })
        .await
        .expect("list jobs")
        .into_inner()
        .jobs
}

/// Waits (up to 30 s) until `done` holds for the chat's jobs; returns them.
pub async fn wait_for_jobs(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    what: &str,
    done: impl Fn(&[pb::Job]) -> bool,
) -> Vec<pb::Job> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let jobs = jobs_of(recaps, chat).await;
        if done(&jobs) {
            return jobs;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}; jobs: {jobs:#?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether every job is terminal.
pub fn all_finished(jobs: &[pb::Job]) -> bool {
    jobs.iter().all(|j| {
        !matches!(
            pb::JobState::try_from(j.state),
            Ok(pb::JobState::Pending | pb::JobState::Running)
        )
    })
}

/// The state of a job.
pub fn state(job: &pb::Job) -> pb::JobState {
    pb::JobState::try_from(job.state).expect("a known job state")
}

/// The kind of a job.
pub fn kind(job: &pb::Job) -> pb::JobKind {
    pb::JobKind::try_from(job.kind).expect("a known job kind")
}

/// A message's current data.
pub async fn data_of(server: &mut Server, chat: &str, message: &str) -> pb::MessageData {
    server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            swipe_id: None,
            chat_id: chat.into(),
            message_id: message.into(),
        })
        .await
        .expect("message data")
        .into_inner()
}

/// The chat's running-recap versions.
pub async fn recaps_of(server: &mut Server, chat: &str) -> pb::ListRunningRecapsResponse {
    server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("running recaps")
        .into_inner()
}

/// The binary on data directory `dir` with the fake LLM at `llm_url`, the
/// test store of `store_of` (the same directory, or on PostgreSQL another
/// replica's, to share its schema) and `extra` arguments.
pub fn recapd_with_llm(
    dir: &std::path::Path,
    store_of: &std::path::Path,
    llm_url: &str,
    extra: &[&str],
) -> crate::common::process::Recapd {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_recapd"));
    if let Some((url, schema)) = crate::common::config::test_postgres(store_of) {
        command
            .arg("--store")
            .arg(url.0)
            .arg("--store-schema")
            .arg(schema);
    }
    command
        .args([
            "--llm-url",
            llm_url,
            "--llm-model",
            "fake",
            "--llm-backoff-base-ms",
            "10",
        ])
        // On PostgreSQL a restarted server cannot tell a dead runner from a
        // slow one: it takes a RUNNING job over when its lease expires.
        .args(["--job-lease", "3"])
        .args(extra);
    crate::common::process::Recapd::start_with(command, dir)
}
