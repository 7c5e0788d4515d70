//! Recall in the engine: a chat's passages searched for a client
//! ([`Chats::recall`], RecallService), the other chats a chat's recall
//! also searches (`recall_chats`), and the recall tier's lines for a
//! refresh ([`Chats::recall_tier_lines`], which the commit reads through
//! its [`TierSource`], implemented here).
//!
//! Each chat's passages are ranked in its own index; hits of several chats
//! are merged by fused score. Another chat is read under its own lock,
//! never while this chat's lock waits for it: a Recall locks the chats one
//! after the other; a refresh, which holds its chat's lock, reads another
//! chat only if its lock is free and it is in memory now (and asks for it
//! to be loaded otherwise, for the next refresh).

use std::time::Instant;

use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::recall::search::{Hit, RecallQuery, passage_key};
use crate::domain::recall::tier::{self, AlreadyInjected, MomentQuery, TierLine};
use crate::domain::recall::{MAX_HITS, RecallIndex};
use crate::domain::settings::Settings;
use crate::llm::LlmError;
use crate::telemetry;

use super::commit::TierSource;
use super::slot::Resident;
use super::{Chats, EngineError};

/// The hits Recall answers with when the request names no limit.
pub const DEFAULT_RECALL_LIMIT: usize = 10;

/// What a client asks Recall.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallRequest {
    /// What to look for; empty: the chat's current moment.
    pub query: String,
    /// The most hits, 1..=[`MAX_HITS`].
    pub limit: usize,
    /// The lowest fused score; `None`: the chat's `recall_min_score`.
    pub min_score: Option<f32>,
}

/// One passage found for a client.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallHit {
    /// The chat it is from (the request's, or one of its `recall_chats`).
    pub chat_id: String,
    /// The passage and its scores.
    pub hit: Hit,
    /// Its tokens, counted with the request's chat's tokenizer.
    pub tokens: u32,
}

/// Recall's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallAnswer {
    /// The passages, best first.
    pub hits: Vec<RecallHit>,
    /// Whether vector similarity took part: the query has a direction and
    /// the chat has vectors.
    pub used_vectors: bool,
}

/// What one chat's search looks for: the query text, its direction, and
/// whether the chat's recent window is left out (the moment's own chat).
struct Search {
    moment: MomentQuery,
    exclude_recent: bool,
}

impl Chats {
    /// Recall: the passages of `chat_id` (and of its `recall_chats`) that
    /// best match `request.query`, or, with an empty query, the chat's
    /// current moment as the recall tier sees it.
    ///
    /// # Errors
    /// NotFound for an unknown chat; Unavailable when the embeddings
    /// endpoint does not answer for a non-empty query; store errors.
    pub async fn recall(
        &self,
        chat_id: &ChatKey,
        request: &RecallRequest,
    ) -> Result<RecallAnswer, EngineError> {
        let global = self.global(&chat_id.tenant);
        // The query's direction first, with no lock held.
        let direction = match (
            self.jobs().embedder().map(|e| &e.client),
            request.query.trim().is_empty(),
        ) {
            (Some(client), false) => Some(embed_query(client, &request.query).await?),
            _ => None,
        };
        let model = self.jobs().recall_model().to_owned();
        let started = Instant::now();
        let (search, settings, own, used_vectors) = self
            .read_chat(chat_id, |resident| {
                let settings = resident.effective(&global, &chat_id.id);
                let chat = resident
                    .chat
                    .clone()
                    .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
                let mut recall = resident.recall.lock();
                let index = recall.synced(&chat, &settings, &model);
                let search = match &direction {
                    None if request.query.trim().is_empty() => Search {
                        moment: tier::moment_query(&chat, index, &settings),
                        exclude_recent: true,
                    },
                    _ => Search {
                        moment: MomentQuery {
                            text: request.query.clone(),
                            vector: direction.clone(),
                            exclude_from_seq: None,
                        },
                        exclude_recent: false,
                    },
                };
                let hits = run_search(&chat, index, &search, &settings, request);
                let vectors = search.moment.vector.is_some() && index.vector_count() > 0;
                Ok((search, settings, hits, vectors))
            })
            .await?;
        let mut found: Vec<(String, Hit)> = own
            .into_iter()
            .map(|hit| (chat_id.id.clone(), hit))
            .collect();
        for other in settings.recall.chats.ids() {
            if *other == chat_id.id {
                continue;
            }
            let key = chat_id.tenant.chat(other);
            let hits = self
                .read_chat(&key, |resident| {
                    let own = resident.effective(&global, &key.id);
                    Ok(resident.chat.clone().map(|chat| {
                        let mut recall = resident.recall.lock();
                        let index = recall.synced(&chat, &own, &model);
                        let elsewhere = Search {
                            exclude_recent: false,
                            ..search_copy(&search)
                        };
                        run_search(&chat, index, &elsewhere, &settings, request)
                    }))
                })
                .await?;
            // A listed chat that does not exist (yet, or any more) has no
            // passages.
            found.extend(
                hits.unwrap_or_default()
                    .into_iter()
                    .map(|h| (other.clone(), h)),
            );
        }
        found.sort_by(|a, b| b.1.score.total_cmp(&a.1.score));
        // Each chat's hits hold a passage once; several chats may still
        // say the same thing.
        let mut seen = std::collections::HashSet::new();
        found.retain(|(_, hit)| seen.insert(passage_key(&hit.text)));
        found.truncate(request.limit.clamp(1, MAX_HITS));
        metrics::histogram!(
            telemetry::RECALL_SEARCH_DURATION,
            "vectors" => if used_vectors { "true" } else { "false" }
        )
        .record(started.elapsed().as_secs_f64());
        let counter = self.counter(&settings);
        let hits = found
            .into_iter()
            .map(|(chat_id, hit)| RecallHit {
                tokens: counter.count(&hit.text),
                chat_id,
                hit,
            })
            .collect();
        Ok(RecallAnswer { hits, used_vectors })
    }

