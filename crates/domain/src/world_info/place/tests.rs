//! Placement cases; line numbers are `world-info.js` (WI) and `script.js`
//! (SC) at 51ad27f, or the facts file's section.

use super::*;

fn entry(uid: &str, position: Option<WiPosition>, order: f64, content: &str) -> Activated {
    Activated {
        book: "book".to_owned(),
        uid: uid.to_owned(),
        position,
        depth: None,
        role: Role::System,
        order,
        outlet_name: String::new(),
        content: content.to_owned(),
    }
}

fn at_depth(uid: &str, depth: Option<u32>, role: Role, order: f64, content: &str) -> Activated {
    Activated {
        depth,
        role,
        ..entry(uid, Some(WiPosition::AtDepth), order, content)
    }
}

fn outlet(uid: &str, name: &str, order: f64, content: &str) -> Activated {
    Activated {
        outlet_name: name.to_owned(),
        ..entry(uid, Some(WiPosition::Outlet), order, content)
    }
}

#[test]
fn before_and_after_end_ascending_by_order() {
    // WI:88 sorts by order descending, WI:5094-5098 unshifts, WI:5146-5147
    // joins with "\n": higher order sits later (facts §3).
    let p = place(&[
        entry("a", Some(WiPosition::Before), 10.0, "A"),
        entry("b", Some(WiPosition::Before), 300.0, "B"),
        entry("c", Some(WiPosition::Before), 100.0, "C"),
        entry("d", Some(WiPosition::After), 5.0, "D"),
        entry("e", Some(WiPosition::After), 1.0, "E"),
    ]);
    assert_eq!(p.before, "A\nC\nB");
    assert_eq!(p.after, "E\nD");
}

#[test]
fn equal_orders_end_in_reverse_scan_order() {
    // WI:5084: the sort is stable (scan order among equals), then WI:5095
    // unshifts each, reversing the equals.
    let p = place(&[
        entry("a", Some(WiPosition::Before), 100.0, "first"),
        entry("b", Some(WiPosition::Before), 100.0, "second"),
        entry("c", Some(WiPosition::Before), 100.0, "third"),
    ]);
    assert_eq!(p.before, "third\nsecond\nfirst");
}

#[test]
fn empty_content_is_dropped_blank_is_kept() {
    // WI:5088: `!content` skips only the empty string.
    let p = place(&[
        entry("a", Some(WiPosition::Before), 1.0, ""),
        entry("b", Some(WiPosition::Before), 2.0, " "),
        entry("c", Some(WiPosition::Before), 3.0, "X"),
    ]);
    assert_eq!(p.before, " \nX");
    let p = place(&[entry("a", Some(WiPosition::Before), 1.0, "")]);
    assert_eq!(p, Placement::default());
}

#[test]
fn no_position_places_nothing() {
    // WI:5141-5142: an unknown position falls to `default` (types.rs).
    let p = place(&[entry("a", None, 1.0, "X")]);
    assert_eq!(p, Placement::default());
}

#[test]
fn authors_note_top_and_bottom_end_ascending() {
    // WI:5110-5115 unshift into ANTopEntries / ANBottomEntries, joined "\n"
    // at WI:5150.
    let p = place(&[
        entry("a", Some(WiPosition::AnTop), 2.0, "T2"),
        entry("b", Some(WiPosition::AnTop), 1.0, "T1"),
        entry("c", Some(WiPosition::AnBottom), 7.0, "B7"),
        entry("d", Some(WiPosition::AnBottom), 9.0, "B9"),
    ]);
    assert_eq!(p.an_top, "T1\nT2");
    assert_eq!(p.an_bottom, "B7\nB9");
}

#[test]
fn examples_top_descending_bottom_ascending() {
    // WI:5099-5108 unshift both kinds into one list (ascending); SC:4580-4596
    // then unshifts each top one (ending descending) and pushes each bottom
    // one (ascending). Facts §3 "Examples".
    let p = place(&[
        entry("a", Some(WiPosition::ExamplesTop), 1.0, "T1"),
        entry("b", Some(WiPosition::ExamplesBottom), 5.0, "B5"),
        entry("c", Some(WiPosition::ExamplesTop), 3.0, "T3"),
        entry("d", Some(WiPosition::ExamplesBottom), 2.0, "B2"),
        entry("e", Some(WiPosition::ExamplesTop), 2.0, "T2"),
    ]);
    assert_eq!(p.examples_top, ["T3", "T2", "T1"]);
    assert_eq!(p.examples_bottom, ["B2", "B5"]);
}

#[test]
fn examples_top_equal_orders_keep_scan_order() {
    // Sorted stably (WI:5084), reversed by WI:5100's unshift, reversed back
    // by SC:4591's unshift.
    let p = place(&[
        entry("a", Some(WiPosition::ExamplesTop), 1.0, "first"),
        entry("b", Some(WiPosition::ExamplesTop), 1.0, "second"),
    ]);
    assert_eq!(p.examples_top, ["first", "second"]);
}

#[test]
fn depth_groups_by_depth_and_role_ascending() {
    // WI:5116-5127: one group per (depth, role), each content unshifted;
    // SC:4610-4613 joins with "\n".
    let p = place(&[
        at_depth("a", Some(2), Role::System, 10.0, "S10"),
        at_depth("b", Some(2), Role::System, 20.0, "S20"),
        at_depth("c", Some(2), Role::User, 1.0, "U1"),
        at_depth("d", Some(0), Role::Assistant, 1.0, "A1"),
    ]);
    assert_eq!(
        p.depth,
        vec![
            DepthPrompt {
                depth: 0,
                role: Role::Assistant,
                text: "A1".to_owned()
            },
            DepthPrompt {
                depth: 2,
                role: Role::System,
                text: "S10\nS20".to_owned()
            },
            DepthPrompt {
                depth: 2,
                role: Role::User,
                text: "U1".to_owned()
            },
        ]
    );
}

