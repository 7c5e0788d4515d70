//! `recapd chats list`'s output: chat ids escaped so they cannot break a line or a column.

use super::*;

#[test]
fn an_id_cannot_break_a_line_or_a_column_and_plain_ids_are_unchanged() {
    assert!(matches!(escape_id("chat-1 é"), Cow::Borrowed("chat-1 é")));
    assert_eq!(escape_id("a\tb\nc\rd\\e"), "a\\tb\\nc\\rd\\\\e");
    assert_eq!(escape_id("x\u{1b}y\u{2028}"), "x\\u{1b}y\\u{2028}");
    let line = list_line(&pb::ChatSummary {
        chat_id: "two\nlines\tand tab".into(),
        message_count: 3,
        revision: 7,
        enabled: true,
        updated_at: Some(prost_types::Timestamp {
            seconds: 1_700_000_000,
            nanos: 0,
        }),
        ..Default::default()
    });
    assert_eq!(
        line,
        "two\\nlines\\tand tab\t3\t7\ttrue\t2023-11-14T22:13:20Z"
    );
    assert_eq!(line.split('\t').count(), LIST_HEADER.split('\t').count());
    let unknown_time = list_line(&pb::ChatSummary {
        chat_id: "c".into(),
        ..Default::default()
    });
    assert_eq!(unknown_time, "c\t0\t0\tfalse\t-");
}
