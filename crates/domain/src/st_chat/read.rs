//! Reading a SillyTavern chat file, whole or as chunks of bytes split
//! anywhere ([`ChatReader`]).

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::read_header::header;
use super::read_message::message;
use super::verbatim::{StFile, has, members};
use super::world_info::ChatWorldInfo;
use super::{ImportedChat, message_id};
use crate::message::Message;
use crate::{DomainError, Limits};

pub(super) fn bad(line: usize, reason: impl Into<String>) -> DomainError {
    DomainError::invalid("jsonl", format!("line {line}: {}", reason.into()))
}

/// Reads a member recapd interprets: `Ok(None)` for `null` (the member is
/// then kept as it is, and recapd treats it as absent).
pub(super) fn read<'a, T: serde::Deserialize<'a>>(
    line: usize,
    what: &str,
    raw: &'a RawValue,
    expected: &str,
) -> Result<Option<T>, DomainError> {
    if raw.get() == "null" {
        return Ok(None);
    }
    serde_json::from_str(raw.get())
        .map(Some)
        .map_err(|_| bad(line, format!("{what} must be {expected}")))
}

pub(super) fn checked_text(
    line: usize,
    what: &str,
    raw: &RawValue,
    limits: &Limits,
) -> Result<Option<String>, DomainError> {
    let text: Option<String> = read(line, what, raw, "a string")?;
    if let Some(text) = &text {
        limits
            .check_text("jsonl", text)
            .map_err(|_| bad(line, format!("{what} is over the text limit")))?;
    }
    Ok(text)
}

pub(super) fn object<'a>(
    line: usize,
    what: &str,
    raw: &'a RawValue,
) -> Result<Vec<(String, &'a RawValue)>, DomainError> {
    members(raw.get()).map_err(|_| bad(line, format!("{what} must be an object")))
}

/// How many texts of `--max-text-bytes` one line of a chat file may hold
/// in all: a message's text, its swipes, its recap data and the members
/// kept as they are (SillyTavern messages rarely have more than a few dozen
/// swipes).
pub const MAX_LINE_TEXTS: usize = 64;

/// The byte-order mark some editors (Windows Notepad, for one) put first.
const BOM: &[u8] = "\u{feff}".as_bytes();

/// Reads a SillyTavern chat file given in chunks of bytes, split anywhere
/// (a chunk may end inside a line or inside a UTF-8 character). Lines are
/// numbered across chunks. Each complete line is parsed as it arrives, so
/// a bad line is reported before the rest of the file is sent; the
/// running-recap versions (on the first line) are read at
/// [`ChatReader::finish`], once the number of messages is known.
///
/// A leading UTF-8 byte-order mark is skipped; bytes that are not UTF-8
/// are refused naming their line. Memory held: the parsed messages, the
/// header, and at most one incomplete line, itself at most
/// [`ChatReader::max_line_bytes`] long (a longer line is refused as soon as
/// it passes that length).
#[derive(Debug)]
pub struct ChatReader {
    limits: Limits,
    /// Bytes of the line not yet ended by a newline.
    partial: Vec<u8>,
    /// Number of the line `partial` belongs to (1-based).
    line: usize,
    /// Whether any byte was seen (the byte-order mark is only skipped first).
    started: bool,
    /// The header's line and text, once the first non-blank line was
    /// read; no text for a header-less file.
    header: Option<(usize, Option<String>)>,
    messages: Vec<(i64, Message)>,
    /// Each message id: the line and index of its message, and whether the
    /// file gave it (`extra.recapd_message_id`) rather than its position.
    ids: HashMap<String, IdUse>,
    /// What reading the messages repaired, one `line N: what` each.
    warnings: Vec<String>,
}

/// Where a message id is used ([`ChatReader::ids`]).
#[derive(Debug, Clone, Copy)]
struct IdUse {
    line: usize,
    index: usize,
    /// The file gave it in `extra.recapd_message_id`.
    explicit: bool,
}

