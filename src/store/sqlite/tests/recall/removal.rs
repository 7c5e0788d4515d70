//! What removes recall vectors in the embedded store: a message's
//! deletion, an import, the chat's deletion (erased from the files), a
//! failing group (nothing applied), and the upgrade of a database written
//! before vectors existed.

use super::*;

#[tokio::test]
async fn deleting_a_message_removes_its_vectors_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
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
    assert_eq!(raw_count(dir.path(), c), 12);
    others_untouched(&store, &chats).await;
}

#[tokio::test]
async fn an_import_removes_every_vector_of_its_chat_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
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
            content: SharedChat(std::sync::Arc::new(content)),
        }])
        .await
        .unwrap();
    let load = store.load(c).await.unwrap();
    assert_eq!(load.chat.unwrap().messages.len(), 3);
    assert!(load.vectors.is_empty(), "{:?}", load.vectors);
    assert_eq!(raw_count(dir.path(), c), 0);
    others_untouched(&store, &chats).await;

    // The new content's vectors, written after, are kept.
    let fresh = vector("new", Source::Message, 0, 9, 4);
    store
        .commit(vec![store_vectors(c, vec![fresh.clone()])])
        .await
        .unwrap();
    assert_eq!(loaded(&store, c).await, rows(&[fresh]));
}

#[tokio::test]
async fn deleting_a_chat_erases_its_vectors_and_keeps_the_recall_revision() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let chats = three_chats(&store).await;
    let c = &chats[0].0;
    let tombstone = Tombstone {
        revision: 42,
        message_revision: 17,
        recall_revision: 29,
        deleted_us: UnixMicros(1_234),
    };
    store
        .commit(vec![Write::DeleteChat {
            chat: c.clone(),
            tombstone,
        }])
        .await
        .unwrap();
    let load = store.load(c).await.unwrap();
    assert!(load.chat.is_none());
    assert!(load.vectors.is_empty(), "{:?}", load.vectors);
    assert_eq!(load.tombstone, Some(tombstone));
    assert_eq!(raw_count(dir.path(), c), 0);
    others_untouched(&store, &chats).await;
    for (chat, _) in &chats[1..] {
        assert_eq!(store.load(chat).await.unwrap().tombstone, None);
    }

    // Re-created, the chat starts with no vectors but the ones written
    // since, and keeps its tombstone, also across reopening.
    let fresh = vector("m1", Source::Message, 0, 5, 4);
    let mut writes = chat_with(c, &["m1"]);
    writes.push(store_vectors(c, vec![fresh.clone()]));
    store.commit(writes).await.unwrap();
    store.close().await;
    drop(store);
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let load = store.load(c).await.unwrap();
    assert_eq!(rows(&load.vectors), rows(&[fresh]));
    assert_eq!(load.tombstone, Some(tombstone));
    others_untouched(&store, &chats).await;
}

/// A marker the erasure test writes as a model's name.
const MARKER: &str = "RECALL-ERASE-ME-9c41d0e7";

#[tokio::test]
async fn a_deleted_chats_vectors_are_in_no_file_once_the_deletion_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let (secret, kept) = (key("t", "secret"), key("t", "kept"));
    for chat in [&secret, &kept] {
        let model = if chat == &secret { MARKER } else { "plain" };
        let vectors: Vec<StoredVector> = (0..200)
            .map(|i| StoredVector {
                model: model.to_owned(),
                ..vector(&format!("m{i}"), Source::Message, 0, i, 96)
            })
            .collect();
        let mut writes = chat_with(chat, &[]);
        writes.push(store_vectors(chat, vectors));
        store.commit(writes).await.unwrap();
    }
    let holding = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                std::fs::read(p)
                    .is_ok_and(|b| b.windows(MARKER.len()).any(|w| w == MARKER.as_bytes()))
            })
            .count()
    };
    assert!(holding(dir.path()) > 0, "the marker was written");
    store
        .commit(vec![Write::DeleteChat {
            chat: secret.clone(),
            tombstone: Tombstone::default(),
        }])
        .await
        .unwrap();
    assert_eq!(holding(dir.path()), 0);
    assert_eq!(store.load(&kept).await.unwrap().vectors.len(), 200);
    store.close().await;
}

