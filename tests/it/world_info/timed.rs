//! Sticky and cooldown across a sequence of generations (WI:479-793, §2
//! "Timed effects"): started by activations, advanced as the chat grows,
//! never by a dry run, kept across a restart, and moved with the chat file
//! as `chat_metadata.timedWorldInfo`.

use super::*;

/// "comet": sticky for 2 messages, then a cooldown of 2.
fn comet_book() -> String {
    book(&[(
        "0",
        json!({"key": ["comet"], "sticky": 2, "cooldown": 2, "content": "The comet burns."}),
    )])
}

async fn export(server: &mut Server, chat: &str) -> Vec<Value> {
    let jsonl = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("export")
        .into_inner()
        .jsonl;
    std::str::from_utf8(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The chat's `chat_metadata.timedWorldInfo` as ExportChat writes it.
async fn timed_state(server: &mut Server, chat: &str) -> Value {
    export(server, chat).await[0]["chat_metadata"]["timedWorldInfo"].clone()
}

async fn import(server: &mut Server, chat: &str, lines: &[Value]) {
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    server
        .memory
        .import_chat(pb::ImportChatRequest {
            chat_id: chat.into(),
            jsonl: jsonl.into_bytes(),
            ..Default::default()
        })
        .await
        .expect("import");
}

fn dry(chat: &str) -> pb::ScanWorldInfoRequest {
    pb::ScanWorldInfoRequest {
        dry_run: true,
        ..scan_request(chat)
    }
}

/// `{hash, start, end, protected}` (WI:604-611) with the hash a number.
fn assert_effect(effect: &Value, start: u64, end: u64, protected: bool) {
    assert!(effect["hash"].is_number(), "{effect}");
    assert_eq!(
        (&effect["start"], &effect["end"], &effect["protected"]),
        (&json!(start), &json!(end), &json!(protected)),
        "{effect}"
    );
}

#[tokio::test]
async fn sticky_then_cooldown_across_generations_dry_runs_a_restart_and_the_chat_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    import_book(&server, "Timed", &comet_book()).await;
    // Every chat scans one message deep; this one has its own book
    // (chat_metadata.world_info).
    server
        .update_settings(
            "",
            pb::Settings {
                world_info_depth: Some(1),
                ..Default::default()
            },
        )
        .await;
    server
        .update_settings(
            "c",
            pb::Settings {
                world_info_chat_book: Some("Timed".into()),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "c", vec![said("m1", "User", "A comet!")]).await;

    // A dry run is a preview (the API contract; SillyTavern's own dry run
    // ignores timed effects, WI:683-686): it activates what a generation
    // would, and starts no effect: twice the same, no state.
    assert_eq!(uids(&scan(&server, dry("c")).await), ["0"]);
    assert_eq!(uids(&scan(&server, dry("c")).await), ["0"]);
    assert_eq!(timed_state(&mut server, "c").await, Value::Null);

    // A generation activates it by key: sticky and cooldown start at the
    // chat's length 1, each ending 2 later (WI:604-611, 730-736).
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    let state = timed_state(&mut server, "c").await;
    assert_effect(&state["sticky"]["Timed.0"], 1, 3, false);
    assert_effect(&state["cooldown"]["Timed.0"], 1, 3, false);

    // The comet leaves the window: still active, as sticky (WI:4673-4878:
    // a sticky entry activates, its cooldown notwithstanding). A dry run
    // previews that (the sticky read) and changes nothing.
    add_message(&mut server, "c", said("m2", "Seraphina", "Quiet night.")).await;
    assert_eq!(uids(&scan(&server, dry("c")).await), ["0"]);
    assert_eq!(uids(&scan(&server, dry("c")).await), ["0"]);
    assert_eq!(timed_state(&mut server, "c").await, state);
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    assert_eq!(timed_state(&mut server, "c").await, state);

    // The file carries the state; its import into another chat restores
    // it, and its `world_info` is that chat's book: sticky there too.
    let file = export(&mut server, "c").await;
    assert_eq!(file[0]["chat_metadata"]["world_info"], json!("Timed"));
    import(&mut server, "copy", &file).await;
    assert_eq!(uids(&scan(&server, scan_request("copy")).await), ["0"]);
    assert_eq!(timed_state(&mut server, "copy").await, state);
    // Without the timed state, the same file activates nothing there.
    let mut untimed = file.clone();
    untimed[0]["chat_metadata"]
        .as_object_mut()
        .unwrap()
        .remove("timedWorldInfo");
    import(&mut server, "untimed", &untimed).await;
    assert!(
        scan(&server, scan_request("untimed"))
            .await
            .activated
            .is_empty()
    );

    // The state survives a restart.
    server.stop().await;
    let mut server = Server::start(dir.path()).await;
    assert_eq!(timed_state(&mut server, "c").await, state);
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    assert_eq!(timed_state(&mut server, "c").await, state);

    // Length 3 reaches the sticky's end: it ends and a protected cooldown
    // starts at once (WI:518-529, 619-660); the entry is off.
    add_message(&mut server, "c", said("m3", "User", "Still quiet.")).await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    let state = timed_state(&mut server, "c").await;
    assert_effect(&state["cooldown"]["Timed.0"], 3, 5, true);
    assert!(state["sticky"].get("Timed.0").is_none(), "{state}");
    // Its key again, during the cooldown: not activated.
    add_message(
        &mut server,
        "c",
        said("m4", "Seraphina", "The comet returns!"),
    )
    .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    // The cooldown ends at length 5: the key activates it again, and a new
    // sticky starts.
    add_message(&mut server, "c", said("m5", "User", "The comet, again.")).await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    let state = timed_state(&mut server, "c").await;
    assert_effect(&state["sticky"]["Timed.0"], 5, 7, false);
    server.stop().await;
}

/// A book as SillyTavern saves it, with a sticky entry.
const ST_BOOK: &str = concat!(
    r#"{"entries":{"0":{"uid":0,"key":["comet"],"keysecondary":[],"comment":"","#,
    r#""content":"The comet burns.","constant":false,"selective":true,"order":100,"#,
    r#""position":0,"disable":false,"sticky":4,"cooldown":0,"probability":100,"#,
    r#""useProbability":true}}}"#
);

/// SillyTavern's hash of ST_BOOK's entry 0 as the chat book "Timed": its
/// own `getStringHash` (utils.js:522-539) run under Node on
/// `JSON.stringify({uid, world: "Timed", ...rest, decorators: []})`, the
/// shape its scan hashes (WI:4445, 4515-4521).
const ST_HASH: u64 = 495_016_175_452_613;

#[tokio::test]
async fn a_sillytavern_chat_file_with_a_running_sticky_keeps_it() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Timed", ST_BOOK).await;
    server
        .update_settings(
            "",
            pb::Settings {
                world_info_depth: Some(1),
                ..Default::default()
            },
        )
        .await;
    // Saved by SillyTavern after the comet was named at length 1: sticky
    // until length 5 (WI:604-611). The file's `world_info` is the chat's
    // book.
    let header = json!({
        "user_name": "User",
        "character_name": "Seraphina",
        "create_date": "2025-11-02@10h11m12s",
        "chat_metadata": {
            "world_info": "Timed",
            "timedWorldInfo": {
                "sticky": {"Timed.0": {"hash": ST_HASH, "start": 1, "end": 5, "protected": false}},
                "cooldown": {},
            },
        },
    });
    let message = |name: &str, is_user: bool, mes: &str| json!({"name": name, "is_user": is_user, "is_system": false, "mes": mes, "extra": {}});
    let file = [
        header,
        message("User", true, "A comet!"),
        message("Seraphina", false, "Quiet night."),
    ];
    import(&mut server, "st", &file).await;
    // Length 2, the comet out of the one-message window: active as sticky,
    // found by SillyTavern's own hash (WI:619-660).
    assert_eq!(uids(&scan(&server, scan_request("st")).await), ["0"]);
    // The same file with another hash (an edited entry): the effect is
    // ignored (WI:628-640).
    let mut edited = file.clone();
    edited[0]["chat_metadata"]["timedWorldInfo"]["sticky"]["Timed.0"]["hash"] = json!(1);
    import(&mut server, "edited", &edited).await;
    assert!(
        scan(&server, scan_request("edited"))
            .await
            .activated
            .is_empty()
    );
    server.stop().await;
}

#[tokio::test]
async fn a_deleted_chat_recreated_under_its_id_starts_without_effects() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Timed", &comet_book()).await;
    server
        .update_settings(
            "",
            pb::Settings {
                world_info_depth: Some(1),
                world_info_global_books: names(&["Timed"]),
                ..Default::default()
            },
        )
        .await;
    set_chat(&mut server, "c", vec![said("m1", "User", "A comet!")]).await;
    assert_eq!(uids(&scan(&server, scan_request("c")).await), ["0"]);
    server
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "c".into(),
        })
        .await
        .expect("delete chat");
    // A new chat under the old id, two messages, no comet in the window:
    // nothing of the old chat's sticky effect (a new SillyTavern chat has
    // fresh chat_metadata, WI:479-793).
    set_chat(
        &mut server,
        "c",
        vec![
            said("m1", "User", "Hello."),
            said("m2", "Seraphina", "Quiet night."),
        ],
    )
    .await;
    assert!(scan(&server, scan_request("c")).await.activated.is_empty());
    assert_eq!(timed_state(&mut server, "c").await, Value::Null);
    server.stop().await;
}

