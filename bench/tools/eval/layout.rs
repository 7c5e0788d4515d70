//! Reading a long-conversation dataset in the LoCoMo layout: one
//! conversation object or an array of them, each either flat (`speaker_a`,
//! `speaker_b`, `session_N`, `session_N_date_time`, `qa`, ...) or nested as
//! in `locomo10.json` (`sample_id`, `conversation: {...}`, `qa`,
//! `event_summary: {...}`).

use serde_json::Value;

type Error = Box<dyn std::error::Error>;

/// One turn of a session, as the dataset wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The speaker's name (`speaker_a` or `speaker_b`).
    pub speaker: String,
    /// The dataset's id of the turn (`D1:3`); empty when absent.
    pub dia_id: String,
    /// The text, with a shared photo's caption appended as
    /// ` [shares a photo: ...]`. Never empty.
    pub text: String,
}

/// One session: turns on one date.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// The `N` of `session_N`.
    pub number: u32,
    /// `session_N_date_time`; empty when absent.
    pub date_time: String,
    /// Its turns in order; never empty.
    pub turns: Vec<Turn>,
}

/// One question with its gold answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub question: String,
    /// The gold answer as text (numbers written as the file wrote them); for
    /// an adversarial question (category 5, no `answer`) the fixed text
    /// [`ADVERSARIAL_GOLD`].
    pub answer: String,
    /// 1..=5 in LoCoMo; 0 when the file gives none.
    pub category: u32,
    /// The session numbers its evidence (`D<session>:<turn>`) points into.
    pub evidence_sessions: Vec<u32>,
    /// Its evidence: the dialogue ids (`D<session>:<turn>`) it names, in
    /// order, each once.
    pub evidence: Vec<String>,
}

/// The gold answer of a question that has only an `adversarial_answer`:
/// the conversation does not say.
pub const ADVERSARIAL_GOLD: &str = "Not mentioned in the conversation";

/// The facts the dataset lists for one session (`events_session_N`): what
/// happened to each speaker in it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionFacts {
    /// The `N` of `events_session_N`.
    pub session: u32,
    /// The facts, each one sentence, speaker by speaker (in name order);
    /// never blank.
    pub facts: Vec<String>,
}

/// One conversation: two speakers, sessions in order of their number, the
/// questions about it, the facts of each session.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// `sample_id`, else `<label>` (or `<label>-<i>` in an array).
    pub id: String,
    /// The user of the SillyTavern chat.
    pub speaker_a: String,
    /// The character of the SillyTavern chat.
    pub speaker_b: String,
    /// Sorted by number; sessions without turns are left out.
    pub sessions: Vec<Session>,
    pub questions: Vec<Question>,
    /// The facts of the sessions that have `events_session_N` (flat: at
    /// the top; nested: under `event_summary`), by session number; only
    /// sessions with at least one fact.
    pub facts: Vec<SessionFacts>,
}

impl Conversation {
    /// Keeps the sessions numbered at most `max`, their facts, and the
    /// questions whose evidence lies in them (questions without evidence
    /// stay).
    pub fn truncate_sessions(&mut self, max: u32) {
        self.sessions.retain(|s| s.number <= max);
        self.facts.retain(|f| f.session <= max);
        self.questions
            .retain(|q| q.evidence_sessions.iter().all(|&n| n <= max));
    }

    /// Every turn of every session, in order.
    pub fn turns(&self) -> impl Iterator<Item = (&Session, &Turn)> {
        self.sessions
            .iter()
            .flat_map(|s| s.turns.iter().map(move |t| (s, t)))
    }
}

/// Reads a dataset file's text; `label` names conversations without a
/// `sample_id` (the file's stem).
pub fn parse(text: &str, label: &str) -> Result<Vec<Conversation>, Error> {
    let value: Value = serde_json::from_str(text)?;
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| conversation(item, &format!("{label}-{i}")))
            .collect(),
        item @ Value::Object(_) => Ok(vec![conversation(&item, label)?]),
        _ => Err("the dataset is neither a conversation object nor an array of them".into()),
    }
}

