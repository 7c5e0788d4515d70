//! `recapd chats list|delete`, the real binary against a fake MemoryService
//! over a real socket (the fake pages by three, so a listing takes several
//! calls) and once against a real recapd, and `--chat-retention`'s refusal
//! of zero before anything is bound.

use std::sync::atomic::Ordering;

use crate::common::fake_chats::{FakeChats, PAGE};
use crate::common::free_port;
use crate::common::process::run_recapd as recapd;

const TOKEN: &str = "0123456789abcdef";

/// Ids in no sorted order, one with a tab and a newline, one with a
/// backslash: nine chats, three pages of the fake.
const IDS: [&str; 9] = [
    "zeta",
    "alpha",
    "tab\there\nnewline",
    "beta",
    "back\\slash",
    "gamma",
    "delta",
    "épsilon",
    "eta",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_prints_every_chat_of_every_page_in_order_one_line_each() {
    let fake = FakeChats::new(&IDS, Some(TOKEN));
    let (addr, serving) = fake.serve().await;
    let (code, stdout, stderr) = recapd(
        &["chats", "list", "--addr", &addr],
        &[("RECAPD_TOKEN", TOKEN)],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0], "CHAT\tMESSAGES\tREVISION\tENABLED\tUPDATED_AT",
        "{stdout}"
    );
    // Each chat once, ordered by id as the server gave them, every line
    // with five columns whatever the id holds.
    let mut sorted: Vec<(usize, &str)> = IDS.iter().copied().enumerate().collect();
    sorted.sort_by_key(|(_, id)| *id);
    let expected: Vec<String> = sorted
        .iter()
        .map(|(i, id)| {
            let id = id
                .replace('\\', "\\\\")
                .replace('\t', "\\t")
                .replace('\n', "\\n");
            let updated = format!("2023-11-14T22:13:{:02}Z", 20 + i);
            format!("{id}\t{i}\t{}\t{}\t{updated}", 10 * i, i.is_multiple_of(2))
        })
        .collect();
    assert_eq!(lines[1..], expected, "{stdout}");
    assert!(lines[1..].iter().all(|line| line.split('\t').count() == 5));
    assert!(stdout.contains("tab\\there\\nnewline\t2\t20\ttrue\t"));
    assert!(
        fake.list_calls.load(Ordering::SeqCst) >= IDS.len() / PAGE,
        "the listing walked the pages"
    );

    // No chat: the header alone.
    let empty = FakeChats::new(&[], None);
    let (empty_addr, empty_serving) = empty.serve().await;
    let (code, stdout, stderr) = recapd(&["chats", "list", "--addr", &empty_addr], &[]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, "CHAT\tMESSAGES\tREVISION\tENABLED\tUPDATED_AT\n");
    serving.abort();
    empty_serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_deletes_each_chat_in_order_reports_an_unknown_one_and_fails() {
    let fake = FakeChats::new(&IDS, Some(TOKEN));
    let (addr, serving) = fake.serve().await;
    let (code, stdout, stderr) = recapd(
        &[
            "chats",
            "delete",
            "--addr",
            &addr,
            "--token",
            TOKEN,
            "beta",
            "no-such-chat",
            "tab\there\nnewline",
        ],
        &[],
    )
    .await;
    assert_eq!(code, Some(1), "an unknown chat fails the command: {stderr}");
    // The chats after the unknown one were still deleted, each on its line
    // with the revision of its last injection.
    assert_eq!(
        stdout,
        "beta\tdeleted at revision 31\ntab\\there\\nnewline\tdeleted at revision 21\n"
    );
    assert!(
        stderr.contains("no-such-chat: no such chat"),
        "the unknown chat is named: {stderr}"
    );
    assert!(stderr.contains("1 of 3 chat(s) not deleted"), "{stderr}");
    let left = fake.ids();
    assert_eq!(left.len(), IDS.len() - 2);
    assert!(!left.iter().any(|id| id == "beta" || id.starts_with("tab")));

    // All known: exit 0; the listing no longer shows them.
    let (code, stdout, stderr) = recapd(
        &["chats", "delete", "--addr", &addr, "alpha", "zeta"],
        &[("RECAPD_TOKEN", TOKEN)],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    let (code, stdout, _) =
        recapd(&["chats", "list", "--addr", &addr, "--token", TOKEN], &[]).await;
    assert_eq!(code, Some(0));
    assert_eq!(stdout.lines().count(), 1 + IDS.len() - 4, "{stdout}");
    assert!(
        !stdout.contains("alpha") && !stdout.contains("zeta"),
        "{stdout}"
    );
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_or_missing_token_fails_clearly_and_deletes_nothing() {
    let fake = FakeChats::new(&IDS, Some(TOKEN));
    let (addr, serving) = fake.serve().await;
    for token in [Some("wrong-token"), None] {
        let mut args = vec!["chats", "list", "--addr", &addr];
        args.extend(token.map(|token| ["--token", token]).into_iter().flatten());
        let (code, stdout, stderr) = recapd(&args, &[]).await;
        assert_eq!(code, Some(1), "{token:?}");
        assert_eq!(stdout, "", "no header without a listing");
        assert!(
            stderr.contains("recapd chats list: missing or unknown bearer token")
                && stderr.contains("--token"),
            "{stderr}"
        );
    }

    let (code, stdout, stderr) = recapd(
        &[
            "chats", "delete", "--addr", &addr, "--token", "wrong", "alpha", "beta", "gamma",
        ],
        &[],
    )
    .await;
    assert_eq!(code, Some(1));
    assert_eq!(stdout, "");
    // The first refusal stops the command: the others would fail alike.
    assert!(
        stderr.contains("alpha: missing or unknown bearer token"),
        "{stderr}"
    );
    assert!(stderr.contains("2 more chat(s) not tried"), "{stderr}");
    assert_eq!(fake.ids().len(), IDS.len(), "nothing was deleted");
    serving.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_both_commands_with_exit_1() {
    let addr = format!("127.0.0.1:{}", free_port());
    for args in [
        &["chats", "list", "--addr", &addr][..],
        &["chats", "delete", "--addr", &addr, "alpha"][..],
    ] {
        let (code, stdout, stderr) = recapd(args, &[]).await;
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert_eq!(stdout, "");
        assert!(stderr.contains(&addr), "the address is named: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_chat_retention_is_refused_with_exit_64_before_anything_is_bound() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let listen = format!("127.0.0.1:{}", free_port());
    let base = [
        "--data-dir",
        data.to_str().unwrap(),
        "--listen",
        &listen,
        "--metrics-listen",
        "off",
    ];
    let flag = [&base[..], &["--chat-retention", "0d"][..]].concat();
    for (args, env) in [
        (&flag[..], &[][..]),
        (&base[..], &[("RECAPD_CHAT_RETENTION", "0")][..]),
    ] {
        let (code, _, stderr) = recapd(args, env).await;
        assert_eq!(code, Some(64), "{stderr}");
        assert!(
            stderr.contains("--chat-retention") && stderr.contains("would delete every chat"),
            "{stderr}"
        );
        // A server that started would still be serving: the exit itself
        // says nothing was bound.
        assert!(!data.exists(), "nothing written");
    }
    let (code, _, stderr) = recapd(
        &[&base[..], &["--chat-retention", "90 parsecs"][..]].concat(),
        &[],
    )
    .await;
    assert_eq!(code, Some(64), "{stderr}");
    assert!(stderr.contains("--chat-retention"), "{stderr}");
}

#[tokio::test]
async fn list_and_delete_against_a_real_server() {
    use crate::common::{Server, chat_changed, message};
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    let addr = server.app.as_ref().unwrap().local_addr().to_string();
    for (chat, messages) in [("a", 1), ("b", 3)] {
        let messages = (0..messages)
            .map(|m| message(&format!("m{m}"), "x"))
            .collect();
        server.publish(chat, chat_changed(messages)).await.unwrap();
    }
    let (code, out, err) = recapd(&["chats", "list", "--addr", &addr], &[]).await;
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert_eq!((rows[0][0], rows[0][1]), ("a", "1"), "{out}");
    assert_eq!((rows[1][0], rows[1][1]), ("b", "3"), "{out}");

    let (code, out, err) = recapd(&["chats", "delete", "--addr", &addr, "a", "nope"], &[]).await;
    assert_eq!(
        code,
        Some(1),
        "an unknown chat fails the command: {out} {err}"
    );
    assert!(out.contains('a') && err.contains("nope"), "{out} / {err}");
    let (_, out, _) = recapd(&["chats", "list", "--addr", &addr], &[]).await;
    let listed: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    assert_eq!(listed, ["b"]);
    server.stop().await;
}
