//! The passes of one scan (world-info.js:4635-5070): gates and key matches,
//! inclusion groups, probability, budget, and what comes next (recursion,
//! min activations, delayed recursion levels).

use std::collections::{HashMap, HashSet};

use rand_core::RngCore;

use crate::DomainError;
use crate::world_info::timed::ActiveEffects;

use super::buffer::Buffer;
use super::groups::{GroupContext, filter_by_inclusion_groups};
use super::interrupt::Interrupt;
use super::keys::{Matcher, Who};
use super::{Cand, ScanInput, js_random};

/// `scan_state` (world-info.js:43-63).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    None,
    Initial,
    Recursion,
    MinActivations,
}

/// What the passes found.
pub(crate) struct PassesResult {
    /// Activated entries (index into the candidates, content with macros
    /// substituted), in activation order.
    pub(crate) activated: Vec<(usize, String)>,
    /// Regex keys that overran.
    pub(crate) overruns: Vec<(String, String, String)>,
    /// Passes run.
    pub(crate) passes: u32,
}

/// `Math.round(x)`: halves go up.
fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// The token budget (world-info.js:4624-4629).
fn budget(percent: u32, max_context: u32, cap: u32) -> f64 {
    let mut b = js_round(f64::from(percent) * f64::from(max_context) / 100.0);
    if b == 0.0 || b.is_nan() {
        b = 1.0;
    }
    if cap > 0 && b > f64::from(cap) {
        b = f64::from(cap);
    }
    b
}

/// SillyTavern's budget check: the tokens of the earlier passes' text plus
/// those of this pass's contents so far reach the budget. A text never has
/// more tokens than bytes (every vocabulary recapd counts with is a
/// byte-level BPE, and [`ScanInput::count_tokens`] promises it), so while
/// the two texts' bytes stay under the budget the answer is no without
/// counting: a scan with a large budget counts nothing.
fn over_budget(
    input: &ScanInput<'_>,
    earlier: &str,
    earlier_tokens: &mut Option<f64>,
    this_pass: &str,
    budget: f64,
) -> bool {
    if ((earlier.len() + this_pass.len()) as f64) < budget {
        return false;
    }
    let earlier = *earlier_tokens.get_or_insert_with(|| f64::from((input.count_tokens)(earlier)));
    earlier + f64::from((input.count_tokens)(this_pass)) >= budget
}

/// Whether the entry passes the character filter (world-info.js:4697-4725).
fn character_allows(input: &ScanInput<'_>, cand: &Cand<'_>) -> bool {
    let filter = &cand.entry.character_filter;
    if !filter.names.is_empty() {
        let included = input
            .character
            .is_some_and(|c| filter.names.iter().any(|n| n == c.filter_name));
        if included == filter.is_exclude {
            return false;
        }
    }
    if !filter.tags.is_empty()
        && let Some(c) = input.character
    {
        let has_tag = c.tags.iter().any(|t| filter.tags.contains(t));
        if has_tag == filter.is_exclude {
            return false;
        }
    }
    true
}

