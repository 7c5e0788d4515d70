//! The engine's World Info activation: which books apply to a chat, one
//! scan of the chat as SillyTavern's `checkWorldInfo` runs it before a
//! generation, and the chat's timed effects (sticky, cooldown) it starts,
//! advances and ends, committed with the chat's row.
//!
//! The books are tenant data read before the chat is locked; the chat's
//! settings, transcript, injections and timed state are read, and the new
//! timed state committed, under the chat's lock, so two scans of one chat
//! advance its effects one after the other. A dry run commits nothing.

use std::sync::Arc;

use super::commit::Commit;
use super::ops::known_chat_ref;
use super::prompt::{ChatPrompt, stored_injection};
use super::{Engine, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::domain::prompt::{self, ExtensionPrompt, PromptMessage};
use crate::domain::refresh::InjectionKey;
use crate::domain::settings::Settings;
use crate::domain::tokens;
use crate::domain::world_info::book::Book;
use crate::domain::world_info::place::{Placement, place};
use crate::domain::world_info::scan::{
    CharacterStrategy, CharacterSubject, GlobalTexts, ScanBook, ScanBooks, ScanInput, ScanMessage,
    ScanSettings, check_world_info,
};
use crate::domain::world_info::timed::TimedState;
use crate::domain::world_info::types::{Activated, GenerationType, ScanTexts};
use crate::domain::writing::macros;
use crate::store::Write;
use crate::telemetry;

/// One scan's request: what SillyTavern knows at a generation beyond the
/// chat recapd keeps.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// The generation's type (entries' `triggers`).
    pub generation_type: GenerationType,
    /// A preview: the scan reads the timed effects as a real generation
    /// would, and commits none of the changes it makes to them.
    pub dry_run: bool,
    /// Seeds the random draws; 0: a fresh seed.
    pub seed: u64,
    /// The history, as RenderPrompt takes it: empty means the chat's
    /// stored transcript; linked entries take the stored hidden state.
    pub history: Vec<PromptMessage>,
    /// The caller's extension prompts; those flagged `scan` are scanned.
    pub extra: Vec<ExtensionPrompt>,
    /// The character's and persona's texts and names.
    pub texts: ScanTexts,
}

/// One scan's result, with the chat's part of a prompt read at the same
/// moment (for RenderPrompt, which places both).
#[derive(Debug, Clone)]
pub struct WorldInfoScan {
    /// The chat's injections and the history scanned.
    pub prompt: ChatPrompt,
    /// The activated entries, in SillyTavern's order of activation.
    pub activated: Vec<Activated>,
    /// Where they go.
    pub placement: Placement,
    /// `{{user}}` and `{{char}}` as the scan substituted them.
    pub user_name: String,
    /// See [`WorldInfoScan::user_name`].
    pub char_name: String,
}

/// The books a chat's settings name, by role.
struct BookNames {
    chat: String,
    persona: String,
    global: Vec<String>,
    character: Vec<String>,
}

impl BookNames {
    fn of(settings: &Settings) -> BookNames {
        BookNames {
            chat: settings.world_info_chat_book.clone(),
            persona: settings.world_info_persona_book.clone(),
            global: settings.world_info_global_books.names().to_vec(),
            character: settings.world_info_character_books.names().to_vec(),
        }
    }

    /// Every name, once, in the order the scan prefers them.
    fn all(&self) -> Vec<String> {
        let mut all = Vec::new();
        for name in [&self.chat, &self.persona]
            .into_iter()
            .chain(&self.global)
            .chain(&self.character)
        {
            if !name.is_empty() && !all.contains(name) {
                all.push(name.clone());
            }
        }
        all
    }
}

