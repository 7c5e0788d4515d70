//! The recall tier (`auto_recap_recall`): on each refresh of a chat with
//! `recall_enabled`, the chunks of its history that best match what is
//! being said now, best first, within a token budget, through the recall
//! template, at the tier's own place.
//!
//! The query is the last `recall_query_messages` indexed messages: their
//! words for the keyword ranking, and the centroid of their chunks'
//! vectors (those already indexed) for the vector ranking. Using the
//! stored vectors rather than embedding the query text keeps a refresh
//! free of requests: it runs in memory, under the chat's lock. The
//! messages of the prompt's recent window (the last
//! `recall_exclude_recent` messages not hidden by hand) are left out of
//! the results: the prompt has them already. So are the passages the
//! chat's other tiers inject already ([`AlreadyInjected`]): the scene
//! recaps the running recap carries, and the messages whose recaps the
//! message-recap tier holds.
//!
//! The tier holds each passage once (identical texts, whitespace and case
//! aside, count as one), and as many as its token budget takes: the
//! injected text, template included, has at most `recall_max_tokens`
//! tokens, and no passage looked at and left out would have fitted.

use std::collections::HashSet;

use super::index::RecallIndex;
use super::search::{Hit, RecallQuery, passage_key};
use super::{RECALL_PLACEHOLDER, Source, indexable};
use crate::autohide::auto_hide;
use crate::chat::Chat;
use crate::inclusion::compute_inclusion;
use crate::refresh::{Injection, InjectionKey, RefreshContext, disabled_place};
use crate::settings::Settings;
use crate::template;
use crate::tokens::Counter;

/// The most distinct passages the tier looks at (best first) to fill its
/// budget: counting tokens is the tier's main cost.
pub const MAX_TIER_CANDIDATES: usize = 24;

/// The separator of the tier's passages.
const SEPARATOR: &str = "\n\n";

/// What a chat's other tiers inject already, which its recall tier leaves
/// out: the scene recaps the running recap carries (those of the scenes up
/// to the one its current version was written through), and the passages
/// of the messages whose recaps the message-recap tier includes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlreadyInjected {
    /// Scene recaps at or before this position are in the running recap.
    recap_through: Option<i64>,
    /// Messages whose recap the message-recap tier includes.
    messages: HashSet<String>,
}

impl AlreadyInjected {
    /// What `chat`'s running recap and message-recap tier inject under
    /// `settings` while memory is enabled (`counter` counts the message
    /// tier's budget, as that tier does).
    pub fn of(chat: &Chat, settings: &Settings, counter: &Counter) -> AlreadyInjected {
        let recap_through = chat
            .recaps()
            .current()
            .filter(|v| !v.content.trim().is_empty())
            .and_then(|v| v.new_scene_message_id.as_deref())
            .and_then(|id| chat.message(id))
            .map(|(seq, _)| seq);
        let messages = if settings.tier.enabled {
            compute_inclusion(chat, settings, counter)
                .into_iter()
                .filter(|line| line.included)
                .map(|line| line.message_id)
                .collect()
        } else {
            HashSet::new()
        };
        AlreadyInjected {
            recap_through,
            messages,
        }
    }

    /// Whether `hit` is injected already by another tier.
    pub fn covers(&self, hit: &Hit) -> bool {
        match hit.key.source {
            Source::SceneRecap => self.recap_through.is_some_and(|through| hit.seq <= through),
            Source::Message => self.messages.contains(hit.key.message_id.as_str()),
        }
    }
}

/// The query of the chat's current moment (see the module
/// documentation): its text, its direction, the position the recent
/// window starts at, and the ids of the query's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct MomentQuery {
    /// The query messages' texts, oldest first, one per line.
    pub text: String,
    /// The centroid of their vectors; `None` when none has one.
    pub vector: Option<Vec<f32>>,
    /// The recent window's first position; `None`: no window.
    pub exclude_from_seq: Option<i64>,
}

/// The query of `chat`'s current moment under `settings`.
pub fn moment_query(chat: &Chat, index: &RecallIndex, settings: &Settings) -> MomentQuery {
    let wanted = settings.recall.query_messages as usize;
    let recent: Vec<(i64, &crate::message::Message)> = chat
        .messages()
        .rev()
        .filter(|(_, m)| indexable(m))
        .take(wanted)
        .collect();
    let text = recent
        .iter()
        .rev()
        .map(|(_, m)| m.text())
        .collect::<Vec<_>>()
        .join("\n");
    let vector = index.direction(recent.iter().map(|(_, m)| m.id.as_str()));
    let window = settings.recall.exclude_recent as usize;
    let exclude_from_seq = if window == 0 {
        None
    } else {
        let mut visible = chat.messages().rev().filter(|(_, m)| !m.hidden);
        match visible.nth(window - 1) {
            Some((seq, _)) => Some(seq),
            None => Some(i64::MIN),
        }
    };
    MomentQuery {
        text,
        vector,
        exclude_from_seq,
    }
}

impl MomentQuery {
    /// Whether there is nothing to look for (no words, no direction).
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.vector.is_none()
    }
}

/// The search of the chat's current moment (see [`moment_query`]) with
/// `settings`' thresholds, at most `limit` hits; `exclude` leaves out the
/// recent window (the chat's own search), or not (another chat's).
pub fn moment_search<'q>(
    moment: &'q MomentQuery,
    settings: &Settings,
    limit: usize,
    exclude: bool,
) -> RecallQuery<'q> {
    RecallQuery {
        text: &moment.text,
        vector: moment.vector.as_deref(),
        exclude_from_seq: moment.exclude_from_seq.filter(|_| exclude),
        exclude_ids: &[],
        limit,
        min_score: settings.recall.min_score.value() as f32,
        min_similarity: settings.recall.min_similarity.value() as f32,
    }
}

