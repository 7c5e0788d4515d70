//! Cutting a text into chunks of at most a number of characters, on
//! sentence boundaries (Unicode's sentence segmentation, UAX #29): a chunk
//! is as many whole sentences as fit; a sentence longer than a chunk is
//! cut on word boundaries, and a word longer than a chunk on characters.
//! Chunks are byte ranges of the text, trimmed of surrounding white space;
//! a text of white space alone has none.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// The chunks of `text`, each at most `max_chars` characters (at least
/// 1), in order, as byte ranges of `text`. Nothing is lost but the white
/// space between chunks: every other character is in exactly one chunk.
pub fn chunks(text: &str, max_chars: usize) -> Vec<Range<usize>> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    if text.chars().count() <= max_chars {
        push_trimmed(text, 0..text.len(), &mut out);
        return out;
    }
    let mut current: Option<(usize, usize, usize)> = None; // start, end, chars
    for (at, sentence) in text.split_sentence_bound_indices() {
        let chars = sentence.chars().count();
        if let Some((start, end, used)) = current {
            if used + chars <= max_chars {
                current = Some((start, at + sentence.len(), used + chars));
                continue;
            }
            push_trimmed(text, start..end, &mut out);
        }
        if chars <= max_chars {
            current = Some((at, at + sentence.len(), chars));
        } else {
            current = None;
            split_long(text, at..at + sentence.len(), max_chars, &mut out);
        }
    }
    if let Some((start, end, _)) = current {
        push_trimmed(text, start..end, &mut out);
    }
    out
}

/// Cuts one sentence longer than a chunk on word boundaries (a word
/// longer than a chunk on characters).
fn split_long(text: &str, range: Range<usize>, max_chars: usize, out: &mut Vec<Range<usize>>) {
    let sentence = &text[range.clone()];
    let mut current: Option<(usize, usize, usize)> = None;
    for (offset, word) in sentence.split_word_bound_indices() {
        let at = range.start + offset;
        let chars = word.chars().count();
        if let Some((start, end, used)) = current {
            if used + chars <= max_chars {
                current = Some((start, at + word.len(), used + chars));
                continue;
            }
            push_trimmed(text, start..end, out);
        }
        if chars <= max_chars {
            current = Some((at, at + word.len(), chars));
            continue;
        }
        let mut start = at;
        let mut used = 0;
        for (i, _) in word.char_indices() {
            if used == max_chars {
                push_trimmed(text, start..at + i, out);
                start = at + i;
                used = 0;
            }
            used += 1;
        }
        current = Some((start, at + word.len(), used));
    }
    if let Some((start, end, _)) = current {
        push_trimmed(text, start..end, out);
    }
}

/// Adds `range` of `text` without its surrounding white space, unless
/// nothing is left.
fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    if start < end {
        out.push(start..end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str, max: usize) -> Vec<&str> {
        chunks(text, max).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn a_short_text_is_one_chunk_trimmed() {
        assert_eq!(
            texts("  The inn is called the Gilded Goose.  ", 100),
            ["The inn is called the Gilded Goose."]
        );
        assert!(texts("   \n ", 100).is_empty());
        assert!(texts("", 100).is_empty());
    }

    #[test]
    fn sentences_are_packed_whole() {
        let text = "First sentence here. Second one is here. Third comes last.";
        assert_eq!(
            texts(text, 42),
            [
                "First sentence here. Second one is here.",
                "Third comes last."
            ]
        );
    }

    #[test]
    fn a_long_sentence_is_cut_on_words_and_a_long_word_on_characters() {
        let text = "alpha beta gamma delta epsilon";
        for chunk in texts(text, 11) {
            assert!(chunk.chars().count() <= 11, "{chunk:?}");
        }
        assert_eq!(texts(text, 11).join(" "), text);
        assert_eq!(texts("ééééééé", 3), ["ééé", "ééé", "é"]);
    }

    #[test]
    fn nothing_but_white_space_is_lost_and_no_chunk_is_too_long() {
        let text = "Mira found the letter under the floorboards. It was sealed with \
                    green wax! Who sent it? Nobody in Thornwick knew the seal. \
                    She promised Tomas she would not open it before the full moon.";
        for max in [1, 5, 17, 40, 80, 400] {
            let got = texts(text, max);
            for chunk in &got {
                assert!(chunk.chars().count() <= max, "{max}: {chunk:?}");
            }
            let joined: String = got.concat().split_whitespace().collect();
            let expected: String = text.split_whitespace().collect();
            assert_eq!(joined, expected, "{max}");
        }
    }
}