/// The scan's settings from recapd's.
fn scan_settings(settings: &Settings) -> ScanSettings {
    ScanSettings {
        depth: settings.world_info_depth,
        min_activations: settings.world_info_min_activations,
        min_activations_depth_max: settings.world_info_min_activations_depth_max,
        budget_percent: settings.world_info_budget,
        budget_cap: settings.world_info_budget_cap,
        include_names: settings.world_info_include_names,
        recursive: settings.world_info_recursive,
        case_sensitive: settings.world_info_case_sensitive,
        match_whole_words: settings.world_info_match_whole_words,
        use_group_scoring: settings.world_info_use_group_scoring,
        character_strategy: CharacterStrategy::from_number(
            settings.world_info_character_strategy.st_number(),
        ),
        max_recursion_steps: settings.world_info_max_recursion_steps,
    }
}

impl Engine {
    /// One World Info activation for a chat ([`WorldInfoScan`]), with the
    /// books its settings name (books the tenant does not have are
    /// skipped). Unless `dry_run`, the chat's timed effects after the scan
    /// are committed with its row before this answers.
    ///
    /// # Errors
    /// NotFound for an unknown chat or a `message_id` the chat does not
    /// hold; ResourceExhausted when the scan needs more passes than the
    /// limit; store errors.
    pub async fn scan_world_info(
        &self,
        chat_id: &ChatKey,
        request: &ScanRequest,
    ) -> Result<WorldInfoScan, EngineError> {
        let global = self.global(&chat_id.tenant);
        let names = self
            .read_chat(chat_id, |resident| {
                known_chat_ref(resident, chat_id)?;
                Ok(BookNames::of(&resident.effective(&global)))
            })
            .await?;
        let books = self
            .lorebooks_for_scan(&chat_id.tenant, &names.all())
            .await?;
        self.retrying(|| self.scan_once(chat_id, request, &books))
            .await
    }

