//! The settings table of docs/settings.md, read as data: each setting's
//! name and the default the documentation promises, in a form a test
//! compares with what a server answers.

use super::wire::FieldValue;

/// A default as docs/settings.md writes it.
#[derive(Clone, Debug, PartialEq)]
pub enum DocumentedDefault {
    /// `unset`, or `unset (explanation)`.
    Unset,
    /// `empty`: an empty string, list or message.
    Empty,
    /// `true` or `false`.
    Bool(bool),
    /// A bare integer: `2`.
    Int(i64),
    /// A bare decimal number: `0.2`.
    Decimal(f64),
    /// One code span: an enum value without its prefix (`IN_CHAT`) or a
    /// whole string.
    Code(String),
    /// Two code spans around ` ... `: a long string shown by its start and
    /// its end (`` `# Story Memory` ... `{{running_recap}}` ``).
    StartAndEnd(String, String),
    /// Code spans joined by `, `: a list of lines shown by each line's
    /// text before its first `:` (`` `character`, `rule(constant)` `` for
    /// `lore_entity_types`), as many as the list has, in its order.
    LineHeads(Vec<String>),
}

impl DocumentedDefault {
    /// Reads one cell of the default column; `None` if it is in none of
    /// the forms above.
    pub fn parse(cell: &str) -> Option<DocumentedDefault> {
        let cell = cell.trim();
        let code = |s: &str| {
            let inner = s.strip_prefix('`')?.strip_suffix('`')?;
            (!inner.contains('`')).then(|| inner.to_owned())
        };
        if cell == "unset" || cell.starts_with("unset (") {
            return Some(DocumentedDefault::Unset);
        }
        if cell == "empty" {
            return Some(DocumentedDefault::Empty);
        }
        if let Ok(flag) = cell.parse::<bool>() {
            return Some(DocumentedDefault::Bool(flag));
        }
        if let Ok(number) = cell.parse::<i64>() {
            return Some(DocumentedDefault::Int(number));
        }
        if let Ok(number) = cell.parse::<f64>() {
            return Some(DocumentedDefault::Decimal(number));
        }
        if let Some(text) = code(cell) {
            return Some(DocumentedDefault::Code(text));
        }
        if let Some((start, end)) = cell.split_once(" ... ") {
            return Some(DocumentedDefault::StartAndEnd(code(start)?, code(end)?));
        }
        let heads = cell.split(", ").map(code).collect::<Option<Vec<_>>>()?;
        (heads.len() > 1).then_some(DocumentedDefault::LineHeads(heads))
    }

    /// Whether a served value is this default.
    pub fn matches(&self, served: &FieldValue) -> bool {
        match (self, served) {
            (DocumentedDefault::Unset, FieldValue::Unset) => true,
            (DocumentedDefault::Empty, value) => value.is_empty(),
            (DocumentedDefault::Bool(a), FieldValue::Bool(b)) => a == b,
            (DocumentedDefault::Int(a), FieldValue::Int(b)) => a == b,
            (DocumentedDefault::Decimal(a), FieldValue::Double(b)) => a == b,
            (DocumentedDefault::Code(a), FieldValue::Enum(b) | FieldValue::Text(b)) => a == b,
            (DocumentedDefault::StartAndEnd(start, end), FieldValue::Text(text)) => {
                text.len() >= start.len() + end.len()
                    && text.starts_with(start.as_str())
                    && text.ends_with(end.as_str())
            }
            (DocumentedDefault::LineHeads(heads), served) => {
                let items: &[FieldValue] = match served {
                    FieldValue::List(items) => items,
                    // A list setting is a message with one repeated field
                    // (`StringList`).
                    FieldValue::Message(fields) => match fields.as_slice() {
                        [(_, FieldValue::List(items))] => items,
                        _ => return false,
                    },
                    _ => return false,
                };
                items.len() == heads.len()
                    && items.iter().zip(heads).all(|(item, head)| match item {
                        FieldValue::Text(line) => line
                            .split_once(':')
                            .is_some_and(|(before, _)| before.trim() == head),
                        _ => false,
                    })
            }
            _ => false,
        }
    }
}

/// The file that holds the settings table, relative to the repository.
pub const SETTINGS_DOC: &str = "docs/settings.md";

/// The rows of the settings table in docs/settings.md (the table whose
/// header is `| setting | default | meaning |`): each setting's name and
/// the default cell as written.
pub fn settings_table() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/settings.md");
    let doc = std::fs::read_to_string(path).expect("docs/settings.md reads");
    let mut lines = doc
        .lines()
        .skip_while(|line| line.trim() != "| setting | default | meaning |")
        .skip(2); // the header and the | --- | line
    let mut rows = Vec::new();
    for line in lines.by_ref().take_while(|line| line.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells
            .get(1)
            .and_then(|c| c.strip_prefix('`')?.strip_suffix('`'))
            .unwrap_or_else(|| panic!("{SETTINGS_DOC}: a settings row without a `name`: {line}"));
        let default = cells
            .get(2)
            .unwrap_or_else(|| panic!("{SETTINGS_DOC}: a settings row without a default: {line}"));
        rows.push((name.to_owned(), (*default).to_owned()));
    }
    assert!(!rows.is_empty(), "{SETTINGS_DOC} has no settings table");
    rows
}
