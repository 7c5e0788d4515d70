use super::*;
use crate::chat::tests::msg;

fn message(id: &str) -> Message {
    msg(id, "text")
}

fn seqs(list: &MessageList) -> Vec<i64> {
    list.iter().map(|(seq, _)| seq).collect()
}

#[test]
fn both_ends_grow_and_lookups_find_positions() {
    let mut list = MessageList::from_sorted(vec![(0, message("a")), (1, message("b"))]);
    list.push_back(2, message("c"));
    list.push_front(-1, message("z"));
    assert_eq!(seqs(&list), [-1, 0, 1, 2]);
    assert_eq!(list.get(1).map(|m| m.id.as_str()), Some("b"));
    assert!(list.get(5).is_none());
    assert_eq!(list.count_through(0), 2);
    assert_eq!(list.count_through(-2), 0);
    let from: Vec<i64> = list.iter_from(2).map(|(seq, _)| seq).collect();
    assert_eq!(from, [1, 2]);
    assert_eq!(list.iter_from(9).len(), 0);
    assert_eq!(list.remove(0).map(|m| m.id), Some("a".into()));
    assert_eq!(seqs(&list), [-1, 1, 2]);
    assert!(list.remove(0).is_none());
}

#[test]
fn a_full_list_grows_by_an_eighth_not_by_doubling() {
    let rows = (0..800)
        .map(|seq| (seq, message(&seq.to_string())))
        .collect();
    let mut list = MessageList::from_sorted(rows);
    assert_eq!(list.entries.capacity(), 800, "built exactly");
    list.push_back(800, message("x"));
    assert_eq!(list.entries.capacity(), 900);
    let mut small = MessageList::default();
    small.push_back(0, message("a"));
    assert_eq!(small.entries.capacity(), MIN_GROWTH);
}

#[test]
fn lookups_find_every_position_with_and_without_gaps() {
    // Consecutive positions (found at once), then gaps from removals and
    // a prepend far before (found by the binary search): every present
    // position found, no absent one, at either end and past them.
    let rows = (0..200)
        .map(|seq| (seq, message(&seq.to_string())))
        .collect();
    let mut list = MessageList::from_sorted(rows);
    for seq in 0..200 {
        assert_eq!(
            list.get(seq).map(|m| m.id.to_string()),
            Some(seq.to_string())
        );
    }
    for seq in [0, 3, 50, 51, 199] {
        assert!(list.remove(seq).is_some());
    }
    list.push_front(-1_000, message("far"));
    for seq in -1_001..=201 {
        let expected = match seq {
            -1_000 => Some("far".to_owned()),
            1..=198 if ![3, 50, 51].contains(&seq) => Some(seq.to_string()),
            _ => None,
        };
        assert_eq!(list.get(seq).map(|m| m.id.to_string()), expected, "{seq}");
    }
    assert!(list.get(i64::MAX).is_none() && list.get(i64::MIN).is_none());
}
