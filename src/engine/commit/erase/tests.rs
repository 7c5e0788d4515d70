//! A deleted chat's last injections.

use super::*;
use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;

#[test]
fn a_deleted_chat_tells_each_tier_only_if_it_ran() {
    let chat = Tenant::default().chat("c");
    let quiet = Tombstone {
        revision: 7,
        message_revision: 0,
        deleted_us: UnixMicros(5),
        recall_revision: 0,
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
    let recalled = Tombstone {
        recall_revision: 9,
        ..tiered
    };
    let last = deleted_injections(&chat, &recalled);
    assert_eq!((last[2].key, last[2].revision), (InjectionKey::Recall, 9));
}
