//! Erasure: a deleted chat's content is found in no file of the data
//! directory once its deletion is answered, after a clean close that a
//! busy reader delayed it to, and after a start-up that follows a kill.

use std::path::{Path, PathBuf};

use super::*;

/// The marker the erasure tests write into a chat and look for.
const MARKER: &str = "ERASE-ME-4f1d29c7b8e0a635";

/// The files of `dir` (recursively) whose raw bytes contain `marker`.
fn files_with(dir: &Path, marker: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                // SQLite may remove a file (a journal) between the listing
                // and the read: it holds nothing then.
                let bytes = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => panic!("{}: {e}", path.display()),
                };
                if bytes.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                    found.push(path);
                }
            }
        }
    }
    found
}

/// Fills the store with chats whose rows are interleaved with those of a
/// secret chat holding [`MARKER`] in messages (small, and one spilling
/// into overflow pages), a recap and a job; the secret rows are then
/// rewritten (larger) so that the b-trees split and move them between
/// pages. Returns the secret chat.
async fn write_secret_among_others(store: &SqliteStore) -> ChatKey {
    let secret = key("t", "secret");
    let neighbours: Vec<ChatKey> = (0..6).map(|i| key("t", &format!("n{i}"))).collect();
    let mut writes = vec![chat_row(&secret, 1)];
    for (i, chat) in neighbours.iter().enumerate() {
        writes.extend([chat_row(chat, 1), activity(chat, 1, 1)]);
        writes.push(recap(chat, 0, &format!("recap of neighbour {i}")));
    }
    store.commit(writes).await.unwrap();
    for round in 0..60_i64 {
        let mut writes = Vec::new();
        for (i, chat) in neighbours.iter().enumerate() {
            let filler = format!("neighbour {i} says {} ", round * 7).repeat(6);
            writes.push(put_message(chat, round, &format!("m{round}"), &filler));
        }
        let text = format!(
            "{} secret {round} {MARKER} {}",
            "x".repeat(40),
            "y".repeat(60)
        );
        writes.push(put_message(&secret, round, &format!("s{round}"), &text));
        store.commit(writes).await.unwrap();
    }
    let big = format!("{}{MARKER}{}{MARKER}", "z".repeat(9_000), "w".repeat(9_000));
    store
        .commit(vec![
            put_message(&secret, 100, "big", &big),
            recap(&secret, 0, &format!("the recap names {MARKER}")),
            job("secret-job", &secret, JobState::Succeeded, MARKER),
            activity(&secret, 61, 2),
        ])
        .await
        .unwrap();
    // Rewrites grow every secret row: pages split and rows move.
    for round in (0..60_i64).step_by(3) {
        let text = format!(
            "{} edited {round} {MARKER} {}",
            "q".repeat(200),
            "r".repeat(200)
        );
        store
            .commit(vec![put_message(
                &secret,
                round,
                &format!("s{round}"),
                &text,
            )])
            .await
            .unwrap();
    }
    secret
}

/// Holds a read transaction on the database, as a slow reader would: no
/// checkpoint can finish while it is open.
fn hold_a_reader(dir: &Path) -> Connection {
    let conn = Connection::open(dir.join(DB_FILE)).unwrap();
    conn.execute_batch("BEGIN; SELECT count(*) FROM messages;")
        .unwrap();
    conn
}

#[tokio::test]
async fn a_deleted_chat_is_in_no_file_once_its_deletion_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let secret = write_secret_among_others(&store).await;
    assert!(!files_with(dir.path(), MARKER).is_empty());
    store.commit(vec![delete(&secret, 2)]).await.unwrap();
    assert_eq!(files_with(dir.path(), MARKER), Vec::<PathBuf>::new());
    // The neighbours are intact.
    let neighbour = store.load(&key("t", "n3")).await.unwrap().chat.unwrap();
    assert_eq!(neighbour.messages.len(), 60);
    store.close().await;
    assert_eq!(files_with(dir.path(), MARKER), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn a_clean_close_erases_a_deletion_a_busy_reader_kept_in_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let secret = write_secret_among_others(&store).await;
    let reader = hold_a_reader(dir.path());
    store.commit(vec![delete(&secret, 2)]).await.unwrap();
    // The reader kept the checkpoint from finishing (so this test can
    // fail); once it is gone, only the close erases (its checkpoint, or
    // SQLite's own as the writing connection closes).
    assert!(!files_with(dir.path(), MARKER).is_empty());
    drop(reader);
    assert!(!files_with(dir.path(), MARKER).is_empty());
    store.close().await;
    assert_eq!(files_with(dir.path(), MARKER), Vec::<PathBuf>::new());
    drop(store);
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    assert!(store.load(&secret).await.unwrap().chat.is_none());
}

