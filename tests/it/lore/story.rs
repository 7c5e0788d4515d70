//! A story told scene by scene: each scene recap recapd writes queues the
//! scene's extraction (`auto_lore`), new entities become entries at once,
//! known ones are merged (a new title replaces the old one), a place under
//! a second name stays one entry with both names as keys; the model is
//! asked which entry an entity is only when the match is not sure; the
//! written entries activate in ScanWorldInfo; the book goes with the chat.

use std::time::Duration;

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::fake_llm::FakeLlm;

/// Writes the scene recap of each of `breaks` in turn (with `auto_lore`
/// on, each queues its extraction) and waits for each scene's lore.
async fn tell(
    server: &mut Server,
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    breaks: &[&str],
) -> Vec<Vec<Entry>> {
    let mut books = Vec::new();
    for (told, message) in breaks.iter().enumerate() {
        recaps
            .generate_scene_recap(pb::GenerateSceneRecapRequest {
                chat_id: chat.into(),
                message_id: (*message).into(),
            })
            .await
            .expect("scene recap queued");
        wait_for_lore(recaps, chat, told + 1).await;
        books.push(chat_entries(server, chat).await);
    }
    books
}

/// The lore requests the fake got: (extract, resolve, merge, compact).
fn lore_counts(llm: &FakeLlm) -> [usize; 4] {
    let requests = llm.requests();
    ["lore_extract", "lore_resolve", "lore_merge", "lore_compact"]
        .map(|kind| prompts_of(&requests, kind).len())
}