/// Runs the passes over `cands` (in SillyTavern's sorted order).
pub(crate) fn passes<R: RngCore>(
    input: &ScanInput<'_>,
    cands: &[Cand<'_>],
    effects: &ActiveEffects,
    rng: &mut R,
) -> Result<PassesResult, DomainError> {
    let settings = input.settings;
    let newest_first = input.messages.iter().rev().map(|m| {
        if settings.include_names {
            format!("{}: {}", m.name, m.text)
        } else {
            m.text.to_string()
        }
    });
    let inject: Vec<String> = input
        .scan_prompts
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect();
    let interrupt = Interrupt::new(input.interrupt);
    let mut buffer = Buffer::new(newest_first, &input.texts, inject, settings.depth);
    let step_limit = usize::try_from(input.limits.regex_step_limit).unwrap_or(usize::MAX);
    let mut matcher = Matcher::new(
        settings,
        input.substitute,
        step_limit,
        input.limits.regex_work_limit,
    );
    let budget = budget(
        settings.budget,
        input.max_context_tokens,
        settings.budget_cap,
    );

    // Delay-until-recursion levels, ascending (world-info.js:4640-4650).
    let mut levels: Vec<u32> = cands
        .iter()
        .map(|c| c.entry.delay_until_recursion)
        .filter(|&l| l > 0)
        .collect::<HashSet<u32>>()
        .into_iter()
        .collect();
    levels.sort_unstable();
    let mut levels = levels.into_iter();
    let mut current_level = levels.next().unwrap_or(0);

    let mut state = State::Initial;
    let mut overflowed = false;
    let mut count: u32 = 0;
    // allActivatedEntries: "<book>.<uid>" -> (candidate, content), in order.
    let mut activated: Vec<(usize, String)> = Vec::new();
    let mut activated_at: HashMap<&str, usize> = HashMap::new();
    let mut failed_probability: HashSet<usize> = HashSet::new();
    let mut activated_text = String::new();
    // Content as SillyTavern's entry object holds it: substituted in place
    // when the entry is processed.
    let mut contents: Vec<Option<String>> = vec![None; cands.len()];

    while state != State::None {
        if settings.max_recursion_steps > 0 && settings.max_recursion_steps <= count {
            break;
        }
        if count >= input.limits.max_passes {
            return Err(DomainError::ResourceExhausted(format!(
                "a World Info scan would run more than {} passes",
                input.limits.max_passes
            )));
        }
        interrupt.check()?;
        count += 1;
        let min_pass = state == State::MinActivations;
        let recursion_pass = state == State::Recursion;
        let mut next = State::None;

        // The candidates of this pass (world-info.js:4673-4878).
        let mut now: Vec<usize> = Vec::new();
        for (i, cand) in cands.iter().enumerate() {
            let entry = cand.entry;
            if failed_probability.contains(&i) || activated_at.contains_key(cand.key.as_str()) {
                continue;
            }
            if entry.disable {
                continue;
            }
            if entry.has_triggers && !entry.triggers.contains(&input.generation_type) {
                continue;
            }
            if !character_allows(input, cand) {
                continue;
            }
            let sticky = effects.is_sticky(entry);
            if effects.is_delay(entry) {
                continue;
            }
            if effects.is_cooldown(entry) && !sticky {
                continue;
            }
            let delayed = entry.delay_until_recursion;
            if !recursion_pass && delayed > 0 && !sticky {
                continue;
            }
            if recursion_pass && delayed > 0 && delayed > current_level && !sticky {
                continue;
            }
            if recursion_pass && settings.recursive && entry.exclude_recursion && !sticky {
                continue;
            }
            if entry.activate_decorator {
                now.push(i);
                continue;
            }
            if entry.dont_activate_decorator {
                continue;
            }
            if entry.constant || sticky {
                now.push(i);
                continue;
            }
            if entry.key.is_empty() {
                continue;
            }
            if key_match(&mut buffer, &mut matcher, &interrupt, cand, min_pass)? {
                now.push(i);
            }
        }

        // Sticky first, then the sorted order (world-info.js:4882-4888).
        now.sort_by_key(|&i| (!effects.is_sticky(cands[i].entry), i));
        let mut new_entries = now;
        // The tokens of the earlier passes' text, counted only when a
        // budget check needs them (see `over_budget`).
        let mut text_tokens: Option<f64> = None;

        let activated_groups: Vec<&str> = activated
            .iter()
            .map(|&(i, _)| cands[i].entry.group.as_str())
            .collect();
        filter_by_inclusion_groups(
            &mut new_entries,
            GroupContext {
                cands,
                activated_groups: &activated_groups,
                effects,
                buffer: &mut buffer,
                matcher: &mut matcher,
                interrupt: &interrupt,
                min_activations: min_pass,
                settings,
                rng,
            },
        )?;

        // Probability and budget (world-info.js:4898-4957).
        let mut new_content = String::new();
        let mut ignores_budget = new_entries
            .iter()
            .filter(|&&i| cands[i].entry.ignore_budget)
            .count();
        for &i in &new_entries {
            interrupt.check()?;
            let entry = cands[i].entry;
            if entry.ignore_budget {
                ignores_budget -= 1;
            }
            if overflowed && !entry.ignore_budget {
                if ignores_budget > 0 {
                    continue;
                }
                break;
            }
            // No roll without `useProbability`, at exactly 100, or sticky.
            if entry.use_probability && entry.probability != 100.0 && !effects.is_sticky(entry) {
                let roll = js_random(rng) * 100.0;
                // `roll <= probability` (false against NaN).
                if roll
                    .partial_cmp(&entry.probability)
                    .is_none_or(|o| o == std::cmp::Ordering::Greater)
                {
                    failed_probability.insert(i);
                    continue;
                }
            }
            let current = contents[i].take().unwrap_or_else(|| entry.content.clone());
            let content = (input.substitute)(&current);
            contents[i] = Some(content.clone());
            new_content.push_str(&content);
            new_content.push('\n');
            if !entry.ignore_budget
                && over_budget(
                    input,
                    &activated_text,
                    &mut text_tokens,
                    &new_content,
                    budget,
                )
            {
                overflowed = true;
                continue;
            }
            let key = cands[i].key.as_str();
            match activated_at.get(key) {
                Some(&at) => activated[at] = (i, content),
                None => {
                    activated_at.insert(key, activated.len());
                    activated.push((i, content));
                }
            }
        }

        let successful: Vec<usize> = new_entries
            .iter()
            .copied()
            .filter(|i| !failed_probability.contains(i))
            .collect();
        let for_recursion: Vec<usize> = successful
            .into_iter()
            .filter(|&i| !cands[i].entry.prevent_recursion)
            .collect();

        if settings.recursive && !overflowed && !for_recursion.is_empty() {
            next = State::Recursion;
        }
        if settings.recursive && !overflowed && min_pass && buffer.has_recurse() {
            next = State::Recursion;
        }
        let min_unsatisfied = settings.min_activations > 0
            && (activated.len() as u64) < u64::from(settings.min_activations);
        if next == State::None && !overflowed && min_unsatisfied {
            let depth = buffer.depth();
            let over_max = (settings.min_activations_depth_max > 0
                && depth > i64::from(settings.min_activations_depth_max))
                || depth > input.chat_len.max(input.messages.len()) as i64;
            if !over_max {
                next = State::MinActivations;
                buffer.advance();
            }
        }
        if next == State::None
            && let Some(level) = levels.next()
        {
            next = State::Recursion;
            current_level = level;
        }

        state = next;
        if state != State::None {
            let text = for_recursion
                .iter()
                .map(|&i| {
                    contents[i]
                        .clone()
                        .unwrap_or_else(|| cands[i].entry.content.clone())
                })
                .collect::<Vec<_>>()
                .join("\n");
            if !text.is_empty() {
                activated_text = format!("{text}\n{activated_text}");
                buffer.add_recurse(text);
            }
        }
    }

    Ok(PassesResult {
        activated,
        overruns: matcher.overruns,
        passes: count,
    })
}

/// Primary keys, then secondary keys by the entry's logic
/// (world-info.js:4799-4876); the interrupt is checked before each key
/// test.
fn key_match(
    buffer: &mut Buffer<'_>,
    matcher: &mut Matcher<'_>,
    interrupt: &Interrupt<'_>,
    cand: &Cand<'_>,
    min_pass: bool,
) -> Result<bool, DomainError> {
    let entry = cand.entry;
    let who = Who {
        book: cand.book,
        entry,
        compiled: cand.compiled,
    };
    let hay = buffer.get(entry, min_pass);
    let mut primary = false;
    for key in &entry.key {
        interrupt.check()?;
        if let Some(k) = matcher.prepared_key(key)
            && matcher.matches(hay, &k, &who)
        {
            primary = true;
            break;
        }
    }
    if !primary {
        return Ok(false);
    }
    if !entry.selective || entry.keysecondary.is_empty() {
        return Ok(true);
    }
    // `selectiveLogic ?? 0`, then only 0-3 mean anything.
    let logic = entry.selective_logic_raw.unwrap_or(0.0);
    let (and_any, not_all, not_any, and_all) =
        (logic == 0.0, logic == 1.0, logic == 2.0, logic == 3.0);
    let mut any = false;
    let mut all = true;
    for key in &entry.keysecondary {
        interrupt.check()?;
        let found = match matcher.prepared_key(key) {
            Some(k) => matcher.matches(hay, &k, &who),
            None => false,
        };
        any |= found;
        all &= found;
        if and_any && found {
            return Ok(true);
        }
        if not_all && !found {
            return Ok(true);
        }
    }
    Ok((not_any && !any) || (and_all && all))
}