    /// The recall tier's lines for a refresh of the locked chat `key`
    /// (its own hits for the moment but those its running recap and
    /// message-recap tier inject already, and those of its `recall_chats`
    /// that are in memory with their lock free now; the others are loaded
    /// in the background for the next refresh), best first.
    pub(super) fn recall_tier_lines(
        &self,
        key: &ChatKey,
        resident: &Resident,
        chat: &Chat,
        settings: &Settings,
    ) -> Vec<TierLine> {
        let model = self.jobs().recall_model();
        let mut recall = resident.recall.lock();
        let index = recall.synced(chat, settings, model);
        let moment = tier::moment_query(chat, index, settings);
        if moment.is_empty() {
            return Vec::new();
        }
        // A refresh whose moment and index are as they were (a debounced
        // trigger, a settings change elsewhere) searches nothing again.
        let own = index.search_again(
            chat,
            &tier::moment_search(&moment, settings, MAX_HITS, true),
        );
        drop(recall);
        let already = AlreadyInjected::of(chat, settings, &self.counter(settings));
        let mut lines = tier::tier_lines(chat, own, &already);
        for other in settings.recall.chats.ids() {
            if *other == key.id {
                continue;
            }
            let other_key = key.tenant.chat(other);
            let slot = self.slot(&other_key);
            let Ok(mut guard) = slot.state.try_lock() else {
                continue;
            };
            let Some(resident) = guard.as_mut() else {
                drop(guard);
                self.load_in_background(other_key);
                continue;
            };
            let Some(other_chat) = resident.chat.clone() else {
                continue;
            };
            // The other chat's passages are cut by its own settings.
            let own = resident.effective(&self.global(&other_key.tenant), &other_key.id);
            let mut recall = resident.recall.lock();
            let index = recall.synced(&other_chat, &own, model);
            let hits = index.search(
                &other_chat,
                &tier::moment_search(&moment, settings, MAX_HITS, false),
            );
            lines.extend(tier::tier_lines(
                &other_chat,
                hits,
                &AlreadyInjected::default(),
            ));
        }
        lines.sort_by(|a, b| b.score.total_cmp(&a.score));
        lines
    }

    /// Loads `chat` into memory in a task of its own (for a refresh that
    /// found it cold).
    fn load_in_background(&self, chat: ChatKey) {
        let engine = self.clone();
        tokio::spawn(async move {
            let slot = engine.slot(&chat);
            if let Err(error) = engine.lock(&slot).await {
                tracing::debug!(%chat, %error, "could not load a chat recall searches");
            }
        });
    }
}

/// A copy of a search's query (the direction is shared by every chat).
fn search_copy(search: &Search) -> Search {
    Search {
        moment: search.moment.clone(),
        exclude_recent: search.exclude_recent,
    }
}

/// One chat's search for a client.
fn run_search(
    chat: &Chat,
    index: &RecallIndex,
    search: &Search,
    settings: &Settings,
    request: &RecallRequest,
) -> Vec<Hit> {
    if search.moment.is_empty() {
        return Vec::new();
    }
    let base = tier::moment_search(&search.moment, settings, MAX_HITS, search.exclude_recent);
    let query = RecallQuery {
        limit: request.limit.clamp(1, MAX_HITS),
        min_score: request.min_score.unwrap_or(base.min_score),
        ..base
    };
    index.search(chat, &query)
}

/// The direction of a client's query, from the embeddings endpoint.
async fn embed_query(
    client: &crate::llm::EmbeddingClient,
    query: &str,
) -> Result<Vec<f32>, EngineError> {
    match client.embed(&[query.to_owned()]).await {
        Ok(mut answer) => answer
            .vectors
            .pop()
            .ok_or_else(|| EngineError::EmbeddingsUnavailable("no vector in the answer".into())),
        Err(LlmError::Retryable { reason, .. } | LlmError::Fatal { reason, .. }) => {
            Err(EngineError::EmbeddingsUnavailable(reason))
        }
    }
}

/// The commit's refreshes read the recall tier's lines here.
impl TierSource for Chats {
    fn tier_lines(
        &self,
        key: &ChatKey,
        resident: &Resident,
        chat: &Chat,
        settings: &Settings,
    ) -> Vec<TierLine> {
        self.recall_tier_lines(key, resident, chat, settings)
    }
}