#[tokio::test]
async fn a_three_scene_story_keeps_one_current_entry_per_person_place_and_rule() {
    let script = Script::story(Story::of(&[scene_one(), scene_two(), scene_three()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        auto_lore: Some(true),
        ..lore_settings()
    };
    open(&mut server, "story", settings, story_chat()).await;

    let books = tell(&mut server, &mut recaps, "story", &["m3", "m7", "m11"]).await;

    // Scene 1: three new entities, written at once without another request.
    assert_eq!(
        chat_book(&mut server, "story").await,
        "recapd lore - Sage - story",
        "the default name template, with the chat's character and id"
    );
    let first = &books[0];
    assert_eq!(
        comments(first),
        ["character-Elara", "location-Ravenhold", "rule-Curfew"]
    );
    let elara = the_entry(first, "character-Elara");
    assert_eq!(
        elara.lines(),
        [
            "Title: squire of the Order",
            "Elara carries a silver sword."
        ]
    );
    assert_eq!(elara.keys.first().map(String::as_str), Some("elara"));
    assert_eq!(elara.json["constant"], false);
    assert_eq!(elara.json["order"], 100);
    assert_eq!(elara.json["position"], 0);
    assert_eq!(elara.json["depth"], 4);
    assert_eq!(elara.json["keysecondary"], json!([]));
    let curfew = the_entry(first, "rule-Curfew");
    assert_eq!(curfew.json["constant"], true, "rule entries are constant");
    assert_eq!(curfew.keys.first().map(String::as_str), Some("curfew"));
    assert!(
        curfew.keys.iter().any(|k| k == "walls at night"),
        "{curfew:?}"
    );

    // Scene 2: Elara knighted; the new title replaced the old one.
    let second = &books[1];
    assert_eq!(comments(second), comments(first), "no entry added");
    let knight = the_entry(second, "character-Elara");
    assert_eq!(knight.uid, elara.uid, "the same entry, updated");
    assert!(
        knight.lines().contains(&"Title: knight of the Order")
            && knight.lines().contains(&"Elara carries a silver sword."),
        "{knight:?}"
    );
    assert!(
        !knight.content.contains("squire"),
        "the old title stays nowhere in the entry: {knight:?}"
    );
    assert!(
        knight.keys.iter().any(|k| k == "elara") && knight.keys.iter().any(|k| k == "sir elara"),
        "keys unioned: {knight:?}"
    );
    let merges = prompts_of(&llm.requests(), "lore_merge");
    assert!(
        merges[0].contains("Title: squire of the Order")
            && merges[0].contains("Elara carries a silver sword.")
            && merges[0].contains("Title: knight of the Order"),
        "the merge request holds the entry and the new facts: {}",
        merges[0]
    );

    // Scene 3: Ravenhold under its second name: one entry, both names.
    let third = &books[2];
    assert_eq!(comments(third), comments(first), "no entry added");
    let place = the_entry(third, "location-Ravenhold");
    assert!(
        place.keys.iter().any(|k| k == "ravenhold")
            && place.keys.iter().any(|k| k == "ashen citadel"),
        "both names are keys of the one entry: {place:?}"
    );
    assert!(
        place
            .lines()
            .contains(&"Ravenhold is a fortress on the northern cliffs.")
            && place
                .lines()
                .contains(&"The east tower of Ravenhold burned down."),
        "{place:?}"
    );

    // Every match was sure: no resolution was asked for.
    assert_eq!(
        lore_counts(&llm),
        [3, 0, 2, 0],
        "three extractions, two merges, no lookup, no compaction"
    );
    let extractions = prompts_of(&llm.requests(), "lore_extract");
    assert!(
        extractions[2].contains("Kai: Travellers on the road call this place the Ashen Citadel.")
            && extractions[2].contains("Sage: Elara laughs at the old name.")
            && !extractions[2].contains("great hall"),
        "an extraction reads its own scene's lines: {}",
        extractions[2]
    );

    let jobs = jobs_of(&mut recaps, "story").await;
    assert!(
        jobs.iter().all(|j| state(j) == pb::JobState::Succeeded),
        "{jobs:#?}"
    );
    let mut extracted: Vec<&str> = jobs
        .iter()
        .filter(|j| kind(j) == pb::JobKind::LoreExtract)
        .map(|j| j.message_id.as_str())
        .collect();
    extracted.sort_unstable();
    assert_eq!(extracted, ["m11", "m3", "m7"], "one extraction per scene");
    let merge_subjects: Vec<&str> = jobs
        .iter()
        .filter(|j| kind(j) == pb::JobKind::LoreMerge)
        .map(|j| j.subject.as_str())
        .collect();
    assert!(
        merge_subjects.contains(&"character-elara"),
        "a merge names its entity: {jobs:#?}"
    );
    assert!(
        llm.rejected().is_empty(),
        "malformed requests: {:?}",
        llm.rejected()
    );
    server.stop().await;
}

#[tokio::test]
async fn written_entries_activate_when_the_chat_mentions_them() {
    let script = Script::story(Story::of(&[scene_one(), scene_two(), scene_three()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let settings = pb::Settings {
        auto_lore: Some(true),
        // Only the newest message is scanned, so each step names one thing.
        world_info_depth: Some(1),
        ..lore_settings()
    };
    open(&mut server, "wi", settings, story_chat()).await;
    tell(&mut server, &mut recaps, "wi", &["m3", "m7", "m11"]).await;
    let book = chat_book(&mut server, "wi").await;
    let entries = book_entries(&server, &book).await;
    let uid = |comment: &str| (book.clone(), the_entry(&entries, comment).uid.clone());
    let scan = |server: &Server| {
        let mut client = lorebooks(server);
        async move {
            let response = client
                .scan_world_info(pb::ScanWorldInfoRequest {
                    chat_id: "wi".into(),
                    ..Default::default()
                })
                .await
                .expect("scan")
                .into_inner();
            let mut activated: Vec<(String, String)> = response
                .activated
                .iter()
                .map(|e| (e.book.clone(), e.uid.clone()))
                .collect();
            activated.sort();
            (activated, response)
        }
    };
    let sorted = |mut all: Vec<(String, String)>| {
        all.sort();
        all
    };

    server
        .publish(
            "wi",
            crate::common::message_sent("m12", "Tell me about the Ashen Citadel."),
        )
        .await
        .expect("message");
    let (activated, response) = scan(&server).await;
    assert_eq!(
        activated,
        sorted(vec![uid("location-Ravenhold"), uid("rule-Curfew")]),
        "the place, by its second name, and the constant rule: {response:?}; entries {entries:#?}"
    );
    assert!(
        response
            .before
            .contains("The east tower of Ravenhold burned down."),
        "the entry's content is placed before the character: {response:?}"
    );

    server
        .publish(
            "wi",
            crate::common::message_received("m13", "Sir Elara will show you the way."),
        )
        .await
        .expect("message");
    let (activated, response) = scan(&server).await;
    assert_eq!(
        activated,
        sorted(vec![uid("character-Elara"), uid("rule-Curfew")]),
        "{response:?}"
    );
    assert!(
        response.before.contains("Title: knight of the Order")
            && !response.before.contains("Ravenhold is a fortress"),
        "{response:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_model_is_asked_which_entry_only_when_the_match_is_not_sure() {
    let scene_two = (
        "great hall",
        vec![
            // Shares a name word with Elara: the model is asked, and says
            // it is her (with her full name).
            entity(
                "character",
                "Elara Dawnstar",
                &[],
                &[
                    "Title: knight of the Order",
                    "Elara's family name is Dawnstar.",
                ],
            ),
            // Shares a name word with Ravenhold: asked, and a new place.
            entity(
                "location",
                "Ravenhold Harbour",
                &[],
                &["Ravenhold Harbour lies below the cliffs."],
            ),
            // Like nothing in the book: written at once.
            entity("character", "Mara", &[], &["Mara is the queen's smith."]),
        ],
    );
    let story = Story::of(&[scene_one(), scene_two])
        .same_as("Elara Dawnstar", Some("Elara"))
        .same_as("Ravenhold Harbour", None)
        .rename("squire of the Order", "Elara Dawnstar");
    let script = Script::story(story);
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    open(&mut server, "lookup", lore_settings(), story_chat()).await;
    make_break(&mut server, "lookup", "m3").await;
    make_break(&mut server, "lookup", "m7").await;
    generate_lore(&mut recaps, "lookup", "m3").await;
    wait_for_lore(&mut recaps, "lookup", 1).await;
    let before = chat_entries(&mut server, "lookup").await;
    let elara = the_entry(&before, "character-Elara").clone();
    assert!(
        prompts_of(&llm.requests(), "lore_resolve").is_empty(),
        "an empty book needs no lookup"
    );

    generate_lore(&mut recaps, "lookup", "m7").await;
    let jobs = wait_for_lore(&mut recaps, "lookup", 2).await;
    assert_none_failed(&jobs);
    let after = chat_entries(&mut server, "lookup").await;
    assert_eq!(
        comments(&after),
        [
            "character-Elara Dawnstar",
            "character-Mara",
            "location-Ravenhold",
            "location-Ravenhold Harbour",
            "rule-Curfew",
        ]
    );
    let renamed = the_entry(&after, "character-Elara Dawnstar");
    assert_eq!(renamed.uid, elara.uid, "merged into her entry");
    assert!(
        renamed.keys.iter().any(|k| k == "elara")
            && renamed.keys.iter().any(|k| k == "elara dawnstar"),
        "the old name stays a key: {renamed:?}"
    );
    assert!(
        renamed.lines().contains(&"Title: knight of the Order")
            && renamed
                .lines()
                .contains(&"Elara's family name is Dawnstar.")
            && !renamed.content.contains("squire"),
        "{renamed:?}"
    );
    assert_eq!(
        the_entry(&after, "location-Ravenhold").content,
        the_entry(&before, "location-Ravenhold").content,
        "the model said the harbour is another place"
    );

    let requests = llm.requests();
    let mut resolved: Vec<&str> = requests
        .iter()
        .filter(|r| kind_of(&r.prompt) == "lore_resolve")
        .map(|r| subject_of(&r.prompt))
        .collect();
    resolved.sort_unstable();
    assert_eq!(
        resolved,
        ["character-Elara Dawnstar", "location-Ravenhold Harbour"],
        "a lookup for each unsure match, none for Mara"
    );
    let resolutions: Vec<&pb::Job> = jobs
        .iter()
        .filter(|j| kind(j) == pb::JobKind::LoreResolve)
        .collect();
    assert_eq!(resolutions.len(), 2, "{jobs:#?}");
    assert!(
        resolutions
            .iter()
            .any(|j| j.subject == "character-elara dawnstar"),
        "{resolutions:#?}"
    );
    assert_eq!(prompts_of(&requests, "lore_merge").len(), 1);
    server.stop().await;
}

#[tokio::test]
async fn deleting_the_chat_deletes_its_book_unless_told_to_keep_it() {
    let script = Script::story(Story::of(&[scene_one()]));
    let llm = FakeLlm::start(script.as_fake()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start(dir.path(), &llm.url()).await;
    let keep = pb::Settings {
        lore_delete_book_with_chat: Some(false),
        lore_book_name_template: Some("{{user}} and {{char}} ({{chat}})".into()),
        ..lore_settings()
    };
    open(&mut server, "doomed", lore_settings(), story_chat()).await;
    open(&mut server, "kept", keep, story_chat()).await;
    let mut names = Vec::new();
    for chat in ["doomed", "kept"] {
        make_break(&mut server, chat, "m3").await;
        generate_lore(&mut recaps, chat, "m3").await;
        wait_for_lore(&mut recaps, chat, 1).await;
        let name = chat_book(&mut server, chat).await;
        assert_eq!(book_entries(&server, &name).await.len(), 3, "{chat}");
        names.push(name);
    }
    assert_eq!(names[1], "Kai and Sage (kept)", "the chat's own template");
    for chat in ["doomed", "kept"] {
        server
            .memory
            .delete_chat(pb::DeleteChatRequest {
                chat_id: chat.into(),
            })
            .await
            .expect("chat deleted");
    }
    let gone = lorebooks(&server)
        .export_lorebook(pb::ExportLorebookRequest {
            name: names[0].clone(),
        })
        .await
        .expect_err("the book went with its chat");
    assert_eq!(gone.code(), Code::NotFound, "{gone:?}");
    assert_eq!(
        book_names(&server).await,
        [names[1].as_str()],
        "only the kept book is left"
    );
    assert_eq!(book_entries(&server, &names[1]).await.len(), 3);
    // Nothing of the deleted chat runs on.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(jobs_of(&mut recaps, "doomed").await.is_empty());
    server.stop().await;
}
