use super::*;
use crate::time::UnixMillis;

fn recap(content: &str, scene: Option<&str>) -> NewRecap {
    NewRecap {
        content: content.into(),
        new_scene_message_id: scene.map(str::to_owned),
        ..Default::default()
    }
}

#[test]
fn versions_count_up_from_zero_and_the_new_one_is_current() {
    let mut r = RunningRecaps::default();
    assert_eq!(r.add(recap("a", None), UnixMillis(1)).unwrap(), 0);
    assert_eq!(r.add(recap("b", None), UnixMillis(2)).unwrap(), 1);
    assert_eq!(r.current().unwrap().content, "b");
    r.select(0).unwrap();
    assert_eq!(r.current_version(), Some(0));
    // Highest + 1, even when a lower one is current or deleted.
    r.delete(1).unwrap();
    assert_eq!(r.add(recap("c", None), UnixMillis(3)).unwrap(), 1);
}

#[test]
fn deleting_the_current_makes_the_highest_remaining_current() {
    let mut r = RunningRecaps::default();
    for c in ["a", "b", "c"] {
        r.add(recap(c, None), UnixMillis(0)).unwrap();
    }
    r.select(1).unwrap();
    r.delete(1).unwrap();
    assert_eq!(r.current_version(), Some(2));
    r.delete(0).unwrap();
    assert_eq!(r.current_version(), Some(2));
    r.delete(2).unwrap();
    assert_eq!(r.current_version(), None);
    assert!(matches!(r.delete(2), Err(DomainError::NotFound(_))));
    assert!(matches!(r.select(9), Err(DomainError::NotFound(_))));
}

#[test]
fn cleanup_deletes_versions_whose_scene_is_invalid_and_keeps_unreferenced() {
    let mut r = RunningRecaps::default();
    r.add(recap("no scene", None), UnixMillis(0)).unwrap();
    r.add(recap("good", Some("m1")), UnixMillis(0)).unwrap();
    r.add(recap("gone", Some("m2")), UnixMillis(0)).unwrap();
    let deleted = r.cleanup(|id| id == "m1");
    assert_eq!(deleted, vec![2]);
    assert_eq!(r.versions().count(), 2);
    assert_eq!(r.current_version(), Some(1));
}

#[test]
fn from_parts_keeps_a_current_that_names_no_version() {
    let mut r = RunningRecaps::default();
    r.add(recap("a", None), UnixMillis(0)).unwrap();
    r.add(recap("b", None), UnixMillis(0)).unwrap();
    let parts: Vec<RecapVersion> = r.versions().cloned().collect();
    let named = RunningRecaps::from_parts(parts.clone(), Some(0));
    assert_eq!(named.current().map(|v| v.content.as_str()), Some("a"));
    let mut dangling = RunningRecaps::from_parts(parts.clone(), Some(7));
    assert_eq!(dangling.current_version(), Some(7));
    assert_eq!(dangling.current(), None, "no fall-back to the highest");
    // Deleting another version leaves it; selecting one repairs it.
    dangling.delete(0).unwrap();
    assert_eq!(dangling.current_version(), Some(7));
    dangling.select(1).unwrap();
    assert_eq!(dangling.current().map(|v| v.content.as_str()), Some("b"));
    let unset = RunningRecaps::from_parts(parts, None);
    assert_eq!((unset.current_version(), unset.current()), (None, None));
}
