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
