//! Timed effects (sticky, cooldown, delay), as SillyTavern's
//! `WorldInfoTimedEffects` keeps them (world-info.js:479-793).
//!
//! Sticky and cooldown live in the chat's metadata
//! (`chat_metadata.timedWorldInfo`), keyed `"<book>.<uid>"`, each
//! `{hash, start, end, protected}`; `start` is the number of messages the
//! scan read and `end` is `start` plus the entry's count. An effect names
//! its entry by hash, not by key: an edited entry no longer matches its
//! effect. Delay keeps no state: an entry is held back while the chat has
//! fewer messages than its `delay`.

use std::collections::{HashMap, HashSet};

use super::entry::Entry;
use super::entry::js::Js;

#[cfg(test)]
mod tests;

/// `chat_metadata.timedWorldInfo`: `{sticky: {"<book>.<uid>": {hash, start,
/// end, protected}}, cooldown: {...}}`. Each effect is kept as written, so
/// state imported from SillyTavern goes back out unchanged where no scan
/// touched it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimedState {
    /// Sticky effects, in the order they were added.
    sticky: Vec<(String, Js)>,
    /// Cooldown effects, in the order they were added.
    cooldown: Vec<(String, Js)>,
}

/// Which kind of stored effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sticky,
    Cooldown,
}

impl TimedState {
    /// Reads the stored JSON leniently, as SillyTavern's
    /// `#ensureChatMetadata` does (world-info.js:572-592): anything that is
    /// not an object gives empty state, a `sticky` or `cooldown` that is not
    /// an object is empty, and a member that is not an object is dropped.
    /// Never fails.
    pub fn from_json(json: &str) -> TimedState {
        let Some(root @ Js::Obj(_)) = Js::parse(json) else {
            return TimedState::default();
        };
        let effects = |name: &str| match root.get(name) {
            Some(Js::Obj(members)) => members
                .iter()
                .filter(|(_, v)| matches!(v, Js::Obj(_)))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        TimedState {
            sticky: effects("sticky"),
            cooldown: effects("cooldown"),
        }
    }

    /// The state as stored: `{"sticky":{...},"cooldown":{...}}`.
    pub fn to_json(&self) -> String {
        Js::Obj(vec![
            ("sticky".to_string(), Js::Obj(self.sticky.clone())),
            ("cooldown".to_string(), Js::Obj(self.cooldown.clone())),
        ])
        .stringify()
    }

    /// No sticky and no cooldown effect is stored.
    pub fn is_empty(&self) -> bool {
        self.sticky.is_empty() && self.cooldown.is_empty()
    }

    /// Makes the effects of book `from`'s entries (keys `"<from>.<uid>"`)
    /// effects of book `to`'s, as a copy of the book under a new name
    /// needs (a branch of a chat gets a copy of its chat book). Effects
    /// keep their order and values.
    pub fn rename_book(&mut self, from: &str, to: &str) {
        let prefix = format!("{from}.");
        for (key, _) in self.sticky.iter_mut().chain(self.cooldown.iter_mut()) {
            if let Some(uid) = key.strip_prefix(&prefix) {
                *key = format!("{to}.{uid}");
            }
        }
    }

    fn effects_mut(&mut self, kind: Kind) -> &mut Vec<(String, Js)> {
        match kind {
            Kind::Sticky => &mut self.sticky,
            Kind::Cooldown => &mut self.cooldown,
        }
    }

    fn effects(&self, kind: Kind) -> &[(String, Js)] {
        match kind {
            Kind::Sticky => &self.sticky,
            Kind::Cooldown => &self.cooldown,
        }
    }

    /// Where each effect of `kind` is, by key (keys are unique: JSON.parse
    /// and [`TimedState::set`] keep them so).
    fn places(&self, kind: Kind) -> HashMap<String, usize> {
        self.effects(kind)
            .iter()
            .enumerate()
            .map(|(i, (k, _))| (k.clone(), i))
            .collect()
    }

    /// Sets `key` (replacing its value in place, as a JavaScript object
    /// member assignment does); `places` is [`TimedState::places`] of
    /// `kind`, kept up to date.
    fn set(&mut self, kind: Kind, places: &mut HashMap<String, usize>, key: String, value: Js) {
        let effects = self.effects_mut(kind);
        match places.get(&key) {
            Some(&i) => effects[i].1 = value,
            None => {
                places.insert(key.clone(), effects.len());
                effects.push((key, value));
            }
        }
    }
}

/// One timed entry as the scan knows it: its key (`"<book>.<uid>"`) and
/// the entry.
pub(crate) struct TimedEntry<'a> {
    /// `"<book>.<uid>"`.
    pub(crate) key: String,
    /// The entry.
    pub(crate) entry: &'a Entry,
}

/// The effects in force for one scan, by entry hash (SillyTavern compares
/// entries by hash: `isEffectActive`, world-info.js:768-775).
#[derive(Debug, Default)]
pub(crate) struct ActiveEffects {
    sticky: HashSet<u64>,
    cooldown: HashSet<u64>,
    delay: HashSet<u64>,
}

