use super::*;

const KINDS: [TokenizerKind; 4] = [
    TokenizerKind::O200kBase,
    TokenizerKind::Cl100kBase,
    TokenizerKind::P50kBase,
    TokenizerKind::R50kBase,
];

#[test]
fn counts_known_texts() {
    assert_eq!(count(TokenizerKind::Cl100kBase, "hello world"), 2);
    assert_eq!(count(TokenizerKind::O200kBase, ""), 0);
    // Special-token markers are ordinary text, never an error.
    assert!(count(TokenizerKind::O200kBase, "<|endoftext|>") > 1);
}

/// A small deterministic generator, so the test needs no extra crate.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % below as u64) as usize
    }
}

fn random_text(rng: &mut Lcg) -> String {
    const PIECES: [&str; 28] = [
        "a", "b", "the", " ", "  ", ".", "!", "\n", "\n\n", "\r\n", "'s", "'", "A", "Zed", "1",
        "2024", "é", "中文", "🙂", "\t", "-", " x", "/", "Ⅻ", "\u{301}", "ß", "日本", "?\n",
    ];
    (0..rng.next(12))
        .map(|_| PIECES[rng.next(PIECES.len())])
        .collect()
}

#[test]
fn joined_count_equals_counting_the_joined_text() {
    let mut rng = Lcg(7);
    for round in 0..1500 {
        let kind = KINDS[round % KINDS.len()];
        let mut joined = JoinedCount::new(&Counter::tiktoken(kind));
        let mut text = String::new();
        for i in 0..(1 + rng.next(8)) {
            let part = random_text(&mut rng);
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&part);
            let next = joined.peek(&part);
            assert_eq!(
                next.total,
                u64::from(count(kind, &text)),
                "{kind:?} {text:?}"
            );
            joined.accept(next);
            assert_eq!(
                joined.total(),
                u64::from(count(kind, &text)),
                "after accept {kind:?} {text:?} tail {:?}",
                joined.tail
            );
        }
    }
}

#[test]
fn joined_count_cuts_text_without_spaces_at_the_joins() {
    let mut joined = JoinedCount::new(&Counter::default());
    for _ in 0..50 {
        let next = joined.peek("彼女は市場でパンを買った。");
        joined.accept(next);
    }
    assert!(joined.tail.chars().count() < 20, "tail {:?}", joined.tail);
}

#[test]
fn joined_count_keeps_only_a_short_tail() {
    let mut joined = JoinedCount::new(&Counter::default());
    for _ in 0..50 {
        let next = joined.peek("she went to the market and bought bread");
        joined.accept(next);
    }
    assert!(joined.tail.len() < 20, "tail {:?}", joined.tail);
}

/// A loaded tokenizer whose count is not a sum over pieces: one token per
/// run of characters of the same kind (letter, digit, space, other), so a
/// join can merge or split runs. JoinedCount must not cut its text.
struct Runs;
impl CountTokens for Runs {
    fn count_final(&self, text: &str) -> (u32, bool) {
        let class = |c: char| {
            if c.is_alphabetic() {
                0
            } else if c.is_numeric() {
                1
            } else if c.is_whitespace() {
                2
            } else {
                3
            }
        };
        let mut runs = 0;
        let mut last = None;
        for c in text.chars() {
            if last != Some(class(c)) {
                runs += 1;
                last = Some(class(c));
            }
        }
        (runs, true)
    }
}

#[test]
fn joined_count_with_a_loaded_tokenizer_counts_the_whole_text() {
    let counter = Counter::loaded("runs", std::sync::Arc::new(Runs));
    let mut rng = Lcg(11);
    for _ in 0..300 {
        let mut joined = JoinedCount::new(&counter);
        let mut text = String::new();
        for i in 0..(1 + rng.next(8)) {
            let part = random_text(&mut rng);
            if i > 0 {
                text.push('\n');
            }
            text.push_str(&part);
            let next = joined.peek(&part);
            assert_eq!(next.total, u64::from(counter.count(&text)), "{text:?}");
            joined.accept(next);
            assert_eq!(joined.total(), u64::from(counter.count(&text)), "{text:?}");
        }
    }
}

#[test]
fn counters_are_told_apart_by_their_keys() {
    let a = Counter::loaded("a", std::sync::Arc::new(Runs));
    let b = Counter::loaded("b", std::sync::Arc::new(Runs));
    assert_eq!(
        a.key(),
        Counter::loaded("a", std::sync::Arc::new(Runs)).key()
    );
    assert_ne!(a.key(), b.key());
    let tiktoken: Vec<_> = KINDS.iter().map(|k| Counter::tiktoken(*k).key()).collect();
    for (i, key) in tiktoken.iter().enumerate() {
        assert_ne!(*key, a.key());
        assert_eq!(tiktoken.iter().filter(|k| *k == key).count(), 1, "{i}");
    }
    // A kind whose tokenizer is loaded by the caller falls back to o200k.
    assert_eq!(
        Counter::tiktoken(TokenizerKind::HuggingFace).key(),
        Counter::default().key()
    );
    assert_eq!(Counter::default().count("hello world"), 2);
}