fn conversation(item: &Value, fallback_id: &str) -> Result<Conversation, Error> {
    let object = item
        .as_object()
        .ok_or_else(|| format!("{fallback_id}: a conversation is not a JSON object"))?;
    let id = object
        .get("sample_id")
        .map(text_of)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| fallback_id.to_owned());
    // Nested (locomo10.json): the sessions are under `conversation`.
    let body = match object.get("conversation") {
        Some(Value::Object(inner)) => inner,
        _ => object,
    };
    let speaker = |key: &str| -> Result<String, Error> {
        body.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{id}: no {key}").into())
    };
    let speaker_a = speaker("speaker_a")?;
    let speaker_b = speaker("speaker_b")?;
    let mut sessions = Vec::new();
    for (key, value) in body {
        let Some(number) = key
            .strip_prefix("session_")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Some(turns) = value.as_array() else {
            continue;
        };
        let turns: Vec<Turn> = turns.iter().filter_map(turn).collect();
        if turns.is_empty() {
            continue;
        }
        let date_time = body
            .get(&format!("session_{number}_date_time"))
            .map(text_of)
            .unwrap_or_default();
        sessions.push(Session {
            number,
            date_time,
            turns,
        });
    }
    if sessions.is_empty() {
        return Err(format!("{id}: no session_N with turns").into());
    }
    sessions.sort_by_key(|s| s.number);
    let questions = object
        .get("qa")
        .and_then(Value::as_array)
        .map(|qa| qa.iter().filter_map(question).collect())
        .unwrap_or_default();
    // Flat files keep `events_session_N` beside the sessions; locomo10.json
    // under `event_summary`.
    let events = match object.get("event_summary") {
        Some(Value::Object(summary)) => summary,
        _ => body,
    };
    let mut facts: Vec<SessionFacts> = events
        .iter()
        .filter_map(|(key, value)| {
            let session = key.strip_prefix("events_session_")?.parse().ok()?;
            let facts = session_facts(value);
            (!facts.is_empty()).then_some(SessionFacts { session, facts })
        })
        .collect();
    facts.sort_by_key(|f| f.session);
    Ok(Conversation {
        id,
        speaker_a,
        speaker_b,
        sessions,
        questions,
        facts,
    })
}

/// The facts of one `events_session_N`: an object of speakers' lists of
/// sentences (its `date` and any other non-list member skipped), a list of
/// sentences, or one sentence.
fn session_facts(value: &Value) -> Vec<String> {
    let sentences = |items: &Vec<Value>| -> Vec<String> {
        items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    };
    match value {
        Value::Object(by_speaker) => by_speaker
            .values()
            .filter_map(Value::as_array)
            .flat_map(sentences)
            .collect(),
        Value::Array(items) => sentences(items),
        Value::String(s) if !s.trim().is_empty() => vec![s.trim().to_owned()],
        _ => Vec::new(),
    }
}

fn turn(value: &Value) -> Option<Turn> {
    let speaker = value.get("speaker")?.as_str()?.to_owned();
    let mut text = value
        .get("text")
        .map(text_of)
        .unwrap_or_default()
        .trim()
        .to_owned();
    if let Some(caption) = value.get("blip_caption").and_then(Value::as_str)
        && !caption.trim().is_empty()
    {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("[shares a photo: {}]", caption.trim()));
    }
    if text.is_empty() {
        return None;
    }
    let dia_id = value.get("dia_id").map(text_of).unwrap_or_default();
    Some(Turn {
        speaker,
        dia_id,
        text,
    })
}

fn question(value: &Value) -> Option<Question> {
    let question = value.get("question")?.as_str()?.trim().to_owned();
    if question.is_empty() {
        return None;
    }
    let answer = match value.get("answer") {
        Some(Value::Null) | None => {
            value.get("adversarial_answer")?;
            ADVERSARIAL_GOLD.to_owned()
        }
        Some(answer) => text_of(answer),
    };
    let category = value
        .get("category")
        .and_then(|c| c.as_u64().or_else(|| c.as_str()?.trim().parse().ok()))
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(0);
    let mut evidence_sessions = Vec::new();
    let mut evidence = Vec::new();
    if let Some(Value::Array(items)) = value.get("evidence") {
        for item in items {
            for (session, id) in evidence_ids(&text_of(item)) {
                evidence_sessions.push(session);
                if !evidence.contains(&id) {
                    evidence.push(id);
                }
            }
        }
    }
    evidence_sessions.sort_unstable();
    evidence_sessions.dedup();
    Some(Question {
        question,
        answer,
        category,
        evidence_sessions,
        evidence,
    })
}

/// Every `D<session>:<turn>` in `text` (the dataset sometimes joins two
/// with `;`), with its session number; the turn's digits end at the first
/// other character, and the id is written without leading zeros (the
/// dataset once writes `D30:05` for the turn `D30:5`).
fn evidence_ids(text: &str) -> Vec<(u32, String)> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('D') {
        rest = &rest[at + 1..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Some(after) = rest[digits.len()..].strip_prefix(':') else {
            continue;
        };
        let turn: String = after.chars().take_while(char::is_ascii_digit).collect();
        if let (Ok(n), Ok(t)) = (digits.parse::<u32>(), turn.parse::<u32>()) {
            ids.push((n, format!("D{n}:{t}")));
        }
    }
    ids
}

/// A JSON value as text: a string as it is, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
