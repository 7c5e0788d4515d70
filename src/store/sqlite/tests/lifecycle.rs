//! A chat's lifecycle in the embedded store: deletion and tombstones,
//! activity, the listings and the upgrade that adds them; the erasure of
//! deleted content from every file of the data directory is in `erasure`.

use std::path::Path;

use crate::domain::Limits;
use crate::domain::jobs::{JobKind, JobState};
use crate::domain::message::NewMessage;
use crate::domain::time::{UnixMicros, UnixMillis};
use crate::store::sqlite::schema::SCHEMA_VERSION;
use crate::store::sqlite::*;
use crate::store::{ChatMeta, Tombstone};

fn key(tenant: &str, chat: &str) -> ChatKey {
    Tenant(tenant.into()).chat(chat)
}

fn message(id: &str, text: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: text.into(),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

fn chat_row(chat: &ChatKey, revision: u64) -> Write {
    Write::Chat {
        chat: chat.clone(),
        meta: ChatMeta {
            revision,
            ..Default::default()
        },
    }
}

fn put_message(chat: &ChatKey, seq: i64, id: &str, text: &str) -> Write {
    Write::Message {
        chat: chat.clone(),
        seq,
        message: message(id, text),
    }
}

fn activity(chat: &ChatKey, message_count: u64, updated_us: i64) -> Write {
    Write::Activity {
        chat: chat.clone(),
        message_count,
        updated_us: UnixMicros(updated_us),
    }
}

fn recap(chat: &ChatKey, version: u32, content: &str) -> Write {
    Write::Recap {
        chat: chat.clone(),
        version: RecapVersion {
            version,
            created_at_ms: UnixMillis(1),
            content: content.into(),
            scene_count: 1,
            excluded_count: 0,
            prev_scene_message_id: None,
            new_scene_message_id: None,
            st: None,
            carried_from: None,
        },
    }
}

fn job(id: &str, chat: &ChatKey, state: JobState, result: &str) -> Write {
    let mut job = Job::new(
        id.into(),
        chat.clone(),
        JobKind::RunningRecap,
        "m1".into(),
        UnixMicros(1),
        false,
    );
    job.state = state;
    job.result = result.into();
    Write::Job {
        job,
        expect_fence: None,
    }
}

fn settings(enabled: bool) -> ChatSettings {
    ChatSettings {
        enabled: Some(enabled),
        ..Default::default()
    }
}

fn delete(chat: &ChatKey, revision: u64) -> Write {
    Write::DeleteChat {
        chat: chat.clone(),
        tombstone: Tombstone {
            revision,
            message_revision: revision / 2,
            deleted_us: UnixMicros(1_000 + i64::try_from(revision).unwrap()),
            recall_revision: revision / 4,
        },
    }
}

/// Every row of a chat, in every table it has rows in (a raw count per
/// table, read on a connection of the test's own).
fn rows_of(dir: &Path, chat: &ChatKey) -> Vec<(&'static str, i64)> {
    let conn = Connection::open(dir.join(DB_FILE)).unwrap();
    [
        "chats",
        "messages",
        "recaps",
        "chat_settings",
        "jobs",
        "chat_activity",
        "chat_tombstones",
    ]
    .into_iter()
    .map(|table| {
        let count = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE tenant = ?1 AND chat_id = ?2"),
                params![chat.tenant.name(), chat.id],
                |r| r.get(0),
            )
            .unwrap();
        (table, count)
    })
    .collect()
}

/// A chat with a row, messages, a recap, settings, an open and a finished
/// job, and activity.
fn full_chat(chat: &ChatKey, text: &str) -> Vec<Write> {
    vec![
        chat_row(chat, 7),
        put_message(chat, 1, "m1", text),
        put_message(chat, 2, "m2", text),
        recap(chat, 0, text),
        Write::ChatSettings {
            chat: chat.clone(),
            settings: settings(false),
        },
        job(
            &format!("{}/{}-open", chat.tenant.name(), chat.id),
            chat,
            JobState::Pending,
            text,
        ),
        job(
            &format!("{}/{}-done", chat.tenant.name(), chat.id),
            chat,
            JobState::Succeeded,
            text,
        ),
        activity(chat, 2, 500),
    ]
}

