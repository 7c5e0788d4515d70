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
//! the results: the prompt has them already.

use super::index::RecallIndex;
use super::search::{Hit, RecallQuery};
use super::{RECALL_PLACEHOLDER, Source, indexable};
use crate::autohide::auto_hide;
use crate::chat::Chat;
use crate::refresh::{Injection, InjectionKey, RefreshContext, disabled_place};
use crate::settings::Settings;
use crate::template;

/// The most passages the tier looks at (best first) to fill its budget.
pub const MAX_TIER_CANDIDATES: usize = 24;

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
}

/// The hits of `chat` as tier lines, best first.
pub fn tier_lines(chat: &Chat, hits: Vec<Hit>) -> Vec<TierLine> {
    hits.into_iter()
        .map(|hit| TierLine {
            score: hit.score,
            line: hit_line(chat, &hit),
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
/// first, with those of other chats merged in), one per paragraph, as many
/// as fit in `recall_max_tokens` (each line counted with `count_tokens`; a
/// line that does not fit is skipped and smaller ones after it may still
/// fit), through `recall_template`; otherwise (or `lines` `None`) empty
/// text, registered like a disabled chat's. `ctx.revision` is the tier's
/// own next revision.
pub fn refresh_recall(
    chat: &Chat,
    lines: Option<Vec<TierLine>>,
    ctx: RefreshContext<'_>,
    mut count_tokens: impl FnMut(&str) -> u32,
) -> Injection {
    let s = ctx.settings;
    let hidden = auto_hide(chat, s.inclusion.auto_hide_scene_count);
    let on = ctx.enabled && s.recall.enabled;
    let (text, position, depth, role, scan) = match lines.filter(|_| on) {
        Some(found) => {
            let mut lines = Vec::new();
            let mut used: u64 = 0;
            // Lines are counted until the budget is spent or
            // MAX_TIER_CANDIDATES were looked at: counting tokens is the
            // tier's main cost.
            let budget = u64::from(s.recall.max_tokens);
            for TierLine { line, .. } in found.into_iter().take(MAX_TIER_CANDIDATES) {
                if used >= budget {
                    break;
                }
                let tokens = u64::from(count_tokens(&line));
                if used + tokens > u64::from(s.recall.max_tokens) {
                    continue;
                }
                used += tokens;
                lines.push(line);
            }
            let joined = lines.join("\n\n");
            let text = template::render_with(&s.recall.template, RECALL_PLACEHOLDER, Some(&joined));
            (
                text,
                s.recall.position,
                s.recall.depth,
                s.recall.role,
                s.recall.scan,
            )
        }
        None => {
            let (position, depth, role, scan) = disabled_place();
            (String::new(), position, depth, role, scan)
        }
    };
    let token_count = if text.is_empty() {
        0
    } else {
        count_tokens(&text)
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
