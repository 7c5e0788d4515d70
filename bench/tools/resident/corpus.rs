//! The generated data of `resident`: chat ids, message texts and authors,
//! all derived from the chat and message index (nothing is kept to check
//! them against), and the random read order.

/// SplitMix64: a small, fast, seedable generator (texts and read order need
/// variety and repeatability, not statistical quality).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The words of the texts: common ones and story ones, of varied lengths.
#[rustfmt::skip]
const WORDS: [&str; 64] = [
    "the", "harbour", "lantern", "quietly", "she", "he", "opened", "door", "storm", "evening",
    "captain", "letter", "across", "market", "whispered", "silver", "old", "tide", "ships",
    "river", "forgotten", "bridge", "smiled", "carefully", "window", "before", "morning", "bread",
    "sword", "mountain", "village", "stranger", "song", "remembered", "under", "candle", "shadow",
    "laughed", "north", "garden", "promise", "tavern", "ale", "road", "horse", "map", "secret",
    "and", "then", "with", "a", "of", "to", "her", "his", "their", "cold", "bright", "slowly",
    "never", "again", "dragon", "coin", "dawn",
];

/// Message `message` of chat `chat`: about `bytes` bytes of words, always
/// the same for the same arguments.
pub(super) fn message_text(seed: u64, chat: usize, message: usize, bytes: usize) -> String {
    let mut rng = Rng(seed ^ ((chat as u64) << 20) ^ message as u64);
    let mut text = String::with_capacity(bytes + 16);
    while text.len() + 5 < bytes {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(WORDS[rng.below(WORDS.len())]);
    }
    text.push('.');
    text
}

pub(super) fn speaker(message: usize) -> (&'static str, bool) {
    if message.is_multiple_of(2) {
        ("User", true)
    } else {
        ("Alice", false)
    }
}

pub(super) fn chat_id(prefix: &str, chat: usize) -> String {
    format!("{prefix}-{chat}")
}

/// `count` distinct indexes below `n` in random order (repeating once
/// every index was drawn).
pub(super) fn random_order(rng: &mut Rng, n: usize, count: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    let mut order = Vec::with_capacity(count);
    while order.len() < count && n > 0 {
        let round = (count - order.len()).min(n);
        for i in 0..round {
            let j = i + rng.below(n - i);
            all.swap(i, j);
        }
        order.extend_from_slice(&all[..round]);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_repeatable_varied_and_about_the_asked_size() {
        let a = message_text(1, 7, 3, 210);
        assert_eq!(a, message_text(1, 7, 3, 210));
        assert_ne!(a, message_text(1, 7, 4, 210));
        assert_ne!(a, message_text(1, 8, 3, 210));
        assert!((200..=225).contains(&a.len()), "{} bytes", a.len());
    }

    #[test]
    fn random_order_draws_each_index_once_before_repeating() {
        let mut rng = Rng(5);
        let mut order = random_order(&mut rng, 10, 10);
        order.sort_unstable();
        assert_eq!(order, (0..10).collect::<Vec<_>>());
        assert_eq!(random_order(&mut rng, 3, 7).len(), 7);
    }
}