/// The hits of the chat's current moment, best first, at most `limit`.
pub fn moment_hits(
    chat: &Chat,
    index: &RecallIndex,
    settings: &Settings,
    limit: usize,
) -> Vec<Hit> {
    let moment = moment_query(chat, index, settings);
    if moment.is_empty() {
        return Vec::new();
    }
    index.search(chat, &moment_search(&moment, settings, limit, true))
}

/// One passage the tier may inject: its fused score and how it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct TierLine {
    /// The hit's fused score.
    pub score: f32,
    /// The passage as injected ([`hit_line`]).
    pub line: String,
    /// What makes it the same passage as another ([`passage_key`] of its
    /// text, the speaker's name left out).
    pub passage: String,
}

/// The hits of `chat` as tier lines, best first, those `already` covers
/// left out.
pub fn tier_lines(chat: &Chat, hits: Vec<Hit>, already: &AlreadyInjected) -> Vec<TierLine> {
    hits.into_iter()
        .filter(|hit| !already.covers(hit))
        .map(|hit| TierLine {
            score: hit.score,
            line: hit_line(chat, &hit),
            passage: passage_key(&hit.text),
        })
        .collect()
}

/// How a hit reads in the injection: a message's chunk after its
/// speaker's name, a scene recap as it is.
pub fn hit_line(chat: &Chat, hit: &Hit) -> String {
    match hit.key.source {
        Source::SceneRecap => hit.text.clone(),
        Source::Message => match chat.message(&hit.key.message_id) {
            Some((_, m)) if !m.name.is_empty() => format!("{}: {}", m.name, hit.text),
            _ => hit.text.clone(),
        },
    }
}

/// The recall tier of one refresh: with memory enabled and
/// `recall_enabled`, the passages of `lines` (the moment's hits, best
/// first, with those of other chats merged in), each once, one per
/// paragraph, through `recall_template`, as many as fit (see [`fill`]);
/// otherwise (or `lines` `None`) empty text, registered like a disabled
/// chat's. `ctx.revision` is the tier's own next revision.
pub fn refresh_recall(
    chat: &Chat,
    lines: Option<Vec<TierLine>>,
    ctx: RefreshContext<'_>,
    mut count_tokens: impl FnMut(&str) -> u32,
) -> Injection {
    let s = ctx.settings;
    let hidden = auto_hide(chat, s.inclusion.auto_hide_scene_count);
    let on = ctx.enabled && s.recall.enabled;
    let (text, token_count, position, depth, role, scan) = match lines.filter(|_| on) {
        Some(found) => {
            let (text, tokens) = fill(
                found,
                &s.recall.template,
                s.recall.max_tokens,
                &mut count_tokens,
            );
            (
                text,
                tokens,
                s.recall.position,
                s.recall.depth,
                s.recall.role,
                s.recall.scan,
            )
        }
        None => {
            let (position, depth, role, scan) = disabled_place();
            (String::new(), 0, position, depth, role, scan)
        }
    };
    Injection {
        chat: ctx.chat.clone(),
        key: InjectionKey::Recall,
        text,
        position,
        depth,
        role,
        scan,
        enabled: ctx.enabled,
        revision: ctx.revision,
        running_recap_version: None,
        token_count,
        auto_hidden_count: u32::try_from(hidden.count).unwrap_or(u32::MAX),
        trigger: Some(ctx.trigger),
        refreshed_at_us: ctx.now_us,
        deleted: false,
        encoded: Default::default(),
    }
}

/// The tier's text from `found` (best first) through `template`, with its
/// token count: the passages taken in order, each distinct passage once,
/// each one kept when the whole text with it has at most `budget` tokens
/// (counted with `count_tokens`) and skipped otherwise (a smaller one
/// after it may still fit), until the budget is spent or
/// [`MAX_TIER_CANDIDATES`] distinct passages were looked at. Each
/// passage is counted alone first; the whole text is counted only when
/// that count leaves room for it (with a token of slack at each of its
/// two joins, where a tokenizer may merge across), so the text is counted
/// about once per passage kept.
pub fn fill(
    found: Vec<TierLine>,
    template: &str,
    budget: u32,
    count_tokens: &mut impl FnMut(&str) -> u32,
) -> (String, u32) {
    let render = |lines: &[String]| {
        template::render_with(template, RECALL_PLACEHOLDER, Some(&lines.join(SEPARATOR)))
    };
    let mut seen = HashSet::new();
    let mut lines: Vec<String> = Vec::new();
    let (mut text, mut used) = (String::new(), 0u32);
    // The template's own tokens: what the first passage is added to.
    let mut base: Option<u32> = None;
    let mut looked = 0;
    for TierLine { line, passage, .. } in found {
        if looked >= MAX_TIER_CANDIDATES || used >= budget {
            break;
        }
        if !seen.insert(passage) {
            continue;
        }
        looked += 1;
        let alone = count_tokens(&line);
        let before = if lines.is_empty() {
            *base.get_or_insert_with(|| {
                let empty = template.replace(RECALL_PLACEHOLDER, "");
                if template.trim().is_empty() || empty.is_empty() {
                    0
                } else {
                    count_tokens(&empty)
                }
            })
        } else {
            used + count_tokens(SEPARATOR)
        };
        if before.saturating_add(alone) > budget.saturating_add(2) {
            continue;
        }
        lines.push(line);
        let candidate = render(&lines);
        let tokens = count_tokens(&candidate);
        if tokens > budget {
            lines.pop();
            continue;
        }
        (text, used) = (candidate, tokens);
    }
    (text, used)
}
