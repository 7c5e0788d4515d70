//! Step one of a commit: the chat's new row, running the refresh the
//! operation asked for.

use std::sync::Arc;
use std::time::Instant;

use super::super::slot::{ChatSlot, Resident};
use super::super::{Chats, Next};
use super::{Outcome, TierSource};
use crate::domain::recall;
use crate::domain::refresh::{self, Injection, RefreshContext};
use crate::domain::settings::Settings;
use crate::store::ChatMeta;
use crate::telemetry::{self, spans};

impl Chats {
    /// Step one: the chat's new row, from `base` (its row before the
    /// operation). Runs the refresh `next` asks for (a disabled chat is
    /// refreshed only by immediate triggers; a debounced trigger with no
    /// delay refreshes now), or marks one owed.
    pub(super) fn plan(
        &self,
        slot: &ChatSlot,
        resident: &Resident,
        base: &ChatMeta,
        settings: &Settings,
        next: Next,
        tiers: &dyn TierSource,
    ) -> Outcome {
        let enabled = settings.chat_enabled(resident.settings().enabled);
        let next = match next {
            Next::Debounce(_) if !enabled => Next::Nothing,
            Next::Debounce(trigger) if settings.chat.debounce_ms == 0 => Next::Refresh(trigger),
            other => other,
        };
        let mut outcome = Outcome {
            meta: base.clone(),
            fresh: Vec::new(),
            schedule: None,
            counted_with: None,
        };
        let Some(chat) = &resident.chat else {
            return outcome;
        };
        match next {
            Next::Refresh(trigger) => {
                let counter = self.refresh_counter(settings, &slot.key);
                let ctx = RefreshContext {
                    counter: &counter,
                    chat: &slot.key,
                    settings,
                    enabled,
                    revision: outcome.meta.revision + 1,
                    trigger,
                    now_us: self.now(),
                };
                self.refresh_into(&mut outcome, resident, ctx, tiers);
                if counter.estimated() {
                    // Estimates are not kept as counts: the next refresh
                    // (once the endpoint has counted them) counts again.
                    outcome.counted_with = None;
                }
            }
            Next::Debounce(trigger) => {
                outcome.meta.needs_refresh = true;
                outcome.schedule = Some(trigger);
            }
            Next::Nothing => {}
        }
        outcome.meta.current_recap = chat.recaps().current_version();
        outcome.meta.st_file = chat.st_file().cloned();
        outcome
    }

    /// Runs the refreshes (each tier while it is on, and once more when it
    /// goes off so subscribers drop it) into `outcome`. Token
    /// counts of an unchanged text are reused when counted with the same
    /// tokenizer.
    fn refresh_into(
        &self,
        outcome: &mut Outcome,
        resident: &Resident,
        ctx: RefreshContext<'_>,
        tiers: &dyn TierSource,
    ) {
        let Some(chat) = &resident.chat else {
            return;
        };
        let span = spans::refresh(ctx.trigger.name());
        spans::chat_id(&span, &ctx.chat.id);
        let _entered = span.enter();
        let settings = ctx.settings;
        let counter = ctx.counter;
        let same_tokenizer = resident.counted_with == Some(counter.key());
        outcome.counted_with = Some(counter.key());
        let count = |previous: Option<&Injection>, text: &str| match previous {
            Some(p) if p.text == text && same_tokenizer => p.token_count,
            _ => counter.count(text),
        };
        let started = Instant::now();
        let previous = outcome.meta.injection.as_deref();
        let injection = Arc::new(refresh::refresh(chat, ctx, |text| count(previous, text)));
        metrics::histogram!(telemetry::REFRESH_DURATION).record(started.elapsed().as_secs_f64());
        metrics::counter!(telemetry::REFRESHES, "trigger" => ctx.trigger.name()).increment(1);
        outcome.meta.revision = injection.revision;
        outcome.meta.needs_refresh = false;
        outcome.meta.injection = Some(injection.clone());
        outcome.fresh.push(injection);
        let previous = outcome.meta.message_injection.as_deref();
        if settings.tier.enabled || previous.is_some_and(|p| !p.text.is_empty()) {
            let ctx = RefreshContext {
                revision: previous.map_or(outcome.meta.message_revision_floor, |p| p.revision) + 1,
                ..ctx
            };
            let tier = Arc::new(refresh::refresh_message_recaps(chat, ctx, |text| {
                count(previous, text)
            }));
            outcome.meta.message_injection = Some(tier.clone());
            outcome.fresh.push(tier);
        }
        let previous = outcome.meta.recall_injection.as_deref();
        if settings.recall.enabled || previous.is_some_and(|p| !p.text.is_empty()) {
            let ctx = RefreshContext {
                revision: previous.map_or(outcome.meta.recall_revision_floor, |p| p.revision) + 1,
                ..ctx
            };
            let started = Instant::now();
            let lines = (ctx.enabled && settings.recall.enabled)
                .then(|| tiers.tier_lines(ctx.chat, resident, chat, settings));
            let tier = Arc::new(recall::tier::refresh_recall(chat, lines, ctx, |text| {
                counter.count(text)
            }));
            metrics::histogram!(telemetry::RECALL_TIER_DURATION)
                .record(started.elapsed().as_secs_f64());
            outcome.meta.recall_injection = Some(tier.clone());
            outcome.fresh.push(tier);
        }
    }
}
