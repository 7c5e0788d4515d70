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
    pub(crate) fn settings() -> ScanSettings {
        ScanSettings {
            depth: 2,
            min_activations: 0,
            min_activations_depth_max: 0,
            budget_percent: 25,
            budget_cap: 0,
            include_names: true,
            recursive: false,
            case_sensitive: false,
            match_whole_words: false,
            use_group_scoring: false,
            character_strategy: CharacterStrategy::CharacterFirst,
            max_recursion_steps: 0,
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
        pub(crate) settings: ScanSettings,
        pub(crate) books: Vec<(&'a str, &'a [Entry])>,
        pub(crate) messages: Vec<(&'a str, &'a str)>,
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
    }

    impl<'a> Run<'a> {
        /// One global book "B" with `entries`, the given messages (oldest
        /// first, as (name, text)).
        pub(crate) fn new(entries: &'a [Entry], messages: &[(&'a str, &'a str)]) -> Run<'a> {
            Run {
                settings: settings(),
                books: vec![("B", entries)],
                messages: messages.to_vec(),
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
                .map(|&(name, entries)| ScanBook { name, entries })
                .collect();
            check_world_info(ScanInput {
                settings: &self.settings,
                books: ScanBooks::new(None, None, global, Vec::new()),
                messages: &msgs,
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
