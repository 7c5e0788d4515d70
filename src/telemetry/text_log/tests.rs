use super::*;
use crate::telemetry::captured_log::CapturedLog;

/// The text log as `recapd` sets it up (with colours, as on a terminal),
/// writing what `emit` logs to a string.
fn text_log(emit: impl FnOnce()) -> String {
    let log = CapturedLog::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .fmt_fields(EscapedFields)
        .with_ansi(true)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, emit);
    log.text()
}

#[test]
fn a_field_holding_a_line_break_stays_on_its_line() {
    let hostile = "a\r\nFAKE";
    let out = text_log(|| {
        tracing::warn!(name = %hostile, debug = ?hostile, plain = hostile, "entry {} created", hostile);
    });
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(!out.contains('\r'), "{out:?}");
    assert!(out.contains(r"name=a\r\nFAKE"), "{out}");
    assert!(out.contains(r"entry a\r\nFAKE created"), "{out}");
}

#[test]
fn escapes_controls_and_bidi_characters_in_messages_fields_and_spans() {
    let name = "Mi\u{0}ra\u{1b}[31m\r\nFAKE LOG LINE\u{202e}\u{85}\u{2028}";
    let out = text_log(|| {
        let span = tracing::info_span!("job", entity = %name);
        let _entered = span.enter();
        tracing::info!(entity = %name, "{name}");
    });
    assert_eq!(out.lines().count(), 1, "{out:?}");
    let escaped = r"Mi\u{0}ra\u{1b}[31m\r\nFAKE LOG LINE\u{202e}\u{85}\u{2028}";
    // The message, the event's field and the span's field.
    assert_eq!(out.matches(escaped).count(), 3, "{out}");
    for raw in ['\u{0}', '\u{202e}', '\u{85}', '\u{2028}', '\r'] {
        assert!(!out.contains(raw), "{raw:?} in {out:?}");
    }
    // The only ESC left are the formatter's own colours, never one
    // followed by the value's `[31m`.
    assert!(!out.contains("\u{1b}[31mFAKE"), "{out:?}");
}

#[test]
fn errors_are_escaped_with_their_sources() {
    let error = std::io::Error::other("refused\nFAKE");
    let out = text_log(|| {
        tracing::error!(
            error = &error as &(dyn std::error::Error + 'static),
            "failed"
        );
    });
    assert_eq!(out.lines().count(), 1, "{out:?}");
    assert!(out.contains(r"error=refused\nFAKE"), "{out}");
}
