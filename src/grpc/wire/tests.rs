use super::*;
use crate::domain::footprint::{Footprint, allocation_bytes};
use crate::domain::ids::Tenant;
use crate::domain::refresh::{InjectionKey, Trigger};
use crate::domain::settings::{Position, Role, Settings};
use crate::domain::time::UnixMicros;

/// Every field combination the wire form depends on: each tier, deleted or
/// not, running_recap_version unset, 0 and set, empty and multi-byte text,
/// every position, role and trigger (and none), unset and set times,
/// tenant or none, the extremes of the numbers.
fn every_injection() -> Vec<Injection> {
    let keys = [
        InjectionKey::Scene,
        InjectionKey::Messages,
        InjectionKey::Recall,
    ];
    let positions = [
        Position::None,
        Position::InPrompt,
        Position::InChat,
        Position::BeforePrompt,
    ];
    let roles = [Role::System, Role::User, Role::Assistant];
    let triggers = std::iter::once(None)
        .chain(Trigger::ALL.into_iter().map(Some))
        .chain([Some(Trigger::ChatDeleted)]);
    let mut all = Vec::new();
    for (k, key) in keys.into_iter().enumerate() {
        for (t, trigger) in triggers.clone().enumerate() {
            for deleted in [false, true] {
                for running_recap_version in [None, Some(0), Some(7), Some(u32::MAX)] {
                    let tenant = Tenant(if t % 2 == 0 {
                        String::new()
                    } else {
                        "acme".into()
                    });
                    let chat = tenant.chat(&format!("chat-{k}-{t}"));
                    let settings = Settings::default();
                    let base = if deleted {
                        Injection::deleted(&chat, key, 9, UnixMicros(1_700_000_000_123_456))
                    } else {
                        Injection::unrefreshed(&chat, &settings, t % 3 != 0, key)
                    };
                    all.push(Injection {
                        text: ["", "recap", "épée — 剣 🗡", &"x".repeat(2048)][t % 4].to_owned(),
                        position: positions[t % 4],
                        depth: [0, 4, u32::MAX][t % 3],
                        role: roles[t % 3],
                        scan: t % 2 == 1,
                        revision: [0, 1, u64::MAX][t % 3],
                        running_recap_version,
                        token_count: [0, 12, u32::MAX][(t + 1) % 3],
                        auto_hidden_count: [0, 3][t % 2],
                        trigger,
                        refreshed_at_us: [UnixMicros::EPOCH, UnixMicros(-1), base.refreshed_at_us]
                            [t % 3],
                        ..base
                    });
                }
            }
        }
    }
    all
}

#[test]
fn served_bytes_are_the_wire_message_for_every_field_combination() {
    let all = every_injection();
    // 3 tiers, 18 triggers (none, the 16 refreshes, a deletion), deleted
    // or not, 4 running_recap_versions.
    assert_eq!(all.len(), 3 * 18 * 2 * 4);
    for injection in all {
        let expected = pb::Injection::from(&injection).encode_to_vec();
        let wire = WireInjection(Arc::new(injection));
        assert_eq!(wire.bytes(), expected, "{:?}", wire.0);
        // Served again: the same bytes, from the cache.
        assert_eq!(wire.0.encoded.get(), Some(&expected[..]));
        assert_eq!(wire.clone().bytes(), expected);
        // And a client decodes what it was sent.
        assert_eq!(
            pb::Injection::decode(wire.bytes()).unwrap(),
            pb::Injection::from(&*wire.0)
        );
    }
}

#[test]
fn the_footprint_counts_the_cached_bytes_and_a_copy_starts_without_them() {
    let chat = Tenant::default().chat("c");
    let injection = Arc::new(Injection {
        text: "a recap".into(),
        revision: 3,
        running_recap_version: Some(2),
        ..Injection::unrefreshed(&chat, &Settings::default(), true, InjectionKey::Scene)
    });
    let before = injection.heap_bytes();
    let expected = pb::Injection::from(&*injection).encode_to_vec();
    assert_eq!(WireInjection(Arc::clone(&injection)).bytes(), expected);
    assert_eq!(
        injection.heap_bytes(),
        before + allocation_bytes(expected.len())
    );
    // A copy starts without the encoding and is equal all the same.
    let copy = (*injection).clone();
    assert_eq!(copy.encoded.get(), None);
    assert_eq!(copy, *injection);
}
