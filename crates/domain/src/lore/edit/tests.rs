use super::*;
use crate::lore::default_entity_types;

const BOOK_LIMITS: BookLimits = BookLimits {
    max_entries: 1000,
    max_key_bytes: 1024,
    max_content_bytes: 100_000,
    max_book_bytes: usize::MAX,
};

fn limits() -> LoreLimits {
    LoreLimits {
        max_entries: 50,
        max_keys: 4,
        book: BOOK_LIMITS,
    }
}

fn entity(kind: &str, name: &str, keywords: &[&str], content: &[&str]) -> Entity {
    Entity {
        kind: kind.into(),
        name: name.into(),
        keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
        content: content.iter().map(|c| (*c).to_owned()).collect(),
    }
}

fn member(book: &Book, uid: &str, name: &str) -> Value {
    entry_members(book.entry(uid).expect("the entry").get())
        .get(name)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_new_entry_carries_type_name_keys_and_facts() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let uid = create_entry(
        &mut book,
        &entity(
            "character",
            "Mira Holt",
            &["The Captain", "she", "tonight"],
            &[" Leads the guard. ", "", "Leads the guard.", "Has a scar."],
        ),
        &types,
        &limits(),
    )
    .unwrap();
    assert_eq!(uid, "0");
    assert_eq!(member(&book, "0", "comment"), json!("character-Mira Holt"));
    assert_eq!(
        member(&book, "0", "key"),
        json!(["mira holt", "the captain"])
    );
    assert_eq!(
        member(&book, "0", "content"),
        json!("Leads the guard.\nHas a scar.")
    );
    assert_eq!(member(&book, "0", "constant"), json!(false));
    assert_eq!(member(&book, "0", "position"), json!(0));
    // SillyTavern's other defaults are there too.
    assert_eq!(member(&book, "0", "selectiveLogic"), json!(0));
    let rule = create_entry(
        &mut book,
        &entity("rule", "No magic", &[], &["Magic fails in the city."]),
        &types,
        &limits(),
    )
    .unwrap();
    assert_eq!(member(&book, &rule, "constant"), json!(true));
}

#[test]
fn a_full_book_refuses_a_new_entry() {
    let mut book = Book::empty();
    let small = LoreLimits {
        max_entries: 1,
        ..limits()
    };
    let types = default_entity_types();
    create_entry(
        &mut book,
        &entity("item", "Key", &[], &["Opens the vault."]),
        &types,
        &small,
    )
    .unwrap();
    let refused = create_entry(
        &mut book,
        &entity("item", "Map", &[], &["Shows the vault."]),
        &types,
        &small,
    );
    assert!(
        matches!(refused, Err(DomainError::ResourceExhausted(_))),
        "{refused:?}"
    );
    assert_eq!(book.entry_count(), 1);
}

#[test]
fn a_rename_keeps_the_old_name_as_a_key_and_replaces_the_content() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let uid = create_entry(
        &mut book,
        &entity(
            "character",
            "Mira",
            &["apprentice"],
            &["Mira is an apprentice smith."],
        ),
        &types,
        &limits(),
    )
    .unwrap();
    let before = entry_fingerprint(&book, &uid);
    let changed = merge_entry(
        &mut book,
        &uid,
        "Mira is the Master Smith of Varn.\n",
        Some("Master Mira"),
        &["master smith".to_owned()],
        &types,
        &limits(),
    )
    .unwrap();
    assert!(changed);
    assert_eq!(
        member(&book, &uid, "comment"),
        json!("character-Master Mira")
    );
    assert_eq!(
        member(&book, &uid, "key"),
        json!(["master mira", "mira", "apprentice", "master smith"])
    );
    assert_eq!(
        member(&book, &uid, "content"),
        json!("Mira is the Master Smith of Varn.")
    );
    assert_ne!(entry_fingerprint(&book, &uid), before);
    // The same name (any case) is no rename.
    merge_entry(
        &mut book,
        &uid,
        "x",
        Some("master MIRA"),
        &[],
        &types,
        &limits(),
    )
    .unwrap();
    assert_eq!(
        member(&book, &uid, "comment"),
        json!("character-Master Mira")
    );
}

