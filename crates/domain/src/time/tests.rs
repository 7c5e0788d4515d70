use std::time::{Duration, SystemTime};

use super::*;

#[test]
fn units_convert_both_ways_rounding_towards_the_past() {
    assert_eq!(UnixMillis(1_500).to_micros(), UnixMicros(1_500_000));
    assert_eq!(UnixMicros(1_500_999).to_millis(), UnixMillis(1_500));
    assert_eq!(UnixMicros(-1).to_millis(), UnixMillis(-1));
    assert_eq!(UnixMicros::from(UnixMillis(2)), UnixMicros(2_000));
    assert_eq!(UnixMillis::from(UnixMicros(2_000)), UnixMillis(2));
    assert_eq!(UnixMillis(i64::MAX).to_micros(), UnixMicros(i64::MAX));
}

#[test]
fn arithmetic_saturates_and_never_goes_negative_in_durations() {
    let t = UnixMicros(10);
    assert_eq!(t.saturating_add(Duration::from_micros(5)), UnixMicros(15));
    assert_eq!(t.saturating_sub(Duration::from_micros(15)), UnixMicros(-5));
    assert_eq!(t.saturating_add(Duration::MAX), UnixMicros(i64::MAX));
    assert_eq!(UnixMicros(15).since(t), Duration::from_micros(5));
    assert_eq!(t.since(UnixMicros(15)), Duration::ZERO);
    assert_eq!(
        UnixMillis(3).saturating_add(Duration::from_millis(4)),
        UnixMillis(7)
    );
    assert_eq!(UnixMillis(7).since(UnixMillis(3)), Duration::from_millis(4));
}

#[test]
fn system_times_on_either_side_of_the_epoch_are_read() {
    let after = SystemTime::UNIX_EPOCH + Duration::from_micros(42);
    assert_eq!(UnixMicros::from_system_time(after), UnixMicros(42));
    let before = SystemTime::UNIX_EPOCH - Duration::from_micros(42);
    assert_eq!(UnixMicros::from_system_time(before), UnixMicros(-42));
}

#[test]
fn instants_order_as_time_does_and_serialize_as_bare_numbers() {
    assert!(UnixMicros(-1) < UnixMicros::EPOCH);
    assert!(UnixMillis(2) > UnixMillis(1));
    assert_eq!(
        serde_json::to_string(&UnixMicros(7)).ok().as_deref(),
        Some("7")
    );
    assert_eq!(
        serde_json::from_str::<UnixMillis>("-3").ok(),
        Some(UnixMillis(-3))
    );
    assert_eq!(i64::from(UnixMicros(9)), 9);
}
