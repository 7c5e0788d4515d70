//! Recall vectors in the PostgreSQL store itself (no server), each test on
//! a schema of its own: what is written comes back from `load` bit for
//! bit (also to another replica); a chunk written again replaces its row;
//! trims, message deletions, imports and chat deletions remove exactly
//! their vectors and no other chat's or tenant's; a group that fails (a
//! stale fence, a lost claim) writes none; empty and large writes work in
//! the one statement that writes them; and a schema of migration 6 migrates
//! to the table that holds them. The embedded store's twin of these tests
//! is `src/store/sqlite/tests/recall.rs`.

use super::*;
use recapd::domain::Limits;
use recapd::domain::chat::Chat;
use recapd::domain::ids::ClaimKey;
use recapd::domain::message::{Message, NewMessage};
use recapd::domain::recall::{ChunkKey, Source, StoredVector};
use recapd::store::Tombstone;

/// A connection to the test database whose `search_path` is `schema`.
async fn sql(schema: &Schema) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&test_database_url(), tokio_postgres::NoTls)
        .await
        .expect("connects to the test database");
    tokio::spawn(connection);
    client
        .batch_execute(&format!("SET search_path TO \"{}\"", schema.0))
        .await
        .expect("sets the search path");
    client
}

/// How many `recall_vectors` rows `chat` has.
async fn raw_count(client: &tokio_postgres::Client, chat: &ChatKey) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM recall_vectors WHERE tenant = $1 AND chat_id = $2",
            &[&chat.tenant.name(), &chat.id],
        )
        .await
        .expect("counts recall_vectors")
        .get(0)
}

