//! Lorebook entries recapd writes (issue 30) over a real socket, against a
//! fake OpenAI-compatible LLM that plays a careful model: the people,
//! places and rules of each scene end up in the chat's own book, one entry
//! per entity, current, deduplicated, activated by ScanWorldInfo.
//!
//! Each chat gets lore prompts of its own (as a client could set them)
//! whose first line names the job kind and whose other lines are the
//! macros the fake reads, so the fake answers from what recapd sent alone:
//! an extraction from the scene's lines ([`Story::scenes`]), a resolution
//! from the registry listing ([`Story::same_as`]), a merge by replacing the
//! entry's lines the new facts supersede, a compaction by dropping the
//! entry's `(minor)` lines. As the recap tests, every case holds whatever
//! `RECAPD_TEST_STRUCTURED_OUTPUT` and `RECAPD_TEST_FAKE_MODEL` say.

use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use serde_json::{Value, json};
use tonic::transport::Channel;

use crate::common::Server;
pub use crate::recap_jobs::{
    all_finished, as_the_model_writes, jobs_of, kind, start_with_llm, state, structured_output,
    wait_for_jobs,
};

mod bounds;
mod defaults;
mod edits;
mod errors;
mod hostile;
mod lifecycle;
mod matching;
mod model;
mod races;
mod replicas;
mod restart;
mod settings;
mod story;

pub use model::{Script, Story, entity, kind_of, prompts_of, subject_of};

/// The user's name in every chat here.
pub const USER: &str = "Kai";
/// The character's name in every chat here.
pub const CHAR: &str = "Sage";

/// Per-chat settings a client could set: lore writing with the scripted
/// lore prompts, the scripted scene recap prompt (for `auto_lore`), no
/// running-recap merges (their requests are not the point here), and the
/// chat's structured output.
pub fn lore_settings() -> pb::Settings {
    pb::Settings {
        llm_structured_output: Some(structured_output().into()),
        scene_recap_prompt: Some("KIND=scene\n{{scene_messages}}".into()),
        auto_running_recap: Some(false),
        lore_extract_prompt: Some("KIND=lore_extract\n{{scene_messages}}".into()),
        lore_resolve_prompt: Some(
            "KIND=lore_resolve\nSUBJECT={{entity_type}}-{{entity_name}}\nREGISTRY:\n{{lore_registry}}"
                .into(),
        ),
        lore_merge_prompt: Some(
            "KIND=lore_merge\nSUBJECT={{entity_type}}-{{entity_name}}\nENTRY:\n{{entry}}\nFACTS:\n{{entity}}"
                .into(),
        ),
        lore_compact_prompt: Some(
            "KIND=lore_compact\nSUBJECT={{entity_type}}-{{entity_name}}\nENTRY:\n{{entry}}".into(),
        ),
        ..Default::default()
    }
}

/// One message said by [`USER`] (even ids) or [`CHAR`] (odd ids): `id` is
/// `m<index>`.
pub fn line(index: usize, text: &str) -> pb::Message {
    let is_user = index.is_multiple_of(2);
    pb::Message {
        id: format!("m{index}"),
        text: text.into(),
        name: if is_user { USER } else { CHAR }.into(),
        is_user,
        ..Default::default()
    }
}

/// The story's chat, three scenes of four messages: scene 1 (m0..=m3)
/// introduces the squire Elara and the fortress Ravenhold, scene 2
/// (m4..=m7) knights Elara, scene 3 (m8..=m11) calls Ravenhold the Ashen
/// Citadel.
pub fn story_chat() -> Vec<pb::Message> {
    [
        "We reach the gates of Ravenhold at dusk.",
        "A young squire named Elara lets us in; a silver sword hangs at her side.",
        "Thank you, Elara. Is it true no one may walk the walls at night?",
        "The curfew holds from midnight. Ravenhold's walls loom over the northern cliffs.",
        "The queen calls Elara forward in the great hall.",
        "Elara kneels, and rises a knight of the Order.",
        "Sir Elara! Congratulations.",
        "She bows, the silver sword at her hip.",
        "Travellers on the road call this place the Ashen Citadel.",
        "Ravenhold earned that name when fire took its east tower.",
        "Then the Ashen Citadel it is.",
        "Elara laughs at the old name.",
    ]
    .iter()
    .enumerate()
    .map(|(i, text)| line(i, text))
    .collect()
}

