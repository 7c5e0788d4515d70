//! The scan's rules, each case citing where its expected result comes from
//! (world-info.js at 51ad27f, or the facts file's section).

use serde_json::value::RawValue;

use super::*;
use crate::world_info::types::WiPosition;

/// Test support shared by the scan's test files.
pub(super) mod support {
    use super::*;

    /// An entry from JSON text (uid from its `uid` member, book "B").
    pub(crate) fn entry_in(book: &str, json: &str) -> Entry {
        let raw = RawValue::from_string(json.to_string()).expect("test JSON is valid");
        let uid = serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|v| {
                v.get("uid")
                    .map(|u| u.to_string().trim_matches('"').to_string())
            })
            .unwrap_or_default();
        Entry::read(&uid, book, &raw)
    }

    /// An entry of book "B".
    pub(crate) fn entry(json: &str) -> Entry {
        entry_in("B", json)
    }

    /// SillyTavern's JS defaults (world-info.js:69-82).
    pub(crate) fn settings() -> WorldInfoSettings {
        WorldInfoSettings {
            depth: 2,
            min_activations: 0,
            min_activations_depth_max: 0,
            budget: 25,
            budget_cap: 0,
            include_names: true,
            recursive: false,
            case_sensitive: false,
            match_whole_words: false,
            use_group_scoring: false,
            character_strategy: CharacterStrategy::CharacterFirst,
            max_recursion_steps: 0,
            ..WorldInfoSettings::default()
        }
    }

    /// One token per byte: budgets are easy to reason about.
    pub(crate) fn bytes(s: &str) -> u32 {
        s.len() as u32
    }

    /// No macros.
    pub(crate) fn same(s: &str) -> String {
        s.to_string()
    }

    /// A scan's knobs, with defaults.
    pub(crate) struct Run<'a> {
        pub(crate) settings: WorldInfoSettings,
        pub(crate) books: Vec<(&'a str, &'a [Entry])>,
        pub(crate) messages: Vec<(&'a str, &'a str)>,
        /// The chat's length, when `messages` are only its newest.
        pub(crate) chat_len: Option<usize>,
        pub(crate) prompts: Vec<String>,
        pub(crate) texts: GlobalTexts<'a>,
        pub(crate) generation_type: GenerationType,
        pub(crate) character: Option<CharacterSubject<'a>>,
        pub(crate) timed: TimedState,
        pub(crate) dry_run: bool,
        pub(crate) seed: u64,
        pub(crate) max_context: u32,
        pub(crate) limits: ScanLimits,
        pub(crate) substitute: &'a dyn Fn(&str) -> String,
        pub(crate) interrupt: &'a dyn Fn() -> Option<ScanStop>,
        /// The book's compiled keys, when the test keeps them.
        pub(crate) compiled: Option<&'a CompiledKeys>,
    }

    impl<'a> Run<'a> {
        /// One global book "B" with `entries`, the given messages (oldest
        /// first, as (name, text)).
        pub(crate) fn new(entries: &'a [Entry], messages: &[(&'a str, &'a str)]) -> Run<'a> {
            Run {
                settings: settings(),
                books: vec![("B", entries)],
                messages: messages.to_vec(),
                chat_len: None,
                prompts: Vec::new(),
                texts: GlobalTexts::default(),
                generation_type: GenerationType::Normal,
                character: None,
                timed: TimedState::default(),
                dry_run: false,
                seed: 1,
                max_context: 100_000,
                limits: ScanLimits::default(),
                substitute: &same,
                interrupt: &|| None,
                compiled: None,
            }
        }

        /// Runs it.
        pub(crate) fn go(&self) -> Result<ScanOutcome, DomainError> {
            let msgs: Vec<ScanMessage<'_>> = self
                .messages
                .iter()
                .map(|&(name, text)| ScanMessage { name, text })
                .collect();
            let global = self
                .books
                .iter()
                .map(|&(name, entries)| ScanBook {
                    name,
                    entries,
                    compiled: self.compiled,
                })
                .collect();
            check_world_info(ScanInput {
                settings: &self.settings,
                books: ScanBooks::new(None, None, global, Vec::new()),
                messages: &msgs,
                chat_len: self.chat_len.unwrap_or(msgs.len()),
                texts: self.texts,
                scan_prompts: &self.prompts,
                generation_type: self.generation_type,
                character: self.character,
                max_context_tokens: self.max_context,
                count_tokens: &bytes,
                substitute: self.substitute,
                timed: &self.timed,
                dry_run: self.dry_run,
                seed: self.seed,
                limits: &self.limits,
                interrupt: self.interrupt,
            })
        }

        /// The uids activated, in order.
        pub(crate) fn uids(&self) -> Vec<String> {
            self.go()
                .expect("the scan runs")
                .activated
                .into_iter()
                .map(|a| a.uid)
                .collect()
        }
    }
}

