use super::*;

fn session(n: u32, facts: &[&str]) -> SessionFacts {
    SessionFacts {
        session: n,
        facts: facts.iter().map(|f| (*f).to_owned()).collect(),
    }
}

#[test]
fn salient_words_drop_function_words_and_stem_endings() {
    let words: Vec<String> =
        salient_words("Caroline attends an LGBTQ support group for the first time.")
            .into_iter()
            .collect();
    assert_eq!(words, ["attend", "caroline", "group", "lgbtq", "support"]);
    assert_eq!(stem("adopted"), stem("adopts"));
    assert_eq!(stem("adopting"), "adopt");
    assert_eq!(stem("glass"), "glass");
}

#[test]
fn a_fact_counts_when_one_entry_holds_two_thirds_of_its_words() {
    let entries = [
        BookEntry::new(
            "character-Caroline",
            &["caroline".into()],
            "Caroline went to an LGBTQ support group.\nShe paints.",
        ),
        BookEntry::new(
            "character-Melanie",
            &["melanie".into()],
            "Melanie runs a charity race.",
        ),
    ];
    let check = check(
        &[
            session(
                1,
                &["Caroline attends an LGBTQ support group for the first time."],
            ),
            // Only its speaker's name is in an entry: one word of four.
            session(
                2,
                &["Melanie finishes her first pottery project.", "The the of."],
            ),
        ],
        &entries,
    );
    assert_eq!(check.entries, 2);
    // The fact without salient words is not counted.
    assert_eq!(check.facts.len(), 2);
    assert_eq!(check.facts[0].entry.as_deref(), Some("character-Caroline"));
    assert_eq!((check.facts[0].best_words, check.facts[0].words), (4, 5));
    assert_eq!(check.facts[1].entry, None);
    assert_eq!(check.facts[1].best_words, 1);
    assert_eq!(check.found(), 1);
}

#[test]
fn words_spread_over_two_entries_do_not_count() {
    let entries = [
        BookEntry::new("character-Ann", &[], "Ann lives in Oslo."),
        BookEntry::new("item-Boat", &["boat".into()], "A red boat, sold."),
    ];
    let check = check(
        &[session(1, &["Ann sold her boat in Oslo harbour."])],
        &entries,
    );
    // ann, sold, boat, oslo, harbour: at most two in one entry.
    assert_eq!(check.found(), 0);
}

#[test]
fn reads_the_entries_of_an_exported_book() {
    let json = r#"{"entries": {"0": {"uid": 0, "comment": "location-Oslo", "key": ["oslo", "the capital"], "content": "A cold city."},
                               "1": {"uid": 1, "content": "No comment."}}}"#;
    let entries = BookEntry::of_book(json).unwrap();
    assert_eq!(entries.len(), 2);
    let check = check(&[session(1, &["The capital is cold."])], &entries);
    assert_eq!(check.facts[0].entry.as_deref(), Some("location-Oslo"));
}