#[test]
fn depth_prompts_keys_and_fields() {
    // SC:4611-4612 with constants.js:54: `customDepthWI_<depth>_<role>`,
    // IN_CHAT, the group's depth, scan false, the group's role.
    let p = place(&[
        at_depth("a", Some(3), Role::User, 1.0, "U"),
        at_depth("b", Some(12), Role::Assistant, 1.0, "A"),
    ]);
    let prompts = p.depth_prompts();
    assert_eq!(
        prompts,
        vec![
            ExtensionPrompt {
                key: "customDepthWI_3_1".to_owned(),
                value: "U".to_owned(),
                position: Position::InChat,
                depth: 3,
                role: Role::User,
                scan: false,
            },
            ExtensionPrompt {
                key: "customDepthWI_12_2".to_owned(),
                value: "A".to_owned(),
                position: Position::InChat,
                depth: 12,
                role: Role::Assistant,
                scan: false,
            },
        ]
    );
}

#[test]
fn depth_less_entry_is_never_inserted() {
    // Facts §7: a position-4 entry without `depth` gets the key
    // `customDepthWI_undefined_<role>` and a NaN depth (SC:8870), so
    // SillyTavern never inserts it.
    let p = place(&[at_depth("a", None, Role::System, 1.0, "lost")]);
    assert!(p.depth.is_empty());
    assert!(p.depth_prompts().is_empty());
}

#[test]
fn depth_less_entry_joins_an_earlier_depth_4_group() {
    // WI:5117 looks the group up with `depth ?? DEFAULT_DEPTH` (4, WI:96):
    // a depth-less entry processed after a depth-4 entry of its role joins
    // that group. Processed first (higher order), it starts its own group,
    // which the depth-4 entry does not find (undefined !== 4).
    let p = place(&[
        at_depth("a", Some(4), Role::System, 10.0, "four"),
        at_depth("b", None, Role::System, 5.0, "none"),
    ]);
    assert_eq!(p.depth.len(), 1);
    assert_eq!(p.depth[0].text, "none\nfour");
    let p = place(&[
        at_depth("a", Some(4), Role::System, 5.0, "four"),
        at_depth("b", None, Role::System, 10.0, "none"),
    ]);
    assert_eq!(
        p.depth,
        vec![DepthPrompt {
            depth: 4,
            role: Role::System,
            text: "four".to_owned()
        }]
    );
    // Another role's depth-4 group is not joined.
    let p = place(&[
        at_depth("a", Some(4), Role::User, 10.0, "four"),
        at_depth("b", None, Role::System, 5.0, "none"),
    ]);
    assert_eq!(
        p.depth,
        vec![DepthPrompt {
            depth: 4,
            role: Role::User,
            text: "four".to_owned()
        }]
    );
}

#[test]
fn outlets_descending_per_name_and_unnamed_skipped() {
    // WI:5129-5138: pushed per name (so descending by order), an entry
    // without a name skipped; SC:4615-4618 joins with "\n".
    let p = place(&[
        outlet("a", "mood", 1.0, "low"),
        outlet("b", "mood", 9.0, "high"),
        outlet("c", "place", 1.0, "inn"),
        outlet("d", "", 1.0, "nowhere"),
    ]);
    assert_eq!(p.outlets.len(), 2);
    assert_eq!(p.outlets["mood"], "high\nlow");
    assert_eq!(p.outlets["place"], "inn");
}

#[test]
fn outlet_lookup_trims_the_macro_name_only() {
    // macros.js:668 trims the macro's name; the stored key is the entry's
    // name as written (SC:4617 with constants.js:55), so a padded entry name
    // is never found.
    let p = place(&[
        outlet("a", "mood", 1.0, "high"),
        outlet("b", " pad ", 1.0, "x"),
    ]);
    assert_eq!(p.outlet(" mood "), "high");
    assert_eq!(p.outlet("pad"), "");
    assert_eq!(p.outlet("missing"), "");
}

#[test]
fn negative_and_fractional_orders_sort_numerically() {
    // WI:88: `b.order - a.order`, a numeric comparison; -0 equals 0.
    let p = place(&[
        entry("a", Some(WiPosition::After), -1.5, "neg"),
        entry("b", Some(WiPosition::After), 0.5, "half"),
        entry("c", Some(WiPosition::After), -0.0, "negzero"),
        entry("d", Some(WiPosition::After), 0.0, "zero"),
    ]);
    // Sorted: half, negzero, zero (stable), neg; unshifted: reversed.
    assert_eq!(p.after, "neg\nzero\nnegzero\nhalf");
}

#[test]
fn an_outlet_named_proto_is_never_filled() {
    // WI:5133-5137 store outlets in a plain object: `obj["__proto__"] = [..]`
    // sets its prototype, so SC:4615-4616's `Object.entries` never lists it
    // (checked by running the loop under Node). Other names that objects
    // inherit (`constructor`, `toString`) are ordinary members.
    let p = place(&[
        outlet("a", "__proto__", 1.0, "lost"),
        outlet("b", "constructor", 1.0, "kept"),
        outlet("c", "toString", 1.0, "also"),
    ]);
    assert_eq!(p.outlet("__proto__"), "");
    assert_eq!(p.outlet("constructor"), "kept");
    assert_eq!(p.outlet("toString"), "also");
    assert_eq!(p.outlets.len(), 2);
}