#[tokio::test]
async fn deleting_a_chat_removes_every_row_and_keeps_a_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let (gone, kept, other_tenant) = (key("t", "c"), key("t", "d"), key("u", "c"));
    for chat in [&gone, &kept, &other_tenant] {
        store.commit(full_chat(chat, "some text")).await.unwrap();
    }
    let every_table = |n: i64| {
        vec![
            ("chats", n),
            ("messages", 2 * n),
            ("recaps", n),
            ("chat_settings", n),
            ("jobs", 2 * n),
            ("chat_activity", n),
        ]
    };
    let mut before = every_table(1);
    before.push(("chat_tombstones", 0));
    assert_eq!(rows_of(dir.path(), &gone), before);

    store.commit(vec![delete(&gone, 8)]).await.unwrap();
    let mut after = every_table(0);
    after.push(("chat_tombstones", 1));
    assert_eq!(rows_of(dir.path(), &gone), after);
    let loaded = store.load(&gone).await.unwrap();
    assert!(loaded.chat.is_none());
    assert_eq!(loaded.settings, None);
    assert!(loaded.jobs.is_empty());
    assert_eq!(loaded.updated_us, None);
    let tombstone = Tombstone {
        revision: 8,
        message_revision: 4,
        deleted_us: UnixMicros(1_008),
        recall_revision: 2,
    };
    assert_eq!(loaded.tombstone, Some(tombstone));

    // The same chat id elsewhere, and the tenant's other chat, keep all.
    for chat in [&kept, &other_tenant] {
        assert_eq!(rows_of(dir.path(), chat), before, "{chat:?}");
        let loaded = store.load(chat).await.unwrap();
        assert_eq!(loaded.chat.unwrap().messages.len(), 2);
        assert_eq!(loaded.jobs.len(), 1);
        assert_eq!(loaded.tombstone, None);
        assert_eq!(loaded.updated_us, Some(UnixMicros(500)));
    }
    assert_eq!(store.chat_count().await.unwrap(), 2);

    // Re-created, the chat keeps its tombstone (a later deletion replaces
    // it), also across reopening.
    store.commit(vec![chat_row(&gone, 9)]).await.unwrap();
    let loaded = store.load(&gone).await.unwrap();
    assert_eq!(loaded.chat.unwrap().meta.revision, 9);
    assert_eq!(loaded.tombstone, Some(tombstone));
    store.commit(vec![delete(&gone, 10)]).await.unwrap();
    store.close().await;
    drop(store);
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let loaded = store.load(&gone).await.unwrap();
    assert!(loaded.chat.is_none());
    assert_eq!(loaded.tombstone.map(|t| t.revision), Some(10));
}

#[tokio::test]
async fn load_shows_the_latest_activity() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let c = key("", "c");
    store.commit(vec![chat_row(&c, 1)]).await.unwrap();
    assert_eq!(store.load(&c).await.unwrap().updated_us, None);
    store
        .commit(vec![activity(&c, 0, 100), activity(&c, 1, 250)])
        .await
        .unwrap();
    assert_eq!(
        store.load(&c).await.unwrap().updated_us,
        Some(UnixMicros(250))
    );
    store.commit(vec![activity(&c, 1, 300)]).await.unwrap();
    assert_eq!(
        store.load(&c).await.unwrap().updated_us,
        Some(UnixMicros(300))
    );
}

#[tokio::test]
async fn list_chats_pages_one_tenants_chats_by_chat_id_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let t = |chat: &str| key("t", chat);
    let mut writes = Vec::new();
    for (i, id) in ["b", "é", "a", "Z", "ab"].into_iter().enumerate() {
        let n = u64::try_from(i).unwrap();
        writes.push(chat_row(&t(id), 10 + n));
        writes.push(activity(&t(id), n, 100 + i64::try_from(n).unwrap()));
    }
    writes.extend([
        // Settings of a listed chat, and of one without a row (not listed).
        Write::ChatSettings {
            chat: t("ab"),
            settings: settings(false),
        },
        Write::ChatSettings {
            chat: t("x"),
            settings: settings(true),
        },
        // Other tenants' chats, among them the same ids.
        chat_row(&key("", "a"), 1),
        chat_row(&key("u", "ab"), 1),
        chat_row(&key("tt", "a"), 1),
    ]);
    store.commit(writes).await.unwrap();
    let tenant = Tenant("t".into());
    let page = |after: Option<&'static str>, limit| {
        let (store, tenant) = (&store, &tenant);
        async move {
            store
                .list_chats(tenant, after, limit)
                .await
                .unwrap()
                .into_iter()
                .map(|c| c.chat_id)
                .collect::<Vec<_>>()
        }
    };
    // Bytes: upper case before lower case, "é" (0xC3...) after ASCII.
    assert_eq!(page(None, 10).await, ["Z", "a", "ab", "b", "é"]);
    assert_eq!(page(None, 2).await, ["Z", "a"]);
    assert_eq!(page(Some("a"), 2).await, ["ab", "b"]);
    assert_eq!(page(Some("b"), 2).await, ["é"]);
    assert!(page(Some("é"), 2).await.is_empty());
    assert_eq!(page(Some("aa"), 1).await, ["ab"]);
    assert!(page(None, 0).await.is_empty());

    let all = store.list_chats(&tenant, None, 10).await.unwrap();
    let ab = all.iter().find(|c| c.chat_id == "ab").unwrap();
    assert_eq!(
        *ab,
        ChatListing {
            chat_id: "ab".into(),
            message_count: 4,
            revision: 14,
            updated_us: UnixMicros(104),
            settings: Some(settings(false)),
            character_key: None,
            group_id: None,
            branched_from: None,
        }
    );
    let b = all.iter().find(|c| c.chat_id == "b").unwrap();
    assert_eq!(
        (b.message_count, b.revision, b.updated_us, &b.settings),
        (0, 10, UnixMicros(100), &None)
    );

    // A chat without activity shows no messages; a deleted one is gone.
    store
        .commit(vec![chat_row(&t("new"), 0), delete(&t("b"), 11)])
        .await
        .unwrap();
    let listed: Vec<(String, u64, i64)> = store
        .list_chats(&tenant, Some("ab"), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.chat_id, c.message_count, c.updated_us.0))
        .collect();
    assert_eq!(listed, [("new".into(), 0, 0), ("é".into(), 1, 101)]);
    let others = store
        .list_chats(&Tenant::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(others.len(), 1);
    assert_eq!((others[0].chat_id.as_str(), others[0].revision), ("a", 1));
}

