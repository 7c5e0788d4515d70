//! The synthetic lorebook and chat of the World Info benchmark, generated
//! from a seed: the same seed gives the same bytes.
//!
//! The book reads like a community role-play book: characters, places,
//! items and factions with made-up names; a quarter of the entries keyed by
//! a `/regex/i`, half with secondary keys under each of SillyTavern's four
//! logics, a few constants and inclusion groups, positions 0, 1 and 4 (at
//! depth, with a role), `order` spread over 0..=1000, and contents of a few
//! sentences that name other entities (so recursion finds their keys). Each
//! entry has every field SillyTavern's editor writes. Entity `i` is the same
//! in every book size: the 100-entry book is the first 100 entries of the
//! 10,000-entry one.
//!
//! The chat is a SillyTavern chat file (JSONL: a header, then one line per
//! message) between the user and one character, alternating, each message
//! two to five sentences; about one in four names an entity, half of those
//! among the first 100 (the main cast), the rest anywhere in the largest
//! book, so deeper scans and bigger books find more.

use std::collections::HashSet;

use serde_json::{Value, json};

/// SplitMix64: a small, well-mixed generator; all the randomness here.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`; 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One element of a non-empty slice.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const HEADS: &[&str] = &[
    "Ael", "Bran", "Cor", "Dra", "El", "Fen", "Gal", "Hal", "Is", "Jor", "Kae", "Lor", "Mor",
    "Nym", "Or", "Pyr", "Quel", "Ras", "Syl", "Thal", "Ul", "Vor", "Wyn", "Xan", "Yr", "Zeph",
];
const MIDDLES: &[&str] = &[
    "a", "e", "i", "o", "an", "ar", "en", "or", "is", "yl", "um", "ae",
];
const TAILS: &[&str] = &[
    "dor", "wyn", "mir", "gard", "thas", "ria", "wen", "mar", "nor", "ric", "lin", "drel", "ios",
    "eth", "and", "ara",
];
const PLACE_WORDS: &[&str] = &[
    "Keep", "Vale", "Crossing", "Harbor", "Spire", "Woods", "Fen", "Hollow", "Reach", "Gate",
    "Falls", "Market",
];
const ITEM_WORDS: &[&str] = &[
    "Blade", "Crown", "Lantern", "Codex", "Amulet", "Horn", "Chalice", "Mask", "Key", "Banner",
];
const FACTION_WORDS: &[&str] = &["Order", "Guild", "Circle", "Company", "Watch", "Covenant"];
const ROLES: &[&str] = &[
    "mercenary captain",
    "court mage",
    "smuggler",
    "priestess of the old moon",
    "blacksmith",
    "exiled prince",
    "river pilot",
    "archivist",
    "healer",
    "bounty hunter",
];
/// Common words: secondary keys, and the chat's everyday vocabulary.
const COMMON: &[&str] = &[
    "night", "sword", "river", "king", "fire", "storm", "gold", "forest", "blood", "moon", "wine",
    "bridge", "tower", "ship", "winter", "letter", "oath", "shadow", "song", "market",
];
const GROUPS: &[&str] = &["rumours", "weather", "omens", "patrols"];
const USER: &str = "Aric";
const CHARACTER: &str = "Seraphina";

/// What an entity is; it decides its name's shape and its sentences.
#[derive(Clone, Copy)]
enum Kind {
    Character,
    Place,
    Item,
    Faction,
}

/// One entity of the world: its display name and what the chat calls it.
pub struct Entity {
    kind: Kind,
    /// As written in contents and chat messages.
    pub name: String,
    /// A shorter name, also a key (a place's name without "Keep", "Vale"...).
    alias: Option<String>,
}

fn syllable_name(rng: &mut Rng) -> String {
    let mut name = rng.pick(HEADS).to_owned();
    for _ in 0..rng.below(3) {
        name.push_str(rng.pick(MIDDLES));
    }
    name.push_str(rng.pick(TAILS));
    name
}

/// The first `count` entities, unique names, each depending only on the
/// seed and the entities before it.
pub fn entities(seed: u64, count: usize) -> Vec<Entity> {
    let mut rng = Rng::new(seed ^ 0x00E7_7171);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let kind = match rng.below(20) {
            0..=7 => Kind::Character,
            8..=13 => Kind::Place,
            14..=16 => Kind::Item,
            _ => Kind::Faction,
        };
        let base = syllable_name(&mut rng);
        let (name, alias) = match kind {
            Kind::Character => (base.clone(), None),
            Kind::Place => (
                format!("{base} {}", rng.pick(PLACE_WORDS)),
                Some(base.clone()),
            ),
            Kind::Item => (format!("{} of {base}", rng.pick(ITEM_WORDS)), None),
            Kind::Faction => (format!("{base} {}", rng.pick(FACTION_WORDS)), None),
        };
        if seen.insert(name.to_lowercase()) {
            out.push(Entity { kind, name, alias });
        }
    }
    out
}

