//! The engine's World Info activation: which books apply to a chat, one
//! scan of the chat as SillyTavern's `checkWorldInfo` runs it before a
//! generation, and the chat's timed effects (sticky, cooldown) it starts,
//! advances and ends, committed with the chat's row.
//!
//! The books are tenant data read before the chat is locked; the chat's
//! settings, transcript, injections and timed state are read, and the new
//! timed state committed, under the chat's lock, so two scans of one chat
//! advance its effects one after the other. A dry run commits nothing.
//!
//! The activation itself runs on a scan thread, never on an async worker
//! (`gate`: at most `--world-info-scan-threads` at once, at most
//! `--world-info-scans-per-tenant` of one tenant), within its time budget
//! (`job`: `--world-info-scan-timeout`), and stops when its call goes away.

use std::sync::Arc;

use gate::{CancelOnDrop, ScanPermits};
use job::{ScanFailure, ScanJob};

use super::chats::Change;
use super::commit::Commit;
use super::ops::known_chat_ref;
use super::prompt::{ChatPrompt, stored_injection};
use super::slot::LoadedChat;
use super::{Chats, EngineError, Next};
use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::domain::prompt::{self, ExtensionPrompt, PromptMessage};
use crate::domain::refresh::InjectionKey;
use crate::domain::settings::Settings;
use crate::domain::world_info::book::Book;
use crate::domain::world_info::entry::Entry;
use crate::domain::world_info::place::{Placement, place};
use crate::domain::world_info::scan::scan_reach;
use crate::domain::world_info::timed::TimedState;
use crate::domain::world_info::types::{Activated, GenerationType, ScanTexts};
use crate::domain::writing::macros;
use crate::store::Write;
use crate::telemetry::{self, spans};

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
    /// With an empty `history`: give the whole stored transcript back in
    /// [`WorldInfoScan::prompt`] (RenderPrompt places it). Otherwise the
    /// scan reads, and gives back, only the newest messages it can reach
    /// ([`scan_reach`]), so a scan of a long chat costs what it does in a
    /// short one.
    pub whole_history: bool,
    /// The caller's extension prompts; those flagged `scan` are scanned.
    pub extra: Vec<ExtensionPrompt>,
    /// The character's and persona's texts and names.
    pub texts: ScanTexts,
}

/// One scan's result, with the chat's part of a prompt read at the same
/// moment (for RenderPrompt, which places both).
#[derive(Debug, Clone)]
pub struct WorldInfoScan {
    /// The chat's injections and the history scanned (only its newest
    /// messages unless [`ScanRequest::whole_history`] or the request gave
    /// one).
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

mod gate;
mod job;

pub(super) use gate::ScanGate;

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
            chat: settings.world_info.chat_book.clone(),
            persona: settings.world_info.persona_book.clone(),
            global: settings.world_info.global_books.names().to_vec(),
            character: settings.world_info.character_books.names().to_vec(),
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

/// World Info's part: one activation of a chat's books over its messages,
/// with the chat's timed effects committed through the chats' update
/// path. A handle, cheap to clone: the chats (and, through them, the
/// lorebooks) and the scans' gate (threads and per-tenant shares).
#[derive(Clone)]
pub struct WorldInfo {
    chats: Chats,
    gate: Arc<ScanGate>,
}

impl WorldInfo {
    /// World Info over `chats`, its scans let through `gate`.
    pub(super) fn new(chats: Chats, gate: ScanGate) -> WorldInfo {
        WorldInfo {
            chats,
            gate: Arc::new(gate),
        }
    }

    /// One World Info activation for a chat ([`WorldInfoScan`]), with the
    /// books its settings name (books the tenant does not have are
    /// skipped). Unless `dry_run`, the chat's timed effects after the scan
    /// are committed with its row before this answers.
    ///
    /// The activation runs on a scan thread ([`ScanPool`](super::ScanPool)): the call
    /// waits for its tenant's turn and a thread before it locks the chat.
    /// Dropping the returned future (the client went away, or its deadline
    /// passed) stops the activation at its next key test; nothing of it is
    /// committed.
    ///
    /// # Errors
    /// NotFound for an unknown chat or a `message_id` the chat does not
    /// hold; ResourceExhausted when the scan needs more passes than the
    /// limit or runs past its time budget; store errors.
    pub async fn scan_world_info(
        &self,
        chat_id: &ChatKey,
        request: &ScanRequest,
    ) -> Result<WorldInfoScan, EngineError> {
        let cancel = CancelOnDrop::new();
        let global = self.chats.global(&chat_id.tenant);
        let names = self
            .chats
            .read_chat(chat_id, |resident| {
                known_chat_ref(resident, chat_id)?;
                Ok(BookNames::of(&resident.effective(&global, &chat_id.id)))
            })
            .await?;
        let books: Arc<[(String, Arc<Book>)]> = self
            .chats
            .lorebooks()
            .lorebooks_for_scan(&chat_id.tenant, &names.all())
            .await?
            .into();
        let permits = Arc::new(self.gate.enter(&chat_id.tenant).await);
        let (books, permits, cancel) = (&books, &permits, &cancel);
        self.chats
            .update_async(chat_id, |_, locked| {
                self.scan_locked(chat_id, locked, request, books, permits, cancel)
            })
            .await
            .map(|(scan, _)| scan)
    }