#[tokio::test]
async fn a_deletion_is_erased_at_start_up_after_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let secret = write_secret_among_others(&store).await;
    let reader = hold_a_reader(dir.path());
    store.commit(vec![delete(&secret, 2)]).await.unwrap();
    // What `kill -9` leaves right after the deletion committed, before any
    // checkpoint: the files as they are now (the WAL holds the deletion
    // and the older frames the marker).
    let killed = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, killed.path().join(path.file_name().unwrap())).unwrap();
    }
    assert!(!files_with(killed.path(), MARKER).is_empty());
    drop(store);
    drop(reader);

    let store = SqliteStore::open(killed.path(), true).await.unwrap();
    assert_eq!(files_with(killed.path(), MARKER), Vec::<PathBuf>::new());
    let loaded = store.load(&secret).await.unwrap();
    assert!(loaded.chat.is_none());
    assert_eq!(loaded.tombstone.map(|t| t.revision), Some(2));
    assert_eq!(
        store
            .load(&key("t", "n0"))
            .await
            .unwrap()
            .chat
            .unwrap()
            .messages
            .len(),
        60
    );
}

/// A small deterministic generator of numbers below `n` (the churn test's
/// choices), from `seed`.
fn numbers(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut state = seed.wrapping_mul(7919).wrapping_add(1);
    move |n| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    }
}

#[tokio::test]
async fn a_deleted_chat_leaves_nothing_after_random_edits_and_deletions() {
    // Inserts, rewrites and deletions of rows of every size, the secret
    // chat's and its neighbours' mixed: b-tree pages split, merge and are
    // rebuilt, rows move between pages and to and from overflow pages.
    for seed in 0..4 {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path(), true).await.unwrap();
        let mut n = numbers(seed);
        let secret = key("t", "secret");
        let neighbours: Vec<ChatKey> = (0..8).map(|i| key("t", &format!("n{i}"))).collect();
        for round in 0..600 {
            let neighbour = &neighbours[usize::try_from(n(8)).unwrap()];
            let size = usize::try_from(20 + n(600)).unwrap();
            let mut writes = vec![put_message(
                neighbour,
                i64::try_from(n(200)).unwrap(),
                &format!("m{}", n(150)),
                &"k".repeat(size),
            )];
            if n(3) == 0 {
                let size = usize::try_from(10 + n(900)).unwrap();
                let text = format!("{}{MARKER}{}", "a".repeat(size), "b".repeat(size / 2));
                writes.push(put_message(&secret, round, &format!("s{}", n(100)), &text));
            }
            if n(5) == 0 {
                writes.push(Write::DeleteMessage {
                    chat: neighbour.clone(),
                    message_id: format!("m{}", n(150)),
                });
            }
            if n(7) == 0 {
                writes.push(Write::DeleteMessage {
                    chat: secret.clone(),
                    message_id: format!("s{}", n(100)),
                });
            }
            if n(4) == 0 {
                let text = format!("{}{MARKER}", "r".repeat(usize::try_from(n(3000)).unwrap()));
                writes.push(chat_row(&secret, u64::try_from(round).unwrap()));
                writes.push(recap(&secret, u32::try_from(n(5)).unwrap(), &text));
            }
            store.commit(writes).await.unwrap();
        }
        assert!(!files_with(dir.path(), MARKER).is_empty(), "seed {seed}");
        store.commit(vec![delete(&secret, 2)]).await.unwrap();
        assert_eq!(
            files_with(dir.path(), MARKER),
            Vec::<PathBuf>::new(),
            "seed {seed}"
        );
        store.close().await;
    }
}

#[tokio::test]
async fn a_deleted_lorebook_is_in_no_file_once_its_deletion_is_answered() {
    use crate::store::{DeleteLorebook, LorebookText, NO_LOREBOOK, PutLorebook};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let book = |name: &str, content: String| {
        Write::Lorebook(PutLorebook {
            tenant: Tenant("t".into()),
            name: name.into(),
            json: LorebookText(
                format!(r#"{{"entries":{{"0":{{"content":"{content}"}}}}}}"#).into(),
            ),
            entry_count: 1,
            updated_us: UnixMicros(1),
            expect_version: NO_LOREBOOK,
            version: 7,
        })
    };
    // Neighbours before and after it; the secret book spills into
    // overflow pages.
    store
        .commit(vec![
            book("a", "x".repeat(5000)),
            book("secret", MARKER.repeat(400)),
            book("z", "y".repeat(5000)),
        ])
        .await
        .unwrap();
    assert!(!files_with(dir.path(), MARKER).is_empty());
    store
        .commit(vec![Write::DeleteLorebook(DeleteLorebook {
            tenant: Tenant("t".into()),
            name: "secret".into(),
            expect_version: 7,
        })])
        .await
        .unwrap();
    assert_eq!(files_with(dir.path(), MARKER), Vec::<PathBuf>::new());
    let t = Tenant("t".into());
    assert!(store.lorebook(&t, "a").await.unwrap().is_some());
    assert!(store.lorebook(&t, "z").await.unwrap().is_some());
    store.close().await;
}