/// Escapes a name for a JavaScript regex (names hold letters and spaces).
fn regex_part(name: &str) -> String {
    name.to_lowercase().replace(' ', r"\s+")
}

/// The entry of entity `i`, with SillyTavern's full field set.
fn entry(uid: usize, all: &[Entity], rng: &mut Rng) -> Value {
    let me = &all[uid];
    let regex = rng.chance(25);
    let mut keys: Vec<String> = Vec::new();
    if regex {
        let body = match &me.alias {
            Some(alias) if rng.chance(50) => {
                format!(r"\b(?:{}|{})\b", regex_part(&me.name), regex_part(alias))
            }
            _ => format!(r"\b{}(?:'s)?\b", regex_part(&me.name)),
        };
        keys.push(format!("/{body}/i"));
    } else {
        keys.push(me.name.to_lowercase());
        if let Some(alias) = &me.alias {
            keys.push(alias.to_lowercase());
        }
    }
    let secondary = rng.chance(50);
    let keysecondary: Vec<&str> = if secondary {
        (0..1 + rng.below(2)).map(|_| rng.pick(COMMON)).collect()
    } else {
        Vec::new()
    };
    // Mostly AND ANY, as books are; the other three logics all present.
    let logic = match rng.below(10) {
        0..=5 => 0,
        6 => 1,
        7 => 2,
        _ => 3,
    };
    let constant = rng.chance(2);
    let (position, depth, role) = match rng.below(10) {
        0..=3 => (0, 4, 0),
        4..=6 => (1, 4, 0),
        _ => (4, rng.below(7), rng.below(3)),
    };
    let group = if rng.chance(5) { rng.pick(GROUPS) } else { "" };
    let content = content(uid, all, rng);
    let fields: [(&str, Value); 41] = [
        ("uid", uid.into()),
        ("key", keys.into()),
        ("keysecondary", keysecondary.into()),
        ("comment", me.name.clone().into()),
        ("content", content.into()),
        ("constant", constant.into()),
        ("vectorized", false.into()),
        ("selective", true.into()),
        ("selectiveLogic", logic.into()),
        ("addMemo", true.into()),
        ("order", rng.below(1001).into()),
        ("position", position.into()),
        ("disable", false.into()),
        ("ignoreBudget", false.into()),
        ("excludeRecursion", false.into()),
        ("preventRecursion", rng.chance(10).into()),
        ("matchPersonaDescription", false.into()),
        ("matchCharacterDescription", false.into()),
        ("matchCharacterPersonality", false.into()),
        ("matchCharacterDepthPrompt", false.into()),
        ("matchScenario", false.into()),
        ("matchCreatorNotes", false.into()),
        ("delayUntilRecursion", 0.into()),
        ("probability", 100.into()),
        ("useProbability", true.into()),
        ("depth", depth.into()),
        ("outletName", "".into()),
        ("group", group.into()),
        ("groupOverride", false.into()),
        ("groupWeight", 100.into()),
        ("scanDepth", Value::Null),
        ("caseSensitive", Value::Null),
        ("matchWholeWords", Value::Null),
        ("useGroupScoring", Value::Null),
        ("automationId", "".into()),
        ("role", role.into()),
        ("sticky", 0.into()),
        ("cooldown", 0.into()),
        ("delay", 0.into()),
        ("triggers", Value::Array(Vec::new())),
        ("displayIndex", uid.into()),
    ];
    let mut object: serde_json::Map<String, Value> = fields
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    object.insert(
        "characterFilter".to_owned(),
        json!({"isExclude": false, "names": [], "tags": []}),
    );
    Value::Object(object)
}