impl ActiveEffects {
    /// The entry is sticky now.
    pub(crate) fn is_sticky(&self, entry: &Entry) -> bool {
        self.sticky.contains(&entry.hash)
    }
    /// The entry is on cooldown now.
    pub(crate) fn is_cooldown(&self, entry: &Entry) -> bool {
        self.cooldown.contains(&entry.hash)
    }
    /// The entry is held back by its delay now.
    pub(crate) fn is_delay(&self, entry: &Entry) -> bool {
        self.delay.contains(&entry.hash)
    }
}

fn effect(hash: u64, start: u64, count: f64, protected: bool) -> Js {
    Js::Obj(vec![
        ("hash".to_string(), Js::Num(hash as f64)),
        ("start".to_string(), Js::Num(start as f64)),
        ("end".to_string(), Js::Num(start as f64 + count)),
        ("protected".to_string(), Js::Bool(protected)),
    ])
}

fn number_of(value: Option<&Js>) -> f64 {
    value.map_or(f64::NAN, Js::to_number)
}

/// `checkTimedEffects` (world-info.js:700-706, 619-677): updates `state`
/// for a chat of `chat_len` messages (ended and stale effects removed, an
/// ended sticky starting its protected cooldown) and returns the effects in
/// force. A dry run neither reads nor changes sticky and cooldown; delay
/// applies to every run.
pub(crate) fn check(
    state: &mut TimedState,
    chat_len: usize,
    entries: &[TimedEntry<'_>],
    dry_run: bool,
) -> ActiveEffects {
    let mut active = ActiveEffects::default();
    let len = chat_len as f64;
    if !dry_run {
        // The first entry of each hash, as `find` over the entries gives
        // it: one lookup per effect, not one pass over the book.
        let mut by_hash: HashMap<String, &TimedEntry<'_>> = HashMap::with_capacity(entries.len());
        for e in entries {
            by_hash.entry(e.entry.hash.to_string()).or_insert(e);
        }
        for kind in [Kind::Sticky, Kind::Cooldown] {
            // Each effect is kept or removed in one pass (keys are unique);
            // the cooldowns ended stickies start are set after it, which
            // changes nothing: this pass does not read cooldowns.
            let snapshot = std::mem::take(state.effects_mut(kind));
            let mut kept: Vec<(String, Js)> = Vec::with_capacity(snapshot.len());
            let mut cooldowns: Vec<(String, Js)> = Vec::new();
            for (key, value) in snapshot {
                let wanted = Js::string_of(value.get("hash"));
                let found = by_hash.get(&wanted).copied();
                if len <= number_of(value.get("start"))
                    && !value.get("protected").is_some_and(Js::truthy)
                {
                    continue;
                }
                let Some(found) = found else {
                    // Kept unless it has ended (an `end` that is no number
                    // never ends it).
                    let ended = len >= number_of(value.get("end"));
                    if !ended {
                        kept.push((key, value));
                    }
                    continue;
                };
                let has = match kind {
                    Kind::Sticky => found.entry.has_sticky,
                    Kind::Cooldown => found.entry.has_cooldown,
                };
                if !has {
                    continue;
                }
                if len >= number_of(value.get("end")) {
                    if kind == Kind::Sticky && found.entry.has_cooldown {
                        // An ended sticky starts a protected cooldown now
                        // (world-info.js:518-529).
                        let cooldown = effect(
                            found.entry.hash,
                            chat_len as u64,
                            found.entry.cooldown,
                            true,
                        );
                        cooldowns.push((found.key.clone(), cooldown));
                        active.cooldown.insert(found.entry.hash);
                    }
                    continue;
                }
                match kind {
                    Kind::Sticky => active.sticky.insert(found.entry.hash),
                    Kind::Cooldown => active.cooldown.insert(found.entry.hash),
                };
                kept.push((key, value));
            }
            *state.effects_mut(kind) = kept;
            if !cooldowns.is_empty() {
                let mut places = state.places(Kind::Cooldown);
                for (key, value) in cooldowns {
                    state.set(Kind::Cooldown, &mut places, key, value);
                }
            }
        }
    }
    for e in entries {
        if e.entry.delay > 0 && (chat_len as u64) < u64::from(e.entry.delay) {
            active.delay.insert(e.entry.hash);
        }
    }
    active
}

/// `setTimedEffects` (world-info.js:734-747): every activated entry with a
/// sticky or cooldown count starts that effect unless one is stored under
/// its key. Nothing for a dry run.
pub(crate) fn start_effects(
    state: &mut TimedState,
    chat_len: usize,
    activated: &[TimedEntry<'_>],
    dry_run: bool,
) {
    if dry_run {
        return;
    }
    let mut sticky = state.places(Kind::Sticky);
    let mut cooldown = state.places(Kind::Cooldown);
    for e in activated {
        for (kind, has, count) in [
            (Kind::Sticky, e.entry.has_sticky, e.entry.sticky),
            (Kind::Cooldown, e.entry.has_cooldown, e.entry.cooldown),
        ] {
            if !has {
                continue;
            }
            let places = match kind {
                Kind::Sticky => &mut sticky,
                Kind::Cooldown => &mut cooldown,
            };
            let present = places
                .get(&e.key)
                .is_some_and(|&i| state.effects(kind)[i].1.truthy());
            if !present {
                state.set(
                    kind,
                    places,
                    e.key.clone(),
                    effect(e.entry.hash, chat_len as u64, count, false),
                );
            }
        }
    }
}
