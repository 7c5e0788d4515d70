//! `eval` end to end: a conversation this test writes (3 sessions of 10
//! messages, 2 questions), the real recapd binary, and a fake
//! OpenAI-compatible LLM served here that finds breaks at 9 (a true
//! boundary), 20 (one after the boundary 19) and 26 (none), writes recaps
//! naming the facts the questions ask about, answers questions from the
//! memory when the prompt holds it, and judges by containment. Its first
//! merge answers the prompt's own placeholder, which recapd refuses as
//! unusable and retries.
//!
//! The end-to-end test needs the recapd binary beside the test's
//! directory (`target/<profile>/recapd`): `cargo test --workspace
//! --all-targets` (`./scripts/test.sh`) builds it; `cargo test -p
//! recapd-bench` alone skips the test, saying so, when it is absent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use clap::Parser;
use serde_json::{Value, json};

use super::*;

/// The breaks the fake names, each when the detection may name it.
const FAKE_BREAKS: [usize; 3] = [9, 20, 26];

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    eval: Eval,
}

#[derive(Default)]
struct Fake {
    detections: AtomicUsize,
    merges: AtomicUsize,
    judged: AtomicUsize,
}

fn answer(content: String) -> Json<Value> {
    Json(json!({
        "id": "fake", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    }))
}

/// The eligible message numbers of a detection prompt's `#<n> ...` lines.
fn eligible(prompt: &str) -> Vec<usize> {
    prompt
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix('#')?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let n = digits.parse().ok()?;
            (!rest[digits.len()..].starts_with(" (not eligible)")).then_some(n)
        })
        .collect()
}

fn line_after<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_default()
        .trim()
}

async fn complete(State(fake): State<Arc<Fake>>, Json(body): Json<Value>) -> Json<Value> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let all: String = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let last = messages
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    // recapd's jobs are told apart by their answer schema's name, whatever
    // their prompts say.
    let schema = body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default();
    if schema == "scene_break" {
        fake.detections.fetch_add(1, Ordering::SeqCst);
        let allowed = eligible(&last);
        let at = FAKE_BREAKS.iter().find(|b| allowed.contains(b));
        return answer(match at {
            Some(at) => json!({"scene_break_at": at, "rationale": "the day changes"}).to_string(),
            None => json!({"scene_break_at": false, "rationale": "one scene"}).to_string(),
        });
    }
    if schema == "scene_recap" {
        return answer(
            json!({"scene_name": "A day", "recap": "Ann told Bob that her dog is called Rex and that she went to Paris in 2022."})
                .to_string(),
        );
    }
    if schema == "running_recap" {
        if fake.merges.fetch_add(1, Ordering::SeqCst) == 0 {
            return answer(json!({"recap": "<the new memory>"}).to_string());
        }
        return answer(
            json!({"recap": "Ann's dog is called Rex. Ann went to Paris in 2022."}).to_string(),
        );
    }
    if schema == "lore_extract" {
        // Ann's own facts (the sessions' third turns) as her entity.
        let content: Vec<&str> = all
            .lines()
            .filter_map(|l| l.trim().strip_prefix("Ann: "))
            .filter(|t| FACT_TURNS.contains(t))
            .collect();
        let entities = if content.is_empty() {
            json!([])
        } else {
            json!([{"type": "character", "name": "Ann", "keywords": [], "content": content}])
        };
        return answer(json!({ "entities": entities }).to_string());
    }
    if schema == "lore_merge" {
        let mut content: Vec<&str> = Vec::new();
        for line in all.lines().map(str::trim) {
            if FACT_TURNS.contains(&line) && !content.contains(&line) {
                content.push(line);
            }
        }
        return answer(json!({"content": content.join("\n"), "name": null}).to_string());
    }
    if last.contains("Gold answer:") {
        fake.judged.fetch_add(1, Ordering::SeqCst);
        let gold = line_after(&last, "Gold answer:").to_ascii_lowercase();
        let candidate = line_after(&last, "Candidate answer:").to_ascii_lowercase();
        return answer(json!({"correct": candidate.contains(&gold)}).to_string());
    }
    if last.contains("Question:") {
        // With the memory injected, the prompt holds the facts.
        return answer(if all.contains("Rex") {
            "Ann's dog is called Rex; she went to Paris in 2022.".into()
        } else {
            "I do not know.".into()
        });
    }
    answer("{}".into())
}

