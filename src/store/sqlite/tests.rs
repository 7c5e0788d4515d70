use super::*;
use crate::domain::Limits;
use crate::domain::message::NewMessage;
use crate::domain::settings::SettingsPatch;
use crate::domain::time::UnixMicros;
use crate::store::{ChatMeta, StoredChat};

fn message(id: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: format!("text of {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

fn key(tenant: &str, chat: &str) -> ChatKey {
    Tenant(tenant.into()).chat(chat)
}

fn depth(patch: &SettingsPatch) -> Option<u32> {
    patch.depth
}

#[tokio::test]
async fn rows_survive_reopening_and_load_in_position_order() {
    let dir = tempfile::tempdir().unwrap();
    let c = key("", "c");
    {
        let store = SqliteStore::open(dir.path(), true).await.unwrap();
        let put = |m: &str, seq| Write::Message {
            chat: c.clone(),
            seq,
            message: message(m),
        };
        let (first, second) = tokio::join!(
            store.commit(vec![
                Write::Chat {
                    chat: c.clone(),
                    meta: ChatMeta {
                        revision: 3,
                        needs_refresh: true,
                        ..Default::default()
                    },
                },
                put("b", 5),
                put("a", -1),
            ]),
            store.commit(vec![Write::GlobalSettings {
                tenant: Tenant::default(),
                patch: SettingsPatch {
                    depth: Some(9),
                    ..Default::default()
                },
            }])
        );
        first.unwrap();
        second.unwrap();
        store
            .commit(vec![
                Write::DeleteMessage {
                    chat: c.clone(),
                    message_id: "b".into(),
                },
                put("z", 7),
            ])
            .await
            .unwrap();
        store.close().await;
    }
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let chat = store.load(&c).await.unwrap().chat.unwrap();
    assert_eq!(chat.meta.revision, 3);
    let ids: Vec<&str> = chat.messages.iter().map(|(_, m)| m.id.as_str()).collect();
    assert_eq!(ids, ["a", "z"]);
    let globals = store.global_settings().await.unwrap();
    assert_eq!(globals.len(), 1);
    assert_eq!(
        (globals[0].tenant.name(), depth(&globals[0].patch)),
        ("", Some(9))
    );
    assert_eq!(store.chats_owing_refresh().await.unwrap(), [c]);
    assert!(store.load(&key("", "other")).await.unwrap().chat.is_none());
    assert_eq!(store.chat_count().await.unwrap(), 1);
}

#[tokio::test]
async fn tenants_keep_their_own_chats_settings_and_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let chat = |k: &ChatKey| Write::Chat {
        chat: k.clone(),
        meta: ChatMeta::default(),
    };
    let global = |tenant: &str, depth| Write::GlobalSettings {
        tenant: Tenant(tenant.into()),
        patch: SettingsPatch {
            depth: Some(depth),
            ..Default::default()
        },
    };
    // The same chat id in three tenants, and tenant names that a prefix
    // match would confuse.
    let keys = [
        key("", "c"),
        key("x", "c"),
        key(":x", "c"),
        key("café", "c1"),
    ];
    let mut writes: Vec<Write> = keys.iter().map(chat).collect();
    writes.extend([global(":x", 1), global("x", 2), global("", 3)]);
    store.commit(writes).await.unwrap();
    let depths: Vec<(String, Option<u32>)> = store
        .global_settings()
        .await
        .unwrap()
        .iter()
        .map(|g| (g.tenant.name().to_owned(), depth(&g.patch)))
        .collect();
    assert_eq!(
        depths,
        [
            ("".to_owned(), Some(3)),
            (":x".to_owned(), Some(1)),
            ("x".to_owned(), Some(2))
        ]
    );
    assert_eq!(
        store.chats_of(&Tenant("x".into())).await.unwrap(),
        [key("x", "c")]
    );
    assert_eq!(store.chat_count().await.unwrap(), 4);
    for (tenant, owed) in [
        ("café", key("café", "c1")),
        (":x", key(":x", "c")),
        ("", key("", "c")),
    ] {
        store
            .commit(vec![Write::AllChatsOweRefresh {
                tenant: Tenant(tenant.into()),
            }])
            .await
            .unwrap();
        assert_eq!(store.chats_owing_refresh().await.unwrap(), [owed]);
        store.commit(keys.iter().map(chat).collect()).await.unwrap();
    }
}

#[tokio::test]
async fn chat_settings_exist_without_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let settings = ChatSettings {
        enabled: Some(false),
        ..Default::default()
    };
    let later = key("t", "later");
    store
        .commit(vec![Write::ChatSettings {
            chat: later.clone(),
            settings: settings.clone(),
        }])
        .await
        .unwrap();
    let loaded = store.load(&later).await.unwrap();
    assert_eq!(loaded.settings, Some(settings));
    assert!(loaded.chat.is_none());
    assert_eq!(
        store
            .chat_settings_of(&Tenant("t".into()))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .chat_settings_of(&Tenant::default())
            .await
            .unwrap()
            .is_empty()
    );
}

