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
//!
//! A search of a chat of more than `--recall-inline-passages` passages
//! never runs under a chat's lock ([`order`]): Recall waits for it on a
//! blocking thread; the recall tier answers from the latest search and
//! starts a new one in the background, whose end refreshes the chat again
//! (REFRESH_TRIGGER_RECALL_SEARCHED).

mod order;

use std::sync::Arc;
use std::time::Instant;

use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::domain::recall::search::{Candidates, Hit, SearchKey, passage_key};
use crate::domain::recall::tier::{self, AlreadyInjected, MomentQuery, TierLine};
use crate::domain::recall::{MAX_HITS, RecallIndex};
use crate::domain::refresh::Trigger;
use crate::domain::settings::Settings;
use crate::llm::LlmError;
use crate::telemetry::{self, spans};
use tracing::Instrument as _;

use super::commit::TierSource;
use super::recall_state::{Answer, TierSearches};
use super::slot::Resident;
use super::{Chats, EngineError};
use order::Order;

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

/// A search of one chat for a client: answered under the chat's lock,
/// or to be ranked away from it (see [`order`]).
enum Found {
    /// The hits.
    Hits(Vec<Hit>),
    /// A snapshot of the chat's index and what to rank on it.
    Later(Arc<RecallIndex>, Order),
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
        let span = spans::recall();
        spans::chat_id(&span, &chat_id.id);
        spans::content(&span, "recapd.recall.query", || request.query.clone());
        let answer = self
            .recall_untraced(chat_id, request)
            .instrument(span.clone())
            .await;
        if let Ok(answer) = &answer {
            span.record("recapd.recall.vectors", answer.used_vectors);
            spans::record_count(&span, "recapd.recall.hits", answer.hits.len());
        }
        answer
    }

    /// [`Chats::recall`] without its span.
    async fn recall_untraced(
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
        let inline_limit = self.limits().recall_inline_passages;
        let started = Instant::now();
        let (search, settings, own, used_vectors) = self
            .read_chat(chat_id, |resident| {
                let settings = resident.effective(&global, &chat_id.id);
                let chat = resident
                    .chat
                    .clone()
                    .ok_or_else(|| EngineError::unknown_chat(chat_id))?;
                let mut recall = resident.recall.lock();
                let index = recall.synced(&chat, &settings, &model, inline_limit);
                let search = match &direction {
                    None if request.query.trim().is_empty() => {
                        Order::of(tier::moment_query(&chat, index, &settings), &settings, true)
                    }
                    _ => Order::of(
                        MomentQuery {
                            text: request.query.clone(),
                            vector: direction.clone(),
                            exclude_from_seq: None,
                        },
                        &settings,
                        false,
                    ),
                };
                let search = for_client(search, request);
                let vectors = search.moment.vector.is_some() && index.vector_count() > 0;
                let found = search_now_or_later(&chat, index, search.clone(), inline_limit);
                Ok((search, settings, found, vectors))
            })
            .await?;
        let own = self.finish(chat_id, own).await?;
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
                        let index = recall.synced(&chat, &own, &model, inline_limit);
                        let elsewhere = Order {
                            exclude_recent: false,
                            ..search.clone()
                        };
                        search_now_or_later(&chat, index, elsewhere, inline_limit)
                    }))
                })
                .await?;
            // A listed chat that does not exist (yet, or any more) has no
            // passages.
            let hits = match hits {
                Some(found) => self.finish(&key, found).await?,
                None => Vec::new(),
            };
            found.extend(hits.into_iter().map(|h| (other.clone(), h)));
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
        let inline_limit = self.limits().recall_inline_passages;
        let mut recall = resident.recall.lock();
        let index = recall.synced(chat, settings, model, inline_limit).clone();
        let moment = tier::moment_query(chat, &index, settings);
        if moment.is_empty() {
            return Vec::new();
        }
        let searched: Vec<&str> = std::iter::once(key.id.as_str())
            .chain(settings.recall.chats.ids().iter().map(String::as_str))
            .collect();
        recall.searches.retain(&searched);
        let own = self.tier_candidates(
            key,
            &mut recall.searches,
            &key.id,
            &index,
            Order::of(moment.clone(), settings, true),
        );
        drop((recall, index));
        let already = AlreadyInjected::of(chat, settings, &self.counter(settings));
        let mut lines = tier::tier_lines(chat, own.hits(chat), &already);
        for other in settings.recall.chats.ids() {
            if *other == key.id {
                continue;
            }
            let other_key = key.tenant.chat(other);
            let slot = self.slot(&other_key);
            let Ok(mut guard) = slot.state.try_lock() else {
                continue;
            };
            let Some(resident_other) = guard.as_mut() else {
                drop(guard);
                self.load_in_background(other_key);
                continue;
            };
            let Some(other_chat) = resident_other.chat.clone() else {
                continue;
            };
            // The other chat's passages are cut by its own settings.
            let own = resident_other.effective(&self.global(&other_key.tenant), &other_key.id);
            let index = resident_other
                .recall
                .lock()
                .synced(&other_chat, &own, model, inline_limit)
                .clone();
            let candidates = self.tier_candidates(
                key,
                &mut resident.recall.lock().searches,
                other,
                &index,
                Order::of(moment.clone(), settings, false),
            );
            drop(index);
            lines.extend(tier::tier_lines(
                &other_chat,
                candidates.hits(&other_chat),
                &AlreadyInjected::default(),
            ));
        }
        lines.sort_by(|a, b| b.score.total_cmp(&a.score));
        lines
    }

    /// The candidates of `order` on chat `searched`'s `index` for the
    /// recall tier of chat `home`: the latest answer when it is for the
    /// same query and index generation; else ranked now when the index is
    /// small (see [`order`]); else the latest answer whatever it was for
    /// (none: nothing), while a background search ranks them anew and
    /// then refreshes `home` (one such search per searched chat at a
    /// time).
    fn tier_candidates(
        &self,
        home: &ChatKey,
        searches: &mut TierSearches,
        searched: &str,
        index: &Arc<RecallIndex>,
        order: Order,
    ) -> Candidates {
        let key = SearchKey::of(&order.query());
        let generation = index.generation();
        if let Some(answer) = searches.current(searched, &key, generation) {
            return answer.candidates.clone();
        }
        if order::inline(index, self.limits().recall_inline_passages) {
            let candidates = index.candidates(&order.query());
            searches.keep(
                searched,
                Answer {
                    key,
                    generation,
                    candidates: candidates.clone(),
                },
            );
            return candidates;
        }
        if searches.start(searched) {
            let reporter = searches.reporter();
            let engine = self.clone();
            let home = home.clone();
            let searched = searched.to_owned();
            let index = index.clone();
            self.spawn_background(async move {
                let ranked = order::rank_away(index, order).await;
                let finished = {
                    let mut background = reporter.lock();
                    background.running.remove(&searched);
                    match ranked {
                        Ok(candidates) => {
                            background.done.push((
                                searched,
                                Answer {
                                    key,
                                    generation,
                                    candidates,
                                },
                            ));
                            true
                        }
                        Err(error) => {
                            tracing::error!(chat = %home, %error, "a recall search failed");
                            false
                        }
                    }
                };
                if finished
                    && let Err(error) = engine.refresh_chat(&home, Trigger::RecallSearched).await
                {
                    tracing::debug!(chat = %home, %error, "no refresh after a recall search");
                }
            });
        }
        searches
            .latest(searched)
            .map(|answer| answer.candidates.clone())
            .unwrap_or_default()
    }

    /// The hits of a client's search of chat `key`: as found, or ranked
    /// away from the chat's lock and then read from the chat.
    async fn finish(&self, key: &ChatKey, found: Found) -> Result<Vec<Hit>, EngineError> {
        let (index, order) = match found {
            Found::Hits(hits) => return Ok(hits),
            Found::Later(index, order) => (index, order),
        };
        let candidates = order::rank_away(index, order)
            .await
            .map_err(EngineError::Panicked)?;
        self.read_chat(key, |resident| {
            Ok(resident
                .chat
                .as_ref()
                .map(|chat| candidates.hits(chat))
                .unwrap_or_default())
        })
        .await
    }

    /// Loads `chat` into memory in a task of its own (for a refresh that
    /// found it cold).
    fn load_in_background(&self, chat: ChatKey) {
        let engine = self.clone();
        self.spawn_background(async move {
            let slot = engine.slot(&chat);
            if let Err(error) = engine.lock(&slot).await {
                tracing::debug!(%chat, %error, "could not load a chat recall searches");
            }
        });
    }
}

/// A client's search: the request's limit and lowest score.
fn for_client(order: Order, request: &RecallRequest) -> Order {
    Order {
        limit: request.limit.clamp(1, MAX_HITS),
        min_score: request.min_score.unwrap_or(order.min_score),
        ..order
    }
}

/// One chat's search for a client: its hits now when the index is small
/// (or there is nothing to look for), else what to rank away from the
/// chat's lock.
fn search_now_or_later(
    chat: &Chat,
    index: &Arc<RecallIndex>,
    order: Order,
    inline_limit: usize,
) -> Found {
    if order.is_empty() {
        return Found::Hits(Vec::new());
    }
    if order::inline(index, inline_limit) {
        return Found::Hits(index.search(chat, &order.query()));
    }
    Found::Later(index.clone(), order)
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
