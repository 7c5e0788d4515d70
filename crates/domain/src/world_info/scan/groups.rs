//! Inclusion groups (`filterByInclusionGroups` and its helpers,
//! world-info.js:5159-5356).
//!
//! Reproduced with SillyTavern's defect: an entry is removed from the
//! pass's candidates with `splice(indexOf(entry), 1)`, and for an entry
//! already removed `indexOf` is -1, which removes the **last** candidate
//! instead. So an entry in two groups that loses in both (or a candidate
//! on cooldown that a group also removes) drops whatever candidate is last
//! at that moment, even one that won another group (facts §7). recapd
//! follows SillyTavern here so that the same books activate the same
//! entries.

use rand_core::RngCore;

use crate::DomainError;
use crate::world_info::timed::ActiveEffects;

use super::buffer::Buffer;
use super::interrupt::Interrupt;
use super::keys::{Matcher, Who};
use super::sort::sort_by_order_desc;
use super::{Cand, WorldInfoSettings, js_random};

/// What the group step needs of the scan.
pub(crate) struct GroupContext<'s, 'a, 'b, R: RngCore> {
    /// Every entry of the scan.
    pub(crate) cands: &'s [Cand<'a>],
    /// The `group` strings of the entries activated in earlier passes.
    pub(crate) activated_groups: &'s [&'a str],
    /// Effects in force.
    pub(crate) effects: &'s ActiveEffects,
    /// The scan's buffer (group scoring reads it).
    pub(crate) buffer: &'s mut Buffer<'b>,
    /// Key matching (group scoring).
    pub(crate) matcher: &'s mut Matcher<'a>,
    /// The caller's "stop now?", checked before each entry's scoring.
    pub(crate) interrupt: &'s Interrupt<'s>,
    /// The pass is a min-activations pass.
    pub(crate) min_activations: bool,
    /// The settings.
    pub(crate) settings: &'s WorldInfoSettings,
    /// The scan's random numbers.
    pub(crate) rng: &'s mut R,
}

/// `newEntries.splice(newEntries.indexOf(entry), 1)`, -1 included.
fn remove_entry(new_entries: &mut Vec<usize>, entry: usize) {
    match new_entries.iter().position(|&e| e == entry) {
        Some(i) => {
            new_entries.remove(i);
        }
        None => {
            new_entries.pop();
        }
    }
}

/// Filters `new_entries` (indices into `ctx.cands`) by inclusion groups,
/// SillyTavern's removal defect included (see the module's documentation:
/// removing an entry already removed drops the last candidate instead).
///
/// Fails only when the interrupt answers a stop.
pub(crate) fn filter_by_inclusion_groups<R: RngCore>(
    new_entries: &mut Vec<usize>,
    ctx: GroupContext<'_, '_, '_, R>,
) -> Result<(), DomainError> {
    // Groups in JavaScript's property order: integer-like names first.
    let mut grouped: Vec<(&str, Vec<usize>)> = Vec::new();
    for &e in new_entries.iter() {
        let group = ctx.cands[e].entry.group.as_str();
        if group.is_empty() {
            continue;
        }
        for name in split_groups(group) {
            match grouped.iter_mut().find(|(n, _)| *n == name) {
                Some((_, members)) => members.push(e),
                None => grouped.push((name, vec![e])),
            }
        }
    }
    if grouped.is_empty() {
        return Ok(());
    }
    grouped = crate::world_info::entry::js::in_property_order(grouped);

    // filterGroupsByTimedEffects (world-info.js:5228-5267).
    let mut has_sticky: Vec<bool> = Vec::with_capacity(grouped.len());
    for (_, group) in &grouped {
        let sticky: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&e| ctx.effects.is_sticky(ctx.cands[e].entry))
            .collect();
        if !sticky.is_empty() {
            for &e in group {
                if !sticky.contains(&e) {
                    remove_entry(new_entries, e);
                }
            }
        }
        has_sticky.push(!sticky.is_empty());
        for &e in group {
            if ctx.effects.is_cooldown(ctx.cands[e].entry) {
                remove_entry(new_entries, e);
            }
        }
        for &e in group {
            if ctx.effects.is_delay(ctx.cands[e].entry) {
                remove_entry(new_entries, e);
            }
        }
    }

    // filterGroupsByScoring (world-info.js:5169-5216).
    for (gi, (_, group)) in grouped.iter_mut().enumerate() {
        let any_scoring = group
            .iter()
            .any(|&e| ctx.cands[e].entry.use_group_scoring == Some(true));
        if !ctx.settings.use_group_scoring && !any_scoring {
            continue;
        }
        if has_sticky[gi] {
            continue;
        }
        let mut scores: Vec<u32> = Vec::with_capacity(group.len());
        for &e in group.iter() {
            ctx.interrupt.check()?;
            let cand = &ctx.cands[e];
            let who = Who {
                book: cand.book,
                entry: cand.entry,
                compiled: cand.compiled,
            };
            let hay = ctx.buffer.get(cand.entry, ctx.min_activations);
            scores.push(ctx.matcher.score(hay, &who));
        }
        let max = scores.iter().copied().max().unwrap_or(0);
        let mut i = 0;
        while i < group.len() {
            let entry = ctx.cands[group[i]].entry;
            let scored = entry
                .use_group_scoring
                .unwrap_or(ctx.settings.use_group_scoring);
            if scored && scores[i] < max {
                remove_entry(new_entries, group[i]);
                group.remove(i);
                scores.remove(i);
                continue;
            }
            i += 1;
        }
    }

    // The draw (world-info.js:5300-5355).
    for (gi, (name, group)) in grouped.iter().enumerate() {
        if has_sticky[gi] {
            continue;
        }
        if ctx.activated_groups.iter().any(|g| g == name) {
            // Compares the whole `group` string with the group's name.
            for &e in group {
                remove_entry(new_entries, e);
            }
            continue;
        }
        if group.len() <= 1 {
            continue;
        }
        let mut prios: Vec<usize> = group
            .iter()
            .copied()
            .filter(|&e| ctx.cands[e].entry.group_override)
            .collect();
        sort_by_order_desc(&mut prios, |&e| ctx.cands[e].entry.order);
        if let Some(&winner) = prios.first() {
            remove_all_but(new_entries, group, winner);
            continue;
        }
        let total: f64 = group.iter().map(|&e| ctx.cands[e].entry.group_weight).sum();
        let roll = js_random(ctx.rng) * total;
        let mut current = 0.0;
        let mut winner = None;
        for &e in group {
            current += ctx.cands[e].entry.group_weight;
            if roll <= current {
                winner = Some(e);
                break;
            }
        }
        if let Some(winner) = winner {
            remove_all_but(new_entries, group, winner);
        }
    }
    Ok(())
}

fn remove_all_but(new_entries: &mut Vec<usize>, group: &[usize], chosen: usize) {
    for &e in group {
        if e != chosen {
            remove_entry(new_entries, e);
        }
    }
}

/// `group.split(/,\s*/).filter(x => x)`.
fn split_groups(group: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut first = true;
    for part in group.split(',') {
        let name = if first {
            part
        } else {
            part.trim_start_matches(crate::world_info::entry::is_js_space)
        };
        first = false;
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}
