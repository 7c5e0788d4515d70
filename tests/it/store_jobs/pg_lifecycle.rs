//! Chat deletion, activity and listing in the PostgreSQL store itself (no
//! server), each test on a schema of its own: a deletion erases every row of
//! the chat at once and keeps its tombstone and clock, so that other
//! replicas hear of it and cannot bring the chat back; a runner mid-job when
//! the chat went is fenced; ListChats pages by chat id byte by byte
//! whatever the database's locale, one tenant at a time; and retention finds
//! the quiet chats of every tenant.

use super::*;
use recapd::domain::Limits;
use recapd::domain::ids::ClaimKey;
use recapd::domain::message::NewMessage;
use recapd::domain::recaps::RecapVersion;
use recapd::domain::time::UnixMillis;
use recapd::store::{Change, ChatSettings, ReplicaStore, Tombstone};

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

/// How many rows of `table` belong to `chat`.
async fn rows_of(client: &tokio_postgres::Client, table: &str, chat: &ChatKey) -> i64 {
    client
        .query_one(
            &format!("SELECT count(*) FROM {table} WHERE tenant = $1 AND chat_id = $2"),
            &[&chat.tenant.name(), &chat.id],
        )
        .await
        .expect(table)
        .get(0)
}

/// The tables that hold a chat's content (the clock and tombstone are not).
const CONTENT: [&str; 6] = [
    "chats",
    "messages",
    "recaps",
    "chat_settings",
    "jobs",
    "chat_activity",
];

fn claim(chat: &ChatKey, clock: u64) -> Write {
    Write::Claim {
        key: ClaimKey::Chat(chat.clone()),
        clock,
    }
}

