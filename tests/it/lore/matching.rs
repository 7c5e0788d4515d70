//! Entries recapd did not write are never merged into without the
//! model: an entry in a client's own shape (a comment without a type)
//! or of another type under the same name is only a candidate, and the
//! model says whether the entity is it.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::FakeLlm;

#[tokio::test]
async fn an_entry_without_a_type_or_of_another_type_is_matched_only_through_the_model() {
    let story = Story::of(&[scene_one()])
        .same_as("Elara", Some("Elara"))
        .same_as("Ravenhold", None);
    let llm = FakeLlm::start(Script::story(story).as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let theirs = json!({"entries": {
        "0": {"uid": 0, "comment": "Elara", "key": ["elara"],
              "content": "Elara is the captain's daughter."},
        "1": {"uid": 1, "comment": "item-Ravenhold", "key": ["ravenhold"],
              "content": "The Ravenhold is a merchant ship."},
    }});
    import_book(&server, "Their book", theirs).await;
    let settings = pb::Settings {
        world_info_chat_book: Some("Their book".into()),
        ..lore_settings()
    };
    open(&mut server, "theirs", settings, story_chat()).await;
    make_break(&mut server, "theirs", "m3").await;
    generate_lore(&mut recaps, "theirs", "m3").await;
    let jobs = wait_for_lore(&mut recaps, "theirs", 1).await;
    assert_none_failed(&jobs);

    let mut asked: Vec<String> = prompts_of(&llm.requests(), "lore_resolve")
        .iter()
        .map(|p| subject_of(p).to_owned())
        .collect();
    asked.sort();
    assert_eq!(
        asked,
        ["character-Elara", "location-Ravenhold"],
        "a lookup for each; none for the curfew"
    );
    let entries = book_entries(&server, "Their book").await;
    assert_eq!(
        comments(&entries),
        [
            "Elara",
            "item-Ravenhold",
            "location-Ravenhold",
            "rule-Curfew"
        ],
        "{entries:#?}"
    );
    let elara = the_entry(&entries, "Elara");
    assert_eq!(elara.uid, "0", "the model said she is the client's Elara");
    assert_eq!(
        elara.lines(),
        [
            "Elara is the captain's daughter.",
            "Title: squire of the Order",
            "Elara carries a silver sword."
        ]
    );
    assert_eq!(
        the_entry(&entries, "item-Ravenhold").content,
        "The Ravenhold is a merchant ship.",
        "the ship is another thing"
    );
    server.stop().await;
}
