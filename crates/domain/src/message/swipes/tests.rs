use super::*;

fn swipe(text: &str) -> Swipe {
    Swipe {
        text: text.into(),
        ..Swipe::default()
    }
}

fn texts(swipes: &Swipes) -> Vec<&str> {
    swipes.iter().map(|s| s.text.as_str()).collect()
}

#[test]
fn swipes_are_as_large_as_one_swipe() {
    assert_eq!(size_of::<Swipes>(), size_of::<Swipe>());
}

#[test]
fn one_swipe_is_inline_and_more_are_boxed() {
    let mut swipes = Swipes::from(vec![swipe("a")]);
    assert!(swipes.allocated().is_none());
    assert_eq!(texts(&swipes), ["a"]);
    swipes.push(swipe("b"));
    assert_eq!(swipes.allocated().map(<[Swipe]>::len), Some(2));
    swipes.push(swipe("c"));
    assert_eq!(texts(&swipes), ["a", "b", "c"]);
    assert_eq!(swipes.len(), 3);
    assert_eq!(swipes[1].text, "b");
    assert!(swipes.get(3).is_none());
    swipes[2].text = "C".into();
    for s in &mut swipes {
        s.text.push('!');
    }
    assert_eq!(texts(&swipes), ["a!", "b!", "C!"]);
}

#[test]
fn an_empty_list_becomes_one_empty_swipe() {
    for swipes in [
        Swipes::from(Vec::new()),
        std::iter::empty().collect(),
        Swipes::default(),
    ] {
        assert_eq!(texts(&swipes), [""]);
        assert!(swipes.allocated().is_none());
    }
}

#[test]
fn conversions_keep_the_swipes_and_their_order() {
    for n in 1..4 {
        let list: Vec<Swipe> = (0..n).map(|i| swipe(&i.to_string())).collect();
        let from_vec = Swipes::from(list.clone());
        let collected: Swipes = list.clone().into_iter().collect();
        assert_eq!(from_vec, collected);
        assert_eq!(from_vec.allocated().is_some(), n > 1);
        assert_eq!(from_vec.clone().into_iter().collect::<Vec<_>>(), list);
        assert_eq!(format!("{from_vec:?}"), format!("{list:?}"));
    }
}

#[test]
fn stored_as_the_array_the_boxed_slice_was() {
    for n in 0..4 {
        let list: Vec<Swipe> = (0..n).map(|i| swipe(&i.to_string())).collect();
        let old = serde_json::to_string(&list.clone().into_boxed_slice()).unwrap();
        let swipes = Swipes::from(list.clone());
        if n > 0 {
            assert_eq!(serde_json::to_string(&swipes).unwrap(), old);
        }
        let read: Swipes = serde_json::from_str(&old).unwrap();
        assert_eq!(read, swipes);
        assert_eq!(read.allocated().is_some(), n > 1);
    }
    for bad in ["null", "{}", "\"a\"", "[1]", "[{\"text\":\"a\"},2]"] {
        assert!(serde_json::from_str::<Swipes>(bad).is_err(), "{bad}");
    }
}
