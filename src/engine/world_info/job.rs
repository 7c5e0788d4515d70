//! One activation as it runs on its scan thread: everything it reads,
//! owned (the chat's part read under the chat's lock, the books shared),
//! and the interruption it answers: its time budget
//! ([`ScanPool::timeout`](crate::engine::ScanPool::timeout)) and its
//! call's cancellation ([`super::gate::CancelOnDrop`]).

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::domain::DomainError;
use crate::domain::prompt::PromptMessage;
use crate::domain::settings::Settings;
use crate::domain::tokens::Counter;
use crate::domain::world_info::book::Book;
use crate::domain::world_info::scan::{
    CharacterSubject, GlobalTexts, ScanBook, ScanBooks, ScanInput, ScanLimits, ScanMessage,
    ScanOutcome, ScanStop, check_world_info,
};
use crate::domain::world_info::timed::TimedState;
use crate::domain::world_info::types::{GenerationType, ScanTexts};
use crate::domain::writing::macros;
use crate::telemetry;

use super::BookNames;

/// Everything one activation reads, owned, so it can cross to its thread.
pub(super) struct ScanJob {
    /// The chat's effective settings (the scan reads their World Info
    /// group).
    pub(super) settings: Arc<Settings>,
    /// The books the chat's settings name, by role.
    pub(super) names: BookNames,
    /// The books loaded for the scan (shared with the other attempts).
    pub(super) books: Arc<[(String, Arc<Book>)]>,
    /// The history scanned, given back with the outcome: the chat's
    /// newest messages, or all of them.
    pub(super) history: Vec<PromptMessage>,
    /// Visible messages of the chat older than `history` (the scan counts
    /// them, for timed effects and min activations).
    pub(super) unread: usize,
    /// The extension prompts' texts the scan reads, substituted.
    pub(super) scan_prompts: Vec<String>,
    /// The caller's texts and names.
    pub(super) texts: ScanTexts,
    /// `{{user}}`, as substituted.
    pub(super) user_name: String,
    /// `{{char}}`, as substituted.
    pub(super) char_name: String,
    /// The generation's type.
    pub(super) generation_type: GenerationType,
    /// What counts the chat's tokens.
    pub(super) counter: Counter,
    /// Context size minus response tokens.
    pub(super) max_context_tokens: u32,
    /// The chat's timed effects as stored.
    pub(super) timed: TimedState,
    /// The random draws' seed.
    pub(super) seed: u64,
    /// Passes and regex steps.
    pub(super) limits: ScanLimits,
}

/// Why an activation ended without an outcome, beyond a domain error.
pub(super) enum ScanFailure {
    /// The domain refused the scan (its error, with the flag named).
    Refused(DomainError),
    /// The call went away: nobody reads this.
    Cancelled,
}

