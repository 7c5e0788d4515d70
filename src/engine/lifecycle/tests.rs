//! The retention sweep's period.

use super::*;
use crate::domain::time::UnixMicros;

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

#[test]
fn a_deleted_chat_tells_the_message_tier_only_if_it_ran() {
    let chat = Tenant::default().chat("c");
    let quiet = Tombstone {
        revision: 7,
        message_revision: 0,
        deleted_us: UnixMicros(5),
    };
    let last = deleted_injections(&chat, &quiet);
    assert_eq!(last.len(), 1);
    assert!(last[0].deleted && last[0].text.is_empty());
    assert_eq!((last[0].key, last[0].revision), (InjectionKey::Scene, 7));
    let tiered = Tombstone {
        message_revision: 3,
        ..quiet
    };
    let last = deleted_injections(&chat, &tiered);
    assert_eq!(last.len(), 2);
    assert_eq!((last[1].key, last[1].revision), (InjectionKey::Messages, 3));
}