#[tokio::test]
async fn a_vector_write_in_a_failing_group_is_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(SqliteStore::open(dir.path(), true).await.unwrap());
    let c = key("t", "c");
    let kept = vector("m1", Source::Message, 0, 1, 4);
    let claimed = running(job("j", &c, 1, JobState::Pending), 100, 2);
    let mut writes = chat_with(&c, &["m1", "m2"]);
    writes.push(store_vectors(&c, vec![kept.clone()]));
    writes.push(put(&claimed));
    store.commit(writes).await.unwrap();

    // A runner holding a stale fence: neither its vectors, its trim nor
    // its job result land.
    let mut result = claimed.clone();
    result.state = JobState::Succeeded;
    let late = Write::RecallVectors {
        chat: c.clone(),
        vectors: vec![vector("m2", Source::Message, 0, 2, 4)],
        trims: vec![("m1".to_owned(), Source::Message, 0)],
    };
    let error = store
        .commit(vec![late.clone(), fenced(&result, 1)])
        .await
        .unwrap_err();
    assert!(
        matches!(&error, StoreError::Fenced(id) if id == "j"),
        "{error:?}"
    );
    assert_eq!(loaded(&store, &c).await, rows(std::slice::from_ref(&kept)));
    // The same when the failing write comes first.
    let error = store
        .commit(vec![fenced(&result, 1), late.clone()])
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Fenced(_)), "{error:?}");
    assert_eq!(loaded(&store, &c).await, rows(std::slice::from_ref(&kept)));

    // One batch of two groups, the second failing: the whole batch rolls
    // back, the first group's vectors included.
    {
        let mut conn = open_writer(&dir.path().join(DB_FILE), true).unwrap();
        let error = commit(
            &mut conn,
            &[
                vec![store_vectors(
                    &c,
                    vec![vector("m2", Source::Message, 0, 3, 4)],
                )],
                vec![fenced(&result, 1)],
            ],
        )
        .unwrap_err();
        assert!(matches!(error, StoreError::Fenced(_)), "{error:?}");
    }
    assert_eq!(raw_count(dir.path(), &c), 1);

    // Callers sharing a batch with the stale one keep their vectors (group
    // commit retries each group alone).
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
}

// ---------------------------------------------------------------- upgrade

/// A database as recapd at schema version 5 made it: the first five
/// migrations, each recorded in `kv` as the runner records it.
fn version_5_database(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    for migration in &crate::store::sqlite::schema::MIGRATIONS.0[..5] {
        assert!(migration.version <= 5);
        conn.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS migration_clock (now_us INTEGER NOT NULL);
             DELETE FROM temp.migration_clock;
             INSERT INTO temp.migration_clock VALUES (1);",
        )
        .unwrap();
        conn.execute_batch(migration.sql).unwrap();
        conn.execute(
            "INSERT OR REPLACE INTO kv (key, value) VALUES ('schema_version', ?1)",
            params![migration.version.to_string()],
        )
        .unwrap();
        conn.execute_batch("DROP TABLE temp.migration_clock;")
            .unwrap();
    }
    conn
}

#[tokio::test]
async fn a_version_5_database_migrates_and_then_keeps_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let (live, gone) = (key("acme", "c"), key("acme", "gone"));
    {
        let conn = version_5_database(&path);
        let has_vectors: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'recall_vectors'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(has_vectors, 0, "version 5 has no recall_vectors");
        // Rows as recapd at version 5 wrote them: a chat with a message,
        // and a deleted chat's tombstone (without a recall revision).
        conn.execute(
            "INSERT INTO chats (tenant, chat_id, needs_refresh, body) VALUES ('acme', 'c', 0, ?1)",
            params![r#"{"revision":6}"#],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
             VALUES ('acme', 'c', 'm1', 0, ?1)",
            params![serde_json::to_string(&message("m1")).unwrap()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO chat_tombstones (tenant, chat_id, revision, message_revision, deleted_us)
             VALUES ('acme', 'gone', 9, 4, 77)",
            [],
        )
        .unwrap();
    }
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
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
    drop(store);

    let conn = Connection::open(&path).unwrap();
    let version: String = conn
        .query_row(
            "SELECT value FROM kv WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        version,
        crate::store::sqlite::schema::SCHEMA_VERSION.to_string()
    );
    drop(conn);
    // Opening again finds the latest version and keeps what it holds.
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    assert_eq!(loaded(&store, &live).await, rows(&written));
    assert_eq!(store.load(&gone).await.unwrap().tombstone, Some(tombstone));
    store.close().await;
}
