//! Recall vectors in the embedded store: what is written comes back from
//! `load` bit for bit; a chunk written again replaces its row; trims,
//! message deletions, imports and chat deletions remove exactly their
//! vectors and no other chat's or tenant's; a failing group writes none;
//! a deleted chat's vectors are erased from the files; and a version-5
//! database migrates to the schema that holds them (those that remove
//! vectors are in `removal`). PostgreSQL's twin of these tests is
//! `tests/it/store_jobs/pg_recall.rs`.

use std::path::Path;

use super::job_rows::{fenced, job, put, running};
use crate::domain::Limits;
use crate::domain::chat::Chat;
use crate::domain::jobs::JobState;
use crate::domain::message::NewMessage;
use crate::domain::recall::{ChunkKey, Source, StoredVector};
use crate::domain::time::UnixMicros;
use crate::store::sqlite::*;
use crate::store::{ChatMeta, SharedChat, Tombstone};

fn key(tenant: &str, chat: &str) -> ChatKey {
    Tenant(tenant.into()).chat(chat)
}

fn message(id: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: format!("text of {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

/// The chat's row and its messages `ids`, in order.
fn chat_with(chat: &ChatKey, ids: &[&str]) -> Vec<Write> {
    let mut writes = vec![Write::Chat {
        chat: chat.clone(),
        meta: ChatMeta {
            revision: 1,
            ..Default::default()
        },
    }];
    for (seq, id) in (0..).zip(ids) {
        writes.push(Write::Message {
            chat: chat.clone(),
            seq,
            message: message(id),
        });
    }
    writes
}

/// A vector of chunk (`message_id`, `source`, `part`) whose numbers are
/// `dims` values derived from `seed` (a different seed, different numbers).
fn vector(message_id: &str, source: Source, part: u32, seed: u32, dims: usize) -> StoredVector {
    StoredVector {
        key: ChunkKey {
            message_id: message_id.into(),
            source,
            part,
        },
        fingerprint: u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        model: format!("model-{seed}"),
        vector: (0..dims)
            .map(|i| (seed as f32) + (i as f32) / 7.0 - 0.5)
            .collect(),
    }
}

fn store_vectors(chat: &ChatKey, vectors: Vec<StoredVector>) -> Write {
    Write::RecallVectors {
        chat: chat.clone(),
        vectors,
        trims: Vec::new(),
    }
}

fn trim(chat: &ChatKey, trims: &[(&str, Source, u32)]) -> Write {
    Write::RecallVectors {
        chat: chat.clone(),
        vectors: Vec::new(),
        trims: trims
            .iter()
            .map(|(id, source, parts)| ((*id).to_owned(), *source, *parts))
            .collect(),
    }
}

/// A stored vector as plain values, its numbers as their bits (so that
/// -0.0 and 0.0 differ): what the tests compare.
type Row = (String, Source, u32, u64, String, Vec<u32>);

fn row(v: &StoredVector) -> Row {
    (
        v.key.message_id.to_string(),
        v.key.source,
        v.key.part,
        v.fingerprint,
        v.model.clone(),
        v.vector.iter().map(|x| x.to_bits()).collect(),
    )
}

/// `vectors` as rows, sorted by chunk (`load` gives them in no order).
fn rows(vectors: &[StoredVector]) -> Vec<Row> {
    let mut rows: Vec<Row> = vectors.iter().map(row).collect();
    rows.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    rows
}

/// What `load` gives of `chat`'s vectors, as sorted rows.
async fn loaded(store: &SqliteStore, chat: &ChatKey) -> Vec<Row> {
    rows(&store.load(chat).await.unwrap().vectors)
}

/// The chunks of `chat` that `load` gives: (message, source, part).
async fn chunks(store: &SqliteStore, chat: &ChatKey) -> Vec<(String, Source, u32)> {
    loaded(store, chat)
        .await
        .into_iter()
        .map(|(id, source, part, ..)| (id, source, part))
        .collect()
}

/// How many `recall_vectors` rows `chat` has, counted on a connection of
/// the test's own.
fn raw_count(dir: &Path, chat: &ChatKey) -> i64 {
    Connection::open(dir.join(DB_FILE))
        .unwrap()
        .query_row(
            "SELECT count(*) FROM recall_vectors WHERE tenant = ?1 AND chat_id = ?2",
            params![chat.tenant.name(), chat.id],
            |r| r.get(0),
        )
        .unwrap()
}

/// Message ids that a prefix, case or Unicode mistake would confuse.
const IDS: [&str; 4] = ["m1", "m10", "M1", "メッセージ-é💬"];

/// Parts 0..3 of both sources of every message of [`IDS`], each with its
/// own numbers (`salt` tells the chats apart).
fn every_chunk(salt: u32) -> Vec<StoredVector> {
    let mut vectors = Vec::new();
    let mut seed = salt;
    for id in IDS {
        for source in [Source::Message, Source::SceneRecap] {
            for part in 0..3 {
                seed += 1;
                vectors.push(vector(id, source, part, seed, 4));
            }
        }
    }
    vectors
}

/// Three chats with the same messages and every chunk's vector: `c` and
/// `other` of tenant `t`, and `c` of tenant `u` (the same chat id).
async fn three_chats(store: &SqliteStore) -> [(ChatKey, Vec<StoredVector>); 3] {
    let chats = [
        (key("t", "c"), every_chunk(0)),
        (key("t", "other"), every_chunk(1_000)),
        (key("u", "c"), every_chunk(2_000)),
    ];
    for (chat, vectors) in &chats {
        let mut writes = chat_with(chat, &IDS);
        writes.push(store_vectors(chat, vectors.clone()));
        store.commit(writes).await.unwrap();
        assert_eq!(loaded(store, chat).await, rows(vectors));
    }
    chats
}

/// The other two chats of [`three_chats`] still hold all their vectors.
async fn others_untouched(store: &SqliteStore, chats: &[(ChatKey, Vec<StoredVector>); 3]) {
    for (chat, vectors) in &chats[1..] {
        assert_eq!(loaded(store, chat).await, rows(vectors), "{chat:?}");
    }
}

#[tokio::test]
async fn vectors_written_with_a_chat_load_back_bit_for_bit_also_after_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let c = key("t", "c");
    let exact = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        0.1,
        std::f32::consts::PI,
        f32::EPSILON,
        f32::MIN_POSITIVE,
        f32::from_bits(1), // the smallest subnormal
        -f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        1.0e-30,
        -f32::from_bits(5),
    ];
    let written = vec![
        StoredVector {
            key: ChunkKey {
                message_id: "メッセージ-é💬".into(),
                source: Source::SceneRecap,
                part: 7,
            },
            fingerprint: u64::MAX,
            model: "modèle/ü 1".into(),
            vector: exact.to_vec(),
        },
        StoredVector {
            key: ChunkKey {
                message_id: "m1".into(),
                source: Source::Message,
                part: 0,
            },
            fingerprint: 1 << 63,
            model: "text-embedding-3-small".into(),
            vector: vec![0.25; 384],
        },
        StoredVector {
            key: ChunkKey {
                message_id: "m1".into(),
                source: Source::SceneRecap,
                part: 0,
            },
            fingerprint: i64::MAX as u64,
            model: String::new(),
            vector: vec![-0.0],
        },
        StoredVector {
            key: ChunkKey {
                message_id: "m1".into(),
                source: Source::Message,
                part: 1_000,
            },
            fingerprint: 0,
            model: "all-MiniLM-L6-v2".into(),
            vector: exact.iter().rev().copied().collect(),
        },
        StoredVector {
            key: ChunkKey {
                message_id: "m1".into(),
                source: Source::Message,
                part: 1,
            },
            fingerprint: 0xDEAD_BEEF_CAFE_BABE,
            model: "all-MiniLM-L6-v2".into(),
            vector: vec![1.0, 2.0, 3.0],
        },
    ];
    {
        let store = SqliteStore::open(dir.path(), true).await.unwrap();
        let mut writes = chat_with(&c, &["m1", "メッセージ-é💬"]);
        writes.push(store_vectors(&c, written.clone()));
        store.commit(writes).await.unwrap();
        let load = store.load(&c).await.unwrap();
        assert_eq!(load.chat.unwrap().messages.len(), 2);
        assert_eq!(load.vectors.len(), written.len());
        assert_eq!(rows(&load.vectors), rows(&written));
        // The same chat id in another tenant, and another chat, have none.
        assert!(store.load(&key("u", "c")).await.unwrap().vectors.is_empty());
        assert!(store.load(&key("t", "d")).await.unwrap().vectors.is_empty());
        store.close().await;
    }
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    assert_eq!(loaded(&store, &c).await, rows(&written));
    drop(store);
    // As the migration documents: little-endian 32-bit floats, one after
    // the other, and the fingerprint's 64 bits read as signed.
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    let (fingerprint, bytes): (i64, Vec<u8>) = conn
        .query_row(
            "SELECT fingerprint, vector FROM recall_vectors WHERE message_id = 'm1' AND part = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(fingerprint, 0xDEAD_BEEF_CAFE_BABE_u64 as i64);
    assert_eq!(
        bytes,
        [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40],
        "1.0, 2.0, 3.0"
    );
}

/// The smallest chat decoded on the reading thread (over a MiB of message
/// rows) gives its vectors as a small one does: both paths of `load`.
#[tokio::test]
async fn a_big_chat_loads_its_vectors_like_a_small_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let (big, small) = (key("", "big"), key("", "small"));
    let ids: Vec<String> = (0..600).map(|i| format!("m{i}")).collect();
    for (chat, count) in [(&big, 600), (&small, 3)] {
        let mut writes = chat_with(chat, &[]);
        for (seq, id) in (0..).zip(&ids[..count]) {
            let mut m = message(id);
            m.swipes[0].text = format!("{id} {}", "x".repeat(2_000));
            writes.push(Write::Message {
                chat: chat.clone(),
                seq,
                message: m,
            });
        }
        let vectors = (0..)
            .zip(&ids[..count])
            .map(|(seed, id)| vector(id, Source::Message, 0, seed, 8));
        writes.push(store_vectors(chat, vectors.collect()));
        store.commit(writes).await.unwrap();
    }
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    assert!(ChatRows::read(&conn, &big).unwrap().is_big());
    assert!(!ChatRows::read(&conn, &small).unwrap().is_big());
    for (chat, count) in [(&big, 600), (&small, 3)] {
        let expected: Vec<StoredVector> = (0..)
            .zip(&ids[..count])
            .map(|(seed, id)| vector(id, Source::Message, 0, seed, 8))
            .collect();
        assert_eq!(loaded(&store, chat).await, rows(&expected), "{chat:?}");
    }
    store.close().await;
}

