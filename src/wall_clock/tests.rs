use std::time::Duration;

use super::*;

#[test]
fn the_manual_clock_moves_only_when_told() {
    let clock = ManualClock::new(UnixMicros(1_000_000));
    assert_eq!(clock.now(), UnixMicros(1_000_000));
    assert_eq!(clock.now_ms(), UnixMillis(1_000));
    let shared = clock.clone();
    shared.advance(Duration::from_millis(1500));
    assert_eq!(clock.now(), UnixMicros(2_500_000));
    clock.set(UnixMicros(7));
    assert_eq!(shared.now(), UnixMicros(7));
    clock.advance(Duration::MAX);
    assert_eq!(clock.now(), UnixMicros(i64::MAX));
}

#[test]
fn the_system_clock_is_after_the_epoch_and_agrees_with_its_ms() {
    let us = SystemClock.now();
    assert!(us > UnixMicros(1_600_000_000_000_000));
    assert!(SystemClock.now_ms() >= us.to_millis());
}
