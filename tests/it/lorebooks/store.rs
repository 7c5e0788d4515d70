//! The lorebooks table through the store itself (no server), the same
//! contract on both stores: writes checked against the book's version in
//! the write itself, tenants apart, pages by name as bytes.

use std::sync::Arc;

use recapd::domain::ids::Tenant;
use recapd::domain::time::UnixMicros;
use recapd::store::{
    ChatStore, DeleteLorebook, LorebookText, NO_LOREBOOK, PutLorebook, SqliteStore, StoreError,
    Write,
};

use crate::store_jobs::Schema;

fn put(tenant: &str, name: &str, json: &str, expect: u64, version: u64) -> Write {
    Write::Lorebook(PutLorebook {
        tenant: Tenant(tenant.into()),
        name: name.into(),
        json: LorebookText(json.into()),
        entry_count: 1,
        updated_us: UnixMicros(i64::try_from(version).unwrap()),
        expect_version: expect,
        version,
    })
}

fn delete(tenant: &str, name: &str, expect: u64) -> Write {
    Write::DeleteLorebook(DeleteLorebook {
        tenant: Tenant(tenant.into()),
        name: name.into(),
        expect_version: expect,
    })
}

fn changed(result: Result<(), StoreError>, name: &str) {
    match result {
        Err(StoreError::LorebookChanged(book)) => assert_eq!(book, name),
        other => panic!("expected LorebookChanged({name}), got {other:?}"),
    }
}

async fn versioned_writes(store: Arc<dyn ChatStore>) {
    let t = Tenant("t".into());
    store
        .commit(vec![put("t", "a", "{\"v\":1}", NO_LOREBOOK, 11)])
        .await
        .unwrap();
    // A second creation of the same name loses: the book exists.
    changed(
        store
            .commit(vec![put("t", "a", "{\"v\":2}", NO_LOREBOOK, 12)])
            .await,
        "a",
    );
    // An update from a stale version loses, and takes its group with it.
    changed(
        store
            .commit(vec![
                put("t", "b", "{}", NO_LOREBOOK, 5),
                put("t", "a", "{\"v\":3}", 99, 13),
            ])
            .await,
        "a",
    );
    assert!(
        store.lorebook(&t, "b").await.unwrap().is_none(),
        "nothing of the group applied"
    );
    // From the stored version it wins and moves the version on.
    store
        .commit(vec![put("t", "a", "{\"v\":4}", 11, 14)])
        .await
        .unwrap();
    let stored = store.lorebook(&t, "a").await.unwrap().unwrap();
    assert_eq!(stored.json, "{\"v\":4}");
    assert_eq!(stored.listing.version, 14);
    assert_eq!(stored.listing.updated_us, UnixMicros(14));
    changed(
        store.commit(vec![put("t", "a", "{\"v\":5}", 11, 15)]).await,
        "a",
    );
    // Deletion: only of the version read.
    changed(store.commit(vec![delete("t", "a", 11)]).await, "a");
    changed(
        store.commit(vec![delete("t", "missing", 11)]).await,
        "missing",
    );
    store.commit(vec![delete("t", "a", 14)]).await.unwrap();
    assert!(store.lorebook(&t, "a").await.unwrap().is_none());
    // Versions above 2^62 (they are drawn below 2^63) keep their value.
    let big = (1u64 << 63) - 1;
    store
        .commit(vec![put("t", "a", "{}", NO_LOREBOOK, big)])
        .await
        .unwrap();
    let versions = store
        .lorebook_versions(&t, &["a".into(), "nope".into()])
        .await
        .unwrap();
    assert_eq!(versions, [("a".to_owned(), big)]);
}

async fn tenants_and_pages(store: Arc<dyn ChatStore>) {
    let (t, u) = (Tenant("t".into()), Tenant("u".into()));
    let mut writes = Vec::new();
    for name in ["念", "z", "a", "é", "B"] {
        writes.push(put("t", name, "{}", NO_LOREBOOK, 1));
    }
    writes.push(put("u", "a", "{\"u\":1}", NO_LOREBOOK, 2));
    store.commit(writes).await.unwrap();
    assert_eq!(store.lorebook_count(&t).await.unwrap(), 5);
    assert_eq!(store.lorebook_count(&u).await.unwrap(), 1);
    assert_eq!(
        store.lorebook(&u, "a").await.unwrap().unwrap().json,
        "{\"u\":1}"
    );
    assert_eq!(store.lorebook(&t, "a").await.unwrap().unwrap().json, "{}");
    assert!(store.lorebook(&u, "z").await.unwrap().is_none());
    let page = |after: Option<&str>, limit| {
        let (store, t, after) = (store.clone(), t.clone(), after.map(str::to_owned));
        async move {
            store
                .list_lorebooks(&t, after.as_deref(), limit)
                .await
                .unwrap()
                .into_iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
        }
    };
    // By name as bytes: "B" < "a" < "z" < "é" (0xC3) < "念" (0xE5).
    assert_eq!(page(None, 10).await, ["B", "a", "z", "é", "念"]);
    assert_eq!(page(None, 2).await, ["B", "a"]);
    assert_eq!(page(Some("a"), 2).await, ["z", "é"]);
    assert_eq!(page(Some("é"), 2).await, ["念"]);
    assert!(page(Some("念"), 2).await.is_empty());
    let mut versions = store
        .lorebook_versions(&u, &["a".into(), "z".into()])
        .await
        .unwrap();
    versions.sort();
    assert_eq!(versions, [("a".to_owned(), 2)]);
}