impl ChatReader {
    /// A reader for one file, checking texts and the message count against
    /// `limits`.
    pub fn new(limits: Limits) -> ChatReader {
        ChatReader {
            limits,
            partial: Vec::new(),
            line: 1,
            started: false,
            header: None,
            messages: Vec::new(),
            ids: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Takes the next chunk of the file. Fails on the first line that
    /// cannot be read; the reader must then be dropped.
    pub fn push(&mut self, mut chunk: &[u8]) -> Result<(), DomainError> {
        if !self.started && !chunk.is_empty() {
            // The mark may itself be split across chunks.
            let have = self.partial.len();
            let want = BOM.len() - have;
            let take = want.min(chunk.len());
            if BOM[have..have + take] == chunk[..take] {
                self.partial.extend_from_slice(&chunk[..take]);
                chunk = &chunk[take..];
                if self.partial.len() < BOM.len() {
                    return Ok(());
                }
                self.partial.clear();
            }
            self.started = true;
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            let complete = if self.partial.is_empty() {
                self.take_line(&chunk[..end])
            } else {
                self.check_line_length(self.partial.len() + end)?;
                self.partial.extend_from_slice(&chunk[..end]);
                let line = std::mem::take(&mut self.partial);
                self.take_line(&line)
            };
            complete?;
            self.line += 1;
            chunk = &chunk[end + 1..];
        }
        // A line still open is held until its end comes: refused as soon as
        // it is longer than any line may be, so a client that never sends a
        // newline cannot make the server hold its bytes without end.
        self.check_line_length(self.partial.len() + chunk.len())?;
        self.partial.extend_from_slice(chunk);
        Ok(())
    }

    /// The longest line accepted: [`MAX_LINE_TEXTS`] texts of the longest
    /// accepted size.
    pub fn max_line_bytes(&self) -> usize {
        self.limits.max_text_bytes.saturating_mul(MAX_LINE_TEXTS)
    }

    fn check_line_length(&self, length: usize) -> Result<(), DomainError> {
        let max = self.max_line_bytes();
        if length > max {
            return Err(bad(
                self.line,
                format!(
                    "the line is longer than {max} bytes ({MAX_LINE_TEXTS} times --max-text-bytes)"
                ),
            ));
        }
        Ok(())
    }

    /// One complete line, without its newline.
    fn take_line(&mut self, bytes: &[u8]) -> Result<(), DomainError> {
        self.check_line_length(bytes.len())?;
        let line = self.line;
        let text = std::str::from_utf8(bytes).map_err(|e| {
            bad(
                line,
                format!("not UTF-8 (byte {} of the line)", e.valid_up_to() + 1),
            )
        })?;
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.trim().is_empty() {
            return Ok(());
        }
        let members = members(text).map_err(|e| {
            if serde_json::from_str::<&RawValue>(text).is_ok() {
                bad(line, "a message must be a JSON object")
            } else {
                bad(line, format!("not JSON: {e}"))
            }
        })?;
        if self.header.is_none() {
            // Group chats of older SillyTavern versions (and their
            // backups) have no header: the first line is already a
            // message, read with the others. Messages always carry `mes`,
            // SillyTavern's header never does.
            if !members.iter().any(|(key, _)| key == "mes") {
                self.header = Some((line, Some(text.to_owned())));
                return Ok(());
            }
            self.header = Some((line, None));
        }
        let index = self.messages.len();
        let mut message = message(line, index, members, &self.limits)?;
        let explicit = message.st.as_deref().is_some_and(|st| st.had(has::ID));
        let this = IdUse {
            line,
            index,
            explicit,
        };
        if let Some(&other) = self.ids.get(message.id.as_str()) {
            match (other.explicit, explicit) {
                (true, true) => {
                    return Err(bad(
                        line,
                        format!(
                            "message id {:?} is already the id of the message on line {}",
                            message.id, other.line
                        ),
                    ));
                }
                // An explicit id wins over one a message has by its
                // position: SillyTavern appends messages without
                // `recapd_message_id` after an export wrote `m<N>` on an
                // earlier line (after a deletion through the API).
                (true, false) => {
                    let fresh = self.fresh_id(index);
                    self.warn_renamed(line, &message.id, &fresh, other.line);
                    message.id = fresh.into();
                }
                (false, _) => {
                    let fresh = self.fresh_id(other.index);
                    self.warn_renamed(other.line, &message.id, &fresh, line);
                    self.messages[other.index].1.id = fresh.as_str().into();
                    self.ids.insert(fresh, other);
                }
            }
        }
        self.ids.insert(message.id.as_str().to_owned(), this);
        self.messages.push((index as i64, message));
        self.limits.check_chat_size(self.messages.len())
    }

    /// An id no message has yet for the message at `index`, one that no
    /// message can have by its position (`m<index>-<n>`).
    fn fresh_id(&self, index: usize) -> String {
        let base = message_id(index);
        (1..)
            .map(|n| format!("{base}-{n}"))
            .find(|id| !self.ids.contains_key(id))
            .unwrap_or(base) // (1..) is endless and the map finite: never reached.
    }

    fn warn_renamed(&mut self, line: usize, id: &str, fresh: &str, other: usize) {
        self.warnings.push(format!(
            "line {line}: message id {id:?} (from the message's position) is the \
             recapd_message_id of the message on line {other}; this message is now {fresh:?}"
        ));
    }

    /// Ends the file: reads its last line (when it has no newline) and the
    /// running-recap versions, repairing what can be repaired.
    pub fn finish(mut self) -> Result<ImportedChat, DomainError> {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.take_line(&line)?;
        }
        // The header comes first: its repairs are reported first.
        let mut warnings = Vec::new();
        let mut world_info = ChatWorldInfo::default();
        let mut parent = None;
        let (file, recaps, current) = match self.header {
            None => return Err(bad(1, "the file is empty")),
            Some((_, None)) => (StFile::Headerless, Vec::new(), None),
            Some((line, Some(text))) => {
                let (header, recaps, current) = header(
                    &text,
                    line,
                    &self.messages,
                    &self.limits,
                    &mut world_info,
                    &mut parent,
                    &mut warnings,
                )?;
                (StFile::Header(header), recaps, current)
            }
        };
        warnings.append(&mut self.warnings);
        Ok(ImportedChat {
            messages: self.messages,
            recaps,
            current,
            warnings,
            file,
            world_info,
            parent,
        })
    }
}

/// Reads a SillyTavern chat file given as bytes: a leading UTF-8
/// byte-order mark is skipped; bytes that are not UTF-8 are refused naming
/// the line they are on. See [`ChatReader`].
pub fn parse_st_chat_bytes(bytes: &[u8], limits: &Limits) -> Result<ImportedChat, DomainError> {
    let mut reader = ChatReader::new(*limits);
    reader.push(bytes)?;
    reader.finish()
}

/// Reads a SillyTavern chat file. Anything that does not parse rejects the
/// whole file, naming the line; what can be repaired is, and reported in
/// [`ImportedChat::warnings`].
pub fn parse_st_chat(jsonl: &str, limits: &Limits) -> Result<ImportedChat, DomainError> {
    parse_st_chat_bytes(jsonl.as_bytes(), limits)
}