use support::*;

#[test]
fn a_primary_key_in_the_last_messages_activates_the_entry() {
    // world-info.js:4799-4818: a primary key found in the scanned text.
    let entries = [entry(
        r#"{"uid":0,"key":["dragon"],"content":"Dragons fly.","position":0,"order":100}"#,
    )];
    let run = Run::new(&entries, &[("User", "I saw a Dragon")]);
    let out = run.go().expect("scan");
    assert_eq!(out.activated.len(), 1);
    assert_eq!(out.activated[0].content, "Dragons fly.");
    assert_eq!(out.activated[0].position, Some(WiPosition::Before));
    assert_eq!(out.passes, 1);
}

#[test]
fn only_the_last_depth_messages_are_scanned() {
    // world-info.js:279-297: the first `depth` messages, newest first.
    let entries = [entry(r#"{"uid":0,"key":["dragon"],"content":"x"}"#)];
    let run = Run::new(&entries, &[("U", "dragon"), ("U", "a"), ("U", "b")]);
    assert!(run.uids().is_empty());
    let run = Run::new(&entries, &[("U", "dragon"), ("U", "a")]);
    assert_eq!(run.uids(), ["0"]);
}

#[test]
fn whole_words_use_ascii_word_characters() {
    // world-info.js:350-358: `(?:^|\W)key(?:$|\W)`, `\W` ASCII only.
    let entries = [entry(
        r#"{"uid":0,"key":["cat"],"content":"x","matchWholeWords":true}"#,
    )];
    assert!(
        Run::new(&entries, &[("U", "concatenate")])
            .uids()
            .is_empty()
    );
    assert_eq!(Run::new(&entries, &[("U", "a cat!")]).uids(), ["0"]);
    // A key with white space is a plain substring test.
    let entries = [entry(
        r#"{"uid":0,"key":["big cat"],"content":"x","matchWholeWords":true}"#,
    )];
    assert_eq!(Run::new(&entries, &[("U", "abig catz")]).uids(), ["0"]);
    // Thai has no ASCII word characters: whole-word is a substring test
    // (facts §2).
    let entries = [entry(
        r#"{"uid":0,"key":["แมว"],"content":"x","matchWholeWords":true}"#,
    )];
    assert_eq!(Run::new(&entries, &[("U", "ฉันชอบแมวมาก")]).uids(), ["0"]);
}

#[test]
fn case_follows_the_entry_then_the_setting() {
    // world-info.js:267-270: `entry.caseSensitive ?? world_info_case_sensitive`.
    let entries = [entry(
        r#"{"uid":0,"key":["Dragon"],"content":"x","caseSensitive":true}"#,
    )];
    assert!(Run::new(&entries, &[("U", "dragon")]).uids().is_empty());
    let entries = [entry(r#"{"uid":0,"key":["Dragon"],"content":"x"}"#)];
    assert_eq!(Run::new(&entries, &[("U", "DRAGON")]).uids(), ["0"]);
    let mut run = Run::new(&entries, &[("U", "DRAGON")]);
    run.settings.case_sensitive = true;
    assert!(run.uids().is_empty());
}

#[test]
fn a_regex_key_reads_the_raw_text() {
    // world-info.js:339-342: a regex key ignores case and whole-word
    // settings.
    let entries = [entry(r#"{"uid":0,"key":["/Dragon/"],"content":"x"}"#)];
    assert!(Run::new(&entries, &[("U", "dragon")]).uids().is_empty());
    let entries = [entry(
        r#"{"uid":0,"key":["/drag(on|oness)/i"],"content":"x"}"#,
    )];
    assert_eq!(Run::new(&entries, &[("U", "the DRAGONESS")]).uids(), ["0"]);
}

#[test]
fn a_white_space_key_matches_every_scan_and_an_empty_one_never() {
    // Facts §7: only an exact "" is skipped (world-info.js:4804
    // `substituted && ...`); "  " trims to "" and is found everywhere.
    let entries = [entry(r#"{"uid":0,"key":["  "],"content":"x"}"#)];
    assert_eq!(Run::new(&entries, &[("U", "anything")]).uids(), ["0"]);
    let entries = [entry(r#"{"uid":0,"key":[""],"content":"x"}"#)];
    assert!(Run::new(&entries, &[("U", "anything")]).uids().is_empty());
}

#[test]
fn names_are_scanned_when_the_setting_says_so() {
    // script.js:4565: `${name}: ${mes}` when world_info_include_names.
    let entries = [entry(r#"{"uid":0,"key":["seraphina:"],"content":"x"}"#)];
    assert_eq!(Run::new(&entries, &[("Seraphina", "hi")]).uids(), ["0"]);
    let mut run = Run::new(&entries, &[("Seraphina", "hi")]);
    run.settings.include_names = false;
    assert!(run.uids().is_empty());
}

#[test]
fn secondary_keys_follow_the_logic() {
    // world-info.js:4812-4873; facts §2.
    let cases = [
        (0, "a b", true), // AND_ANY: b found
        (0, "a", false),  // AND_ANY: none found
        (1, "a b", true), // NOT_ALL: c missing
        (1, "a b c", false),
        (2, "a", true), // NOT_ANY
        (2, "a c", false),
        (3, "a b c", true), // AND_ALL
        (3, "a b", false),
    ];
    for (logic, text, want) in cases {
        let json = format!(
            r#"{{"uid":0,"key":["a"],"keysecondary":["b","c"],"selective":true,"selectiveLogic":{logic},"content":"x"}}"#
        );
        let entries = [entry(&json)];
        let got = !Run::new(&entries, &[("U", text)]).uids().is_empty();
        assert_eq!(got, want, "logic {logic} on {text:?}");
    }
    // Without `selective` the secondary keys are ignored (world-info.js:4820).
    let entries = [entry(
        r#"{"uid":0,"key":["a"],"keysecondary":["b"],"content":"x"}"#,
    )];
    assert_eq!(Run::new(&entries, &[("U", "a")]).uids(), ["0"]);
    // Missing selectiveLogic reads as 0 (`?? 0`, world-info.js:4830).
    let entries = [entry(
        r#"{"uid":0,"key":["a"],"keysecondary":["b"],"selective":true,"content":"x"}"#,
    )];
    assert_eq!(Run::new(&entries, &[("U", "a b")]).uids(), ["0"]);
    // Any other value never satisfies the secondary keys.
    let entries = [entry(
        r#"{"uid":0,"key":["a"],"keysecondary":["b"],"selective":true,"selectiveLogic":7,"content":"x"}"#,
    )];
    assert!(Run::new(&entries, &[("U", "a b")]).uids().is_empty());
}

#[test]
fn gates_run_before_matching() {
    // world-info.js:4684-4790.
    let disabled = [entry(
        r#"{"uid":0,"key":["a"],"disable":true,"constant":true,"content":"x"}"#,
    )];
    assert!(Run::new(&disabled, &[("U", "a")]).uids().is_empty());
    // Triggers: only the named generation types.
    let swipe_only = [entry(
        r#"{"uid":0,"constant":true,"triggers":["swipe"],"content":"x"}"#,
    )];
    assert!(Run::new(&swipe_only, &[("U", "a")]).uids().is_empty());
    let mut run = Run::new(&swipe_only, &[("U", "a")]);
    run.generation_type = GenerationType::Swipe;
    assert_eq!(run.uids(), ["0"]);
    // @@dont_activate wins over constant; @@activate needs no key.
    let dont = [entry(
        r#"{"uid":0,"constant":true,"content":"@@dont_activate\nx"}"#,
    )];
    assert!(Run::new(&dont, &[("U", "a")]).uids().is_empty());
    let act = [entry(r#"{"uid":0,"content":"@@activate\nx"}"#)];
    let out = Run::new(&act, &[("U", "a")]).go().expect("scan");
    assert_eq!(out.activated[0].content, "x");
    // An entry without keys is skipped (world-info.js:4793).
    let keyless = [entry(r#"{"uid":0,"content":"x"}"#)];
    assert!(Run::new(&keyless, &[("U", "a")]).uids().is_empty());
}

#[test]
fn character_filters_compare_name_and_tags() {
    // world-info.js:4697-4725.
    let tags = vec!["t1".to_string()];
    let only_sera = [entry(
        r#"{"uid":0,"constant":true,"content":"x","characterFilter":{"isExclude":false,"names":["Seraphina"],"tags":[]}}"#,
    )];
    let mut run = Run::new(&only_sera, &[("U", "a")]);
    assert!(
        run.uids().is_empty(),
        "no character: the name is not included"
    );
    run.character = Some(CharacterSubject {
        filter_name: "Seraphina",
        tags: &tags,
    });
    assert_eq!(run.uids(), ["0"]);
    let not_t1 = [entry(
        r#"{"uid":0,"constant":true,"content":"x","characterFilter":{"isExclude":true,"names":[],"tags":["t1"]}}"#,
    )];
    let mut run = Run::new(&not_t1, &[("U", "a")]);
    assert_eq!(run.uids(), ["0"], "no character: tags are not checked");
    run.character = Some(CharacterSubject {
        filter_name: "X",
        tags: &tags,
    });
    assert!(run.uids().is_empty());
}

#[test]
fn extra_texts_and_scan_prompts_are_scanned() {
    // world-info.js:299-327: match flags add the global texts; prompts
    // flagged `scan` are always added.
    let entries = [
        entry(r#"{"uid":0,"key":["castle"],"content":"x","matchScenario":true}"#),
        entry(r#"{"uid":1,"key":["castle"],"content":"y"}"#),
    ];
    let mut run = Run::new(&entries, &[("U", "hi")]);
    run.texts.scenario = "A castle.";
    assert_eq!(run.uids(), ["0"]);
    run.prompts = vec!["the castle gate".to_string()];
    assert_eq!(run.uids(), ["0", "1"]);
}

#[test]
fn a_scan_depth_of_zero_scans_nothing() {
    // world-info.js:280-283: depth <= 0 gives an empty haystack, prompts
    // and texts included.
    let entries = [entry(
        r#"{"uid":0,"key":["castle"],"content":"x","scanDepth":0}"#,
    )];
    let mut run = Run::new(&entries, &[("U", "castle")]);
    run.prompts = vec!["castle".to_string()];
    assert!(run.uids().is_empty());
}

#[test]
fn content_macros_are_substituted_at_activation() {
    // world-info.js:4939.
    let entries = [entry(
        r#"{"uid":0,"constant":true,"content":"{{char}} waves"}"#,
    )];
    let sub = |s: &str| s.replace("{{char}}", "Sera");
    let mut run = Run::new(&entries, &[("U", "a")]);
    run.substitute = &sub;
    assert_eq!(run.go().expect("scan").activated[0].content, "Sera waves");
}