#[test]
fn a_locked_entry_is_never_changed() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let uid = create_entry(
        &mut book,
        &entity("location", "Varn", &[], &["A city."]),
        &types,
        &limits(),
    )
    .unwrap();
    book.put_entry(
        Some(&uid),
        r#"{"recapdLocked":true,"content":"My own words."}"#,
        &BOOK_LIMITS,
    )
    .unwrap();
    let before = book.to_json();
    assert!(is_locked(&book, &uid));
    assert!(
        !merge_entry(
            &mut book,
            &uid,
            "Other words.",
            Some("Varnholm"),
            &[],
            &types,
            &limits()
        )
        .unwrap()
    );
    let twin = create_entry(
        &mut book,
        &entity("location", "Varn", &[], &["A port."]),
        &types,
        &limits(),
    )
    .unwrap();
    let merged = deduplicate(&mut book, &types, &limits()).unwrap();
    assert_eq!(
        merged,
        [Deduplicated {
            kept: uid.clone(),
            removed: twin
        }]
    );
    assert_eq!(
        book.to_json(),
        before,
        "the locked entry is as the client left it"
    );
}

#[test]
fn duplicates_merge_into_the_lowest_uid_with_their_facts_and_keys() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let first = create_entry(
        &mut book,
        &entity(
            "character",
            "Oda",
            &["innkeeper"],
            &["Runs the Silver Stag."],
        ),
        &types,
        &limits(),
    )
    .unwrap();
    create_entry(
        &mut book,
        &entity("location", "Oda", &[], &["A village."]),
        &types,
        &limits(),
    )
    .unwrap();
    let second = create_entry(
        &mut book,
        &entity(
            "character",
            "the oda",
            &["old oda"],
            &["Runs the Silver Stag.", "Has a limp."],
        ),
        &types,
        &limits(),
    )
    .unwrap();
    let merged = deduplicate(&mut book, &types, &limits()).unwrap();
    assert_eq!(
        merged,
        [Deduplicated {
            kept: first.clone(),
            removed: second.clone()
        }]
    );
    assert!(book.entry(&second).is_none());
    assert_eq!(book.entry_count(), 2, "the village is another entity");
    assert_eq!(
        member(&book, &first, "content"),
        json!("Runs the Silver Stag.\nHas a limp.")
    );
    assert_eq!(
        member(&book, &first, "key"),
        json!(["oda", "innkeeper", "old oda"])
    );
    assert!(
        deduplicate(&mut book, &types, &limits())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn seeding_copies_only_the_listed_fields() {
    let source = Book::parse(
        r#"{"entries":{"5":{"uid":5,"comment":"Eldoria","key":["eldoria"],"content":"A kingdom.","order":7,"position":4,"depth":2,"constant":true,"disable":false,"probability":40,"group":"g"},"6":{"uid":6,"comment":"","key":[],"content":""}}}"#,
        &BOOK_LIMITS,
    )
    .unwrap();
    let mut book = Book::empty();
    assert_eq!(seed(&mut book, &[&source], &limits()).unwrap(), 1);
    assert_eq!(member(&book, "0", "comment"), json!("Eldoria"));
    assert_eq!(member(&book, "0", "order"), json!(7));
    assert_eq!(member(&book, "0", "position"), json!(4));
    assert_eq!(member(&book, "0", "constant"), json!(true));
    // Not copied: SillyTavern's defaults instead.
    assert_eq!(member(&book, "0", "probability"), json!(100));
    assert_eq!(member(&book, "0", "group"), json!(""));
}

#[test]
fn a_clients_edit_changes_the_fingerprint_a_job_read() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let uid = create_entry(
        &mut book,
        &entity("item", "Ledger", &[], &["Lists debts."]),
        &types,
        &limits(),
    )
    .unwrap();
    let read = EntryRead {
        book: "b".into(),
        uid: uid.clone(),
        fingerprint: entry_fingerprint(&book, &uid).unwrap(),
    };
    assert!(entry_unchanged(&read, Some(&book)));
    book.put_entry(
        Some(&uid),
        r#"{"content":"Lists debts and names."}"#,
        &BOOK_LIMITS,
    )
    .unwrap();
    assert!(!entry_unchanged(&read, Some(&book)));
    assert!(!entry_unchanged(&read, None));
}

