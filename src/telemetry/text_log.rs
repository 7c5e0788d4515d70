//! The text log's fields (`--log-format text`): every message and field
//! value is written with its control characters escaped, so that a value
//! that came from a client or an LLM (a name holding CR LF, an ANSI escape,
//! a right-to-left override) can neither start a fake line nor restyle or
//! reorder the terminal. Escaped are the C0 and C1 controls, DEL, the
//! bidirectional marks and overrides and the byte order mark
//! ([`crate::domain::lore::clean::is_hidden_char`]), and the line and
//! paragraph separators U+2028 and U+2029: `\n`, `\r`, `\t`, or `\u{..}`.
//! The JSON log (`--log-format json`) escapes C0 controls as JSON does.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

use crate::domain::lore::clean::is_hidden_char;

/// The text log's [`FormatFields`]: the message, then `name=value` pairs
/// separated by spaces, as tracing-subscriber's default, with every value
/// escaped (see the module documentation). Spans' fields are formatted by
/// it too.
#[derive(Debug, Clone, Copy, Default)]
pub struct EscapedFields;

impl<'writer> FormatFields<'writer> for EscapedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = EscapingVisitor {
            writer,
            empty: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

/// Writes one event's or span's fields.
struct EscapingVisitor<'writer> {
    writer: Writer<'writer>,
    /// Nothing written yet (no separating space).
    empty: bool,
    result: fmt::Result,
}

impl EscapingVisitor<'_> {
    /// Writes `name=` (nothing for the message) and then `value` through
    /// the escaping writer.
    fn write(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        if self.result.is_err() || field.name().starts_with("log.") {
            return;
        }
        let name = field.name();
        let name = name.strip_prefix("r#").unwrap_or(name);
        let first = std::mem::take(&mut self.empty);
        self.result = write_field(&mut self.writer, first, name, value);
    }
}

/// Writes one field (its name unless it is the message, then its value
/// escaped), after a space unless it is the `first`.
fn write_field(
    writer: &mut Writer<'_>,
    first: bool,
    name: &str,
    value: fmt::Arguments<'_>,
) -> fmt::Result {
    let mut out = Escaping(writer);
    if !first {
        out.0.write_char(' ')?;
    }
    if name != "message" {
        out.0.write_str(name)?;
        out.0.write_char('=')?;
    }
    out.write_fmt(value)
}

impl Visit for EscapingVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.write(field, format_args!("{value}"));
        } else {
            self.write(field, format_args!("{value:?}"));
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let mut chain = value.to_string();
        let mut source = value.source();
        while let Some(cause) = source {
            chain.push_str(": ");
            chain.push_str(&cause.to_string());
            source = cause.source();
        }
        self.write(field, format_args!("{chain}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, format_args!("{value:?}"));
    }
}

/// A writer that escapes what it is given (see the module documentation).
struct Escaping<'a, 'writer>(&'a mut Writer<'writer>);

impl fmt::Write for Escaping<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut plain_from = 0;
        for (at, c) in text.char_indices() {
            let escaped = match c {
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                _ => None,
            };
            if escaped.is_none() && !is_hidden_char(c) && c != '\u{2028}' && c != '\u{2029}' {
                continue;
            }
            self.0.write_str(&text[plain_from..at])?;
            match escaped {
                Some(escape) => self.0.write_str(escape)?,
                None => write!(self.0, "\\u{{{:x}}}", u32::from(c))?,
            }
            plain_from = at + c.len_utf8();
        }
        self.0.write_str(&text[plain_from..])
    }
}

#[cfg(test)]
mod tests;
