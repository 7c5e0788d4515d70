use std::time::Duration;

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn the_ceiling_doubles_from_min_to_max() {
    let policy = Backoff::default();
    assert_eq!(policy.ceiling(0), ms(1000));
    assert_eq!(policy.ceiling(1), ms(1000));
    assert_eq!(policy.ceiling(2), ms(2000));
    assert_eq!(policy.ceiling(3), ms(4000));
    assert_eq!(policy.ceiling(7), ms(60_000));
    assert_eq!(policy.ceiling(u32::MAX), ms(60_000));
}

#[test]
fn full_jitter_draws_anywhere_up_to_the_ceiling() {
    let policy = Backoff::default();
    assert_eq!(policy.delay(3, 1.0), ms(4000));
    assert_eq!(policy.delay(3, 0.5), ms(2000));
    assert_eq!(policy.delay(3, 0.0), ms(0));
}

#[test]
fn partial_and_no_jitter_keep_the_rest_of_the_ceiling() {
    let half = Backoff {
        jitter: 0.5,
        ..Backoff::default()
    };
    assert_eq!(half.delay(1, 0.0), ms(500));
    assert_eq!(half.delay(1, 1.0), ms(1000));
    let none = Backoff {
        jitter: 0.0,
        ..Backoff::default()
    };
    assert_eq!(none.delay(2, 0.3), ms(2000));
}

#[test]
fn hostile_inputs_are_clamped_not_panicked_on() {
    let policy = Backoff {
        min: Duration::MAX,
        max: Duration::MAX,
        jitter: f64::NAN,
    };
    assert_eq!(policy.delay(u32::MAX, f64::INFINITY), Duration::MAX);
    let odd = Backoff {
        jitter: 7.0,
        ..Backoff::default()
    };
    assert_eq!(odd.delay(1, f64::NAN), ms(0));
    assert_eq!(odd.delay(1, -3.0), ms(0));
    assert_eq!(odd.delay(1, 9.0), ms(1000));
}