impl ScanJob {
    /// Runs the activation, asking between key tests whether `cancelled`
    /// is raised or `timeout` has passed since it started; gives back the
    /// history with the outcome. Past the budget: ResourceExhausted naming
    /// `--world-info-scan-timeout`. Interruptions are counted
    /// (`recapd_world_info_scans_interrupted_total`).
    pub(super) fn run(
        self,
        cancelled: &AtomicBool,
        timeout: Duration,
    ) -> (Vec<PromptMessage>, Result<ScanOutcome, ScanFailure>) {
        let started = Instant::now();
        let deadline = started.checked_add(timeout);
        let stopped: Cell<Option<ScanStop>> = Cell::new(None);
        let interrupt = || {
            let stop = if cancelled.load(Ordering::Relaxed) {
                Some(ScanStop::Cancelled)
            } else if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                Some(ScanStop::OverBudget)
            } else {
                None
            };
            if stop.is_some() {
                stopped.set(stop);
            }
            stop
        };
        let ScanJob {
            settings,
            names,
            books,
            history,
            unread,
            scan_prompts,
            texts,
            user_name,
            char_name,
            generation_type,
            counter,
            max_context_tokens,
            timed,
            seed,
            limits,
        } = self;
        let substitute =
            |text: &str| macros::expand(text, &[("user", &user_name), ("char", &char_name)]);
        let messages: Vec<ScanMessage<'_>> = history
            .iter()
            .filter(|m| !m.hidden)
            .map(|m| ScanMessage {
                name: &m.name,
                text: &m.content,
            })
            .collect();
        let entries: Vec<(&str, Arc<[crate::domain::world_info::entry::Entry]>, &Book)> = books
            .iter()
            .map(|(name, book)| (name.as_str(), book.scan_entries(name), &**book))
            .collect();
        let book = |name: &str| {
            entries
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(name, entries, book)| ScanBook {
                    name,
                    entries,
                    compiled: Some(book.compiled_keys()),
                })
        };
        let scan_books = ScanBooks::new(
            book(&names.chat),
            book(&names.persona),
            names.global.iter().filter_map(|n| book(n)).collect(),
            names.character.iter().filter_map(|n| book(n)).collect(),
        );
        let filter_name = if texts.character_filter_name.is_empty() {
            &texts.character_name
        } else {
            &texts.character_filter_name
        };
        // The scan's contract: never more tokens than bytes (its budget
        // check skips counting while the bytes stay under the budget).
        // tiktoken's vocabularies keep it; a model's tokenizer may not (a
        // SentencePiece one can give "1" two tokens), so its count is
        // capped at the bytes: only texts of a few bytes differ.
        let count_tokens = |text: &str| {
            counter
                .count(text)
                .min(u32::try_from(text.len()).unwrap_or(u32::MAX))
        };
        let outcome = check_world_info(ScanInput {
            settings: &settings.world_info,
            books: scan_books,
            messages: &messages,
            chat_len: messages.len().saturating_add(unread),
            texts: GlobalTexts {
                persona_description: &texts.persona_description,
                character_description: &texts.character_description,
                character_personality: &texts.character_personality,
                character_depth_prompt: &texts.character_depth_prompt,
                scenario: &texts.scenario,
                creator_notes: &texts.creator_notes,
            },
            scan_prompts: &scan_prompts,
            generation_type,
            character: (!filter_name.is_empty() || !texts.character_tags.is_empty()).then_some(
                CharacterSubject {
                    filter_name,
                    tags: &texts.character_tags,
                },
            ),
            max_context_tokens,
            count_tokens: &count_tokens,
            substitute: &substitute,
            timed: &timed,
            // recapd's dry run is a preview of the real generation: the
            // scan reads and advances a copy of the timed effects, which
            // is then not committed (SillyTavern's own dry run, the
            // domain's `dry_run`, ignores sticky and cooldown instead).
            dry_run: false,
            seed,
            limits: &limits,
            interrupt: &interrupt,
        });
        let outcome = match outcome {
            Ok(outcome) => {
                metrics::histogram!(telemetry::WORLD_INFO_SCAN_DURATION)
                    .record(started.elapsed().as_secs_f64());
                Ok(outcome)
            }
            Err(error) => Err(match stopped.get() {
                Some(ScanStop::Cancelled) => {
                    metrics::counter!(telemetry::WORLD_INFO_SCANS_INTERRUPTED, "reason" => "cancelled")
                        .increment(1);
                    ScanFailure::Cancelled
                }
                Some(ScanStop::OverBudget) => {
                    metrics::counter!(telemetry::WORLD_INFO_SCANS_INTERRUPTED, "reason" => "budget")
                        .increment(1);
                    ScanFailure::Refused(DomainError::ResourceExhausted(format!(
                        "a World Info scan ran past its time budget of {} (--world-info-scan-timeout)",
                        humantime::format_duration(timeout)
                    )))
                }
                None => ScanFailure::Refused(match error {
                    DomainError::ResourceExhausted(why) => {
                        DomainError::ResourceExhausted(format!("{why} (--world-info-max-passes)"))
                    }
                    other => other,
                }),
            }),
        };
        drop(messages);
        (history, outcome)
    }
}