/// Serves the fake on a free port: its counters and its API's URL.
async fn serve_fake() -> (Arc<Fake>, String) {
    let fake = Arc::new(Fake::default());
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let llm = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, llm)
}

/// The third turn of each session: Ann's facts.
const FACT_TURNS: [&str; 3] = [
    "My dog is called Rex.",
    "I went to Paris in 2022.",
    "The tomatoes are growing.",
];

/// Session `n` (1-based) of 10 turns, Ann first; `facts` go into turns 3
/// and 4 of the session.
fn session(n: usize, facts: [&str; 2]) -> Value {
    let turns: Vec<Value> = (1..=10)
        .map(|t| {
            let speaker = if t % 2 == 1 { "Ann" } else { "Bob" };
            let text = match t {
                3 => facts[0].to_owned(),
                4 => facts[1].to_owned(),
                _ => format!("Small talk {t} of day {n}, about the weather and the garden."),
            };
            json!({"speaker": speaker, "dia_id": format!("D{n}:{t}"), "text": text})
        })
        .collect();
    Value::Array(turns)
}

fn conversation() -> Value {
    json!({
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": session(1, [FACT_TURNS[0], "What a nice name for a dog."]),
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": session(2, [FACT_TURNS[1], "Paris must have been lovely."]),
        "session_3_date_time": "6:30 pm on 2 June, 2023",
        "session_3": session(3, [FACT_TURNS[2], "Mine too, slowly."]),
        "events_session_1": {"Ann": ["Ann's dog is called Rex."], "Bob": [], "date": "8 May, 2023"},
        "events_session_2": {"Ann": ["Ann went to Paris in 2022."], "Bob": [], "date": "20 May, 2023"},
        "events_session_3": {"Ann": [], "Bob": ["Bob grows tomatoes on his balcony."], "date": "2 June, 2023"},
        "qa": [
            {"question": "What is the name of Ann's dog?", "answer": "Rex", "evidence": ["D1:3"], "category": 1},
            {"question": "When did Ann go to Paris?", "answer": 2022, "evidence": ["D2:3"], "category": 2},
        ],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluates_a_small_conversation_end_to_end() {
    let recapd = match server::default_recapd_path() {
        Ok(path) => path,
        Err(e) => {
            eprintln!(
                "SKIPPED: {e} (cargo test --workspace --all-targets, as ./scripts/test.sh runs, builds it)"
            );
            return;
        }
    };
    let (fake, llm) = serve_fake().await;

    let dir = tempfile::tempdir().unwrap();
    let dataset = dir.path().join("small.json");
    std::fs::write(&dataset, conversation().to_string()).unwrap();
    let settings = dir.path().join("short-scenes.json");
    std::fs::write(
        &settings,
        r#"{"scene_break_min_messages": 3, "scene_break_offset": 2}"#,
    )
    .unwrap();
    let out = dir.path().join("report.json");
    let cli = Cli::try_parse_from([
        "eval".as_ref(),
        "--llm-url".as_ref(),
        llm.as_ref(),
        "--model".as_ref(),
        "fake".as_ref(),
        "--judge-llm-url".as_ref(),
        llm.as_ref(),
        "--recapd".as_ref(),
        recapd.as_os_str(),
        "--settings".as_ref(),
        settings.as_os_str(),
        "--timeout".as_ref(),
        "120s".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        dataset.as_os_str(),
    ] as [&std::ffi::OsStr; 16])
    .unwrap();
    let report = eval(cli.eval).await.unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let reread: Value = serde_json::from_str(&report.to_string()).unwrap();
    assert_eq!(written, reread, "--out holds the report");
    assert_eq!(report["prompt_set"], "short-scenes");
    assert_eq!(report["model"], "fake");

    let c = &report["conversations"][0];
    assert_eq!(c["id"], "small");
    assert_eq!(c["messages"], 30);
    assert_eq!(c["timed_out"], false);
    assert_eq!(c["boundaries"], json!([9, 19]));
    assert_eq!(c["breaks"], json!([9, 20, 26]));
    // Three detections found a break each; after 26 the open scene (3
    // messages) is too short for another.
    assert_eq!(c["jobs"]["detect_scene_break"], json!({"succeeded": 3}));
    assert_eq!(c["jobs"]["scene_recap"], json!({"succeeded": 3}));
    assert_eq!(c["jobs"]["running_recap"], json!({"succeeded": 3}));
    assert_eq!(c["attempts"]["scene_recap"], 3);
    // The placeholder merge: one unusable attempt, retried.
    assert_eq!(c["attempts"]["running_recap"], 4);
    assert_eq!(c["unusable_attempts_seen"], json!({"running_recap": 1}));
    // It succeeded on its second attempt: no job failed for an unusable answer.
    assert_eq!(c["jobs_failed_unusable"], json!({}));
    assert_eq!(c["llm"]["running_recap"]["unusable_attempts"], 1.0);
    assert_eq!(c["llm"]["scene_recap"]["unusable_attempts"], 0.0);
    assert_eq!(fake.detections.load(Ordering::SeqCst), 3);
    assert!(c["injection"].as_str().unwrap().contains("Rex"));

    // Within one message: 9 and 20 match 9 and 19; 26 matches nothing.
    let within = &c["break_scores"][0];
    assert_eq!(
        (within["tolerance"].as_u64(), within["matched"].as_u64()),
        (Some(1), Some(2))
    );
    assert!((within["precision"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(within["recall"], 1.0);
    let exact = &c["break_scores"][1];
    assert_eq!(
        (exact["tolerance"].as_u64(), exact["matched"].as_u64()),
        (Some(0), Some(1))
    );
    assert!((exact["precision"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(exact["recall"], 0.5);

    // The memory holds both facts; the last 8 messages hold neither.
    let qa = &report["total"]["qa"];
    assert_eq!(
        (
            qa["memory"]["asked"].as_u64(),
            qa["memory"]["correct"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_eq!(
        qa["memory"]["by_category"]["2"],
        json!({"asked": 1, "correct": 1})
    );
    assert_eq!(
        (
            qa["no_memory"]["asked"].as_u64(),
            qa["no_memory"]["correct"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(fake.judged.load(Ordering::SeqCst), 4);

    // Every request's tokens reached recapd's metrics (10 attempts, 100 in each).
    let llm_total = report["total"]["llm"].as_object().unwrap();
    let tokens_in: f64 = llm_total
        .values()
        .map(|k| k["tokens_in"].as_f64().unwrap())
        .sum();
    assert_eq!(tokens_in, 1000.0);
}

/// With `auto_lore` on, Ann's facts reach her entry in the chat's book:
/// the first two sessions' facts are found there; Bob's tomatoes, told by
/// Ann as hers, share only two of four words with her entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_the_lore_of_a_small_conversation() {
    let recapd = match server::default_recapd_path() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    let (_, llm) = serve_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let dataset = dir.path().join("small.json");
    std::fs::write(&dataset, conversation().to_string()).unwrap();
    let settings = dir.path().join("lore.json");
    std::fs::write(
        &settings,
        r#"{"scene_break_min_messages": 3, "scene_break_offset": 2, "auto_lore": true}"#,
    )
    .unwrap();
    let cli = Cli::try_parse_from([
        "eval".as_ref(),
        "--llm-url".as_ref(),
        llm.as_ref(),
        "--model".as_ref(),
        "fake".as_ref(),
        "--recapd".as_ref(),
        recapd.as_os_str(),
        "--settings".as_ref(),
        settings.as_os_str(),
        "--timeout".as_ref(),
        "120s".as_ref(),
        dataset.as_os_str(),
    ] as [&std::ffi::OsStr; 12])
    .unwrap();
    let report = eval(cli.eval).await.unwrap();
    let c = &report["conversations"][0];
    assert_eq!(c["jobs"]["lore_extract"], json!({"succeeded": 3}), "{c}");
    assert_eq!(c["jobs"]["lore_merge"], json!({"succeeded": 2}), "{c}");
    let lore = &c["lore"];
    assert_eq!(lore["entries"], 1);
    assert_eq!(
        (lore["facts"].as_u64(), lore["found"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(lore["by_fact"][0]["entry"], "character-Ann");
    assert_eq!(lore["by_fact"][2]["entry"], Value::Null);
    assert_eq!(report["total"]["lore"]["found"], 2);
}

#[test]
fn durations_take_a_unit() {
    assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
    assert_eq!(parse_duration("30m").unwrap(), Duration::from_secs(1800));
    assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
    assert!(parse_duration("5 parsecs").is_err());
}
