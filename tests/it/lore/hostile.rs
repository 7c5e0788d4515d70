//! An LLM's answer is data (issue 41, rows 7 and 8 of its table): a name
//! and keywords crafted to forge log lines, hide text and plant a regex
//! key are stored as plain, visible text; an invalid entity is skipped
//! and counted in the job's result while the scene's other entities are
//! written.

use recapd::grpc::pb;
use serde_json::{Value, json};

use super::*;
use crate::common::fake_llm::FakeLlm;

/// Row 7's entity: NUL, an ANSI colour, CR LF and a right-to-left
/// override in the name; a lookbehind regex key and a simple one.
fn row_seven_entity() -> Value {
    json!({
        "type": "character",
        "name": "Mi\u{0}ra\u{1b}[31m\r\nFAKE LOG LINE\u{202e}",
        "keywords": ["/(?<=(a+)+)b/i", "/ab+c/"],
        "content": ["Mira\u{202e} leads\tthe guard.\r\nShe has a scar.\u{1b}[0m"]
    })
}

/// Whether `text` holds a control or bidirectional character.
fn has_hidden(text: &str) -> bool {
    text.chars().any(|c| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    })
}

/// Runs the extraction of scene 1 (ending at m3) of chat `chat`, whose
/// model answers `entities`; returns the finished jobs and the extraction.
async fn extract(
    server: &mut Server,
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
) -> (Vec<pb::Job>, pb::Job) {
    open(server, chat, lore_settings(), story_chat()).await;
    make_break(server, chat, "m3").await;
    let job = generate_lore(recaps, chat, "m3").await;
    let jobs = wait_for_jobs(recaps, chat, "the extraction", all_finished).await;
    let extraction = jobs
        .iter()
        .find(|j| j.job_id == job.job_id)
        .expect("the extraction")
        .clone();
    (jobs, extraction)
}

/// Scans chat `chat` with `text` as its newest message: the comments of
/// the entries activated.
async fn activated_by(server: &mut Server, chat: &str, id: &str, text: &str) -> Vec<String> {
    server
        .publish(chat, crate::common::message_sent(id, text))
        .await
        .expect("message");
    let book = chat_book(server, chat).await;
    let entries = book_entries(server, &book).await;
    let response = lorebooks(server)
        .scan_world_info(pb::ScanWorldInfoRequest {
            chat_id: chat.into(),
            ..Default::default()
        })
        .await
        .expect("scan")
        .into_inner();
    response
        .activated
        .iter()
        .filter_map(|a| entries.iter().find(|e| e.uid == a.uid && a.book == book))
        .map(|e| e.comment.clone())
        .collect()
}

#[tokio::test]
async fn row_7_an_llms_name_and_keywords_are_stored_as_plain_visible_text() {
    let script = Script::story(Story::of(&[(
        "gates of Ravenhold",
        vec![row_seven_entity()],
    )]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let (jobs, extraction) = extract(&mut server, &mut recaps, "row7").await;
    assert_none_failed(&jobs);
    assert_eq!(
        state(&extraction),
        pb::JobState::Succeeded,
        "{extraction:#?}"
    );

    let entries = chat_entries(&mut server, "row7").await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let mira = &entries[0];
    assert_eq!(mira.comment, "character-Mira[31m FAKE LOG LINE");
    assert!(!has_hidden(&mira.comment), "{:?}", mira.comment);
    for key in &mira.keys {
        assert!(!has_hidden(key), "{key:?}");
        // Neither SillyTavern nor recapd reads it as `/pattern/flags`.
        assert!(!key.trim().starts_with('/'), "{key:?} is a regex key");
    }
    assert_eq!(
        mira.keys,
        ["mira[31m fake log line", "(?=(a+)+)b/i", "ab+c/"],
        "{mira:#?}"
    );
    // Content keeps its line break and tab, loses the rest.
    assert_eq!(mira.content, "Mira leads\tthe guard.\nShe has a scar.[0m");
    assert!(
        !mira.json["key"].to_string().contains("\\u"),
        "{}",
        mira.json
    );

    // `aaab` and `abbbc` are what the regex keys would match: nothing is
    // activated.
    assert_eq!(
        activated_by(&mut server, "row7", "m12", "aaab abbbc").await,
        Vec::<String>::new()
    );
    // The literal text the model named still finds the entry.
    assert_eq!(
        activated_by(&mut server, "row7", "m13", "I wrote /ab+c/ on the wall.").await,
        ["character-Mira[31m FAKE LOG LINE"]
    );
    server.stop().await;
}

#[tokio::test]
async fn row_8_an_entity_with_a_100_000_byte_name_is_skipped_and_the_others_written() {
    let long_name = "N".repeat(100_000);
    let script = Script::story(Story::of(&[(
        "gates of Ravenhold",
        vec![
            row_seven_entity(),
            entity("character", &long_name, &[], &["Walks the walls."]),
            entity(
                "location",
                "Ravenhold",
                &[],
                &["Ravenhold is a fortress on the northern cliffs."],
            ),
        ],
    )]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let (jobs, extraction) = extract(&mut server, &mut recaps, "row8").await;
    assert_none_failed(&jobs);
    assert_eq!(
        state(&extraction),
        pb::JobState::Succeeded,
        "{extraction:#?}"
    );
    // At its first attempt, not after retries.
    assert_eq!(prompts_of(&llm.requests(), "lore_extract").len(), 1);
    assert!(
        extraction
            .result
            .contains("1 entity skipped as invalid: character-NNNN"),
        "{:?}",
        extraction.result
    );
    assert!(
        extraction
            .result
            .contains("the name has 100000 bytes, more than a key may have (4096)"),
        "{:?}",
        extraction.result
    );
    assert!(extraction.result.len() < 1000, "{:?}", extraction.result);

    let entries = chat_entries(&mut server, "row8").await;
    assert_eq!(
        comments(&entries),
        ["character-Mira[31m FAKE LOG LINE", "location-Ravenhold"],
        "{entries:#?}"
    );
    server.stop().await;
}