#[tokio::test]
async fn quiet_chats_are_the_oldest_changes_before_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let chats = [
        (key("t", "thirty"), 30),
        (key("u", "ten"), 10),
        (key("", "twenty"), 20),
        (key("t", "forty"), 40),
    ];
    let mut writes = Vec::new();
    for (chat, at) in &chats {
        writes.push(chat_row(chat, 1));
        writes.push(activity(chat, 1, *at));
    }
    // Activity without a chat row (never listed), older than all.
    writes.push(activity(&key("t", "rowless"), 0, 1));
    store.commit(writes).await.unwrap();
    assert_eq!(
        store.quiet_chats(UnixMicros(35), 10).await.unwrap(),
        [key("u", "ten"), key("", "twenty"), key("t", "thirty")]
    );
    assert_eq!(
        store.quiet_chats(UnixMicros(35), 2).await.unwrap(),
        [key("u", "ten"), key("", "twenty")]
    );
    // The bound is strict.
    assert!(
        store
            .quiet_chats(UnixMicros(10), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.quiet_chats(UnixMicros(11), 10).await.unwrap(),
        [key("u", "ten")]
    );
    // A change makes a chat recent; a deletion removes it.
    store
        .commit(vec![
            activity(&key("u", "ten"), 2, 50),
            delete(&key("", "twenty"), 2),
        ])
        .await
        .unwrap();
    assert_eq!(
        store.quiet_chats(UnixMicros(1_000), 10).await.unwrap(),
        [key("t", "thirty"), key("t", "forty"), key("u", "ten")]
    );
}

mod erasure;

// ---------------------------------------------------------------- upgrade

/// Schema version 3 as recapd wrote it (before chat activity and
/// tombstones).
const V3_SCHEMA: &str = include_str!("sqlite-schema-v3.sql");

/// Two chats of two tenants in a version-3 database.
const V3_ROWS: &str = "
INSERT INTO chats VALUES ('acme', 'c', 0, '{\"revision\":6}');
INSERT INTO chats VALUES ('', 'c', 0, '{\"revision\":2}');
";

#[tokio::test]
async fn a_version_3_database_gets_activity_for_every_chat_and_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute_batch(V3_SCHEMA).unwrap();
        conn.execute_batch(V3_ROWS).unwrap();
        for (tenant, id, seq) in [("acme", "m1", 1), ("acme", "m2", 2), ("", "m1", 1)] {
            conn.execute(
                "INSERT INTO messages VALUES (?1, 'c', ?2, ?3, ?4)",
                params![
                    tenant,
                    id,
                    seq,
                    serde_json::to_string(&message(id, "hi")).unwrap()
                ],
            )
            .unwrap();
        }
    }
    let before = crate::wall_clock::now_us().0;
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let after = crate::wall_clock::now_us().0;
    let listed = store
        .list_chats(&Tenant("acme".into()), None, 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].message_count, listed[0].revision), (2, 6));
    assert!(
        (before..=after).contains(&listed[0].updated_us.0),
        "{listed:?}"
    );
    let default = store
        .list_chats(&Tenant::default(), None, 10)
        .await
        .unwrap();
    assert_eq!((default[0].message_count, default[0].revision), (1, 2));
    // Every chat changed at the upgrade: none is quiet before it.
    assert!(
        store
            .quiet_chats(UnixMicros(before), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .quiet_chats(UnixMicros(after + 1), 10)
            .await
            .unwrap()
            .len(),
        2
    );
    // Deletion works on the upgraded database.
    store
        .commit(vec![delete(&key("acme", "c"), 7)])
        .await
        .unwrap();
    assert!(
        store
            .list_chats(&Tenant("acme".into()), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.close().await;
    drop(store);
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    let version: String = conn
        .query_row(
            "SELECT value FROM kv WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION.to_string());
    assert_eq!(SCHEMA_VERSION, 8);
}
