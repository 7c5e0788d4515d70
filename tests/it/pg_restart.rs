//! PostgreSQL going away under load, with two replicas on it: calls answer
//! UNAVAILABLE while it is down, the replicas reconnect by themselves,
//! nothing acknowledged is lost or doubled, and each replica's subscribers
//! end on the other replica's latest state.
//!
//! Two outages: every connection of both replicas cut and refused for a
//! while through a proxy, which the replicas cannot tell from a restart (it
//! runs with the other tests); and a real restart, the command in
//! `RECAPD_TEST_PG_RESTART` (the test script sets `pg_ctlcluster ... restart`
//! when it runs the database itself). The real restart takes the database
//! away from every other test too, so it is ignored by default and run
//! alone: `RECAPD_TEST_PG_RESTART=CMD cargo test --test it pg_restart:: -- --ignored`.

use std::collections::HashSet;
use std::time::Duration;

use crate::common::api::*;
use crate::common::replicas::*;
use crate::common::*;
use tokio::time::Instant;

/// How the database goes away.
enum Outage {
    /// Every connection through a proxy cut, new ones refused, for 1.5 s.
    ProxyCut,
    /// A shell command that restarts the database server.
    Restart(String),
}

#[tokio::test]
async fn replicas_ride_out_a_database_cut_under_load() {
    ride_out(Outage::ProxyCut).await;
}

#[tokio::test]
#[ignore = "restarts PostgreSQL under every other test: run alone with RECAPD_TEST_PG_RESTART and --ignored"]
async fn replicas_ride_out_a_database_restart_under_load() {
    let command = std::env::var("RECAPD_TEST_PG_RESTART")
        .expect("RECAPD_TEST_PG_RESTART names the command that restarts the test database");
    ride_out(Outage::Restart(command)).await;
}

async fn ride_out(outage: Outage) {
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let proxy = Proxy::start(database_addr()).await;
    let url = match outage {
        Outage::Restart(_) => test_database_url(),
        Outage::ProxyCut => url_through(proxy.addr),
    };
    let mut a = Server::start_with(replica_config(&dir.path().join("a"), &url, &schema)).await;
    let mut b = Server::start_with(replica_config(&dir.path().join("b"), &url, &schema)).await;
    b.set_global_debounce(0).await;
    wait_for_debounce(&mut a, 0).await;
    for chat in ["x", "y"] {
        a.publish(chat, chat_changed(vec![message("m0", "start")]))
            .await
            .unwrap();
    }
    let mut on_a = subscribe(&mut a, &["y"], 0).await;
    let mut on_b = subscribe(&mut b, &["x"], 0).await;

    // A writes chat x, B writes chat y: each subscriber watches the
    // other replica's chat.
    let load_a = tokio::spawn(publish_through_outage(a.events.clone(), "x", "a", 400));
    let load_b = tokio::spawn(publish_through_outage(b.events.clone(), "y", "b", 400));
    tokio::time::sleep(Duration::from_millis(800)).await;
    match &outage {
        Outage::Restart(command) => {
            let status = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(command)
                .status()
                .await
                .expect("the restart command runs");
            assert!(status.success(), "{command} failed: {status}");
        }
        Outage::ProxyCut => {
            proxy.cut();
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            proxy.restore();
        }
    }
    let (acked_a, refused_a) = load_a.await.unwrap();
    let (acked_b, refused_b) = load_b.await.unwrap();
    eprintln!(
        "A: {} acknowledged, {refused_a} refused; B: {} acknowledged, {refused_b} refused",
        acked_a.len(),
        acked_b.len()
    );
    assert!(refused_a + refused_b > 0, "the outage was never noticed");
    assert!(
        acked_a.len() > 100 && acked_b.len() > 100,
        "a replica did not recover"
    );

    catch_up(&mut b, &mut a, "x").await;
    catch_up(&mut a, &mut b, "y").await;
    for (server, chat, acknowledged) in [(&mut b, "x", &acked_a), (&mut a, "y", &acked_b)] {
        let ids = order(server, chat).await;
        let unique: HashSet<&String> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len(), "an event was stored twice");
        let positions: Vec<usize> = acknowledged
            .iter()
            .map(|id| {
                ids.iter()
                    .position(|x| x == id)
                    .unwrap_or_else(|| panic!("acknowledged {id} was lost"))
            })
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "events were reordered"
        );
    }
    // Each subscriber ends on the other replica's latest injection.
    for (stream, server, chat) in [(&mut on_a, &mut b, "y"), (&mut on_b, &mut a, "x")] {
        let latest = server.injection(chat).await.revision;
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, stream.message()).await {
                Ok(Ok(Some(update))) if update.revision >= latest => break,
                Ok(Ok(Some(_))) => {}
                other => panic!("a subscriber was left behind revision {latest}: {other:?}"),
            }
        }
    }
    a.stop().await;
    b.stop().await;
}