    /// One attempt's scan of the locked chat, with the commit of the
    /// timed effects it advanced.
    async fn scan_locked(
        &self,
        chat_id: &ChatKey,
        mut locked: LoadedChat,
        request: &ScanRequest,
        books: &Arc<[(String, Arc<Book>)]>,
        permits: &Arc<ScanPermits>,
        cancel: &CancelOnDrop,
    ) -> Result<(LoadedChat, Change<WorldInfoScan>), EngineError> {
        let global = self.chats.global(&chat_id.tenant);
        let resident = &mut *locked;
        let settings = resident.effective(&global, &chat_id.id);
        let chat = known_chat_ref(resident, chat_id)?;
        let scene_count = settings.inclusion.auto_hide_scene_count;
        let mut history = request.history.clone();
        // Visible messages the scan counts without reading them.
        let mut unread = 0;
        if !history.is_empty() {
            prompt::link_history(&mut history, chat, scene_count)?;
        } else if request.whole_history {
            history = prompt::chat_history(chat, scene_count);
        } else {
            let entries: Vec<Arc<[Entry]>> = books
                .iter()
                .map(|(name, book)| book.scan_entries(name))
                .collect();
            // One more than the scan reads: a swipe leaves the last out.
            let reach = scan_reach(&settings.world_info, entries.iter().flat_map(|e| e.iter()));
            let tail = prompt::chat_history_tail(chat, scene_count, reach.saturating_add(1));
            unread = tail.visible.saturating_sub(tail.messages.len());
            history = tail.messages;
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
        let timed = resident
            .meta
            .world_info_timed
            .as_deref()
            .map(TimedState::from_json)
            .unwrap_or_default();
        let seed = match request.seed {
            0 => rand::random::<u64>(),
            seed => seed,
        };
        let job = ScanJob {
            settings: Arc::clone(&settings),
            names: BookNames::of(&settings),
            books: books.clone(),
            history,
            unread,
            scan_prompts,
            texts: request.texts.clone(),
            user_name: user_name.clone(),
            char_name: char_name.clone(),
            generation_type: request.generation_type,
            counter: self.chats.counter(&settings),
            max_context_tokens: settings
                .inclusion
                .max_context_tokens
                .map_or(u32::MAX, |t| u32::try_from(t).unwrap_or(u32::MAX)),
            timed,
            seed,
            limits: self.chats.lorebooks().limits().scan,
        };
        // The chat stays locked while its scan runs on a scan thread (the
        // timed effects it advances are committed below, one scan after
        // the other); the async worker is free meanwhile.
        let thread_permits = permits.clone();
        let cancelled = cancel.flag();
        let timeout = self.chats.lorebooks().limits().scan_pool.timeout;
        let span = spans::world_info();
        spans::chat_id(&span, &chat_id.id);
        let (history, outcome) = tokio::task::spawn_blocking(move || {
            let _permits = thread_permits;
            let (history, outcome) = span.in_scope(|| job.run(&cancelled, timeout));
            match &outcome {
                Ok(done) => {
                    spans::record_count(&span, "recapd.world_info.activated", done.activated.len())
                }
                Err(_) => spans::failed(&span, "interrupted"),
            }
            (history, outcome)
        })
        .await
        .map_err(|error| match error.try_into_panic() {
            Ok(panic) => EngineError::panicked(&*panic),
            Err(_) => EngineError::Panicked("the World Info scan's thread was stopped".into()),
        })?;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(ScanFailure::Refused(error)) => return Err(error.into()),
            // Only a dropped call cancels, so nobody reads this.
            Err(ScanFailure::Cancelled) => {
                return Err(DomainError::FailedPrecondition(
                    "the World Info scan was cancelled".into(),
                )
                .into());
            }
        };
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
            return Ok((locked, Change::Answer(scan)));
        }
        let mut meta = resident.meta.clone();
        meta.world_info_timed = stored;
        resident.meta.world_info_timed = meta.world_info_timed.clone();
        let writes = vec![Write::Chat {
            chat: chat_id.clone(),
            meta,
        }];
        Ok((
            locked,
            Change::Commit(Commit::one(writes, Next::Nothing), scan),
        ))
    }
}

fn non_empty_or(given: &str, otherwise: String) -> String {
    if given.is_empty() {
        otherwise
    } else {
        given.to_owned()
    }
}
