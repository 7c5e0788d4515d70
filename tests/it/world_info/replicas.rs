//! Two replicas on one PostgreSQL (always: without a reachable database
//! these fail, as tests/it/replicas.rs): a book edited on one applies on
//! the other, and a sticky effect started by a scan on one is there for a
//! scan on the other.

use crate::common::replicas::*;

use super::*;

#[tokio::test]
async fn books_and_timed_effects_are_shared_by_replicas() {
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let url = test_database_url();
    let mut a = Server::start_with(replica_config(&dir.path().join("a"), &url, &schema)).await;
    let mut b = Server::start_with(replica_config(&dir.path().join("b"), &url, &schema)).await;
    a.set_global_debounce(0).await;
    wait_for_debounce(&mut b, 0).await;
    import_book(
        &a,
        "Timed",
        &book(&[(
            "0",
            json!({"key": ["comet"], "sticky": 3, "content": "The comet burns."}),
        )]),
    )
    .await;
    a.update_settings(
        "",
        pb::Settings {
            world_info_depth: Some(1),
            world_info_global_books: names(&["Timed"]),
            ..Default::default()
        },
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while b.global_settings().await.world_info_depth != Some(1) {
        assert!(
            std::time::Instant::now() < deadline,
            "settings never arrived"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    set_chat(&mut a, "c", vec![said("m1", "User", "A comet!")]).await;
    catch_up(&mut b, &mut a, "c").await;
    // A generation on A starts the sticky effect (WI:730-736).
    assert_eq!(uids(&scan(&a, scan_request("c")).await), ["0"]);
    // The next message, then a generation on B: the effect A started keeps
    // the entry active though the comet left the window (WI:619-660).
    add_message(&mut a, "c", said("m2", "Seraphina", "Quiet night.")).await;
    catch_up(&mut b, &mut a, "c").await;
    assert_eq!(uids(&scan(&b, scan_request("c")).await), ["0"]);

    // An edit on B applies to A's next scan.
    lorebooks(&b)
        .put_lorebook_entry(pb::PutLorebookEntryRequest {
            name: "Timed".into(),
            uid: "0".into(),
            fields: json!({"content": "Edited on B."}).to_string(),
        })
        .await
        .expect("put entry");
    set_chat(&mut b, "d", vec![said("m1", "User", "The comet.")]).await;
    catch_up(&mut a, &mut b, "d").await;
    assert_eq!(scan(&a, scan_request("d")).await.before, "Edited on B.");
    a.stop().await;
    b.stop().await;
}