fn message(id: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: format!("text of {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("a valid message")
}

/// The chat's row and its messages `ids`, in order.
fn chat_with(chat: &ChatKey, ids: &[&str]) -> Vec<Write> {
    let mut writes = vec![chat_row(chat, 1)];
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
async fn loaded(store: &PgStore, chat: &ChatKey) -> Vec<Row> {
    rows(&store.load(chat).await.unwrap().vectors)
}

/// The chunks of `chat` that `load` gives: (message, source, part).
async fn chunks(store: &PgStore, chat: &ChatKey) -> Vec<(String, Source, u32)> {
    loaded(store, chat)
        .await
        .into_iter()
        .map(|(id, source, part, ..)| (id, source, part))
        .collect()
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
async fn three_chats(store: &PgStore) -> [(ChatKey, Vec<StoredVector>); 3] {
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
async fn others_untouched(store: &PgStore, chats: &[(ChatKey, Vec<StoredVector>); 3]) {
    for (chat, vectors) in &chats[1..] {
        assert_eq!(loaded(store, chat).await, rows(vectors), "{chat:?}");
    }
}

#[tokio::test]
async fn pg_vectors_written_with_a_chat_load_back_bit_for_bit_also_on_another_replica() {
    let schema = Schema::new();
    let (a, b) = (schema.store().await, schema.store().await);
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
    let mut writes = chat_with(&c, &["m1", "メッセージ-é💬"]);
    writes.push(store_vectors(&c, written.clone()));
    a.commit(writes).await.unwrap();
    let load = a.load(&c).await.unwrap();
    assert_eq!(load.chat.unwrap().messages.len(), 2);
    assert_eq!(load.vectors.len(), written.len());
    assert_eq!(rows(&load.vectors), rows(&written));
    // Another replica reads the same; the same chat id in another tenant,
    // and another chat, have none.
    assert_eq!(loaded(&b, &c).await, rows(&written));
    assert!(b.load(&key("u", "c")).await.unwrap().vectors.is_empty());
    assert!(b.load(&key("t", "d")).await.unwrap().vectors.is_empty());
    // As the migration documents: little-endian 32-bit floats, one after
    // the other, and the fingerprint's 64 bits read as signed.
    let client = sql(&schema).await;
    let stored = client
        .query_one(
            "SELECT fingerprint, vector, source FROM recall_vectors
             WHERE message_id = 'm1' AND part = 1",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(stored.get::<_, i64>(0), 0xDEAD_BEEF_CAFE_BABE_u64 as i64);
    assert_eq!(
        stored.get::<_, Vec<u8>>(1),
        [0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40],
        "1.0, 2.0, 3.0"
    );
    assert_eq!(stored.get::<_, i16>(2), 0, "Source::Message");
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn pg_writing_a_chunk_again_replaces_its_row() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
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
    assert_eq!(raw_count(&client, &c).await, 2);

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
    assert_eq!(raw_count(&client, &c).await, 2);
    store.close().await;
}

#[tokio::test]
async fn pg_a_trim_removes_the_parts_at_or_past_the_count_of_its_message_and_source_only() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
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
    assert_eq!(raw_count(&client, c).await, 18);
    others_untouched(&store, &chats).await;
    store.close().await;
}

#[tokio::test]
async fn pg_deleting_a_message_removes_its_vectors_only() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
    let chats = three_chats(&store).await;
    let c = &chats[0].0;
    store
        .commit(vec![Write::DeleteMessage {
            chat: c.clone(),
            message_id: "m1".into(),
        }])
        .await
        .unwrap();
    let mut expected = chats[0].1.clone();
    expected.retain(|v| v.key.message_id != "m1");
    assert_eq!(loaded(&store, c).await, rows(&expected));
    assert_eq!(expected.len(), 18);
    let left: Vec<String> = store
        .load(c)
        .await
        .unwrap()
        .chat
        .unwrap()
        .messages
        .into_iter()
        .map(|(_, m)| m.id.to_string())
        .collect();
    assert_eq!(left, ["m10", "M1", "メッセージ-é💬"]);

    store
        .commit(vec![Write::DeleteMessage {
            chat: c.clone(),
            message_id: "メッセージ-é💬".into(),
        }])
        .await
        .unwrap();
    expected.retain(|v| v.key.message_id != "メッセージ-é💬");
    assert_eq!(loaded(&store, c).await, rows(&expected));
    assert_eq!(raw_count(&client, c).await, 12);
    others_untouched(&store, &chats).await;
    store.close().await;
}

#[tokio::test]
async fn pg_an_import_removes_every_vector_of_its_chat_only() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
    let chats = three_chats(&store).await;
    let c = &chats[0].0;
    // The imported chat has messages of the same ids: its vectors are of
    // the old texts all the same.
    let content = Chat::from_parts(
        vec![(0, message("m1")), (1, message("m10")), (2, message("new"))],
        vec![],
        None,
    );
    store
        .commit(vec![Write::ReplaceChat {
            chat: c.clone(),
            content: SharedChat(Arc::new(content)),
        }])
        .await
        .unwrap();
    let load = store.load(c).await.unwrap();
    assert_eq!(load.chat.unwrap().messages.len(), 3);
    assert!(load.vectors.is_empty(), "{:?}", load.vectors);
    assert_eq!(raw_count(&client, c).await, 0);
    others_untouched(&store, &chats).await;

    // The new content's vectors, written after, are kept.
    let fresh = vector("new", Source::Message, 0, 9, 4);
    store
        .commit(vec![store_vectors(c, vec![fresh.clone()])])
        .await
        .unwrap();
    assert_eq!(loaded(&store, c).await, rows(&[fresh]));
    store.close().await;
}

#[tokio::test]
async fn pg_deleting_a_chat_erases_its_vectors_and_keeps_the_recall_revision() {
    let schema = Schema::new();
    let (a, b) = (schema.store().await, schema.store().await);
    let client = sql(&schema).await;
    let chats = three_chats(&a).await;
    let c = &chats[0].0;
    let tombstone = Tombstone {
        revision: 42,
        message_revision: 17,
        recall_revision: 29,
        deleted_us: UnixMicros(1_234),
    };
    a.commit(vec![Write::DeleteChat {
        chat: c.clone(),
        tombstone,
    }])
    .await
    .unwrap();
    for store in [&a, &b] {
        let load = store.load(c).await.unwrap();
        assert!(load.chat.is_none());
        assert!(load.vectors.is_empty(), "{:?}", load.vectors);
        assert_eq!(load.tombstone, Some(tombstone));
        others_untouched(store, &chats).await;
    }
    assert_eq!(raw_count(&client, c).await, 0);
    for (chat, _) in &chats[1..] {
        assert_eq!(b.load(chat).await.unwrap().tombstone, None);
    }

    // Re-created, the chat starts with no vectors but the ones written
    // since, and keeps its tombstone.
    let fresh = vector("m1", Source::Message, 0, 5, 4);
    let mut writes = chat_with(c, &["m1"]);
    writes.push(store_vectors(c, vec![fresh.clone()]));
    b.commit(writes).await.unwrap();
    let load = a.load(c).await.unwrap();
    assert_eq!(rows(&load.vectors), rows(&[fresh]));
    assert_eq!(load.tombstone, Some(tombstone));
    others_untouched(&a, &chats).await;
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn pg_a_vector_write_in_a_failing_group_is_not_applied() {
    let schema = Schema::new();
    let store = Arc::new(schema.store().await);
    let c = key("t", "c");
    let kept = vector("m1", Source::Message, 0, 1, 4);
    let claimed = running(job("j", &c, 1, JobState::Pending), 100, 2);
    let mut writes = vec![Write::Claim {
        key: ClaimKey::Chat(c.clone()),
        clock: 0,
    }];
    writes.extend(chat_with(&c, &["m1", "m2"]));
    writes.push(store_vectors(&c, vec![kept.clone()]));
    writes.push(put(&claimed));
    store.commit(writes).await.unwrap();
    assert_eq!(store.load(&c).await.unwrap().clock, 1);

    // A runner holding a stale fence: neither its vectors, its trim nor
    // its job result land, whichever comes first in its group.
    let mut result = claimed.clone();
    result.state = JobState::Succeeded;
    let late = Write::RecallVectors {
        chat: c.clone(),
        vectors: vec![vector("m2", Source::Message, 0, 2, 4)],
        trims: vec![("m1".to_owned(), Source::Message, 0)],
    };
    for group in [
        vec![late.clone(), fenced(&result, 1)],
        vec![fenced(&result, 1), late.clone()],
    ] {
        let error = store.commit(group).await.unwrap_err();
        assert!(
            matches!(&error, StoreError::Fenced(id) if id == "j"),
            "{error:?}"
        );
        assert_eq!(loaded(&store, &c).await, rows(std::slice::from_ref(&kept)));
    }

    // A replica that lost the chat (a stale claim) writes none either.
    let stale = store
        .commit(vec![
            Write::Claim {
                key: ClaimKey::Chat(c.clone()),
                clock: 0,
            },
            late.clone(),
        ])
        .await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))), "{stale:?}");
    assert_eq!(loaded(&store, &c).await, rows(std::slice::from_ref(&kept)));

    // Callers sharing a batch with the stale one keep their vectors.
    let d = key("t", "d");
    let mut callers = Vec::new();
    for writes in [
        vec![store_vectors(
            &d,
            vec![vector("m1", Source::Message, 0, 4, 4)],
        )],
        vec![late.clone(), fenced(&result, 1)],
        vec![store_vectors(
            &c,
            vec![vector("m2", Source::SceneRecap, 0, 5, 4)],
        )],
    ] {
        let store = store.clone();
        callers.push(tokio::spawn(async move { store.commit(writes).await }));
    }
    let mut outcomes = Vec::new();
    for caller in callers {
        outcomes.push(caller.await.unwrap());
    }
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(
        matches!(outcomes[1], Err(StoreError::Fenced(_))),
        "{:?}",
        outcomes[1]
    );
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    assert_eq!(
        chunks(&store, &c).await,
        [
            ("m1".to_owned(), Source::Message, 0),
            ("m2".to_owned(), Source::SceneRecap, 0)
        ]
    );
    assert_eq!(chunks(&store, &d).await.len(), 1);
    store.close().await;
}

