//! The scan buffer's haystacks (`WorldInfoBuffer.get`,
//! world-info.js:279-328): what they hold, and that building one per entry
//! shape cannot grow without bound.

use super::*;
use crate::world_info::scan::tests::support::entry;

fn history(messages: usize, bytes: usize) -> Vec<String> {
    (0..messages).map(|i| format!("{i:0bytes$}")).collect()
}

#[test]
fn a_depth_past_the_history_reads_the_same_messages() {
    // world-info.js:279-328: the haystack is the newest `depth` messages,
    // so any depth past the history gives the whole history.
    let texts = GlobalTexts::default();
    let mut buffer = Buffer::new(history(3, 4).into_iter(), &texts, Vec::new(), 2);
    let two = buffer
        .get(&entry(r#"{"uid":0,"scanDepth":2}"#), false)
        .raw
        .clone();
    assert_eq!(two, "\u{1}0000\n\u{1}0001");
    let whole = buffer
        .get(&entry(r#"{"uid":1,"scanDepth":3}"#), false)
        .raw
        .clone();
    let kept = buffer.kept_bytes();
    let past = buffer
        .get(&entry(r#"{"uid":2,"scanDepth":50}"#), false)
        .raw
        .clone();
    assert_eq!(past, whole);
    assert_eq!(buffer.kept_bytes(), kept, "no second copy of the history");
    // A depth of 0 matches nothing (world-info.js:283-285).
    let none = &buffer.get(&entry(r#"{"uid":3,"scanDepth":0}"#), false).raw;
    assert_eq!(none, "");
}

#[test]
fn entries_of_many_scan_depths_do_not_each_keep_a_copy_of_the_history() {
    // 1,000 messages of 1 KiB and an entry for every scan depth: kept, the
    // haystacks would weigh ~500 MB (twice that lowercased). The buffer
    // keeps at most CACHE_BYTES, and each haystack is still the newest
    // `scanDepth` messages (world-info.js:279-328).
    let texts = GlobalTexts::default();
    let mut buffer = Buffer::new(history(1000, 1024).into_iter(), &texts, Vec::new(), 2);
    for depth in 1..=1000 {
        let e = entry(&format!(r#"{{"uid":{depth},"scanDepth":{depth}}}"#));
        let hay = buffer.get(&e, false);
        assert_eq!(hay.raw.matches('\u{1}').count(), depth);
        assert!(buffer.kept_bytes() <= CACHE_BYTES, "depth {depth}");
    }
}