/// The schema and rows a version-1 recapd wrote: tenant and chat joined in
/// one key, global settings in `kv`.
const V1_DATABASE: &str = "
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE chats (chat_id TEXT PRIMARY KEY, needs_refresh INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE messages (chat_id TEXT NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (chat_id, message_id));
CREATE INDEX messages_by_seq ON messages (chat_id, seq);
CREATE TABLE recaps (chat_id TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (chat_id, version));
CREATE TABLE chat_settings (chat_id TEXT PRIMARY KEY, body TEXT NOT NULL);
INSERT INTO kv VALUES ('schema_version', '1');
INSERT INTO kv VALUES ('global_settings', '{\"depth\":3}');
INSERT INTO kv VALUES ('global_settings:acme', '{\"depth\":7}');
";

#[tokio::test]
async fn a_version_1_database_is_upgraded_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let body = |m: &str| serde_json::to_string(&message(m)).unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute_batch(V1_DATABASE).unwrap();
        let joined = |tenant: &str, chat: &str| format!("{tenant}\u{1f}{chat}");
        for (id, needs) in [("c".to_owned(), 0), (joined("acme", "c"), 1)] {
            conn.execute(
                "INSERT INTO chats VALUES (?1, ?2, ?3)",
                params![id, needs, r#"{"revision":4,"injection":{"chat_id":"old","text":"x","position":"InPrompt","depth":2,"role":"System","scan":false,"enabled":true,"revision":4,"running_recap_version":null,"token_count":1,"auto_hidden_count":0,"trigger":null,"refreshed_at_us":0}}"#],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO messages VALUES (?1, 'm1', 1, ?2)",
                params![id, body("m1")],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO chat_settings VALUES (?1, '{\"enabled\":false}')",
            params![joined("acme", "c")],
        )
        .unwrap();
    }
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let default = store.load(&key("", "c")).await.unwrap();
    let acme = store.load(&key("acme", "c")).await.unwrap();
    let default_chat = default.chat.unwrap();
    assert_eq!(default_chat.meta.revision, 4);
    assert_eq!(default_chat.messages.len(), 1);
    assert!(!default_chat.meta.needs_refresh);
    assert_eq!(default.settings, None);
    assert!(acme.chat.unwrap().meta.needs_refresh);
    assert_eq!(acme.settings.unwrap().enabled, Some(false));
    let globals: Vec<(String, Option<u32>)> = store
        .global_settings()
        .await
        .unwrap()
        .iter()
        .map(|g| (g.tenant.name().to_owned(), depth(&g.patch)))
        .collect();
    assert_eq!(
        globals,
        [("".to_owned(), Some(3)), ("acme".to_owned(), Some(7))]
    );
    assert_eq!(
        store.chats_owing_refresh().await.unwrap(),
        [key("acme", "c")]
    );
    // The chained upgrade to version 4 gave every chat its activity.
    for tenant in ["", "acme"] {
        let listed = store
            .list_chats(&Tenant(tenant.into()), None, 10)
            .await
            .unwrap();
        assert_eq!(listed.len(), 1, "{tenant:?}");
        assert_eq!((listed[0].message_count, listed[0].revision), (1, 4));
        assert!(listed[0].updated_us > UnixMicros(0), "{listed:?}");
    }
    store.close().await;
    drop(store);
    // Opening again finds the new version and changes nothing.
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    assert_eq!(store.chat_count().await.unwrap(), 2);
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
        conn.execute_batch(
            "CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO kv VALUES ('schema_version', '99');",
        )
        .unwrap();
    }
    let error = SqliteStore::open(dir.path(), true).await.unwrap_err();
    assert!(error.to_string().contains("schema version 99"), "{error}");
}

