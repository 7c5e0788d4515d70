use std::sync::Arc;

use super::shelf::{CACHE_BUDGET_BYTES, Loaded, Shelf};
use super::*;
use crate::engine::Engine;

fn loaded(version: u64, bytes: usize) -> Loaded {
    Loaded {
        version,
        book: Arc::new(Book::empty()),
        updated_us: UnixMicros(1),
        bytes,
        log_bytes: 0,
    }
}

fn key(tenant: &str, name: &str) -> (Tenant, String) {
    (Tenant(tenant.into()), name.into())
}

#[test]
fn names_are_1_to_256_bytes_without_control_characters() {
    // The contract: Lorebook.name in proto/recap/v1/recap.proto.
    for good in [
        "a",
        "Eldoria",
        "ฮันเตอร์ x ฮันเตอร์ 念",
        &"x".repeat(256),
        "a b/c.json",
    ] {
        assert!(check_name(good).is_ok(), "{good:?}");
    }
    for bad in [
        "",
        &"x".repeat(257),
        "a\nb",
        "tab\there",
        "nul\0",
        "del\u{7f}",
        "c1\u{85}",
    ] {
        let error = check_name(bad).unwrap_err();
        assert!(
            matches!(&error, DomainError::Invalid { field, .. } if field == "name"),
            "{bad:?}: {error:?}"
        );
    }
    // 256 bytes of 3-byte characters is the limit in bytes, not characters.
    assert!(check_name(&"念".repeat(85)).is_ok());
    assert!(check_name(&"念".repeat(86)).is_err());
}

#[test]
fn fresh_versions_are_never_zero_nor_the_one_replaced_and_fit_a_signed_column() {
    for _ in 0..1000 {
        let v = fresh_version(5);
        assert!(v != NO_LOREBOOK && v != 5 && v < (1 << 63));
    }
}

#[test]
fn the_cache_matches_versions_and_drops_the_least_recently_used_past_its_budget() {
    let shelf = Shelf::default();
    let (a, b, c) = (key("t", "a"), key("t", "b"), key("u", "a"));
    shelf.keep(a.clone(), loaded(1, CACHE_BUDGET_BYTES / 2));
    assert_eq!(shelf.cached(&a, Some(1)).map(|l| l.version), Some(1));
    assert!(shelf.cached(&a, Some(2)).is_none(), "another version");
    assert!(shelf.cached(&c, None).is_none(), "another tenant's book");
    shelf.keep(b.clone(), loaded(7, CACHE_BUDGET_BYTES / 2));
    // `a` was used last before `b`'s entry; touching it makes `b` older.
    assert!(shelf.cached(&a, None).is_some());
    shelf.keep(c.clone(), loaded(3, 10));
    assert!(
        shelf.cached(&b, None).is_none(),
        "least recently used dropped"
    );
    assert!(shelf.cached(&a, None).is_some() && shelf.cached(&c, None).is_some());
    assert_eq!(shelf.cache_size(), (2, CACHE_BUDGET_BYTES / 2 + 10));
    // Replacing counts the new size only; forgetting frees it.
    shelf.keep(a.clone(), loaded(2, 5));
    assert_eq!(shelf.cache_size(), (2, 15));
    shelf.forget(&a);
    assert_eq!(shelf.cache_size(), (1, 10));
    // A book larger than the whole budget is still kept, alone.
    shelf.keep(b.clone(), loaded(9, CACHE_BUDGET_BYTES + 1));
    assert_eq!(shelf.cache_size(), (1, CACHE_BUDGET_BYTES + 1));
}

#[tokio::test]
async fn a_books_lock_serialises_its_holders_and_is_forgotten_when_free() {
    let shelf = Arc::new(Shelf::default());
    let k = key("t", "a");
    let first = shelf.lock(&k).await;
    let waiter = {
        let (shelf, k) = (shelf.clone(), k.clone());
        tokio::spawn(async move {
            let _second = shelf.lock(&k).await;
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    assert!(!waiter.is_finished(), "the second holder waits");
    // Another book's lock is free meanwhile.
    drop(shelf.lock(&key("t", "b")).await);
    drop(first);
    waiter.await.unwrap();
    assert_eq!(shelf.locks_held(), 0);
}

async fn open_engine(dir: &std::path::Path) -> Engine {
    let store = crate::store::SqliteStore::open(dir, false).await.unwrap();
    Engine::new(
        crate::store::Stores::single(Arc::new(store)),
        crate::engine::EngineOptions::default(),
    )
    .await
    .unwrap()
}

fn names(books: &[(String, Arc<Book>)]) -> Vec<&str> {
    books.iter().map(|(name, _)| name.as_str()).collect()
}

#[tokio::test]
async fn the_scan_gets_the_named_books_in_order_as_last_written_skipping_the_missing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(dir.path()).await;
    let (t, u) = (Tenant("t".into()), Tenant("u".into()));
    let book = r#"{"entries":{"0":{"key":["a"],"content":"x"}}}"#;
    for name in ["global", "chat", "persona"] {
        engine
            .lorebooks()
            .import_lorebook(&t, name, book.into())
            .await
            .unwrap();
    }
    engine
        .lorebooks()
        .import_lorebook(&u, "other", book.into())
        .await
        .unwrap();
    let wanted: Vec<String> = [
        "chat", "missing", "", "global", "chat", "other", "a\nb", "persona",
    ]
    .map(str::to_owned)
    .to_vec();
    let books = engine
        .lorebooks()
        .lorebooks_for_scan(&t, &wanted)
        .await
        .unwrap();
    // Named order, each once; unknown, invalid and other tenants' names skipped.
    assert_eq!(names(&books), ["chat", "global", "persona"]);
    assert_eq!(books[0].1.entry_count(), 1);

    // The same parsed book while nothing changes; the edited one after.
    let again = engine
        .lorebooks()
        .lorebooks_for_scan(&t, &wanted)
        .await
        .unwrap();
    assert!(Arc::ptr_eq(&books[0].1, &again[0].1));
    engine
        .lorebooks()
        .put_lorebook_entry(&t, "chat", None, r#"{"content":"new"}"#)
        .await
        .unwrap();
    let edited = engine
        .lorebooks()
        .lorebooks_for_scan(&t, &wanted)
        .await
        .unwrap();
    assert_eq!(edited[0].1.entry_count(), 2);
    assert!(
        Arc::ptr_eq(&books[1].1, &edited[1].1),
        "other books untouched"
    );
    engine
        .lorebooks()
        .delete_lorebook(&t, "global")
        .await
        .unwrap();
    let after = engine
        .lorebooks()
        .lorebooks_for_scan(&t, &wanted)
        .await
        .unwrap();
    assert_eq!(names(&after), ["chat", "persona"]);

    // A new engine on the same store reads the stored books (the cache is
    // gone): the edit is there.
    drop(engine);
    let engine = open_engine(dir.path()).await;
    let reread = engine
        .lorebooks()
        .lorebooks_for_scan(&t, &wanted)
        .await
        .unwrap();
    assert_eq!(names(&reread), ["chat", "persona"]);
    assert_eq!(reread[0].1.entry_count(), 2);
}