/// One case of the contract, run on a store.
type Case = fn(Arc<dyn ChatStore>) -> std::pin::Pin<Box<dyn Future<Output = ()>>>;

async fn sqlite(case: Case) {
    let dir = tempfile::tempdir().unwrap();
    case(Arc::new(SqliteStore::open(dir.path(), true).await.unwrap())).await;
}

async fn pg(case: Case) {
    let schema = Schema::new();
    case(Arc::new(schema.store().await)).await;
}

#[tokio::test]
async fn sqlite_lorebook_writes_are_checked_against_the_books_version() {
    sqlite(|s| Box::pin(versioned_writes(s))).await;
}

#[tokio::test]
async fn pg_lorebook_writes_are_checked_against_the_books_version() {
    pg(|s| Box::pin(versioned_writes(s))).await;
}

#[tokio::test]
async fn sqlite_lorebooks_keep_to_their_tenant_and_page_by_name_bytes() {
    sqlite(|s| Box::pin(tenants_and_pages(s))).await;
}

#[tokio::test]
async fn pg_lorebooks_keep_to_their_tenant_and_page_by_name_bytes() {
    pg(|s| Box::pin(tenants_and_pages(s))).await;
}

/// An engine on `store`: with PostgreSQL, one replica of several.
async fn replica(store: recapd::store::PgStore) -> recapd::engine::Engine {
    let store = Arc::new(store);
    recapd::engine::Engine::new(
        recapd::store::Stores {
            chats: store.clone(),
            replicas: Some(store),
        },
        recapd::engine::EngineOptions::default(),
    )
    .await
    .expect("the engine starts")
}

#[tokio::test]
async fn pg_the_scan_on_one_replica_reads_books_as_another_left_them() {
    let schema = Schema::new();
    let (a, b) = (
        replica(schema.store().await).await,
        replica(schema.store().await).await,
    );
    let t = Tenant("t".into());
    let wanted: Vec<String> = vec!["chat".into(), "missing".into(), "global".into()];
    for name in ["global", "chat"] {
        a.lorebooks()
            .import_lorebook(&t, name, r#"{"entries":{"0":{"content":"x"}}}"#.into())
            .await
            .unwrap();
    }
    let count = |books: &[(String, Arc<recapd::domain::world_info::book::Book>)]| {
        books
            .iter()
            .map(|(name, book)| (name.clone(), book.entry_count()))
            .collect::<Vec<_>>()
    };
    let seen = b.lorebooks().lorebooks_for_scan(&t, &wanted).await.unwrap();
    assert_eq!(count(&seen), [("chat".into(), 1), ("global".into(), 1)]);
    // B's cache holds them now; A's edit makes B read "chat" again, and
    // only it.
    a.lorebooks()
        .put_lorebook_entry(&t, "chat", None, r#"{"content":"y"}"#)
        .await
        .unwrap();
    let after = b.lorebooks().lorebooks_for_scan(&t, &wanted).await.unwrap();
    assert_eq!(count(&after), [("chat".into(), 2), ("global".into(), 1)]);
    assert!(
        Arc::ptr_eq(&seen[1].1, &after[1].1),
        "the unchanged book from B's cache"
    );
    // A re-import under the same name, and a deletion, are seen too.
    a.lorebooks()
        .import_lorebook(&t, "global", r#"{"entries":{}}"#.into())
        .await
        .unwrap();
    a.lorebooks().delete_lorebook(&t, "chat").await.unwrap();
    let last = b.lorebooks().lorebooks_for_scan(&t, &wanted).await.unwrap();
    assert_eq!(count(&last), [("global".into(), 0)]);
    // B's edits go from what A wrote.
    b.lorebooks()
        .put_lorebook_entry(&t, "global", Some("4"), r#"{"content":"z"}"#)
        .await
        .unwrap();
    assert_eq!(
        count(&a.lorebooks().lorebooks_for_scan(&t, &wanted).await.unwrap()),
        [("global".into(), 1)]
    );
}