#[test]
fn facts_already_in_the_entry_need_no_merge_but_new_keywords_are_kept() {
    let mut book = Book::empty();
    let types = default_entity_types();
    let uid = create_entry(
        &mut book,
        &entity(
            "character",
            "Oda",
            &[],
            &["Oda runs the Silver Stag.", "She has a limp."],
        ),
        &types,
        &limits(),
    )
    .unwrap();
    assert!(adds_nothing(
        &book,
        &uid,
        &entity(
            "character",
            "Oda",
            &[],
            &["oda runs the  silver stag", "She has a limp"]
        )
    ));
    assert!(!adds_nothing(
        &book,
        &uid,
        &entity(
            "character",
            "Oda",
            &[],
            &["She has a limp.", "She owes Mira money."]
        )
    ));
    assert!(
        add_keys(
            &mut book,
            &uid,
            &["innkeeper".to_owned()],
            &types,
            &limits()
        )
        .unwrap()
    );
    assert_eq!(member(&book, &uid, "key"), json!(["oda", "innkeeper"]));
    assert!(
        !add_keys(
            &mut book,
            &uid,
            &["Innkeeper".to_owned()],
            &types,
            &limits()
        )
        .unwrap()
    );
}

#[test]
fn an_entry_from_an_llm_holds_no_control_character_and_no_regex_key() {
    let mut book = Book::empty();
    let types = default_entity_types();
    // As a job stored before cleaning existed would carry it.
    let hostile = entity(
        "character",
        "Mi\u{0}ra\u{1b}[31m\r\nFAKE LOG LINE\u{202e}",
        &["/(?<=(a+)+)b/i", "{{char}}/x+/"],
        &["Leads the guard."],
    );
    let uid = create_entry(&mut book, &hostile, &types, &limits()).unwrap();
    assert_eq!(
        member(&book, &uid, "comment"),
        json!("character-Mira[31m FAKE LOG LINE")
    );
    assert_eq!(
        member(&book, &uid, "key"),
        json!(["mira[31m fake log line", "(?=(a+)+)b/i", "char/x+/"])
    );
    // A merge's new name and keywords are cleaned the same way.
    merge_entry(
        &mut book,
        &uid,
        "Leads the guard.",
        Some("Lady\u{202e} Mira\r\n"),
        &["/mira+/g".to_owned()],
        &types,
        &limits(),
    )
    .unwrap();
    assert_eq!(member(&book, &uid, "comment"), json!("character-Lady Mira"));
    let keys = member(&book, &uid, "key");
    assert_eq!(keys[0], json!("lady mira"));
    // At most four keys: the keyword is past them, defused or not.
    add_keys(&mut book, &uid, &["/mira+/g".to_owned()], &types, &limits()).unwrap();
    let keys = member(&book, &uid, "key");
    assert!(
        keys.as_array()
            .unwrap()
            .iter()
            .all(|k| !crate::lore::clean::is_regex_shaped(k.as_str().unwrap())),
        "{keys}"
    );
    let mut fresh = Book::empty();
    let uid = create_entry(&mut fresh, &ok_entity(), &types, &limits()).unwrap();
    add_keys(
        &mut fresh,
        &uid,
        &["/mira+/g".to_owned()],
        &types,
        &limits(),
    )
    .unwrap();
    assert_eq!(member(&fresh, &uid, "key"), json!(["oda", "mira+/g"]));
}

fn ok_entity() -> Entity {
    entity("character", "Oda", &[], &["Runs the inn."])
}

#[test]
fn an_entity_past_the_operators_limits_has_a_problem() {
    let ok = entity("character", "Mira", &["captain"], &["Leads."]);
    assert_eq!(entity_problem(&ok, &BOOK_LIMITS), None);
    let long_name = entity("character", &"N".repeat(1025), &[], &["Leads."]);
    let problem = entity_problem(&long_name, &BOOK_LIMITS).unwrap();
    assert!(problem.contains("1025 bytes"), "{problem}");
    let at_the_limit = entity("character", &"N".repeat(1024), &[], &["Leads."]);
    assert_eq!(entity_problem(&at_the_limit, &BOOK_LIMITS), None);
    let long_key = entity("character", "Mira", &[&"k".repeat(1025)], &["Leads."]);
    assert!(entity_problem(&long_key, &BOOK_LIMITS).is_some());
    let long_facts = entity("character", "Mira", &[], &[&"f".repeat(100_001)]);
    assert!(entity_problem(&long_facts, &BOOK_LIMITS).is_some());
}