/// What the careful model extracts from scene 1 of [`story_chat`].
pub fn scene_one() -> (&'static str, Vec<Value>) {
    (
        "gates of Ravenhold",
        vec![
            entity(
                "character",
                "Elara",
                &[],
                &[
                    "Title: squire of the Order",
                    "Elara carries a silver sword.",
                ],
            ),
            entity(
                "location",
                "Ravenhold",
                &[],
                &["Ravenhold is a fortress on the northern cliffs."],
            ),
            entity(
                "rule",
                "Curfew",
                &["walls at night"],
                &["No one may walk the walls of Ravenhold after midnight."],
            ),
        ],
    )
}

/// Scene 2 of [`story_chat`]: Elara knighted.
pub fn scene_two() -> (&'static str, Vec<Value>) {
    (
        "great hall",
        vec![entity(
            "character",
            "Elara",
            &["Sir Elara"],
            &["Title: knight of the Order"],
        )],
    )
}

/// Scene 3 of [`story_chat`]: Ravenhold under its second name.
pub fn scene_three() -> (&'static str, Vec<Value>) {
    (
        "Ashen Citadel",
        vec![entity(
            "location",
            "Ashen Citadel",
            &["Ravenhold"],
            &["The east tower of Ravenhold burned down."],
        )],
    )
}

/// A server writing lore with the fake at `llm_url`.
pub async fn start(dir: &std::path::Path, llm_url: &str) -> (Server, RecapServiceClient<Channel>) {
    start_with_llm(dir, llm_url, |_| {}).await
}

/// Opens `chat` with `messages` and `settings` (set first).
pub async fn open(
    server: &mut Server,
    chat: &str,
    settings: pb::Settings,
    messages: Vec<pb::Message>,
) {
    server.update_settings(chat, settings).await;
    server
        .publish(chat, crate::common::chat_changed(messages))
        .await
        .expect("chat opened");
}

/// Makes `message` a visible scene break (with a scene recap, as a client
/// or an earlier recap job left it).
pub async fn make_break(server: &mut Server, chat: &str, message: &str) {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            edit: false,
            chat_id: chat.into(),
            message_id: message.into(),
            data: Some(pb::MessageData {
                scene_break: Some(true),
                scene_recap_memory: Some(format!("The scene up to {message}.")),
                ..Default::default()
            }),
        })
        .await
        .expect("scene break set");
}

/// Queues the lore extraction of the scene ending at `message`.
pub async fn generate_lore(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    message: &str,
) -> pb::Job {
    recaps
        .generate_lore(pb::GenerateLoreRequest {
            chat_id: chat.into(),
            message_id: message.into(),
        })
        .await
        .unwrap_or_else(|e| panic!("GenerateLore {chat} {message}: {e}"))
        .into_inner()
}

/// How many of `jobs` are of `kind` and SUCCEEDED.
pub fn succeeded(jobs: &[pb::Job], job_kind: pb::JobKind) -> usize {
    jobs.iter()
        .filter(|j| kind(j) == job_kind && state(j) == pb::JobState::Succeeded)
        .count()
}

/// Waits until every job of `chat` is finished and `extractions`
/// extractions succeeded; returns the jobs.
pub async fn wait_for_lore(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    extractions: usize,
) -> Vec<pb::Job> {
    wait_for_jobs(
        recaps,
        chat,
        &format!("{extractions} lore extractions and their jobs"),
        |jobs| all_finished(jobs) && succeeded(jobs, pb::JobKind::LoreExtract) >= extractions,
    )
    .await
}

/// Asserts that no job of `jobs` failed or was cancelled.
pub fn assert_none_failed(jobs: &[pb::Job]) {
    let bad: Vec<&pb::Job> = jobs
        .iter()
        .filter(|j| matches!(state(j), pb::JobState::Failed | pb::JobState::Cancelled))
        .collect();
    assert!(bad.is_empty(), "jobs failed or were cancelled: {bad:#?}");
}

