//! [`Entry::read`]: one entry's JSON read as SillyTavern's scanner reads it.

use serde_json::value::RawValue;

use crate::settings::Role;
use crate::world_info::types::{GenerationType, WiPosition};

use super::js::{Js, number_to_string, string_hash};
use super::{CharacterFilter, Entry, MatchExtras, SelectiveLogic};

/// The decorators SillyTavern knows (world-info.js:100).
const KNOWN_DECORATORS: [&str; 2] = ["@@activate", "@@dont_activate"];

impl Entry {
    /// Reads one entry's JSON object text as SillyTavern's scanner reads it
    /// (JavaScript truthiness, `?? default` where the code has it). Never
    /// fails: text that is not a JSON object gives an entry that never
    /// activates (disabled, no keys). `uid` is the entry's key in the
    /// book's `entries` object and `book` the book's name (both name the
    /// entry in timed effects and results).
    pub fn read(uid: &str, book: &str, raw: &RawValue) -> Entry {
        match Js::parse(raw.get()) {
            Some(value @ Js::Obj(_)) => read_object(uid, book, &value),
            // Destructuring `{ uid, ...rest }` of null throws
            // (world-info.js:4386): the whole load fails.
            Some(Js::Null) | None => never_active(uid),
            // Other values load as entries with no keys.
            Some(_) => Entry {
                breaks_loading: false,
                ..never_active(uid)
            },
        }
    }
}

/// An entry that no scan activates.
fn never_active(uid: &str) -> Entry {
    Entry {
        uid: uid.to_string(),
        key: Vec::new(),
        keysecondary: Vec::new(),
        comment: String::new(),
        content: String::new(),
        constant: false,
        selective: false,
        selective_logic: SelectiveLogic::AndAny,
        order: f64::NAN,
        position: None,
        disable: true,
        ignore_budget: false,
        exclude_recursion: false,
        prevent_recursion: false,
        delay_until_recursion: 0,
        probability: f64::NAN,
        use_probability: false,
        depth: None,
        role: Role::System,
        outlet_name: String::new(),
        group: String::new(),
        group_override: false,
        group_weight: 100.0,
        scan_depth: None,
        case_sensitive: None,
        match_whole_words: None,
        use_group_scoring: None,
        sticky: 0.0,
        cooldown: 0.0,
        delay: 0,
        triggers: Vec::new(),
        character_filter: CharacterFilter::default(),
        match_extras: MatchExtras::default(),
        hash: 0,
        uid_member: "undefined".to_string(),
        breaks_loading: true,
        has_sticky: false,
        has_cooldown: false,
        activate_decorator: false,
        dont_activate_decorator: false,
        has_triggers: false,
        selective_logic_raw: None,
    }
}