#[tokio::test]
async fn pg_empty_writes_and_500_vectors_of_384_dimensions_in_one_write() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
    let c = key("t", "c");
    store.commit(chat_with(&c, &["m1"])).await.unwrap();
    // Nothing to store and nothing to trim, alone and among other writes.
    let empty = || Write::RecallVectors {
        chat: c.clone(),
        vectors: Vec::new(),
        trims: Vec::new(),
    };
    store.commit(vec![empty()]).await.unwrap();
    store
        .commit(vec![empty(), chat_row(&c, 2), empty()])
        .await
        .unwrap();
    let load = store.load(&c).await.unwrap();
    assert_eq!(load.chat.unwrap().meta.revision, 2);
    assert!(load.vectors.is_empty());

    // 500 chunks of 384 numbers (all-MiniLM-L6-v2's), of 100 messages
    // and both sources, in one write.
    let many: Vec<StoredVector> = (0..500_u32)
        .map(|i| {
            let source = if i % 2 == 0 {
                Source::Message
            } else {
                Source::SceneRecap
            };
            vector(&format!("m{}", i % 100), source, i / 100, i, 384)
        })
        .collect();
    store
        .commit(vec![store_vectors(&c, many.clone())])
        .await
        .unwrap();
    assert_eq!(raw_count(&client, &c).await, 500);
    let load = store.load(&c).await.unwrap();
    assert_eq!(load.vectors.len(), 500);
    assert!(load.vectors.iter().all(|v| v.vector.len() == 384));
    assert_eq!(rows(&load.vectors), rows(&many));

    // 100 trims in one write: each message keeps the parts of that source
    // below its new count.
    let trims: Vec<(String, Source, u32)> = (0..100)
        .map(|m| (format!("m{m}"), Source::Message, 1))
        .collect();
    store
        .commit(vec![Write::RecallVectors {
            chat: c.clone(),
            vectors: Vec::new(),
            trims,
        }])
        .await
        .unwrap();
    let left = many
        .iter()
        .filter(|v| v.key.source == Source::SceneRecap || v.key.part < 1)
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(loaded(&store, &c).await, rows(&left));
    store.close().await;
}