/// A server over the story chat with breaks at m3 and m7 and scene 1's
/// lore written (the fake at `llm` answers); returns the chat's book.
pub async fn after_scene_one(
    dir: &std::path::Path,
    llm: &crate::common::fake_llm::FakeLlm,
    chat: &str,
) -> (Server, RecapServiceClient<Channel>, String) {
    let (mut server, mut recaps) = start(dir, &llm.url()).await;
    open(&mut server, chat, lore_settings(), story_chat()).await;
    make_break(&mut server, chat, "m3").await;
    make_break(&mut server, chat, "m7").await;
    generate_lore(&mut recaps, chat, "m3").await;
    wait_for_lore(&mut recaps, chat, 1).await;
    let book = chat_book(&mut server, chat).await;
    (server, recaps, book)
}

/// A server over the story chat opened with `settings`, whose scene 1
/// (break m3) is being extracted: the extraction's request is held by
/// `script` (armed here), so the test acts while it runs.
pub async fn with_extraction_held(
    dir: &std::path::Path,
    llm: &crate::common::fake_llm::FakeLlm,
    script: &Script,
    chat: &str,
    settings: pb::Settings,
) -> (Server, RecapServiceClient<Channel>) {
    script.arm();
    let (mut server, mut recaps) = start(dir, &llm.url()).await;
    open(&mut server, chat, settings, story_chat()).await;
    make_break(&mut server, chat, "m3").await;
    generate_lore(&mut recaps, chat, "m3").await;
    script.wait_held().await;
    (server, recaps)
}

/// Waits until scene 1's lore is written after its first extraction was
/// discarded (the scene changed while it ran) and the scene read again;
/// returns the two extraction prompts.
pub async fn extracted_twice(
    recaps: &mut RecapServiceClient<Channel>,
    llm: &crate::common::fake_llm::FakeLlm,
    chat: &str,
) -> Vec<String> {
    let jobs = wait_for_lore(recaps, chat, 1).await;
    assert_eq!(
        states(&jobs, pb::JobKind::LoreExtract),
        [pb::JobState::Succeeded, pb::JobState::Discarded],
        "{jobs:#?}"
    );
    let extractions = prompts_of(&llm.requests(), "lore_extract");
    assert_eq!(extractions.len(), 2, "{extractions:#?}");
    extractions
}

/// The lines [`past_the_threshold`] gives Elara's entry beyond scene 1's:
/// minor ones, which the fake's compaction drops.
pub const MINOR_LINES: &str = "(minor) Elara likes green apples from the southern orchards.\n\
     (minor) Elara hums old marching songs while she polishes armour.\n\
     (minor) Elara's boots were mended twice by the castle cobbler.";

/// After [`after_scene_one`]: the client lengthens Elara's entry with
/// [`MINOR_LINES`] past the chat's `lore_compaction_threshold`, set to 30
/// tokens, so her next merge waits for her entry's compaction.
pub async fn past_the_threshold(server: &mut Server, book: &str, chat: &str) {
    let elara = the_entry(&book_entries(server, book).await, "character-Elara").clone();
    let long = format!("{}\n{MINOR_LINES}", elara.content);
    put_entry(server, book, &elara.uid, json!({ "content": long })).await;
    server
        .update_settings(
            chat,
            pb::Settings {
                lore_compaction_threshold: Some(30),
                ..Default::default()
            },
        )
        .await;
}

/// The states of the jobs of `job_kind` among `jobs`, sorted.
pub fn states(jobs: &[pb::Job], job_kind: pb::JobKind) -> Vec<pb::JobState> {
    let mut found: Vec<pb::JobState> = jobs
        .iter()
        .filter(|j| kind(j) == job_kind)
        .map(state)
        .collect();
    found.sort_by_key(|s| *s as i32);
    found
}

/// A client of the server's LorebookService.
pub fn lorebooks(server: &Server) -> LorebookServiceClient<Channel> {
    LorebookServiceClient::new(server.channel.clone())
}

