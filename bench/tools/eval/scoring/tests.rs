use super::*;

#[test]
fn exact_and_near_matches() {
    // Boundaries 9 and 19; breaks 9 (exact), 20 (one after), 26 (none).
    let within_one = score(&[9, 20, 26], &[9, 19], 1);
    assert_eq!(within_one.matched, 2);
    assert_eq!(within_one.precision(), Some(2.0 / 3.0));
    assert_eq!(within_one.recall(), Some(1.0));
    let exact = score(&[9, 20, 26], &[9, 19], 0);
    assert_eq!(exact.matched, 1);
    assert_eq!(exact.precision(), Some(1.0 / 3.0));
    assert_eq!(exact.recall(), Some(0.5));
}

#[test]
fn one_break_never_matches_two_boundaries() {
    // 10 is within one of both 9 and 11; 11 is exact for 11. Closest
    // first: 11-11, then 10-9.
    let s = score(&[10, 11], &[9, 11], 1);
    assert_eq!(s.matched, 2);
    let s = score(&[10], &[9, 11], 1);
    assert_eq!(s.matched, 1);
    assert_eq!(s.recall(), Some(0.5));
    let s = score(&[8, 9, 10], &[9], 1);
    assert_eq!(s.matched, 1);
    assert_eq!(s.precision(), Some(1.0 / 3.0));
}

#[test]
fn nothing_found_or_nothing_to_find() {
    let s = score(&[], &[4], 1);
    assert_eq!(s.precision(), None);
    assert_eq!(s.recall(), Some(0.0));
    let s = score(&[4], &[], 1);
    assert_eq!(s.precision(), Some(0.0));
    assert_eq!(s.recall(), None);
}
