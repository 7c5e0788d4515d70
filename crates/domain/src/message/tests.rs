use super::*;

fn new(id: &str, text: &str) -> NewMessage {
    NewMessage {
        id: id.into(),
        text: text.into(),
        ..Default::default()
    }
}

#[test]
fn a_message_without_swipes_has_one_swipe_its_text() {
    let m = new("m1", "hello")
        .build("message", &Limits::default())
        .unwrap();
    assert_eq!(m.swipes.len(), 1);
    assert_eq!(m.text(), "hello");
}

#[test]
fn swipes_take_their_text_from_swipe_id_and_text_overrides_it() {
    let mut n = new("m1", "");
    n.swipes = vec!["a".into(), "b".into()];
    n.swipe_id = 1;
    assert_eq!(
        n.clone().build("m", &Limits::default()).unwrap().text(),
        "b"
    );
    n.text = "B!".into();
    let m = n.clone().build("m", &Limits::default()).unwrap();
    assert_eq!(m.text(), "B!");
    assert_eq!(m.swipes[0].text, "a");
    n.swipe_id = 2;
    let err = n.build("m", &Limits::default()).unwrap_err();
    assert!(err.to_string().contains("m.swipe_id"), "{err}");
}

#[test]
fn build_refuses_bad_id_and_long_text() {
    assert!(new("", "x").build("m", &Limits::default()).is_err());
    let limits = Limits {
        max_text_bytes: 3,
        ..Limits::default()
    };
    let err = new("a", "long").build("m", &limits).unwrap_err();
    assert!(err.to_string().contains("m.text"), "{err}");
}

/// Every memory field set, and the scene-break fields beside them.
fn every_field() -> MessageData {
    MessageData {
        memory: Some("m".into()),
        prefill: Some("p".into()),
        error: Some("e".into()),
        reasoning: Some("r".into()),
        edited: Some(true),
        exclude: Some(true),
        scene_break: Some(true),
        scene_break_visible: Some(false),
        scene_break_name: Some("The library".into()),
        scene_recap_memory: Some("They met.".into()),
        is_auto_recap_system_memory: Some(true),
        scene_recap_versions: Some(vec!["They met.".into()]),
        scene_recap_current_index: Some(0),
    }
}

#[test]
fn clearing_the_memory_and_a_new_swipe_keep_everything_but_the_memory_fields() {
    let cleared = MessageData {
        edited: Some(false),
        exclude: Some(false),
        ..Default::default()
    };
    // (label, data, what clear_memory leaves and a new swipe starts with)
    let cases = [
        (
            "clear_memory matches the extension",
            MessageData {
                scene_break_visible: None,
                scene_break_name: None,
                scene_recap_memory: None,
                is_auto_recap_system_memory: None,
                scene_recap_versions: None,
                scene_recap_current_index: None,
                ..every_field()
            },
            MessageData {
                scene_break: Some(true),
                ..cleared.clone()
            },
        ),
        (
            "a new swipe keeps everything but the memory fields",
            every_field(),
            MessageData {
                scene_break: Some(true),
                scene_break_visible: Some(false),
                scene_break_name: Some("The library".into()),
                scene_recap_memory: Some("They met.".into()),
                is_auto_recap_system_memory: Some(true),
                scene_recap_versions: Some(vec!["They met.".into()]),
                scene_recap_current_index: Some(0),
                ..cleared.clone()
            },
        ),
        (
            "empty data gets edited and exclude set false",
            MessageData::default(),
            cleared.clone(),
        ),
    ];
    for (label, data, expected) in cases {
        assert_eq!(data.for_new_swipe(), expected, "for_new_swipe: {label}");
        let mut in_place = data;
        in_place.clear_memory();
        assert_eq!(in_place, expected, "clear_memory: {label}");
    }
}