#[tokio::test]
async fn replacing_a_chat_swaps_all_its_rows_and_lets_go_of_the_chat_before_answering() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let c = key("", "c");
    let other = key("", "other");
    let put = |chat: &ChatKey, m: &str, seq| Write::Message {
        chat: chat.clone(),
        seq,
        message: message(m),
    };
    store
        .commit(vec![
            Write::Chat {
                chat: c.clone(),
                meta: ChatMeta::default(),
            },
            put(&c, "old1", 0),
            put(&c, "old2", 1),
            put(&other, "kept", 0),
        ])
        .await
        .unwrap();
    let content = std::sync::Arc::new(crate::domain::chat::Chat::from_parts(
        vec![
            (0, message("new1")),
            (1, message("new2")),
            (2, message("new3")),
        ],
        vec![],
        None,
    ));
    store
        .commit(vec![Write::ReplaceChat {
            chat: c.clone(),
            content: crate::store::SharedChat(content.clone()),
        }])
        .await
        .unwrap();
    // The store holds no reference once it answered: the engine's copy is
    // the only one, so changing it later copies nothing.
    assert_eq!(std::sync::Arc::strong_count(&content), 1);
    let ids = |chat: StoredChat| -> Vec<String> {
        chat.messages
            .into_iter()
            .map(|(_, m)| m.id.into())
            .collect()
    };
    let loaded = store.load(&c).await.unwrap().chat.unwrap();
    assert_eq!(ids(loaded), ["new1", "new2", "new3"]);
    store
        .commit(vec![Write::Chat {
            chat: other.clone(),
            meta: ChatMeta::default(),
        }])
        .await
        .unwrap();
    let loaded = store.load(&other).await.unwrap().chat.unwrap();
    assert_eq!(ids(loaded), ["kept"]);
}

/// A chat past the size the reading thread decodes itself loads the same as
/// a small one, whose rows the caller decodes: both paths of `load`.
#[tokio::test]
async fn a_big_chat_decoded_on_the_reading_thread_loads_like_a_small_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let (big, small) = (key("", "big"), key("", "small"));
    let text = |i: usize| format!("message {i} {}", "x".repeat(2_000));
    let mut writes = Vec::new();
    for (chat, count) in [(&big, 600usize), (&small, 3)] {
        writes.push(Write::Chat {
            chat: chat.clone(),
            meta: ChatMeta {
                revision: count as u64,
                ..Default::default()
            },
        });
        for i in 0..count {
            let mut m = message(&format!("m{i}"));
            m.swipes[0].text = text(i);
            writes.push(Write::Message {
                chat: chat.clone(),
                seq: i as i64,
                message: m,
            });
        }
    }
    store.commit(writes).await.unwrap();
    let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
    assert!(ChatRows::read(&conn, &big).unwrap().is_big());
    assert!(!ChatRows::read(&conn, &small).unwrap().is_big());
    for (chat, count) in [(&big, 600usize), (&small, 3)] {
        let loaded = store.load(chat).await.unwrap().chat.unwrap();
        assert_eq!(loaded.meta.revision, count as u64);
        let texts: Vec<String> = loaded
            .messages
            .iter()
            .map(|(_, m)| m.text().to_owned())
            .collect();
        assert_eq!(texts, (0..count).map(text).collect::<Vec<_>>());
    }
    store.close().await;
}

mod job_rows;
mod jobs;
mod lifecycle;
mod profiles;
mod recall;
