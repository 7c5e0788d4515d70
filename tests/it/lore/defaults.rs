//! recapd's own lore prompts, as a chat that sets none sends them: the
//! extraction carries the scene's lines, its recap and the entity types;
//! the merge carries the entry as it is and the scene's new facts; each
//! request names its schema (here the fake tells them apart by that name
//! alone).

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};

/// The schema name of a request's `response_format`, if it sent one.
fn schema_name(request: &SeenRequest) -> &str {
    request
        .response_format
        .as_ref()
        .and_then(|format| format["json_schema"]["name"].as_str())
        .unwrap_or("")
}

/// Elara's entry after the merge, as the fake writes it.
const MERGED: &str = "Elara carries a silver sword.\nTitle: knight of the Order";

#[tokio::test]
async fn the_default_prompts_send_the_scene_the_entry_and_the_new_facts_under_their_schemas() {
    let llm = FakeLlm::start(|request: &SeenRequest| {
        let prompt = &request.prompt;
        let answer = match schema_name(request) {
            "lore_extract" if prompt.contains("gates of Ravenhold") => json!({"entities": [
                entity("character", "Elara", &[], &["Title: squire of the Order", "Elara carries a silver sword."]),
            ]}),
            "lore_extract" if prompt.contains("great hall") => json!({"entities": [
                entity("character", "Elara", &["Sir Elara"], &["Title: knight of the Order"]),
            ]}),
            "lore_merge" => json!({"content": MERGED, "name": null}),
            other => panic!("unscripted request (schema {other:?}): {prompt}"),
        };
        Reply::Answer(answer.to_string())
    })
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        llm_structured_output: Some(pb::StructuredOutput::JsonSchema.into()),
        ..Default::default()
    };
    open(&mut server, "defaults", settings, story_chat()).await;
    make_break(&mut server, "defaults", "m3").await;
    make_break(&mut server, "defaults", "m7").await;
    generate_lore(&mut recaps, "defaults", "m3").await;
    wait_for_lore(&mut recaps, "defaults", 1).await;
    generate_lore(&mut recaps, "defaults", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "defaults", 2).await;
    assert!(
        jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
        "{jobs:#?}"
    );

    let requests = llm.requests();
    let names: Vec<&str> = requests.iter().map(schema_name).collect();
    assert_eq!(names, ["lore_extract", "lore_extract", "lore_merge"]);
    let extract = &requests[0];
    for needle in [
        "Kai: We reach the gates of Ravenhold at dusk.",
        "Sage: The curfew holds from midnight. Ravenhold's walls loom over the northern cliffs.",
        "The scene up to m3.",
        "- character:",
        "- rule:",
    ] {
        assert!(
            extract.prompt.contains(needle),
            "the extraction holds {needle:?}: {}",
            extract.prompt
        );
    }
    assert!(
        !extract.prompt.contains("great hall") && !extract.prompt.contains("{{"),
        "only its own scene, every macro replaced: {}",
        extract.prompt
    );
    let types = &extract.schema().expect("a JSON schema")["properties"]["entities"]["items"]["properties"]
        ["type"]["enum"];
    assert!(
        types.as_array().is_some_and(|t| t.len() == 8
            && t.contains(&json!("character"))
            && t.contains(&json!("rule"))),
        "the default types: {types}"
    );
    let merge = &requests[2];
    for needle in [
        "Title: squire of the Order",
        "Elara carries a silver sword.",
        "Title: knight of the Order",
        "Elara",
    ] {
        assert!(
            merge.prompt.contains(needle),
            "the merge holds {needle:?}: {}",
            merge.prompt
        );
    }
    assert!(!merge.prompt.contains("{{"), "{}", merge.prompt);

    let entries = chat_entries(&mut server, "defaults").await;
    assert_eq!(comments(&entries), ["character-Elara"]);
    assert_eq!(entries[0].content, MERGED);
    server.stop().await;
}