#[test]
fn memory_text_puts_prefill_first_only_when_shown() {
    let d = MessageData {
        memory: Some("Alice entered the library.".into()),
        prefill: Some("In this scene: ".into()),
        ..Default::default()
    };
    assert_eq!(d.memory_text(false).unwrap(), "Alice entered the library.");
    assert_eq!(
        d.memory_text(true).unwrap(),
        "In this scene: Alice entered the library."
    );
    let prefill_only = MessageData {
        memory: Some(String::new()),
        prefill: Some("p".into()),
        ..Default::default()
    };
    assert_eq!(prefill_only.memory_text(true).as_deref(), Some("p"));
    assert_eq!(prefill_only.memory_text(false), None);
    let unset_memory = MessageData {
        prefill: Some("p".into()),
        ..Default::default()
    };
    assert_eq!(unset_memory.memory_text(true).as_deref(), Some("p"));
    let nothing = MessageData {
        prefill: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(nothing.memory_text(true), None);
}

#[test]
fn visible_scene_break_needs_flag_and_not_explicitly_invisible() {
    let mut d = MessageData {
        scene_break: Some(true),
        ..Default::default()
    };
    assert!(d.is_visible_scene_break());
    d.scene_break_visible = Some(false);
    assert!(!d.is_visible_scene_break());
    d.scene_break_visible = Some(true);
    assert!(d.is_visible_scene_break());
    d.scene_break = Some(false);
    assert!(!d.is_visible_scene_break());
}

#[test]
fn taking_new_content_keeps_each_swipes_data() {
    let mut old = new("m", "old").build("m", &Limits::default()).unwrap();
    old.data_mut().memory = Some("recap".into());
    let mut incoming = new("m", "");
    incoming.swipes = vec!["new0".into(), "new1".into()];
    incoming.swipe_id = 1;
    old.take_content_of(incoming.build("m", &Limits::default()).unwrap());
    assert_eq!(old.text(), "new1");
    assert_eq!(old.swipes[0].data.memory.as_deref(), Some("recap"));
    assert_eq!(old.swipes[1].data, MessageData::default());
}

/// A stored row of a message, as recapd wrote it while `swipes` was a
/// boxed slice (every data field spelled out, `null` when not set).
fn stored_row(id: &str, swipes: &[(&str, &str)], swipe_id: u32) -> String {
    const NO_DATA: &str = r#""prefill":null,"exclude":null,"error":null,"reasoning":null,"edited":null,"scene_break":null,"scene_break_visible":null,"scene_break_name":null,"scene_recap_memory":null,"is_auto_recap_system_memory":null"#;
    let swipes: Vec<String> = swipes
        .iter()
        .map(|(text, memory)| {
            format!(r#"{{"text":"{text}","data":{{"memory":{memory},{NO_DATA}}}}}"#)
        })
        .collect();
    message_row(id, &swipes, swipe_id)
}

fn message_row(id: &str, swipes: &[String], swipe_id: u32) -> String {
    format!(
        r#"{{"id":"{id}","name":"","is_user":false,"hidden":false,"is_narrator":false,"is_thoughts":false,"character_key":"","swipes":[{}],"swipe_id":{swipe_id}}}"#,
        swipes.join(",")
    )
}

#[test]
fn rows_written_before_read_the_same_and_rows_leave_out_data_never_set() {
    let one = new("m1", "hello").build("m", &Limits::default()).unwrap();
    let old = stored_row("m1", &[("hello", "null")], 0);
    assert_eq!(serde_json::from_str::<Message>(&old).unwrap(), one);
    let row = message_row("m1", &[r#"{"text":"hello"}"#.into()], 0);
    assert_eq!(serde_json::to_string(&one).unwrap(), row);
    assert_eq!(serde_json::from_str::<Message>(&row).unwrap(), one);

    let mut n = new("m2", "");
    n.swipes = vec!["a".into(), "b".into()];
    n.swipe_id = 1;
    let mut two = n.build("m", &Limits::default()).unwrap();
    two.data_mut().memory = Some("recap".into());
    let old = stored_row("m2", &[("a", "null"), ("b", "\"recap\"")], 1);
    assert_eq!(serde_json::from_str::<Message>(&old).unwrap(), two);
    // A field set to `false` is kept: only fields never set are left out.
    two.data_mut().exclude = Some(false);
    let row = message_row(
        "m2",
        &[
            r#"{"text":"a"}"#.into(),
            r#"{"text":"b","data":{"memory":"recap","exclude":false}}"#.into(),
        ],
        1,
    );
    assert_eq!(serde_json::to_string(&two).unwrap(), row);
    assert_eq!(serde_json::from_str::<Message>(&row).unwrap(), two);
}

fn scene(recap: &str) -> MessageData {
    MessageData {
        scene_recap_memory: Some(recap.into()),
        ..MessageData::default()
    }
}

#[test]
fn a_new_scene_recap_is_a_new_current_version_and_the_same_one_changes_nothing() {
    let mut data = MessageData::default();
    data.merge(&scene("First.")).unwrap();
    assert_eq!(data.scene_recap_versions, Some(vec!["First.".to_owned()]));
    assert_eq!(data.scene_recap_current_index, Some(0));
    data.merge(&scene("Second.")).unwrap();
    data.merge(&scene("Second.")).unwrap();
    assert_eq!(
        data.scene_recap_versions,
        Some(vec!["First.".to_owned(), "Second.".to_owned()])
    );
    assert_eq!(data.scene_recap_current_index, Some(1));
    assert_eq!(data.scene_recap_memory.as_deref(), Some("Second."));
}

#[test]
fn a_scene_recap_from_before_versions_is_the_first_version() {
    // Rows recapd stored before it kept versions have the recap alone.
    let mut data = scene("Old.");
    assert_eq!(data.scene_recap_version_list(), vec!["Old.".to_owned()]);
    data.merge(&scene("New.")).unwrap();
    assert_eq!(
        data.scene_recap_versions,
        Some(vec!["Old.".to_owned(), "New.".to_owned()])
    );
}

#[test]
fn selecting_a_version_makes_its_text_the_scene_recap() {
    let mut data = MessageData::default();
    for recap in ["A", "B", "C"] {
        data.merge(&scene(recap)).unwrap();
    }
    data.select_scene_recap_version(0).unwrap();
    assert_eq!(data.scene_recap_memory.as_deref(), Some("A"));
    assert_eq!(data.scene_recap_current_index, Some(0));
    let err = data.select_scene_recap_version(3).unwrap_err();
    assert!(err.to_string().contains("3 is not an index"), "{err}");
    assert_eq!(data.scene_recap_memory.as_deref(), Some("A"));
    // A new recap while an older version is shown goes to the end.
    data.merge(&scene("D")).unwrap();
    assert_eq!(data.scene_recap_current_index, Some(3));
}

#[test]
fn a_given_list_replaces_the_versions_and_a_bad_index_changes_nothing() {
    let mut data = MessageData::default();
    data.merge(&scene("A")).unwrap();
    let list = MessageData {
        scene_recap_versions: Some(vec!["X".into(), "Y".into()]),
        ..MessageData::default()
    };
    data.merge(&list).unwrap();
    assert_eq!(data.scene_recap_memory.as_deref(), Some("Y"));
    let bad = MessageData {
        scene_recap_current_index: Some(2),
        memory: Some("m".into()),
        ..MessageData::default()
    };
    let err = data.merge(&bad).unwrap_err();
    assert!(
        err.to_string().contains("data.scene_recap_current_index"),
        "{err}"
    );
    assert_eq!(data.memory, None, "a refused update sets nothing");
    let pick = MessageData {
        scene_recap_current_index: Some(0),
        ..MessageData::default()
    };
    data.merge(&pick).unwrap();
    assert_eq!(data.scene_recap_memory.as_deref(), Some("X"));
}

#[test]
fn the_oldest_versions_go_past_the_maximum() {
    let mut data = MessageData::default();
    for i in 0..=MAX_SCENE_RECAP_VERSIONS {
        data.merge(&scene(&format!("v{i}"))).unwrap();
    }
    let versions = data.scene_recap_versions.as_ref().unwrap();
    assert_eq!(versions.len(), MAX_SCENE_RECAP_VERSIONS);
    assert_eq!(versions[0], "v1");
    assert_eq!(
        data.scene_recap_current_index,
        Some(u32::try_from(MAX_SCENE_RECAP_VERSIONS - 1).unwrap())
    );
}

#[test]
fn an_edit_clears_what_the_extensions_edit_memory_clears() {
    let mut data = every_field();
    data.edit_memory("m");
    assert_eq!(data, every_field(), "the same text changes nothing");
    data.edit_memory("by hand");
    assert_eq!(data.memory.as_deref(), Some("by hand"));
    assert_eq!(
        (&data.error, &data.reasoning, &data.prefill),
        (&None, &None, &None)
    );
    assert_eq!(data.edited, Some(true));
    assert_eq!(data.exclude, Some(true), "both texts non-empty: kept");
    data.edit_memory("");
    assert_eq!(data.edited, Some(false));
    assert_eq!(data.exclude, Some(false));
    assert_eq!(data.scene_recap_memory.as_deref(), Some("They met."));
}
