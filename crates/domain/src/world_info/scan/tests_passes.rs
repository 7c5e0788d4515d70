//! The scan's passes: budget, probability, recursion, delay levels, min
//! activations, limits, books and their order (world-info.js at 51ad27f,
//! facts §2, §4 and §7).

use super::tests::support::*;
use super::*;
use crate::world_info::types::WiPosition;

#[test]
fn the_budget_stops_entries_past_it_but_not_those_that_ignore_it() {
    // world-info.js:4624-4629, 4898-4957. One token per byte; budget =
    // round(25% of 40) = 10. "aaaa\n" = 5, +"bbbb\n" = 10 >= 10: b is
    // rejected and the budget overflows; c (ignoreBudget) still goes in.
    let entries = [
        entry(r#"{"uid":0,"constant":true,"content":"aaaa","order":3}"#),
        entry(r#"{"uid":1,"constant":true,"content":"bbbb","order":2}"#),
        entry(r#"{"uid":2,"constant":true,"content":"cccc","order":1,"ignoreBudget":true}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.max_context = 40;
    assert_eq!(run.uids(), ["0", "2"]);
    // The cap applies when lower (world-info.js:4626).
    run.max_context = 100_000;
    run.settings.budget_cap = 6;
    assert_eq!(run.uids(), ["0", "2"]);
}

#[test]
fn probability_rolls_are_seeded() {
    // world-info.js:4909-4935: a roll only with useProbability and
    // probability != 100.
    let entries: Vec<Entry> = (0..40)
        .map(|i| entry(&format!(r#"{{"uid":{i},"constant":true,"content":"x","useProbability":true,"probability":50}}"#)))
        .collect();
    let mut run = Run::new(&entries, &[("U", "a")]);
    let first = run.uids();
    assert_eq!(run.uids(), first, "same seed, same result");
    assert!(
        !first.is_empty() && first.len() < 40,
        "about half: {}",
        first.len()
    );
    run.seed = 2;
    assert_ne!(run.uids(), first, "another seed, another draw");
    // Probability 0 always fails; without useProbability nothing rolls;
    // a missing probability fails every roll (`roll <= undefined`).
    let entries = [
        entry(r#"{"uid":0,"constant":true,"content":"x","useProbability":true,"probability":0}"#),
        entry(r#"{"uid":1,"constant":true,"content":"x","useProbability":false,"probability":0}"#),
        entry(r#"{"uid":2,"constant":true,"content":"x","useProbability":true}"#),
    ];
    assert_eq!(Run::new(&entries, &[("U", "a")]).uids(), ["1"]);
}

#[test]
fn recursion_scans_activated_content() {
    // world-info.js:4995-5025; facts §2 "Recursion and passes".
    let entries = [
        entry(r#"{"uid":0,"key":["dragon"],"content":"It guards the castle.","order":2}"#),
        entry(r#"{"uid":1,"key":["castle"],"content":"A castle.","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a dragon")]);
    assert_eq!(run.uids(), ["0"]);
    run.settings.recursive = true;
    let out = run.go().expect("scan");
    assert_eq!(
        out.activated
            .iter()
            .map(|a| a.uid.as_str())
            .collect::<Vec<_>>(),
        ["0", "1"]
    );
    assert_eq!(out.passes, 3, "the last pass finds nothing new");
    // preventRecursion keeps content out of the recursion buffer.
    let entries = [
        entry(r#"{"uid":0,"key":["dragon"],"content":"castle","preventRecursion":true}"#),
        entry(r#"{"uid":1,"key":["castle"],"content":"x"}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "dragon")]);
    run.settings.recursive = true;
    assert_eq!(run.uids(), ["0"]);
    // excludeRecursion: not activated by a recursion pass.
    let entries = [
        entry(r#"{"uid":0,"key":["dragon"],"content":"castle"}"#),
        entry(r#"{"uid":1,"key":["castle"],"content":"x","excludeRecursion":true}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "dragon")]);
    run.settings.recursive = true;
    assert_eq!(run.uids(), ["0"]);
}

#[test]
fn delay_levels_run_even_without_recursion_and_skip_to_the_next_level() {
    // Facts §7; world-info.js:4640-4650, 5010-5014: the first level is
    // taken before the first pass, so with recursion off an extra pass
    // runs only for a second level, and it matches every remaining entry
    // against the activated content at that level.
    let entries = [
        entry(r#"{"uid":0,"constant":true,"content":"alpha","order":3}"#),
        entry(r#"{"uid":1,"key":["alpha"],"content":"x","delayUntilRecursion":1,"order":2}"#),
        entry(r#"{"uid":2,"key":["beta"],"content":"y","delayUntilRecursion":2,"order":1}"#),
    ];
    let out = Run::new(&entries, &[("U", "a")]).go().expect("scan");
    assert_eq!(
        out.activated
            .iter()
            .map(|a| a.uid.as_str())
            .collect::<Vec<_>>(),
        ["0", "1"]
    );
    assert_eq!(out.passes, 2);
    // One level only: no extra pass, the delayed entry never activates.
    let out = Run::new(&entries[..2], &[("U", "a")]).go().expect("scan");
    assert_eq!(out.activated.len(), 1);
    assert_eq!(out.passes, 1);
}

#[test]
fn min_activations_scan_one_message_past_the_depth_cap() {
    // Facts §7; world-info.js:4975-4990: the cap is checked before the
    // depth grows, so history is read to depth_max + 1 messages.
    let entries = [entry(r#"{"uid":0,"key":["dragon"],"content":"x"}"#)];
    let mut run = Run::new(&entries, &[("U", "dragon"), ("U", "x"), ("U", "y")]);
    run.settings.depth = 1;
    run.settings.min_activations = 1;
    run.settings.min_activations_depth_max = 2;
    let out = run.go().expect("scan");
    assert_eq!(out.activated.len(), 1);
    assert_eq!(out.passes, 3);
    run.messages.push(("U", "z"));
    assert!(run.uids().is_empty());
    // Without a cap: up to the chat's length.
    run.settings.min_activations_depth_max = 0;
    assert_eq!(run.uids(), ["0"]);
}

#[test]
fn a_scan_given_its_reach_activates_what_a_scan_of_the_whole_chat_does() {
    // recapd's own rule (`scan_reach`): a long chat's scan is given only
    // its newest messages and the chat's length, and nothing changes.
    let entries = [
        entry(r#"{"uid":0,"key":["near"],"content":"a"}"#),
        entry(r#"{"uid":1,"key":["deep"],"content":"b","scanDepth":40}"#),
        entry(r#"{"uid":2,"key":["far"],"content":"c"}"#),
        entry(r#"{"uid":3,"key":["ancient"],"content":"d"}"#),
        entry(r#"{"uid":4,"key":["near"],"content":"e","delay":2500}"#),
    ];
    let texts: Vec<String> = (0..3000usize)
        .map(|i| match 2999 - i {
            1 => "near".to_string(),
            30 => "deep".to_string(),
            9 => "far".to_string(),
            2000 => "ancient".to_string(),
            from_end => format!("filler {from_end}"),
        })
        .collect();
    let whole: Vec<(&str, &str)> = texts.iter().map(|t| ("U", t.as_str())).collect();
    let mut cases = Vec::new();
    for (min, max) in [(0, 0), (3, 10), (3, 5), (4, 0), (5, 0)] {
        let mut settings = settings();
        settings.min_activations = min;
        settings.min_activations_depth_max = max;
        cases.push(settings);
    }
    for settings in cases {
        let mut run = Run::new(&entries, &whole);
        run.settings = settings.clone();
        // Min activations without a cap go on to the chat's length.
        run.limits.max_passes = 10_000;
        let full = run.go().expect("scan");
        let reach = scan_reach(&settings, &entries);
        run.messages = whole[whole.len() - reach..].to_vec();
        run.chat_len = Some(whole.len());
        let tail = run.go().expect("scan");
        let uids = |out: &ScanOutcome| {
            out.activated
                .iter()
                .map(|a| a.uid.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(uids(&tail), uids(&full), "{settings:?}");
        assert_eq!(tail.passes, full.passes, "{settings:?}");
        assert!(
            uids(&full).contains(&"4".to_string()),
            "the delay counts the whole chat"
        );
    }
}

#[test]
fn max_recursion_steps_caps_the_passes() {
    // world-info.js:4656-4660.
    let entries = [
        entry(r#"{"uid":0,"key":["a"],"content":"b","order":3}"#),
        entry(r#"{"uid":1,"key":["b"],"content":"c","order":2}"#),
        entry(r#"{"uid":2,"key":["c"],"content":"d","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.settings.recursive = true;
    run.settings.max_recursion_steps = 2;
    let out = run.go().expect("scan");
    assert_eq!(out.passes, 2);
    assert_eq!(out.activated.len(), 2);
}

#[test]
fn passes_past_the_limit_fail() {
    // The scan's own bound (ScanLimits::max_passes).
    let entries = [
        entry(r#"{"uid":0,"key":["a"],"content":"b","order":2}"#),
        entry(r#"{"uid":1,"key":["b"],"content":"c","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.settings.recursive = true;
    run.limits.max_passes = 2;
    assert!(matches!(run.go(), Err(DomainError::ResourceExhausted(_))));
}

#[test]
fn an_interrupt_stops_the_scan_between_passes() {
    // A chain that recursion follows for three passes; the caller's
    // "stop now?" turns to a stop once the first pass has activated its
    // entry: the scan ends with ResourceExhausted and returns nothing.
    let entries = [
        entry(r#"{"uid":0,"key":["a"],"content":"b","order":3}"#),
        entry(r#"{"uid":1,"key":["b"],"content":"c","order":2}"#),
        entry(r#"{"uid":2,"key":["c"],"content":"d","order":1}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.settings.recursive = true;
    assert_eq!(run.go().expect("scan").passes, 4, "uninterrupted");
    // Asked once per pass and once per key test: the first pass asks
    // 1 + 3 times (and once more for its one activated entry), so the
    // sixth question is the second pass's first.
    let asked = std::cell::Cell::new(0u32);
    let stop_at_the_second_pass = || {
        asked.set(asked.get() + 1);
        (asked.get() > 5).then_some(ScanStop::OverBudget)
    };
    run.interrupt = &stop_at_the_second_pass;
    match run.go() {
        Err(DomainError::ResourceExhausted(why)) => assert!(why.contains("budget"), "{why}"),
        other => panic!("expected ResourceExhausted, got {other:?}"),
    }
    assert_eq!(asked.get(), 6, "no question after the stop");
    // A cancellation says so; a stop from the start runs no pass.
    run.interrupt = &|| Some(ScanStop::Cancelled);
    match run.go() {
        Err(DomainError::ResourceExhausted(why)) => assert!(why.contains("cancelled"), "{why}"),
        other => panic!("expected ResourceExhausted, got {other:?}"),
    }
}

#[test]
fn an_interrupt_stops_the_scan_between_key_tests() {
    // One pass of many entries with keys that never match: the stop comes
    // in the middle of the pass, at the next key test.
    let entries: Vec<Entry> = (0..50)
        .map(|i| {
            entry(&format!(
                r#"{{"uid":{i},"key":["never{i}","nor{i}"],"content":"x"}}"#
            ))
        })
        .collect();
    let mut run = Run::new(&entries, &[("U", "a")]);
    let asked = std::cell::Cell::new(0u32);
    let stop_at_the_tenth = || {
        asked.set(asked.get() + 1);
        (asked.get() >= 10).then_some(ScanStop::OverBudget)
    };
    run.interrupt = &stop_at_the_tenth;
    assert!(matches!(run.go(), Err(DomainError::ResourceExhausted(_))));
    assert_eq!(asked.get(), 10, "the scan stopped at the first stop");
}

#[test]
fn a_hostile_regex_key_is_reported_and_does_not_match() {
    // The bound (ScanLimits::regex_step_limit): reported, never timed.
    let entries = [
        entry(r#"{"uid":7,"key":["/((a|aa)+)\\1?$/"],"content":"x"}"#),
        entry(r#"{"uid":8,"key":["/((a|aa)+)\\1?$/"],"content":"y"}"#),
    ];
    let text = format!("{}!", "a".repeat(40));
    let mut run = Run::new(&entries, &[("U", "")]);
    run.settings.include_names = false;
    run.messages = vec![("U", text.as_str())];
    let out = run.go().expect("scan");
    assert!(out.activated.is_empty());
    assert_eq!(
        out.regex_overruns,
        [
            (
                "B".to_string(),
                "7".to_string(),
                "/((a|aa)+)\\1?$/".to_string()
            ),
            (
                "B".to_string(),
                "8".to_string(),
                "/((a|aa)+)\\1?$/".to_string()
            ),
        ]
    );
}

#[test]
fn books_are_loaded_once_and_ordered_by_role_and_strategy() {
    // world-info.js:4363-4530; facts §4.
    let g = [entry_in(
        "G",
        r#"{"uid":0,"constant":true,"content":"g","order":50}"#,
    )];
    let c = [entry_in(
        "C",
        r#"{"uid":0,"constant":true,"content":"c","order":10}"#,
    )];
    let chat = [entry_in(
        "Chat",
        r#"{"uid":0,"constant":true,"content":"chat","order":1}"#,
    )];
    let p = [entry_in(
        "P",
        r#"{"uid":0,"constant":true,"content":"p","order":1}"#,
    )];
    let books = |strategy| {
        let s = WorldInfoSettings {
            character_strategy: strategy,
            ..settings()
        };
        let msgs = [ScanMessage {
            name: "U",
            text: "a",
        }];
        let timed = TimedState::default();
        let out = check_world_info(ScanInput {
            settings: &s,
            books: ScanBooks::new(
                Some(ScanBook {
                    name: "Chat",
                    entries: &chat,
                    compiled: None,
                }),
                Some(ScanBook {
                    name: "P",
                    entries: &p,
                    compiled: None,
                }),
                vec![ScanBook {
                    name: "G",
                    entries: &g,
                    compiled: None,
                }],
                vec![
                    ScanBook {
                        name: "C",
                        entries: &c,
                        compiled: None,
                    },
                    ScanBook {
                        name: "G",
                        entries: &g,
                        compiled: None,
                    },
                ],
            ),
            messages: &msgs,
            chat_len: msgs.len(),
            texts: GlobalTexts::default(),
            scan_prompts: &[],
            generation_type: GenerationType::Normal,
            character: None,
            max_context_tokens: 100_000,
            count_tokens: &bytes,
            substitute: &same,
            timed: &timed,
            dry_run: false,
            seed: 0,
            limits: &ScanLimits::default(),
            interrupt: &|| None,
        })
        .expect("scan");
        out.activated
            .into_iter()
            .map(|a| a.book)
            .collect::<Vec<_>>()
    };
    // Chat lore, persona lore, then by strategy; G listed as a character
    // book too is loaded once.
    assert_eq!(
        books(CharacterStrategy::CharacterFirst),
        ["Chat", "P", "C", "G"]
    );
    assert_eq!(
        books(CharacterStrategy::GlobalFirst),
        ["Chat", "P", "G", "C"]
    );
    assert_eq!(books(CharacterStrategy::Evenly), ["Chat", "P", "G", "C"]);
    // A chat book that is global is skipped; a persona book that is the
    // chat's is skipped.
    let b = ScanBooks::new(
        Some(ScanBook {
            name: "G",
            entries: &g,
            compiled: None,
        }),
        Some(ScanBook {
            name: "G",
            entries: &g,
            compiled: None,
        }),
        vec![ScanBook {
            name: "G",
            entries: &g,
            compiled: None,
        }],
        Vec::new(),
    );
    assert!(b.chat.is_none() && b.persona.is_none());
}

#[test]
fn entries_sort_by_order_stably_with_uids_in_object_key_order() {
    // world-info.js:88 `b.order - a.order` with a stable sort; equal
    // orders keep `Object.keys` order (array-index uids ascending first).
    let entries = [
        entry(r#"{"uid":"x","constant":true,"content":"x","order":5}"#),
        entry(r#"{"uid":10,"constant":true,"content":"10","order":5}"#),
        entry(r#"{"uid":2,"constant":true,"content":"2","order":5}"#),
        entry(r#"{"uid":3,"constant":true,"content":"3","order":9}"#),
    ];
    assert_eq!(
        Run::new(&entries, &[("U", "a")]).uids(),
        ["3", "2", "10", "x"]
    );
}

#[test]
fn activated_entries_carry_what_placement_needs() {
    // world-info.js:5093-5143 reads position, depth, role, order,
    // outletName and the substituted content; a missing depth stays
    // missing (facts §7: such an at-depth entry is never inserted).
    let entries = [entry(
        r#"{"uid":4,"constant":true,"content":"x","position":4,"role":2,"order":7,"outletName":"o"}"#,
    )];
    let out = Run::new(&entries, &[("U", "a")]).go().expect("scan");
    let a = &out.activated[0];
    assert_eq!((a.book.as_str(), a.uid.as_str()), ("B", "4"));
    assert_eq!(a.position, Some(WiPosition::AtDepth));
    assert_eq!(a.depth, None);
    assert_eq!(a.role, crate::settings::Role::Assistant);
    assert_eq!(a.order, 7.0);
    assert_eq!(a.outlet_name, "o");
}

fn entry_json() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    (
        0u32..6,
        prop_oneof![Just("a"), Just("b"), Just("/a|b/i"), Just(" "), Just("/(a+)+$/")],
        prop_oneof![Just(""), Just("g"), Just("g,h"), Just("h, g")],
        any::<bool>(),
        prop_oneof![Just("null"), Just("5"), Just("\"x\""), Just("0"), Just("1e400")],
        0u32..3,
        0u32..3,
        any::<bool>(),
    )
        .prop_map(|(uid, key, group, constant, order, sticky, delay_rec, override_)| {
            format!(
                r#"{{"uid":{uid},"key":["{key}"],"keysecondary":["b"],"selective":true,"selectiveLogic":{},"content":"a b {uid}","constant":{constant},"order":{order},"group":"{group}","groupOverride":{override_},"sticky":{sticky},"cooldown":1,"delayUntilRecursion":{delay_rec},"useProbability":true,"probability":50,"useGroupScoring":{constant}}}"#,
                uid % 5
            )
            .replace("1e400", "1e300")
        })
}

proptest::proptest! {
    /// Any small book and chat scans without panicking, and the same seed
    /// gives the same result.
    #[test]
    fn any_book_scans_and_a_seed_repeats(
        jsons in proptest::collection::vec(entry_json(), 0..8),
        texts in proptest::collection::vec("[ab ]{0,6}", 0..4),
        recursive in proptest::bool::ANY,
        min_activations in 0u32..3,
        seed in proptest::num::u64::ANY,
    ) {
        let entries: Vec<Entry> = jsons.iter().map(|j| entry(j)).collect();
        let msgs: Vec<(&str, &str)> = texts.iter().map(|t| ("U", t.as_str())).collect();
        let mut run = Run::new(&entries, &msgs);
        run.settings.recursive = recursive;
        run.settings.min_activations = min_activations;
        run.seed = seed;
        run.max_context = 60;
        let first = run.go().expect("within the pass limit");
        let second = run.go().expect("within the pass limit");
        // Compared as text: a NaN order is not equal to itself.
        proptest::prop_assert_eq!(format!("{first:?}"), format!("{second:?}"));
        // And again on the state it left.
        run.timed = first.timed;
        run.messages.push(("U", "a"));
        let _ = run.go().expect("within the pass limit");
    }
}
