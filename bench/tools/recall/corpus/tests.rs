use super::*;

#[test]
fn texts_are_repeatable_varied_and_a_chat_turns_length() {
    let a = message_text(1, 0, 3);
    assert_eq!(a, message_text(1, 0, 3));
    assert_ne!(a, message_text(1, 0, 4));
    assert_ne!(a, message_text(1, 1, 3));
    let mean = (0..1000)
        .map(|i| message_text(1, 0, i).len())
        .sum::<usize>()
        / 1000;
    // Two to four short sentences: about 180 bytes.
    assert!((120..=400).contains(&mean), "{mean} bytes");
}

#[test]
fn common_words_are_common_and_rare_ones_rare() {
    let text: String = (0..2000).map(|i| message_text(7, 0, i) + " ").collect();
    let count = |w: &str| {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|x| x.eq_ignore_ascii_case(w))
            .count()
    };
    assert!(count("looked") > 20 * count(&ZIPF.words[4000]).max(1));
}

#[test]
fn queries_take_content_words_and_files_name_every_message() {
    let q = query_about(1, 0, 5, 4);
    assert_eq!(q.split(' ').count(), 4, "{q}");
    let file = String::from_utf8(chat_file(1, 0, 3)).expect("UTF-8");
    assert_eq!(file.lines().count(), 4);
    assert!(file.contains("\"recapd_message_id\":\"m2\""));
}