fn message(chat: &ChatKey, seq: i64, id: &str) -> Write {
    let message = NewMessage {
        id: id.into(),
        name: "Alice".into(),
        text: format!("text of {id}"),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("a valid message");
    Write::Message {
        chat: chat.clone(),
        seq,
        message,
    }
}

fn activity(chat: &ChatKey, message_count: u64, updated_us: i64) -> Write {
    Write::Activity {
        chat: chat.clone(),
        message_count,
        updated_us: UnixMicros(updated_us),
    }
}

fn own_settings(chat: &ChatKey, enabled: bool) -> Write {
    Write::ChatSettings {
        chat: chat.clone(),
        settings: ChatSettings {
            enabled: Some(enabled),
            ..Default::default()
        },
    }
}

/// Every kind of row of `chat`, as one group claimed at claim clock `clock`.
fn whole_chat(chat: &ChatKey, clock: u64) -> Vec<Write> {
    let mut owing = chat_row(chat, 3);
    if let Write::Chat { meta, .. } = &mut owing {
        meta.needs_refresh = true;
    }
    vec![
        claim(chat, clock),
        owing,
        message(chat, 1, "m1"),
        message(chat, 2, "m2"),
        Write::Recap {
            chat: chat.clone(),
            version: RecapVersion {
                version: 0,
                created_at_ms: UnixMillis(1),
                content: "a recap".into(),
                scene_count: 1,
                excluded_count: 0,
                prev_scene_message_id: None,
                new_scene_message_id: None,
                st: None,
                carried_from: None,
            },
        },
        own_settings(chat, false),
        put(&job(
            &format!("{}-pending", chat.id),
            chat,
            1,
            JobState::Pending,
        )),
        put(&running(
            job(&format!("{}-running", chat.id), chat, 2, JobState::Pending),
            i64::MAX,
            2,
        )),
        put(&job(
            &format!("{}-done", chat.id),
            chat,
            3,
            JobState::Succeeded,
        )),
        activity(chat, 2, 1_000),
    ]
}

fn deletion(chat: &ChatKey) -> Write {
    Write::DeleteChat {
        chat: chat.clone(),
        tombstone: Tombstone {
            revision: 4,
            message_revision: 2,
            deleted_us: UnixMicros(5_000),
            recall_revision: 3,
        },
    }
}

#[tokio::test]
async fn pg_a_deletion_erases_every_row_at_once_and_leaves_tombstone_and_clock() {
    let schema = Schema::new();
    let (a, b) = (schema.store().await, schema.store().await);
    let mut heard = ReplicaStore::changes(&b).expect("b's feed");
    let client = sql(&schema).await;
    let (c, kept) = (key("t", "c"), key("t", "kept"));
    a.commit(whole_chat(&c, 0)).await.unwrap();
    a.commit(whole_chat(&kept, 0)).await.unwrap();
    let before = b.load(&c).await.unwrap();
    assert_eq!(before.clock, 1);
    assert_eq!(before.updated_us, Some(UnixMicros(1_000)));
    assert_eq!(before.tombstone, None);
    let (_, since) = b.changed_since(None).await.unwrap();

    // All or nothing: a deletion whose claim conflicts removes no row.
    let stale = a.commit(vec![claim(&c, 0), deletion(&c)]).await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))), "{stale:?}");
    for table in CONTENT {
        assert!(rows_of(&client, table, &c).await > 0, "{table} kept");
    }

    a.commit(vec![claim(&c, 1), deletion(&c)]).await.unwrap();
    for table in CONTENT {
        assert_eq!(rows_of(&client, table, &c).await, 0, "{table} of c");
        assert!(rows_of(&client, table, &kept).await > 0, "{table} of kept");
    }
    assert_eq!(rows_of(&client, "chat_tombstones", &kept).await, 0);
    let loaded = b.load(&c).await.unwrap();
    assert!(loaded.chat.is_none());
    assert!(loaded.settings.is_none());
    assert!(loaded.jobs.is_empty());
    assert_eq!(loaded.updated_us, None);
    assert_eq!(loaded.clock, 2, "the claim moved the kept clock");
    assert_eq!(
        loaded.tombstone,
        Some(Tombstone {
            revision: 4,
            message_revision: 2,
            deleted_us: UnixMicros(5_000),
            recall_revision: 3,
        })
    );
    assert_eq!(b.job(&c.tenant, "c-done").await.unwrap(), None);

    // The other replica hears of it, by notification and by its resync.
    let hint = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            match heard.recv().await.expect("the feed is open") {
                Change::Chats(chats) if chats.contains(&(c.clone(), 2)) => return,
                _ => {}
            }
        }
    })
    .await;
    assert!(hint.is_ok(), "b heard nothing of the deletion");
    let (changed, _) = b.changed_since(Some(since)).await.unwrap();
    assert!(changed.contains(&(c.clone(), 2)), "{changed:?}");
    assert_eq!(
        b.clocks(std::slice::from_ref(&c)).await.unwrap(),
        [(c.clone(), 2)]
    );
    // Gone from every list of live chats, owed refreshes included.
    assert_eq!(b.chats_of(&c.tenant).await.unwrap(), vec![kept.clone()]);
    assert_eq!(b.chat_count().await.unwrap(), 1);
    assert_eq!(b.chats_owing_refresh().await.unwrap(), vec![kept.clone()]);
    assert_eq!(
        b.chats_owing_refresh_quiet_for(std::time::Duration::ZERO)
            .await
            .unwrap(),
        vec![kept.clone()]
    );

    // A replica that read the chat before cannot bring it back.
    let stale = b.commit(vec![claim(&c, 1), chat_row(&c, 9)]).await;
    assert!(matches!(stale, Err(StoreError::Conflict(_))), "{stale:?}");
    assert!(b.load(&c).await.unwrap().chat.is_none());
    // Re-created by a new event, it keeps its tombstone.
    b.commit(vec![claim(&c, 2), chat_row(&c, 5), activity(&c, 0, 6_000)])
        .await
        .unwrap();
    let again = a.load(&c).await.unwrap();
    assert_eq!(again.chat.map(|s| s.meta.revision), Some(5));
    assert_eq!(again.tombstone.map(|t| t.revision), Some(4));
    assert_eq!(again.updated_us, Some(UnixMicros(6_000)));
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn pg_a_runner_mid_job_when_its_chat_is_deleted_is_fenced() {
    let schema = Schema::new();
    let store = schema.store().await;
    let c = key("t", "c");
    let claimed = running(job("j", &c, 1, JobState::Pending), i64::MAX, 2);
    store
        .commit(vec![claim(&c, 0), chat_row(&c, 1), put(&claimed)])
        .await
        .unwrap();
    store
        .commit(vec![claim(&c, 1), deletion(&c)])
        .await
        .unwrap();
    let mut result = claimed.clone();
    result.state = JobState::Succeeded;
    result.result = "a recap of a deleted chat".into();
    let late = store.commit(vec![fenced(&result, 2)]).await;
    assert!(
        matches!(&late, Err(StoreError::Fenced(id)) if id == "j"),
        "{late:?}"
    );
    assert_eq!(store.job(&c.tenant, "j").await.unwrap(), None);

    // In one batch: the deletion, then a result from before it (queued while
    // another transaction holds the job's row, so both share a batch).
    let d = key("t", "d");
    let other = running(job("k", &d, 1, JobState::Pending), i64::MAX, 1);
    store
        .commit(vec![claim(&d, 0), chat_row(&d, 1), put(&other)])
        .await
        .unwrap();
    let holder = sql(&schema).await;
    holder
        .batch_execute("BEGIN; SELECT * FROM jobs FOR UPDATE;")
        .await
        .unwrap();
    let store = Arc::new(store);
    // A lease renewal of k waits for the held row, keeping the store busy.
    let first = {
        let store = store.clone();
        let renewal = other.clone();
        tokio::spawn(async move { store.commit(vec![fenced(&renewal, 1)]).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let mut finished = other.clone();
    finished.state = JobState::Succeeded;
    let (gone, late) = {
        let (s1, s2) = (store.clone(), store.clone());
        let writes = vec![claim(&d, 1), deletion(&d)];
        let gone = tokio::spawn(async move { s1.commit(writes).await });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let late = tokio::spawn(async move { s2.commit(vec![fenced(&finished, 1)]).await });
        (gone, late)
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    holder.batch_execute("COMMIT").await.unwrap();
    first.await.unwrap().expect("the renewal commits");
    gone.await.unwrap().expect("the deletion commits");
    let late = late.await.unwrap();
    assert!(
        matches!(&late, Err(StoreError::Fenced(id)) if id == "k"),
        "{late:?}"
    );
    assert_eq!(store.job(&d.tenant, "k").await.unwrap(), None);
    assert!(store.load(&d).await.unwrap().chat.is_none());
    store.close().await;
}

/// Makes the schema's chat ids compare as in an en-US database (where
/// "a" < "B"), when the server has ICU's en-US collation, so that a listing
/// that leaned on the database's order would show. Returns whether it did.
async fn collate_like_en_us(client: &tokio_postgres::Client, schema: &Schema) -> bool {
    let icu = client
        .query_opt(
            "SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu'",
            &[],
        )
        .await
        .unwrap()
        .is_some();
    if !icu {
        eprintln!("no en-US-x-icu collation: the listing's order is checked in the database's");
        return false;
    }
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.columns
             WHERE table_schema = $1 AND column_name = 'chat_id'",
            &[&schema.0],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for table in tables {
        client
            .batch_execute(&format!(
                "ALTER TABLE {table} ALTER COLUMN chat_id TYPE text COLLATE \"en-US-x-icu\""
            ))
            .await
            .unwrap();
    }
    let order: bool = client
        .query_one("SELECT 'a' < 'B' COLLATE \"en-US-x-icu\"", &[])
        .await
        .unwrap()
        .get(0);
    assert!(order, "en-US puts a before B");
    true
}

#[tokio::test]
async fn pg_chats_list_by_id_as_bytes_page_by_page_one_tenant_at_a_time() {
    let schema = Schema::new();
    let store = schema.store().await;
    let client = sql(&schema).await;
    collate_like_en_us(&client, &schema).await;
    let ids = ["a", "B", "b", "a_b", "ab", "a-c", "é", "f", "Z", "a b"];
    let (t, u) = (Tenant("t".into()), Tenant("u".into()));
    let mut writes = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let chat = t.chat(id);
        writes.extend([
            chat_row(&chat, n as u64),
            activity(&chat, n as u64, 10 + n as i64),
        ]);
    }
    writes.extend([
        chat_row(&u.chat("a"), 1),
        chat_row(&u.chat("zz"), 1),
        own_settings(&t.chat("f"), false),
        // Settings alone make no chat; a deleted chat is not listed.
        own_settings(&t.chat("no-row"), true),
        chat_row(&t.chat("gone"), 1),
    ]);
    store.commit(writes).await.unwrap();
    store.commit(vec![deletion(&t.chat("gone"))]).await.unwrap();
    let mut expected: Vec<&str> = ids.to_vec();
    expected.sort_unstable_by(|x, y| x.as_bytes().cmp(y.as_bytes()));
    assert_eq!(
        expected[..3],
        ["B", "Z", "a"],
        "byte order, not the locale's"
    );

    let all = store.list_chats(&t, None, 100).await.unwrap();
    let listed: Vec<&str> = all.iter().map(|c| c.chat_id.as_str()).collect();
    assert_eq!(listed, expected);
    let f = all.iter().find(|c| c.chat_id == "f").unwrap();
    let n = ids.iter().position(|id| *id == "f").unwrap();
    assert_eq!(
        (f.revision, f.message_count, f.updated_us.0),
        (n as u64, n as u64, 10 + n as i64)
    );
    assert_eq!(f.settings.as_ref().and_then(|s| s.enabled), Some(false));
    assert!(
        all.iter()
            .filter(|c| c.chat_id != "f")
            .all(|c| c.settings.is_none())
    );

    // Pages of 3, each starting strictly after the last of the one before.
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.list_chats(&t, after.as_deref(), 3).await.unwrap();
        assert!(page.len() <= 3);
        let Some(last) = page.last() else { break };
        after = Some(last.chat_id.clone());
        paged.extend(page.into_iter().map(|c| c.chat_id));
    }
    assert_eq!(paged, expected);
    // After an id that is no chat: from the next one in byte order.
    let from_c: Vec<String> = store
        .list_chats(&t, Some("Y"), 2)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.chat_id)
        .collect();
    assert_eq!(from_c, ["Z", "a"]);
    assert!(store.list_chats(&t, None, 0).await.unwrap().is_empty());

    // Each tenant sees its own.
    let theirs: Vec<String> = store
        .list_chats(&u, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.chat_id)
        .collect();
    assert_eq!(theirs, ["a", "zz"]);
    let a_of_u = &store.list_chats(&u, None, 1).await.unwrap()[0];
    assert_eq!(
        (a_of_u.message_count, a_of_u.updated_us),
        (0, UnixMicros(0))
    );
    assert!(
        store
            .list_chats(&Tenant("nobody".into()), None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.close().await;
}

#[tokio::test]
async fn pg_quiet_chats_are_every_tenants_oldest_changes_first() {
    let schema = Schema::new();
    let store = schema.store().await;
    let (old, older, recent, gone, no_row) = (
        key("t", "old"),
        key("u", "older"),
        key("t", "recent"),
        key("u", "gone"),
        key("t", "no-row"),
    );
    store
        .commit(vec![
            chat_row(&old, 1),
            activity(&old, 1, 200),
            chat_row(&older, 1),
            activity(&older, 1, 100),
            chat_row(&recent, 1),
            activity(&recent, 1, 300),
            chat_row(&gone, 1),
            activity(&gone, 1, 50),
            activity(&no_row, 1, 10),
        ])
        .await
        .unwrap();
    store.commit(vec![deletion(&gone)]).await.unwrap();
    assert_eq!(
        store.quiet_chats(UnixMicros(300), 10).await.unwrap(),
        [older.clone(), old.clone()]
    );
    assert_eq!(
        store.quiet_chats(UnixMicros(301), 1).await.unwrap(),
        vec![older.clone()]
    );
    assert!(
        store
            .quiet_chats(UnixMicros(100), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .quiet_chats(UnixMicros(1_000), 0)
            .await
            .unwrap()
            .is_empty()
    );
    // A new change makes a chat recent again.
    store.commit(vec![activity(&older, 2, 400)]).await.unwrap();
    assert_eq!(
        store.quiet_chats(UnixMicros(301), 10).await.unwrap(),
        [old, recent]
    );
    store.close().await;
}