/// The chat's settings as GetSettings answers them for it.
pub use crate::common::api::settings_of as chat_settings;

/// The name of the chat's own book (`world_info_chat_book`); panics when
/// it has none.
pub async fn chat_book(server: &mut Server, chat: &str) -> String {
    let name = chat_settings(server, chat)
        .await
        .world_info_chat_book
        .unwrap_or_default();
    assert!(!name.is_empty(), "{chat} has no book of its own");
    name
}

/// One entry of a book as ExportLorebook gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its uid (the key in `entries`).
    pub uid: String,
    /// `comment`.
    pub comment: String,
    /// `key`.
    pub keys: Vec<String>,
    /// `content`.
    pub content: String,
    /// The whole entry.
    pub json: Value,
}

impl Entry {
    /// The content's lines.
    pub fn lines(&self) -> Vec<&str> {
        self.content.lines().collect()
    }
}

/// The entries of book `name`, by numeric uid.
pub async fn book_entries(server: &Server, name: &str) -> Vec<Entry> {
    let exported = lorebooks(server)
        .export_lorebook(pb::ExportLorebookRequest { name: name.into() })
        .await
        .unwrap_or_else(|e| panic!("export {name}: {e}"))
        .into_inner()
        .json;
    let book: Value = serde_json::from_str(&exported).expect("the export is JSON");
    let mut entries: Vec<Entry> = book["entries"]
        .as_object()
        .expect("an `entries` object")
        .iter()
        .map(|(uid, entry)| Entry {
            uid: uid.clone(),
            comment: entry["comment"].as_str().unwrap_or_default().to_owned(),
            keys: entry["key"]
                .as_array()
                .map(|keys| {
                    keys.iter()
                        .filter_map(|k| k.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            content: entry["content"].as_str().unwrap_or_default().to_owned(),
            json: entry.clone(),
        })
        .collect();
    entries.sort_by_key(|e| (e.uid.parse::<u64>().unwrap_or(u64::MAX), e.uid.clone()));
    entries
}

/// Imports `book` (a World Info file's JSON) as `name`, as a client
/// does.
pub async fn import_book(server: &Server, name: &str, book: Value) {
    lorebooks(server)
        .import_lorebook(pb::ImportLorebookRequest {
            name: name.into(),
            json: book.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("import {name}: {e}"));
}

/// The names of the books the tenant has.
pub async fn book_names(server: &Server) -> Vec<String> {
    lorebooks(server)
        .list_lorebooks(pb::ListLorebooksRequest {
            page_size: 1000,
            page_token: String::new(),
        })
        .await
        .expect("books")
        .into_inner()
        .lorebooks
        .into_iter()
        .map(|b| b.name)
        .collect()
}

/// The entries of `chat`'s own book.
pub async fn chat_entries(server: &mut Server, chat: &str) -> Vec<Entry> {
    let name = chat_book(server, chat).await;
    book_entries(server, &name).await
}

/// The one entry whose comment is `comment`; panics when there are none or
/// several (two entries for one entity).
pub fn the_entry<'a>(entries: &'a [Entry], comment: &str) -> &'a Entry {
    let found: Vec<&Entry> = entries.iter().filter(|e| e.comment == comment).collect();
    match found.as_slice() {
        [one] => one,
        _ => panic!(
            "{} entries with comment {comment:?} (one expected): {entries:#?}",
            found.len()
        ),
    }
}

/// The comments of `entries`, sorted.
pub fn comments(entries: &[Entry]) -> Vec<String> {
    let mut all: Vec<String> = entries.iter().map(|e| e.comment.clone()).collect();
    all.sort();
    all
}

/// Sets `fields` (a JSON object) on entry `uid` of book `name`, as a
/// client's editor would.
pub async fn put_entry(server: &Server, name: &str, uid: &str, fields: Value) -> pb::LorebookEntry {
    lorebooks(server)
        .put_lorebook_entry(pb::PutLorebookEntryRequest {
            name: name.into(),
            uid: uid.into(),
            fields: fields.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("put entry {uid:?} of {name}: {e}"))
        .into_inner()
}
