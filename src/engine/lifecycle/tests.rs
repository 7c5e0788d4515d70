//! The retention sweep: its period, and which chats a pass deletes on the
//! engine's (manual) clock.

use super::*;
use crate::domain::chat::ChatEvent;
use crate::domain::time::UnixMicros;
use crate::wall_clock::{ManualClock, WallClock};

#[test]
fn retention_looks_four_times_per_retention_within_bounds() {
    assert_eq!(
        retention_period(Duration::from_secs(4)),
        Duration::from_secs(1)
    );
    assert_eq!(
        retention_period(Duration::from_millis(100)),
        Duration::from_millis(250)
    );
    assert_eq!(
        retention_period(Duration::from_secs(90 * 86_400)),
        Duration::from_secs(60)
    );
}

#[tokio::test]
async fn retention_deletes_exactly_the_chats_quiet_since_the_cut_off_on_the_engines_clock() {
    use crate::engine::tests::{engine_at, key, message};
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(UnixMicros(1_000_000_000_000));
    let engine = engine_at(&dir, &clock).await;
    let retention = Duration::from_secs(2);
    let stop = CancellationToken::new();
    let publish = async |chat: &str, id: &str| {
        engine
            .chats()
            .publish(&key(chat), ChatEvent::MessageSent(message(id)))
            .await
            .unwrap();
    };
    let listed = async || {
        let chats = engine
            .chats()
            .list_chats(&Tenant::default(), None, 10)
            .await
            .unwrap();
        chats
            .into_iter()
            .map(|c| (c.chat_id, c.updated_us))
            .collect::<Vec<_>>()
    };
    publish("quiet", "q1").await;
    publish("busy", "b1").await;
    let start = clock.now();
    assert_eq!(
        listed().await,
        [("busy".to_owned(), start), ("quiet".to_owned(), start)],
        "activity is stamped on the engine's clock"
    );

    // Exactly the retention later, nothing is older than the cut-off.
    clock.advance(retention);
    publish("busy", "b2").await;
    engine
        .chats()
        .retention_pass(clock.now().saturating_sub(retention), &stop)
        .await;
    assert_eq!(
        listed().await.len(),
        2,
        "a chat quiet for exactly the retention stays"
    );

    // One µs more and "quiet" goes; "busy" changed since and stays.
    clock.advance(Duration::from_micros(1));
    engine
        .chats()
        .retention_pass(clock.now().saturating_sub(retention), &stop)
        .await;
    let busy_at = start.saturating_add(retention);
    assert_eq!(listed().await, [("busy".to_owned(), busy_at)]);
    assert!(
        engine
            .chats()
            .message_data(&key("quiet"), "q1", None)
            .await
            .is_err()
    );

    // Once "busy" is quiet for longer than the retention, it goes too.
    clock.advance(retention);
    engine
        .chats()
        .retention_pass(clock.now().saturating_sub(retention), &stop)
        .await;
    assert!(listed().await.is_empty());
}
