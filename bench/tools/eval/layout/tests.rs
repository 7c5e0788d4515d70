use super::*;

const FLAT: &str = r#"{
  "speaker_a": "Ann", "speaker_b": "Bob",
  "session_2_date_time": "2:00 pm on 9 May, 2023",
  "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "Back again."}],
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
    {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi!"},
    {"speaker": "Bob", "dia_id": "D1:2", "text": "Look", "img_url": ["x"], "blip_caption": "a dog on a beach"},
    {"speaker": "Ann", "dia_id": "D1:3", "text": "  "}
  ],
  "session_3_date_time": "no turns",
  "session_1_summary": "not a session",
  "qa": [
    {"question": "When?", "answer": 2022, "evidence": ["D1:2"], "category": 2},
    {"question": "Who?", "adversarial_answer": "Bob", "evidence": ["D2:01; D1:1"], "category": 5},
    {"question": "", "answer": "x"}
  ]
}"#;

#[test]
fn reads_the_flat_layout_in_session_order() {
    let conversations = parse(FLAT, "26").unwrap();
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(c.id, "26");
    assert_eq!((c.speaker_a.as_str(), c.speaker_b.as_str()), ("Ann", "Bob"));
    let numbers: Vec<u32> = c.sessions.iter().map(|s| s.number).collect();
    assert_eq!(numbers, [1, 2]);
    assert_eq!(c.sessions[0].date_time, "1:56 pm on 8 May, 2023");
    // The blank turn is dropped; the photo's caption is kept as text.
    assert_eq!(c.sessions[0].turns.len(), 2);
    assert_eq!(
        c.sessions[0].turns[1].text,
        "Look [shares a photo: a dog on a beach]"
    );
    assert_eq!(c.questions.len(), 2);
    assert_eq!(c.questions[0].answer, "2022");
    assert_eq!(c.questions[0].evidence_sessions, [1]);
    assert_eq!(c.questions[1].answer, ADVERSARIAL_GOLD);
    assert_eq!(c.questions[1].category, 5);
    assert_eq!(c.questions[1].evidence_sessions, [1, 2]);
    assert_eq!(c.questions[0].evidence, ["D1:2"]);
    assert_eq!(c.questions[1].evidence, ["D2:1", "D1:1"]);
}

#[test]
fn reads_the_nested_layout_of_locomo10() {
    let nested = format!(
        r#"[{{"sample_id": "conv-26", "conversation": {FLAT}, "qa": [{{"question": "Q?", "answer": "A", "evidence": [], "category": 1}}]}},
           {{"sample_id": "conv-30", "conversation": {FLAT}}}]"#
    );
    let conversations = parse(&nested, "locomo10").unwrap();
    assert_eq!(conversations.len(), 2);
    assert_eq!(conversations[0].id, "conv-26");
    assert_eq!(conversations[0].sessions.len(), 2);
    // The outer `qa` is the one read.
    assert_eq!(conversations[0].questions.len(), 1);
    assert!(conversations[1].questions.is_empty());
}

#[test]
fn truncating_drops_later_sessions_and_their_questions() {
    let mut c = parse(FLAT, "x").unwrap().remove(0);
    c.truncate_sessions(1);
    assert_eq!(c.sessions.len(), 1);
    assert_eq!(c.questions.len(), 1);
    assert_eq!(c.questions[0].question, "When?");
}

#[test]
fn refuses_what_is_not_a_conversation() {
    assert!(parse("3", "x").is_err());
    assert!(parse(r#"{"speaker_a": "A"}"#, "x").is_err());
    assert!(parse(r#"{"speaker_a": "A", "speaker_b": "B"}"#, "x").is_err());
    assert!(parse("not json", "x").is_err());
}

#[test]
fn reads_each_sessions_facts_in_either_layout() {
    let flat = r#"{
      "speaker_a": "Ann", "speaker_b": "Bob",
      "session_1": [{"speaker": "Ann", "text": "Hi"}],
      "session_2": [{"speaker": "Bob", "text": "Yo"}],
      "events_session_2": ["Bob sold his boat."],
      "events_session_1": {"Bob": [], "Ann": ["Ann adopted a dog.", " "], "date": "8 May, 2023"},
      "events_session_3": {"Ann": [], "Bob": []}
    }"#;
    let c = &parse(flat, "x").unwrap()[0];
    assert_eq!(
        c.facts,
        [
            SessionFacts {
                session: 1,
                facts: vec!["Ann adopted a dog.".into()]
            },
            SessionFacts {
                session: 2,
                facts: vec!["Bob sold his boat.".into()]
            },
        ]
    );
    let nested = format!(
        r#"{{"sample_id": "conv-1", "conversation": {flat},
             "event_summary": {{"events_session_2": {{"Bob": ["Bob moved to Oslo."], "date": "9 May"}}}}}}"#
    );
    let mut c = parse(&nested, "x").unwrap().remove(0);
    // The outer `event_summary` is the one read.
    assert_eq!(c.facts.len(), 1);
    assert_eq!(c.facts[0].facts, ["Bob moved to Oslo."]);
    c.truncate_sessions(1);
    assert!(c.facts.is_empty());
}