fn read_object(uid: &str, book: &str, obj: &Js) -> Entry {
    let get = |name: &str| obj.get(name);
    let truthy = |name: &str| get(name).is_some_and(Js::truthy);
    let nullable_bool = |name: &str| match get(name) {
        None | Some(Js::Null) => None,
        Some(v) => Some(v.truthy()),
    };
    let string = |name: &str| match get(name) {
        Some(Js::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let count = |name: &str| match get(name) {
        Some(v) if v.truthy() => to_count(v.to_number()),
        _ => 0,
    };
    // `start + entry.sticky` (world-info.js:604-611): the number itself.
    let effect_length = |name: &str| match get(name) {
        Some(v) if v.truthy() => v.to_number(),
        _ => 0.0,
    };

    // `entry.content || ''` then decorators (world-info.js:4516-4517).
    let raw_content = match get("content") {
        Some(Js::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let (decorators, content) = parse_decorators(&raw_content);

    let selective_logic_raw = match get("selectiveLogic") {
        None | Some(Js::Null) => None,
        Some(Js::Num(n)) => Some(*n),
        Some(_) => Some(f64::NAN),
    };
    let selective_logic = match selective_logic_raw.unwrap_or(0.0) {
        1.0 => SelectiveLogic::NotAll,
        2.0 => SelectiveLogic::NotAny,
        3.0 => SelectiveLogic::AndAll,
        _ => SelectiveLogic::AndAny,
    };

    let (triggers, has_triggers) = match get("triggers") {
        Some(Js::Arr(items)) => (
            items
                .iter()
                .filter_map(|t| match t {
                    Js::Str(s) => GenerationType::from_name(s),
                    _ => None,
                })
                .collect(),
            !items.is_empty(),
        ),
        _ => (Vec::new(), false),
    };

    let delay_until_recursion = match get("delayUntilRecursion") {
        Some(Js::Bool(true)) => 1,
        Some(v) if v.truthy() => {
            let n = v.to_number();
            // A fraction is a level of its own in SillyTavern; recapd's
            // levels are whole numbers, so it goes to the next one up.
            if n.is_nan() { 0 } else { to_count(n.ceil()) }
        }
        _ => 0,
    };

    let hash = string_hash(&loaded_form(obj, book, &decorators, &content).stringify());

    Entry {
        uid: uid.to_string(),
        key: string_list(get("key")),
        keysecondary: string_list(get("keysecondary")),
        comment: string("comment"),
        content,
        constant: truthy("constant"),
        selective: truthy("selective"),
        selective_logic,
        order: get("order").map_or(f64::NAN, Js::to_number),
        position: match get("position") {
            Some(Js::Num(n)) if n.fract() == 0.0 => WiPosition::from_number(*n as i64),
            _ => None,
        },
        // `entry.disable == true`: loose equality, so 1 and "1" count.
        disable: get("disable").is_some_and(|v| match v {
            Js::Arr(_) | Js::Obj(_) => false,
            v => v.to_number() == 1.0,
        }),
        ignore_budget: truthy("ignoreBudget"),
        exclude_recursion: truthy("excludeRecursion"),
        prevent_recursion: truthy("preventRecursion"),
        delay_until_recursion,
        probability: match get("probability") {
            None => f64::NAN,
            Some(v) => v.to_number(),
        },
        use_probability: truthy("useProbability"),
        depth: match get("depth") {
            Some(Js::Num(n)) if *n >= 0.0 && n.fract() == 0.0 && *n <= f64::from(u32::MAX) => {
                Some(*n as u32)
            }
            _ => None,
        },
        role: match get("role") {
            Some(Js::Num(n)) if *n == 1.0 => Role::User,
            Some(Js::Num(n)) if *n == 2.0 => Role::Assistant,
            _ => Role::System,
        },
        outlet_name: string("outletName"),
        group: string("group"),
        group_override: truthy("groupOverride"),
        // `groupWeight ?? DEFAULT_WEIGHT` (world-info.js:5330).
        group_weight: match get("groupWeight") {
            None | Some(Js::Null) => 100.0,
            Some(v) => v.to_number(),
        },
        // `entry.scanDepth ?? depth` (world-info.js:280); a fraction slices
        // as its whole part.
        scan_depth: match get("scanDepth") {
            None | Some(Js::Null) => None,
            Some(v) => {
                let n = v.to_number();
                Some(if n.is_nan() {
                    0
                } else {
                    n.trunc().clamp(-1e15, 1e15) as i64
                })
            }
        },
        case_sensitive: nullable_bool("caseSensitive"),
        match_whole_words: nullable_bool("matchWholeWords"),
        use_group_scoring: nullable_bool("useGroupScoring"),
        sticky: effect_length("sticky"),
        cooldown: effect_length("cooldown"),
        delay: count("delay"),
        has_sticky: truthy("sticky"),
        has_cooldown: truthy("cooldown"),
        triggers,
        character_filter: read_character_filter(get("characterFilter")),
        match_extras: MatchExtras {
            persona_description: truthy("matchPersonaDescription"),
            character_description: truthy("matchCharacterDescription"),
            character_personality: truthy("matchCharacterPersonality"),
            character_depth_prompt: truthy("matchCharacterDepthPrompt"),
            scenario: truthy("matchScenario"),
            creator_notes: truthy("matchCreatorNotes"),
        },
        hash,
        uid_member: Js::string_of(get("uid")),
        // `parseDecorators(entry.content || '')` throws on a truthy
        // content that is not a string (world-info.js:4516, 4555).
        breaks_loading: get("content").is_some_and(|c| c.truthy() && !matches!(c, Js::Str(_))),
        activate_decorator: decorators.iter().any(|d| d == "@@activate"),
        dont_activate_decorator: decorators.iter().any(|d| d == "@@dont_activate"),
        has_triggers,
        selective_logic_raw,
    }
}

/// A count of messages: SillyTavern compares message counts (whole
/// numbers) with `start + count`, so a fraction acts as the next whole
/// number up; zero, negative or NaN as 0.
fn to_count(n: f64) -> u32 {
    if n.is_nan() || n <= 0.0 {
        0
    } else if n >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        n.ceil() as u32
    }
}

/// Keys: an array's items (numbers as JavaScript writes them; anything
/// else as an empty key, which never matches); not an array: no keys.
fn string_list(value: Option<&Js>) -> Vec<String> {
    match value {
        Some(Js::Arr(items)) => items
            .iter()
            .map(|item| match item {
                Js::Str(s) => s.clone(),
                Js::Num(n) if n.is_finite() => number_to_string(*n),
                _ => String::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn read_character_filter(value: Option<&Js>) -> CharacterFilter {
    let Some(obj @ Js::Obj(_)) = value else {
        return CharacterFilter::default();
    };
    let strings = |name: &str| match obj.get(name) {
        Some(Js::Arr(items)) => items
            .iter()
            .map(|item| match item {
                Js::Str(s) => s.clone(),
                Js::Num(n) if n.is_finite() => number_to_string(*n),
                _ => String::new(),
            })
            .collect(),
        _ => Vec::new(),
    };
    CharacterFilter {
        is_exclude: obj.get("isExclude").is_some_and(Js::truthy),
        names: strings("names"),
        tags: strings("tags"),
    }
}

/// The entry object as `getSortedEntries` hashes it: `{uid, world,
/// ...rest}` (world-info.js:4471 and its siblings), then `{...entry,
/// decorators, content}` (world-info.js:4515-4518).
fn loaded_form(obj: &Js, book: &str, decorators: &[String], content: &str) -> Js {
    let Js::Obj(members) = obj else {
        return Js::Null;
    };
    let mut out: Vec<(String, Js)> = Vec::with_capacity(members.len() + 3);
    // An absent `uid` is `undefined`, which JSON.stringify leaves out.
    if let Some(uid) = obj.get("uid") {
        out.push(("uid".to_string(), uid.clone()));
    }
    out.push(("world".to_string(), Js::Str(book.to_string())));
    for (k, v) in members {
        if k == "uid" {
            continue;
        }
        if k == "world" {
            // `...rest` overwrites the value but `world` keeps its place.
            set_member(&mut out, "world", v.clone());
            continue;
        }
        out.push((k.clone(), v.clone()));
    }
    let decorators = Js::Arr(decorators.iter().map(|d| Js::Str(d.clone())).collect());
    set_member(&mut out, "decorators", decorators);
    set_member(&mut out, "content", Js::Str(content.to_string()));
    Js::Obj(out)
}

fn set_member(members: &mut Vec<(String, Js)>, name: &str, value: Js) {
    match members.iter_mut().find(|(k, _)| k == name) {
        Some(slot) => slot.1 = value,
        None => members.push((name.to_string(), value)),
    }
}

/// SillyTavern's `parseDecorators` (world-info.js:4540-4590): leading lines
/// that start with `@@` are decorators (a known one is kept; `@@@` escapes
/// a known one only after an unknown line); the content starts at the
/// first other line.
fn parse_decorators(content: &str) -> (Vec<String>, String) {
    if !content.starts_with("@@") {
        return (Vec::new(), content.to_string());
    }
    let is_known = |line: &str| {
        let line = line
            .strip_prefix('@')
            .filter(|_| line.starts_with("@@@"))
            .unwrap_or(line);
        KNOWN_DECORATORS.iter().any(|d| line.starts_with(d))
    };
    let lines: Vec<&str> = content.split('\n').collect();
    let mut decorators = Vec::new();
    let mut fell_back = false;
    for (i, line) in lines.iter().enumerate() {
        if !line.starts_with("@@") {
            return (decorators, lines.get(i..).unwrap_or_default().join("\n"));
        }
        if line.starts_with("@@@") && !fell_back {
            continue;
        }
        if is_known(line) {
            let kept = line.strip_prefix('@').filter(|_| line.starts_with("@@@"));
            decorators.push(kept.unwrap_or(line).to_string());
            fell_back = false;
        } else {
            fell_back = true;
        }
    }
    // Every line was a decorator line: the content stays as it was.
    (decorators, content.to_string())
}
