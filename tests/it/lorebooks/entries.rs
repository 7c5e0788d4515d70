//! One entry at a time: PutLorebookEntry, GetLorebookEntry and
//! DeleteLorebookEntry, also many at once on one book.

use super::*;

fn put(name: &str, uid: &str, fields: &str) -> pb::PutLorebookEntryRequest {
    pb::PutLorebookEntryRequest {
        name: name.into(),
        uid: uid.into(),
        fields: fields.into(),
    }
}

fn get(name: &str, uid: &str) -> pb::GetLorebookEntryRequest {
    pb::GetLorebookEntryRequest {
        name: name.into(),
        uid: uid.into(),
    }
}

#[tokio::test]
async fn entries_are_created_updated_read_and_deleted_leaving_the_rest_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let file = fixture_text("Eldoria.json");
    let original = json(&file);
    let count = original["entries"].as_object().unwrap().len();
    import(&mut client, "Eldoria", &file).await.unwrap();

    // A new entry takes the lowest free integer uid (world-info.js:4283-4297,
    // getFreeWorldEntryUid) and SillyTavern's defaults for what it omits
    // (newWorldInfoEntryTemplate, world-info.js:4002-4050).
    let free = (0..)
        .find(|n: &usize| {
            !original["entries"]
                .as_object()
                .unwrap()
                .contains_key(&n.to_string())
        })
        .unwrap();
    let created = client
        .put_lorebook_entry(put(
            "Eldoria",
            "",
            r#"{"key":["dragon"],"content":"Dragons sleep."}"#,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.uid, free.to_string());
    assert_eq!(created.name, "Eldoria");
    let lorebook = created.lorebook.clone().unwrap();
    assert_eq!(lorebook.entry_count as usize, count + 1);
    let entry = json(&created.json);
    assert_eq!(entry["key"], serde_json::json!(["dragon"]));
    assert_eq!(entry["content"], "Dragons sleep.");
    assert_eq!(entry["uid"], free);
    assert_eq!(entry["position"], 0, "newWorldInfoEntryTemplate's position");
    let read = client
        .get_lorebook_entry(get("Eldoria", &created.uid))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(json(&read.json), entry);
    assert_eq!(read.lorebook.unwrap().entry_count as usize, count + 1);

    // An update names members; the others stay as written; null removes.
    let (uid, old) = original["entries"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    let updated = client
        .put_lorebook_entry(put(
            "Eldoria",
            uid,
            r#"{"content":"Rewritten.","comment":null}"#,
        ))
        .await
        .unwrap()
        .into_inner();
    let mut expected = old.clone();
    expected["content"] = "Rewritten.".into();
    expected.as_object_mut().unwrap().remove("comment");
    assert_eq!(json(&updated.json), expected);
    let exported = json(&export(&mut client, "Eldoria").await.unwrap());
    for (other, entry) in original["entries"].as_object().unwrap() {
        if other != uid {
            assert_eq!(
                &exported["entries"][other], entry,
                "entry {other} untouched"
            );
        }
    }
    assert_eq!(exported["entries"][uid], expected);

    // Deletion.
    let after = client
        .delete_lorebook_entry(pb::DeleteLorebookEntryRequest {
            name: "Eldoria".into(),
            uid: created.uid.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(after.entry_count as usize, count);
    refused(
        client
            .get_lorebook_entry(get("Eldoria", &created.uid))
            .await,
        Code::NotFound,
        &["entry"],
    );
    refused(
        client
            .delete_lorebook_entry(pb::DeleteLorebookEntryRequest {
                name: "Eldoria".into(),
                uid: created.uid.clone(),
            })
            .await,
        Code::NotFound,
        &["entry"],
    );

    // The edits survive a restart.
    let edited = export(&mut client, "Eldoria").await.unwrap();
    server.stop().await;
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    assert_eq!(
        json(&export(&mut client, "Eldoria").await.unwrap()),
        json(&edited)
    );

    // Refusals: no such book, fields not an object, a new entry's uid that
    // is not an integer.
    refused(
        client.put_lorebook_entry(put("nope", "", "{}")).await,
        Code::NotFound,
        &["nope"],
    );
    refused(
        client.get_lorebook_entry(get("nope", "0")).await,
        Code::NotFound,
        &["nope"],
    );
    refused(
        client.put_lorebook_entry(put("Eldoria", "", "[1]")).await,
        Code::InvalidArgument,
        &["fields"],
    );
    refused(
        client.put_lorebook_entry(put("Eldoria", "abc", "{}")).await,
        Code::InvalidArgument,
        &["uid"],
    );
    assert_eq!(
        json(&export(&mut client, "Eldoria").await.unwrap()),
        json(&edited)
    );
    server.stop().await;
}

#[tokio::test]
async fn concurrent_edits_of_one_book_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    import(
        &mut client,
        "shared",
        r#"{"entries":{"0":{"content":"seed"}}}"#,
    )
    .await
    .unwrap();
    const WRITERS: usize = 40;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..WRITERS {
        let mut client = client.clone();
        tasks.spawn(async move {
            // Half create entries, half update entry 0's own member each.
            let request = if n % 2 == 0 {
                put("shared", "", &format!(r#"{{"content":"writer {n}"}}"#))
            } else {
                put("shared", "0", &format!(r#"{{"w{n}":{n}}}"#))
            };
            client
                .put_lorebook_entry(request)
                .await
                .map(|r| r.into_inner().uid)
        });
    }
    let mut created = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let uid = done.unwrap().expect("every edit succeeds");
        if uid != "0" {
            created.push(uid);
        }
    }
    created.sort_by_key(|uid| uid.parse::<u32>().unwrap());
    let expected: Vec<String> = (1..=WRITERS / 2).map(|n| n.to_string()).collect();
    assert_eq!(created, expected, "distinct uids, lowest free first");
    let book = json(&export(&mut client, "shared").await.unwrap());
    let entries = book["entries"].as_object().unwrap();
    assert_eq!(entries.len(), 1 + WRITERS / 2);
    let mut contents: Vec<String> = entries
        .values()
        .filter_map(|e| e["content"].as_str().map(str::to_owned))
        .filter(|c| c != "seed")
        .collect();
    contents.sort();
    let mut writers: Vec<String> = (0..WRITERS)
        .step_by(2)
        .map(|n| format!("writer {n}"))
        .collect();
    writers.sort();
    assert_eq!(contents, writers);
    for n in (1..WRITERS).step_by(2) {
        assert_eq!(entries["0"][format!("w{n}")], n, "update {n} kept");
    }
    server.stop().await;
}

#[tokio::test]
async fn concurrent_edits_of_one_book_on_two_replicas_lose_nothing() {
    if !on_postgres() {
        eprintln!("skipped: needs RECAPD_TEST_STORE=postgres");
        return;
    }
    // Two servers on one data directory's schema: two replicas of one store.
    let dir = tempfile::tempdir().unwrap();
    let first = Server::start(dir.path()).await;
    let second = Server::start(dir.path()).await;
    let mut client = lorebooks(&first);
    import(
        &mut client,
        "shared",
        r#"{"entries":{"0":{"content":"seed"}}}"#,
    )
    .await
    .unwrap();
    const WRITERS: usize = 30;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..WRITERS {
        let mut client = lorebooks(if n % 2 == 0 { &first } else { &second });
        tasks.spawn(async move {
            client
                .put_lorebook_entry(put("shared", "0", &format!(r#"{{"w{n}":{n}}}"#)))
                .await
                .map(|r| r.into_inner().uid)
        });
    }
    while let Some(done) = tasks.join_next().await {
        assert_eq!(done.unwrap().expect("every edit succeeds"), "0");
    }
    // Each replica reads the book as the other left it.
    for server in [&first, &second] {
        let book = json(&export(&mut lorebooks(server), "shared").await.unwrap());
        for n in 0..WRITERS {
            assert_eq!(book["entries"]["0"][format!("w{n}")], n, "update {n} kept");
        }
        let entry = lorebooks(server)
            .get_lorebook_entry(get("shared", "0"))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(json(&entry.json), book["entries"]["0"]);
    }
    first.stop().await;
    second.stop().await;
}