#[tokio::test]
async fn concurrent_generations_of_one_chat_leave_one_consistent_state() {
    let (_dir, mut server) = start().await;
    import_book(&server, "Timed", &comet_book()).await;
    global_books(&mut server, "", &["Timed"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "A comet!")]).await;
    // Scans of one chat run one after the other under its lock (the
    // engine's module doc): all succeed, and the state is the one effect
    // pair a single scan at length 1 starts (WI:604-611).
    let scans: Vec<_> = (0..8)
        .map(|_| {
            let channel = server.channel.clone();
            tokio::spawn(async move {
                LorebookServiceClient::new(channel)
                    .scan_world_info(scan_request("c"))
                    .await
                    .map(|r| r.into_inner())
            })
        })
        .collect();
    for scan in scans {
        let answer = scan.await.unwrap().expect("every scan answers");
        assert_eq!(uids(&answer), ["0"]);
    }
    let state = timed_state(&mut server, "c").await;
    assert_effect(&state["sticky"]["Timed.0"], 1, 3, false);
    assert_effect(&state["cooldown"]["Timed.0"], 1, 3, false);
    server.stop().await;
}

#[tokio::test]
async fn a_long_chats_scan_counts_the_messages_it_does_not_read() {
    // A scan reads only the newest messages its depth reaches; the chat's
    // length that delays and timed effects count is still all of it.
    let (_dir, mut server) = start().await;
    import_book(
        &server,
        "Late",
        &book(&[(
            "0",
            json!({"key": ["comet"], "delay": 1400, "sticky": 2, "content": "The comet returns."}),
        )]),
    )
    .await;
    let header = json!({
        "user_name": "User",
        "character_name": "Seraphina",
        "create_date": "2025-11-02@10h11m12s",
        "chat_metadata": {"world_info": "Late"},
    });
    let message = |i: usize, mes: &str| json!({"name": "User", "is_user": true, "is_system": i == 3, "mes": mes, "extra": {}});
    let mut file = vec![header];
    file.extend((0..1500).map(|i| {
        message(
            i,
            if i == 1499 {
                "A comet!"
            } else {
                "Quiet night."
            },
        )
    }));
    import(&mut server, "long", &file).await;
    assert_eq!(uids(&scan(&server, scan_request("long")).await), ["0"]);
    // Started at the chat's length: 1,499 messages are not hidden.
    let state = timed_state(&mut server, "long").await;
    assert_effect(&state["sticky"]["Late.0"], 1499, 1501, false);
    // A shorter chat than the delay activates nothing.
    file.truncate(1300);
    file.push(message(1300, "A comet!"));
    import(&mut server, "short", &file).await;
    assert!(
        scan(&server, scan_request("short"))
            .await
            .activated
            .is_empty()
    );
    server.stop().await;
}
