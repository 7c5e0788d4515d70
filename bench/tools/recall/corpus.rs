//! The generated chats of `recall`: message texts derived from a seed, the
//! chat and the message index (nothing is kept to check them against), as
//! SillyTavern chat files with recapd's message ids `m0`, `m1`, ...
//!
//! A message is two to four sentences of six to fourteen words (about 180
//! bytes): function words for a third of them, the rest drawn from a
//! vocabulary of 8,000 words with Zipf's law (the word of rank r with
//! weight 1/r), as words are in prose: a few common words in most
//! messages, most words rare. So a keyword query's common words touch long
//! posting lists, as they do in a real chat.

use std::sync::LazyLock;

/// Words of the vocabulary.
const VOCABULARY: usize = 8_000;

/// The most common content words, ranked first; the rest are made of
/// syllables.
#[rustfmt::skip]
const HEAD: [&str; 96] = [
    "looked", "eyes", "hand", "smiled", "voice", "door", "back", "head", "room", "face",
    "moment", "turned", "felt", "light", "night", "words", "sword", "quietly", "little", "long",
    "heart", "away", "still", "together", "window", "letter", "harbour", "lantern", "storm",
    "captain", "market", "river", "bridge", "village", "stranger", "candle", "shadow", "garden",
    "promise", "tavern", "road", "horse", "map", "secret", "cold", "bright", "slowly", "dragon",
    "coin", "dawn", "forest", "tower", "king", "queen", "ship", "sea", "fire", "stone", "blood",
    "book", "key", "gate", "wall", "table", "chair", "cup", "wine", "bread", "rain", "snow",
    "wind", "moon", "sun", "star", "winter", "summer", "mountain", "valley", "castle", "guard",
    "soldier", "priest", "witch", "child", "mother", "father", "brother", "sister", "friend",
    "enemy", "journey", "battle", "silver", "golden", "broken", "hidden",
];

/// Function words, a third of a sentence's words (BM25's tokenizer drops
/// most of them as stop words).
#[rustfmt::skip]
const FUNCTION: [&str; 24] = [
    "the", "a", "of", "to", "and", "she", "he", "it", "in", "with", "her", "his", "was",
    "at", "on", "for", "that", "they", "but", "as", "then", "from", "into", "we",
];

const ONSETS: [&str; 16] = [
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "th", "br", "st",
];
const VOWELS: [&str; 8] = ["a", "e", "i", "o", "u", "ai", "ea", "ou"];
const CODAS: [&str; 8] = ["", "n", "r", "l", "s", "th", "nd", "rk"];

/// The vocabulary, most common first, and the cumulative Zipf weights.
struct Zipf {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

static ZIPF: LazyLock<Zipf> = LazyLock::new(|| {
    let mut words: Vec<String> = HEAD.iter().map(|w| (*w).to_owned()).collect();
    let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
    let mut rng = Rng(0x5eed);
    while words.len() < VOCABULARY {
        let syllables = 2 + rng.below(2);
        let mut word = String::new();
        for _ in 0..syllables {
            word.push_str(ONSETS[rng.below(ONSETS.len())]);
            word.push_str(VOWELS[rng.below(VOWELS.len())]);
        }
        word.push_str(CODAS[rng.below(CODAS.len())]);
        if seen.insert(word.clone()) {
            words.push(word);
        }
    }
    let mut total = 0.0;
    let cumulative = (0..words.len())
        .map(|r| {
            total += 1.0 / (r as f64 + 1.0);
            total
        })
        .collect();
    Zipf { words, cumulative }
});

/// SplitMix64: a small, fast, seedable generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A content word drawn with Zipf's law.
fn content_word(rng: &mut Rng) -> &'static str {
    let zipf = &*ZIPF;
    let total = zipf.cumulative.last().copied().unwrap_or(1.0);
    let at = rng.unit() * total;
    let rank = zipf
        .cumulative
        .partition_point(|c| *c < at)
        .min(zipf.words.len() - 1);
    &zipf.words[rank]
}

/// Message `message` of chat `chat` (see the module documentation).
pub fn message_text(seed: u64, chat: usize, message: usize) -> String {
    let mut rng = Rng(seed ^ ((chat as u64) << 32) ^ (message as u64).wrapping_mul(0x9E37));
    let sentences = 2 + rng.below(3);
    let mut text = String::with_capacity(320);
    for s in 0..sentences {
        if s > 0 {
            text.push(' ');
        }
        let words = 6 + rng.below(9);
        for w in 0..words {
            let word = if rng.below(3) == 0 {
                FUNCTION[rng.below(FUNCTION.len())]
            } else {
                content_word(&mut rng)
            };
            if w == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
            } else {
                text.push(' ');
                text.push_str(word);
            }
        }
        text.push('.');
    }
    text
}

/// A query about message `message`: `words` of its content words (not the
/// function words), in order.
pub fn query_about(seed: u64, chat: usize, message: usize, words: usize) -> String {
    message_text(seed, chat, message)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty() && !FUNCTION.contains(&w.to_lowercase().as_str()))
        .take(words)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Message `i`'s id.
pub fn message_id(i: usize) -> String {
    format!("m{i}")
}

/// Who says message `i`: the user on even ones.
pub fn speaker(i: usize) -> (&'static str, bool) {
    if i.is_multiple_of(2) {
        ("User", true)
    } else {
        ("Alice", false)
    }
}

/// A SillyTavern chat file of `messages` messages of chat `chat`, each
/// with its recapd id in `extra.recapd_message_id`.
pub fn chat_file(seed: u64, chat: usize, messages: usize) -> Vec<u8> {
    let mut out = serde_json::json!({
        "user_name": "User",
        "character_name": "Alice",
        "create_date": "2026-11-27@12h00m00s",
        "chat_metadata": {},
    })
    .to_string();
    out.push('\n');
    for i in 0..messages {
        let (name, is_user) = speaker(i);
        let line = serde_json::json!({
            "name": name,
            "is_user": is_user,
            "is_system": false,
            "send_date": "2026-11-27@12h00m00s",
            "mes": message_text(seed, chat, i),
            "extra": {"recapd_message_id": message_id(i)},
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests;