    async fn scan_once(
        &self,
        chat_id: &ChatKey,
        request: &ScanRequest,
        books: &[(String, Arc<Book>)],
    ) -> Result<WorldInfoScan, EngineError> {
        let global = self.global(&chat_id.tenant);
        let slot = self.slot(chat_id);
        let mut guard = self.lock(&slot).await?;
        let resident = &mut *guard;
        let settings = resident.effective(&global);
        let chat = known_chat_ref(resident, chat_id)?;
        let scene_count = settings.auto_hide_scene_count;
        let mut history = request.history.clone();
        if history.is_empty() {
            history = prompt::chat_history(chat, scene_count);
        } else {
            prompt::link_history(&mut history, chat, scene_count)?;
        }
        // A swipe replaces the last message: SillyTavern leaves it out of
        // the prompt and the scan (script.js:4438-4440).
        if request.generation_type == GenerationType::Swipe
            && let Some(last) = history.iter().rposition(|m| !m.hidden)
        {
            history.remove(last);
        }
        let injections = [
            InjectionKey::Scene,
            InjectionKey::Messages,
            InjectionKey::Recall,
        ]
        .map(|key| stored_injection(resident, chat_id, &settings, key));
        let speakers = macros::speakers(chat);
        let user_name = non_empty_or(&request.texts.user_name, speakers.user);
        let char_name = non_empty_or(&request.texts.character_name, speakers.char);
        let substitute =
            |text: &str| macros::expand(text, &[("user", &user_name), ("char", &char_name)]);
        // The prompts SillyTavern scans: every registered extension prompt
        // flagged `scan`, the last registration of a key winning, in key
        // order, macros substituted.
        let mut registered: std::collections::BTreeMap<&str, &ExtensionPrompt> =
            std::collections::BTreeMap::new();
        let own: Vec<ExtensionPrompt> = injections.iter().map(|i| i.extension_prompt()).collect();
        for p in own.iter().chain(&request.extra) {
            registered.insert(&p.key, p);
        }
        let scan_prompts: Vec<String> = registered
            .values()
            .filter(|p| p.scan && !p.value.is_empty())
            .map(|p| substitute(&p.value))
            .collect();
        let messages: Vec<ScanMessage<'_>> = history
            .iter()
            .filter(|m| !m.hidden)
            .map(|m| ScanMessage {
                name: &m.name,
                text: &m.content,
            })
            .collect();
        let timed = resident
            .meta
            .world_info_timed
            .as_deref()
            .map(TimedState::from_json)
            .unwrap_or_default();
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
        let names = BookNames::of(&settings);
        let scan_books = ScanBooks::new(
            book(&names.chat),
            book(&names.persona),
            names.global.iter().filter_map(|n| book(n)).collect(),
            names.character.iter().filter_map(|n| book(n)).collect(),
        );
        let texts = &request.texts;
        let filter_name = if texts.character_filter_name.is_empty() {
            &texts.character_name
        } else {
            &texts.character_filter_name
        };
        let kind = settings.tokenizer;
        let count_tokens = |text: &str| tokens::count(kind, text);
        let seed = match request.seed {
            0 => rand::random::<u64>(),
            seed => seed,
        };
        let started = std::time::Instant::now();
        let outcome = check_world_info(ScanInput {
            settings: &scan_settings(&settings),
            books: scan_books,
            messages: &messages,
            texts: GlobalTexts {
                persona_description: &texts.persona_description,
                character_description: &texts.character_description,
                character_personality: &texts.character_personality,
                character_depth_prompt: &texts.character_depth_prompt,
                scenario: &texts.scenario,
                creator_notes: &texts.creator_notes,
            },
            scan_prompts: &scan_prompts,
            generation_type: request.generation_type,
            character: (!filter_name.is_empty() || !texts.character_tags.is_empty()).then_some(
                CharacterSubject {
                    filter_name,
                    tags: &texts.character_tags,
                },
            ),
            max_context_tokens: settings
                .max_context_tokens
                .map_or(u32::MAX, |t| u32::try_from(t).unwrap_or(u32::MAX)),
            count_tokens: &count_tokens,
            substitute: &substitute,
            timed: &timed,
            // recapd's dry run is a preview of the real generation: the
            // scan reads and advances a copy of the timed effects, which
            // is then not committed (SillyTavern's own dry run, the
            // domain's `dry_run`, ignores sticky and cooldown instead).
            dry_run: false,
            seed,
            limits: &self.lorebook_limits().scan,
        })
        .map_err(|error| match error {
            DomainError::ResourceExhausted(why) => {
                DomainError::ResourceExhausted(format!("{why} (--world-info-max-passes)"))
            }
            other => other,
        })?;
        metrics::histogram!(telemetry::WORLD_INFO_SCAN_DURATION)
            .record(started.elapsed().as_secs_f64());
        for (book, uid, key) in &outcome.regex_overruns {
            // Counted each time, logged once per book version and key.
            let news = books
                .iter()
                .find(|(name, _)| name == book)
                .is_none_or(|(_, b)| b.compiled_keys().first_overrun(key));
            if news {
                tracing::warn!(chat = %chat_id, book, uid, key, "a World Info regex key hit its step or work bound and was taken as not matching (logged once per book version and key)");
            }
            metrics::counter!(telemetry::WORLD_INFO_REGEX_OVERRUNS).increment(1);
        }
        let placement = place(&outcome.activated);
        let scan = WorldInfoScan {
            prompt: ChatPrompt {
                injections,
                history,
            },
            activated: outcome.activated,
            placement,
            user_name,
            char_name,
        };
        let stored = (!outcome.timed.is_empty()).then(|| outcome.timed.to_json());
        if request.dry_run
            || stored == resident.meta.world_info_timed
            || (stored.is_none() && resident.meta.world_info_timed.is_none())
        {
            return Ok(scan);
        }
        let mut meta = resident.meta.clone();
        meta.world_info_timed = stored;
        resident.meta.world_info_timed = meta.world_info_timed.clone();
        let writes = vec![Write::Chat {
            chat: chat_id.clone(),
            meta,
        }];
        self.commit(&slot, guard, Commit::one(writes, Next::Nothing))
            .await?;
        Ok(scan)
    }
}

fn non_empty_or(given: &str, otherwise: String) -> String {
    if given.is_empty() {
        otherwise
    } else {
        given.to_owned()
    }
}