#[tokio::test]
async fn writing_a_chunk_again_replaces_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let c = key("t", "c");
    let first = vector("m1", Source::Message, 0, 1, 384);
    let scene = vector("m1", Source::SceneRecap, 0, 2, 384);
    let mut writes = chat_with(&c, &["m1"]);
    writes.push(store_vectors(&c, vec![first.clone(), scene.clone()]));
    store.commit(writes).await.unwrap();

    // Another fingerprint, model and dimension for the same chunk.
    let second = vector("m1", Source::Message, 0, 3, 16);
    store
        .commit(vec![store_vectors(&c, vec![second.clone()])])
        .await
        .unwrap();
    assert_eq!(
        loaded(&store, &c).await,
        rows(&[second.clone(), scene.clone()])
    );
    assert_eq!(raw_count(dir.path(), &c), 2);

    // Twice in one group: the later write has the last word.
    let third = vector("m1", Source::Message, 0, 4, 8);
    let fourth = vector("m1", Source::Message, 0, 5, 8);
    store
        .commit(vec![
            store_vectors(&c, vec![third]),
            store_vectors(&c, vec![fourth.clone()]),
        ])
        .await
        .unwrap();
    assert_eq!(loaded(&store, &c).await, rows(&[fourth, scene]));
    assert_eq!(raw_count(dir.path(), &c), 2);
}