/// What migrations 9, 8 and 7 add, undone: a schema of the latest
/// migrations, taken back to where migration 6 left it.
const UNDO_MIGRATION_7: &str = "
DROP TABLE profiles;
DELETE FROM schema_migrations WHERE version = 9;
DROP TABLE lorebook_edits;
ALTER TABLE lorebooks DROP COLUMN log_bytes;
DELETE FROM schema_migrations WHERE version = 8;
DROP TABLE recall_vectors;
ALTER TABLE chat_tombstones DROP COLUMN recall_revision;
DELETE FROM schema_migrations WHERE version = 7;
";

#[tokio::test]
async fn pg_a_schema_of_migration_6_migrates_and_then_keeps_vectors() {
    let schema = Schema::new();
    schema.store().await.close().await;
    let client = sql(&schema).await;
    let latest = async || -> i32 {
        client
            .query_one("SELECT max(version) FROM schema_migrations", &[])
            .await
            .expect("reads schema_migrations")
            .get(0)
    };
    assert_eq!(latest().await, 9);
    client
        .batch_execute(UNDO_MIGRATION_7)
        .await
        .expect("back to 6");
    assert_eq!(latest().await, 6);
    // Rows as recapd at migration 6 wrote them: a chat with a message, and
    // a deleted chat's tombstone (without a recall revision).
    let body = serde_json::to_string(&message("m1")).unwrap();
    client
        .batch_execute(&format!(
            "INSERT INTO chats (tenant, chat_id, needs_refresh, body)
                 VALUES ('acme', 'c', false, '{{\"revision\":6}}');
             INSERT INTO messages (tenant, chat_id, message_id, seq, body)
                 VALUES ('acme', 'c', 'm1', 0, '{}');
             INSERT INTO chat_tombstones (tenant, chat_id, revision, message_revision, deleted_us)
                 VALUES ('acme', 'gone', 9, 4, 77);",
            body.replace('\'', "''")
        ))
        .await
        .expect("rows of migration 6");

    let store = schema.store().await;
    assert_eq!(latest().await, 9);
    let (live, gone) = (key("acme", "c"), key("acme", "gone"));
    let load = store.load(&live).await.unwrap();
    assert_eq!(load.chat.unwrap().meta.revision, 6);
    assert!(load.vectors.is_empty());
    assert_eq!(
        store.load(&gone).await.unwrap().tombstone,
        Some(Tombstone {
            revision: 9,
            message_revision: 4,
            recall_revision: 0,
            deleted_us: UnixMicros(77),
        })
    );
    let written = vec![
        vector("m1", Source::Message, 0, 1, 4),
        vector("m1", Source::SceneRecap, 2, 2, 4),
    ];
    store
        .commit(vec![store_vectors(&live, written.clone())])
        .await
        .unwrap();
    assert_eq!(loaded(&store, &live).await, rows(&written));
    let tombstone = Tombstone {
        revision: 10,
        message_revision: 5,
        recall_revision: 3,
        deleted_us: UnixMicros(88),
    };
    store
        .commit(vec![Write::DeleteChat {
            chat: gone.clone(),
            tombstone,
        }])
        .await
        .unwrap();
    store.close().await;
    // Opening again finds migration 8 applied and keeps what it holds.
    let store = schema.store().await;
    assert_eq!(latest().await, 9);
    assert_eq!(loaded(&store, &live).await, rows(&written));
    assert_eq!(store.load(&gone).await.unwrap().tombstone, Some(tombstone));
    store.close().await;
}
