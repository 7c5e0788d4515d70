//! Question answering with and without recapd's memory. Both conditions
//! see the same prompt built by RenderPrompt (chat completion) from the
//! last `recent` turns given as the history: "memory" names the chat, so
//! its injection (the running recap) is placed where its settings say;
//! "no memory" names no chat, so nothing is injected. The question follows
//! as a user message. A judge model compares each answer with the gold one.

use std::collections::BTreeMap;

use recapd::grpc::pb;
use recapd::grpc::pb::prompt_service_client::PromptServiceClient;
use serde_json::{Value, json};
use tonic::transport::Channel;

use super::layout::{Conversation, Question};
use super::llm::ChatClient;

type Error = Box<dyn std::error::Error>;

/// The two conditions, in report order.
pub const CONDITIONS: [&str; 2] = ["memory", "no_memory"];

/// One question's outcome in one condition.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    pub answer: String,
    /// The judge's verdict; `None` when its answer said neither.
    pub correct: Option<bool>,
}

/// One question asked in both conditions.
#[derive(Debug, Clone, PartialEq)]
pub struct Asked {
    pub question: Question,
    /// Keyed by condition (`CONDITIONS`).
    pub graded: BTreeMap<&'static str, Graded>,
}

/// Correct answers out of those asked, per category.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accuracy {
    /// Category → (asked, correct).
    pub by_category: BTreeMap<u32, (u32, u32)>,
}

impl Accuracy {
    /// (asked, correct) over every category.
    pub fn total(&self) -> (u32, u32) {
        self.by_category
            .values()
            .fold((0, 0), |(a, c), (a2, c2)| (a + a2, c + c2))
    }

    /// Adds another set of counts.
    pub fn add(&mut self, other: &Accuracy) {
        for (category, (asked, correct)) in &other.by_category {
            let entry = self.by_category.entry(*category).or_default();
            entry.0 += asked;
            entry.1 += correct;
        }
    }
}

/// Accuracy per condition of a list of asked questions.
pub fn accuracy(asked: &[Asked]) -> BTreeMap<&'static str, Accuracy> {
    let mut out: BTreeMap<&'static str, Accuracy> = BTreeMap::new();
    for a in asked {
        for (condition, graded) in &a.graded {
            let entry = out
                .entry(condition)
                .or_default()
                .by_category
                .entry(a.question.category)
                .or_default();
            entry.0 += 1;
            entry.1 += u32::from(graded.correct == Some(true));
        }
    }
    out
}

/// Asks each of `questions` in both conditions and has each answer judged.
pub async fn ask(
    channel: Channel,
    chat_id: &str,
    conversation: &Conversation,
    questions: &[Question],
    recent: usize,
    answerer: &ChatClient,
    judge: &ChatClient,
) -> Result<Vec<Asked>, Error> {
    let mut prompts = PromptServiceClient::new(channel);
    let turns: Vec<_> = conversation.turns().map(|(_, t)| t).collect();
    let history: Vec<pb::PromptMessage> = turns[turns.len().saturating_sub(recent)..]
        .iter()
        .map(|t| pb::PromptMessage {
            role: if t.speaker == conversation.speaker_a {
                pb::InjectionRole::User
            } else {
                pb::InjectionRole::Assistant
            } as i32,
            name: t.speaker.clone(),
            content: t.text.clone(),
            ..Default::default()
        })
        .collect();
    let story_string = format!(
        "This is a conversation between {} and {}, held over several sessions. Answer the question at the end in a few words, from what you know of their conversations.",
        conversation.speaker_a, conversation.speaker_b
    );
    let mut rendered = BTreeMap::new();
    for (condition, chat) in CONDITIONS.iter().zip([chat_id, ""]) {
        let response = prompts
            .render_prompt(pb::RenderPromptRequest {
                chat_id: chat.to_owned(),
                mode: pb::PromptMode::ChatCompletion as i32,
                story_string: story_string.clone(),
                history: history.clone(),
                continue_last: false,
                extra: Vec::new(),
                ..Default::default()
            })
            .await?
            .into_inner();
        rendered.insert(*condition, openai_messages(&response.messages));
    }
    let mut asked = Vec::new();
    for question in questions {
        let mut graded = BTreeMap::new();
        for condition in CONDITIONS {
            let mut messages = rendered[condition].clone();
            messages.push(json!({
                "role": "user",
                "content": format!("Question: {}\nAnswer in a few words.", question.question),
            }));
            let answer = answerer.complete(&messages, 100, None).await?.text;
            let correct = grade(judge, question, &answer).await?;
            graded.insert(condition, Graded { answer, correct });
        }
        asked.push(Asked {
            question: question.clone(),
            graded,
        });
    }
    Ok(asked)
}

/// RenderPrompt's messages as OpenAI's: the speaker's name put in front of
/// a user or assistant message's text.
fn openai_messages(messages: &[pb::PromptMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| {
            let role = match pb::InjectionRole::try_from(m.role) {
                Ok(pb::InjectionRole::User) => "user",
                Ok(pb::InjectionRole::Assistant) => "assistant",
                _ => "system",
            };
            let content = if m.name.is_empty() || role == "system" {
                m.content.clone()
            } else {
                format!("{}: {}", m.name, m.content)
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

/// The judge's verdict on one answer.
async fn grade(
    judge: &ChatClient,
    question: &Question,
    answer: &str,
) -> Result<Option<bool>, Error> {
    let prompt = format!(
        "You grade answers to questions about a conversation.\n\nQuestion: {}\nGold answer: {}\nCandidate answer: {}\n\nIs the candidate answer correct, that is, does it give the information of the gold answer? Other wording, another date format or a shorter answer naming the same thing are correct; a different or missing fact is not. Reply with JSON only: {{\"correct\": true}} or {{\"correct\": false}}.",
        question.question, question.answer, answer
    );
    let schema = json!({
        "type": "object",
        "properties": {"correct": {"type": "boolean"}},
        "required": ["correct"],
        "additionalProperties": false,
    });
    let reply = judge
        .complete(
            &[json!({"role": "user", "content": prompt})],
            50,
            Some(&schema),
        )
        .await?;
    Ok(verdict(&reply.text))
}

/// `{"correct": true|false}` (also `"true"` as a string), else the first
/// `true` or `false` in the text; `None` when there is neither.
pub fn verdict(text: &str) -> Option<bool> {
    if let Ok(value) = serde_json::from_str::<Value>(text.trim()) {
        match value.get("correct") {
            Some(Value::Bool(b)) => return Some(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => return Some(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => return Some(false),
            _ => {}
        }
    }
    let lower = text.to_ascii_lowercase();
    match (lower.find("true"), lower.find("false")) {
        (Some(t), Some(f)) => Some(t < f),
        (Some(_), None) => Some(true),
        (None, Some(_)) => Some(false),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests;