#[tokio::test]
async fn a_trim_removes_the_parts_at_or_past_the_count_of_its_message_and_source_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let chats = three_chats(&store).await;
    let c = &chats[0].0;
    let mut expected: Vec<StoredVector> = chats[0].1.clone();

    // m1's text is now one chunk: its parts 1 and 2 go; its scene recap's,
    // m10's and M1's stay.
    store
        .commit(vec![trim(c, &[("m1", Source::Message, 1)])])
        .await
        .unwrap();
    expected.retain(|v| {
        !(v.key.message_id == "m1" && v.key.source == Source::Message && v.key.part >= 1)
    });
    assert_eq!(loaded(&store, c).await, rows(&expected));
    assert_eq!(expected.len(), 22);

    // A count of 0 removes all of it; a count past the parts, none; a
    // message without vectors is no error.
    store
        .commit(vec![trim(
            c,
            &[
                ("メッセージ-é💬", Source::SceneRecap, 0),
                ("m10", Source::SceneRecap, 3),
                ("M1", Source::Message, 99),
                ("no-such-message", Source::Message, 0),
            ],
        )])
        .await
        .unwrap();
    expected
        .retain(|v| !(v.key.message_id == "メッセージ-é💬" && v.key.source == Source::SceneRecap));
    assert_eq!(loaded(&store, c).await, rows(&expected));
    assert_eq!(expected.len(), 19);

    // New vectors and a trim in one write, as an index job writes them:
    // M1's scene recap is now two chunks, the second one new.
    let new_part = vector("M1", Source::SceneRecap, 1, 77, 4);
    store
        .commit(vec![Write::RecallVectors {
            chat: c.clone(),
            vectors: vec![new_part.clone()],
            trims: vec![("M1".to_owned(), Source::SceneRecap, 2)],
        }])
        .await
        .unwrap();
    expected.retain(|v| {
        !(v.key.message_id == "M1" && v.key.source == Source::SceneRecap && v.key.part >= 1)
    });
    expected.push(new_part);
    assert_eq!(loaded(&store, c).await, rows(&expected));
    assert_eq!(
        chunks(&store, c)
            .await
            .into_iter()
            .filter(|(id, source, _)| id == "M1" && *source == Source::SceneRecap)
            .map(|(_, _, part)| part)
            .collect::<Vec<_>>(),
        [0, 1]
    );
    assert_eq!(raw_count(dir.path(), c), 18);
    others_untouched(&store, &chats).await;
}

mod removal;
