//! A book's entry edits through the store itself (no server), on both
//! stores: an edit moves the book's version and appends the entry alone,
//! checked against the version like a whole write; a whole write or a
//! deletion drops the edits.

use std::sync::Arc;

use recapd::domain::ids::Tenant;
use recapd::domain::time::UnixMicros;
use recapd::store::{
    ChatStore, DeleteLorebook, LorebookText, NO_LOREBOOK, PutLorebook, PutLorebookEntry,
    SqliteStore, StoreError, Write,
};

use crate::store_jobs::Schema;

fn whole(name: &str, json: &str, expect: u64, version: u64) -> Write {
    Write::Lorebook(PutLorebook {
        tenant: Tenant("t".into()),
        name: name.into(),
        json: LorebookText(json.into()),
        entry_count: 1,
        updated_us: UnixMicros(1),
        expect_version: expect,
        version,
    })
}

fn entry(name: &str, uid: &str, text: Option<&str>, expect: u64, version: u64) -> Write {
    Write::LorebookEntry(PutLorebookEntry {
        tenant: Tenant("t".into()),
        name: name.into(),
        uid: uid.into(),
        entry: text.map(str::to_owned),
        entry_count: 7,
        updated_us: UnixMicros(i64::try_from(version).unwrap()),
        expect_version: expect,
        version,
    })
}

fn changed(result: Result<(), StoreError>, name: &str) {
    match result {
        Err(StoreError::LorebookChanged(book)) => assert_eq!(book, name),
        other => panic!("expected LorebookChanged({name}), got {other:?}"),
    }
}

async fn entry_edits(store: Arc<dyn ChatStore>) {
    let t = Tenant("t".into());
    let base = r#"{"entries":{"0":{"content":"zero"}}}"#;
    store
        .commit(vec![whole("a", base, NO_LOREBOOK, 1)])
        .await
        .unwrap();
    store
        .commit(vec![entry("a", "1", Some(r#"{"content":"one"}"#), 1, 2)])
        .await
        .unwrap();
    // A stale edit loses, and takes its group with it.
    changed(
        store
            .commit(vec![
                whole("b", "{}", NO_LOREBOOK, 5),
                entry("a", "1", Some("{}"), 1, 3),
            ])
            .await,
        "a",
    );
    assert!(store.lorebook(&t, "b").await.unwrap().is_none());
    // An edit of a book that does not exist loses too.
    changed(
        store.commit(vec![entry("nope", "0", None, 9, 10)]).await,
        "nope",
    );
    // A deletion of an entry (of uid "", which a file may hold) is an edit.
    store
        .commit(vec![entry("a", "", None, 2, 3)])
        .await
        .unwrap();
    store
        .commit(vec![entry("a", "0", None, 3, 4)])
        .await
        .unwrap();
    let stored = store.lorebook(&t, "a").await.unwrap().unwrap();
    assert_eq!(stored.json, base, "the text written whole is kept as is");
    assert_eq!(
        stored.edits,
        [
            ("1".to_owned(), Some(r#"{"content":"one"}"#.to_owned())),
            (String::new(), None),
            ("0".to_owned(), None),
        ]
    );
    assert_eq!(stored.log_bytes, (1 + 1 + 17) + 1 + (1 + 1));
    assert_eq!(stored.listing.version, 4);
    assert_eq!(stored.listing.entry_count, 7);
    assert_eq!(stored.listing.updated_us, UnixMicros(4));
    assert_eq!(
        store.lorebook_versions(&t, &["a".into()]).await.unwrap(),
        [("a".to_owned(), 4)]
    );
    // A whole write (the compaction) drops the edits.
    store
        .commit(vec![whole("a", r#"{"entries":{}}"#, 4, 5)])
        .await
        .unwrap();
    let stored = store.lorebook(&t, "a").await.unwrap().unwrap();
    assert!(stored.edits.is_empty());
    assert_eq!(stored.log_bytes, 0);
    // A deleted book's edits go with it: a new book of its name has none.
    store
        .commit(vec![entry("a", "2", Some("{}"), 5, 6)])
        .await
        .unwrap();
    store
        .commit(vec![Write::DeleteLorebook(DeleteLorebook {
            tenant: t.clone(),
            name: "a".into(),
            expect_version: 6,
        })])
        .await
        .unwrap();
    store
        .commit(vec![whole("a", base, NO_LOREBOOK, 7)])
        .await
        .unwrap();
    let stored = store.lorebook(&t, "a").await.unwrap().unwrap();
    assert!(stored.edits.is_empty(), "{:?}", stored.edits);
    assert_eq!((stored.json.as_str(), stored.log_bytes), (base, 0));
}

#[tokio::test]
async fn sqlite_an_entry_edit_appends_the_entry_against_the_books_version() {
    let dir = tempfile::tempdir().unwrap();
    entry_edits(Arc::new(SqliteStore::open(dir.path(), true).await.unwrap())).await;
}

#[tokio::test]
async fn pg_an_entry_edit_appends_the_entry_against_the_books_version() {
    let schema = Schema::new();
    entry_edits(Arc::new(schema.store().await)).await;
}
