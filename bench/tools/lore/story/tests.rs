use super::*;

#[test]
fn facts_are_unique_so_the_fake_can_recognise_each_mention() {
    let mut all: Vec<&str> = SCENES
        .iter()
        .flat_map(|s| s.mentions.iter())
        .flat_map(|m| m.facts.iter().copied())
        .collect();
    let count = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), count);
}

#[test]
fn the_first_scene_only_introduces() {
    let c = Counts::of(&SCENES[0]);
    assert_eq!(c.entities(), c.new);
    assert_eq!(expected_entries(), 19);
}

#[test]
fn a_mention_is_found_by_its_facts() {
    let prompt = format!(
        "The entry now:\n{}\n",
        SCENES[2].mentions[2].facts.join("\n")
    );
    assert_eq!(mention_in(&prompt).map(|m| m.name), Some("Captain Voss"));
    assert!(mention_in("nothing here").is_none());
}
