//! Inclusion groups (world-info.js:5159-5356; facts §2 and §7).

use super::tests::support::*;

fn json(uid: u32, group: &str, order: u32, extra: &str) -> String {
    format!(
        r#"{{"uid":{uid},"constant":true,"content":"c{uid}","group":"{group}","order":{order}{extra}}}"#
    )
}

#[test]
fn an_override_member_with_the_highest_order_wins() {
    // world-info.js:5322-5327: groupOverride members sorted by order.
    let entries = [
        entry(&json(0, "g", 30, "")),
        entry(&json(1, "g", 20, r#","groupOverride":true"#)),
        entry(&json(2, "g", 10, r#","groupOverride":true"#)),
    ];
    assert_eq!(Run::new(&entries, &[("U", "a")]).uids(), ["1"]);
}

#[test]
fn the_weighted_draw_is_seeded_and_follows_the_weights() {
    // world-info.js:5329-5346: Math.random() * total weight, first
    // cumulative weight >= the roll.
    let entries = [
        entry(&json(0, "g", 20, r#","groupWeight":1"#)),
        entry(&json(1, "g", 10, r#","groupWeight":1000000"#)),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    let mut wins = [0; 2];
    for seed in 0..50 {
        run.seed = seed;
        let got = run.uids();
        assert_eq!(got.len(), 1, "exactly one member of a group");
        assert_eq!(run.uids(), got, "same seed, same winner");
        wins[usize::from(got[0] == "1")] += 1;
    }
    assert!(
        wins[1] >= 49,
        "the heavy member wins nearly always: {wins:?}"
    );
}

#[test]
fn a_group_activated_in_an_earlier_pass_takes_no_more_members() {
    // world-info.js:5312-5316: compares the whole `group` string.
    let entries = [
        entry(r#"{"uid":0,"key":["a"],"content":"b","group":"g","order":2}"#),
        entry(r#"{"uid":1,"key":["b"],"content":"x","group":"g","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.settings.recursive = true;
    assert_eq!(run.uids(), ["0"]);
    // "g,h" is not "g": the second entry is not stopped by that rule.
    let entries = [
        entry(r#"{"uid":0,"key":["a"],"content":"b","group":"g,h","order":2}"#),
        entry(r#"{"uid":1,"key":["b"],"content":"x","group":"g","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.settings.recursive = true;
    assert_eq!(run.uids(), ["0", "1"]);
}

#[test]
fn group_scoring_keeps_the_best_matches() {
    // world-info.js:428-475, 5169-5216: score = primary keys found.
    let entries = [
        entry(
            r#"{"uid":0,"key":["a","b"],"content":"x","group":"g","order":2,"useGroupScoring":true}"#,
        ),
        entry(
            r#"{"uid":1,"key":["a","z"],"content":"y","group":"g","order":1,"useGroupScoring":true,"groupOverride":true}"#,
        ),
    ];
    // Without scoring the override would win; with it uid 0 scores 2 > 1.
    assert_eq!(Run::new(&entries, &[("U", "a b")]).uids(), ["0"]);
}

#[test]
fn losing_two_groups_drops_the_last_candidate_as_sillytavern_does() {
    // Facts §7 and world-info.js:5290: `splice(indexOf(entry), 1)` with
    // indexOf -1 removes the last candidate. X is in g1 and g2 and loses
    // both; its second removal drops W, which is in no group.
    let entries = [
        entry(&json(0, "g1,g2", 40, "")),                               // X
        entry(&json(1, "g1", 30, r#","groupOverride":true"#)),          // Y
        entry(&json(2, "g2", 20, r#","groupOverride":true"#)),          // Z
        entry(r#"{"uid":3,"constant":true,"content":"w","order":10}"#), // W
    ];
    assert_eq!(Run::new(&entries, &[("U", "a")]).uids(), ["1", "2"]);
}

#[test]
fn groups_are_drawn_in_javascript_property_order() {
    // world-info.js:5273-5281 builds the groups as an object's keys, and
    // `Object.entries` puts integer-like keys ("2") before the others,
    // whatever the entries' order: "2" takes the first draw.
    use rand_chacha::ChaCha8Rng;
    use rand_core::SeedableRng;
    // A seed whose first draw is below one half and second is not.
    let seed = (0..1000u64)
        .find(|&s| {
            let mut rng = ChaCha8Rng::seed_from_u64(s);
            let (a, b) = (super::js_random(&mut rng), super::js_random(&mut rng));
            a < 0.5 && b >= 0.5
        })
        .expect("such a seed among the first thousand");
    let entries = [
        entry(&json(0, "b", 40, r#","groupWeight":50"#)),
        entry(&json(1, "b", 30, r#","groupWeight":50"#)),
        entry(&json(2, "2", 20, r#","groupWeight":50"#)),
        entry(&json(3, "2", 10, r#","groupWeight":50"#)),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.seed = seed;
    // "2" gets the low roll (its first member), "b" the high one (its
    // second member).
    assert_eq!(run.uids(), ["1", "2"]);
}

#[test]
fn group_names_split_on_commas_and_the_white_space_after_them() {
    // world-info.js:5273: split(/,\s*/): "g, h" is in "g" and "h".
    let entries = [
        entry(&json(0, "g, h", 30, "")),
        entry(&json(1, "h", 20, r#","groupOverride":true"#)),
    ];
    assert_eq!(Run::new(&entries, &[("U", "a")]).uids(), ["1"]);
}