/// Two to four sentences about entity `uid`; about six in ten name an
/// earlier entity (so the entry is the same in every book size, and the
/// first entities, the main cast, are named most), one in ten a second.
fn content(uid: usize, all: &[Entity], rng: &mut Rng) -> String {
    let me = &all[uid];
    let name = &me.name;
    let word = rng.pick(COMMON);
    let mut out = match me.kind {
        Kind::Character => format!(
            "{name} is a {} who never speaks of the {word}. {name} keeps a worn {} close at hand.",
            rng.pick(ROLES),
            rng.pick(ITEM_WORDS).to_lowercase()
        ),
        Kind::Place => format!(
            "{name} lies where the old road meets the {word}. Travellers say the lamps there burn green after dusk."
        ),
        Kind::Item => format!(
            "The {name} was forged before the first {word}. Whoever carries it hears whispers at night."
        ),
        Kind::Faction => format!(
            "The {name} trades in secrets and {word}. Its members greet each other with two fingers raised."
        ),
    };
    let mention = |rng: &mut Rng, out: &mut String| {
        let other = &all[rng.below(uid)].name;
        let sentence = match rng.below(4) {
            0 => format!(" Rumours tie it to {other}."),
            1 => format!(" Few know the debt owed to {other}."),
            2 => format!(" The last sighting was near {other}."),
            _ => format!(" {other} has sworn to see it undone."),
        };
        out.push_str(&sentence);
    };
    if rng.chance(60) && uid > 0 {
        mention(rng, &mut out);
    }
    if rng.chance(10) && uid > 0 {
        mention(rng, &mut out);
    }
    if rng.chance(50) {
        out.push_str(" Its story is older than the kingdom and longer than any bard's memory.");
    }
    out
}

/// A World Info file of the first `entries` entities, as SillyTavern saves
/// it (`{"entries": {"0": {...}, ...}}`).
pub fn book(seed: u64, all: &[Entity], entries: usize) -> String {
    let mut map = serde_json::Map::new();
    for uid in 0..entries.min(all.len()) {
        // Per-entry generator: entry `uid` is the same in every book size.
        let mut rng = Rng::new(seed ^ (uid as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
        map.insert(uid.to_string(), entry(uid, all, &mut rng));
    }
    json!({ "entries": map }).to_string()
}

/// Sentences of everyday role-play; `{w}` a common word, `{e}` an entity.
const LINES: &[&str] = &[
    "*She glances toward the {w}, her voice dropping to a whisper.*",
    "\"I have walked this road since before the {w} came,\" she says softly.",
    "*The fire crackles as the wind picks up outside.*",
    "\"Then we leave at first light, and we do not look back.\"",
    "*He sets his pack down and rubs the ache out of his shoulder.*",
    "\"Do you trust me?\" she asks, studying his face in the {w}light.",
    "*Somewhere below, a bell rings twice and falls silent.*",
    "\"There is more to this than a simple errand about the {w}.\"",
    "*Rain drums on the shutters; the candle gutters and steadies.*",
    "\"I saw it with my own eyes, I swear it on the {w}.\"",
];
const MENTIONS: &[&str] = &[
    "\"Have you heard what happened at {e}?\"",
    "*She traces the name {e} on the map with one finger.*",
    "\"{e} will not wait for us forever.\"",
    "\"They say {e} was seen again near the {w}.\"",
];

fn fill(template: &str, rng: &mut Rng, entity: &str) -> String {
    template
        .replace("{w}", rng.pick(COMMON))
        .replace("{e}", entity)
}

/// A SillyTavern chat file of `messages` messages; mentions drawn from
/// `all` (the largest book's entities), half of them from its first 100.
pub fn chat(seed: u64, all: &[Entity], messages: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed ^ 0xC4A7);
    let mut out = json!({
        "user_name": USER,
        "character_name": CHARACTER,
        "create_date": "2026-01-01@00h00m00s",
        "chat_metadata": {},
    })
    .to_string();
    out.push('\n');
    for i in 0..messages {
        let mut text = String::new();
        for s in 0..2 + rng.below(4) {
            if s > 0 {
                text.push(' ');
            }
            text.push_str(&fill(rng.pick(LINES), &mut rng, ""));
        }
        if rng.chance(25) && !all.is_empty() {
            let cast = if rng.chance(50) {
                all.len().min(100)
            } else {
                all.len()
            };
            let entity = &all[rng.below(cast)].name;
            let template = rng.pick(MENTIONS);
            text.push(' ');
            text.push_str(&fill(template, &mut rng, entity));
        }
        let is_user = i % 2 == 0;
        let line = json!({
            "name": if is_user { USER } else { CHARACTER },
            "is_user": is_user,
            "is_system": false,
            "send_date": "2026-01-01@00h00m00s",
            "mes": text,
            "swipes": [text],
            "swipe_id": 0,
            "extra": {},
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out.into_bytes()
}
