//! What the client sends for each `llm_structured_output` and
//! `llm_max_tokens_field`, and the `AUTO` fallback against endpoints that
//! refuse `response_format` or `max_tokens`: within one call, remembered
//! per model, logged once; forced settings and other 400s stay fatal.

use serde_json::{Value, json};

use super::{fatal, request};
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};
use crate::common::logs::Logs;
use recapd::domain::settings::{MaxTokensField, StructuredOutput};
use recapd::llm::{AnswerSchema, CompletionRequest, LlmClient};

const ANSWER: &str = r#"{"recap": "They met at the inn."}"#;

fn recap_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"recap": {"type": "string", "minLength": 1}},
        "required": ["recap"],
        "additionalProperties": false,
    })
}

/// A request with an answer schema and these settings.
fn structured(output: StructuredOutput, field: MaxTokensField) -> CompletionRequest {
    CompletionRequest {
        answer_schema: Some(AnswerSchema {
            name: "scene_recap".into(),
            schema: recap_schema(),
        }),
        structured_output: output,
        max_tokens_field: field,
        purpose: "scene_recap",
        ..request("recap the scene at the inn")
    }
}

/// An endpoint that refuses `response_format` of the types given, and
/// answers everything else.
async fn refusing_formats(refused: &'static [&'static str]) -> FakeLlm {
    FakeLlm::start(
        move |seen: &SeenRequest| match seen.response_format_type() {
            Some(kind) if refused.contains(&kind) => Reply::refuse_response_format(kind),
            _ => Reply::answer(ANSWER),
        },
    )
    .await
}

/// An endpoint that refuses `max_tokens` as OpenAI's newer models do.
async fn refusing_max_tokens() -> FakeLlm {
    FakeLlm::start(|seen: &SeenRequest| {
        if seen.max_tokens.is_some() {
            Reply::refuse_max_tokens()
        } else {
            Reply::answer(ANSWER)
        }
    })
    .await
}

fn formats(fake: &FakeLlm) -> Vec<Option<String>> {
    fake.requests()
        .iter()
        .map(|seen| seen.response_format_type().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn the_body_carries_the_schema_as_each_setting_says() {
    let fake = FakeLlm::answering(ANSWER).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let settings = [
        (StructuredOutput::Auto, Some("json_schema")),
        (StructuredOutput::JsonSchema, Some("json_schema")),
        (StructuredOutput::JsonObject, Some("json_object")),
        (StructuredOutput::Off, None),
    ];
    for (output, expected) in settings {
        let answer = client
            .complete(&structured(output, MaxTokensField::Auto))
            .await
            .unwrap();
        assert_eq!(answer.text, ANSWER);
        let seen = fake.requests().pop().unwrap();
        assert_eq!(seen.response_format_type(), expected, "{output:?}");
        assert_eq!(seen.max_tokens, Some(64));
        assert_eq!(seen.max_completion_tokens, None);
        if expected == Some("json_schema") {
            assert_eq!(
                seen.response_format,
                Some(json!({
                    "type": "json_schema",
                    "json_schema": {"name": "scene_recap", "strict": true, "schema": recap_schema()},
                }))
            );
            assert_eq!(seen.schema(), Some(&recap_schema()));
        } else {
            assert_eq!(seen.schema(), None);
        }
    }
    // Without an answer schema, no setting sends a response_format.
    for output in [
        StructuredOutput::Auto,
        StructuredOutput::JsonSchema,
        StructuredOutput::JsonObject,
    ] {
        let mut asked = structured(output, MaxTokensField::Auto);
        asked.answer_schema = None;
        client.complete(&asked).await.unwrap();
        assert_eq!(fake.requests().pop().unwrap().response_format, None);
    }
    // The token limit's field, forced.
    client
        .complete(&structured(
            StructuredOutput::Auto,
            MaxTokensField::MaxCompletionTokens,
        ))
        .await
        .unwrap();
    let seen = fake.requests().pop().unwrap();
    assert_eq!(
        (seen.max_tokens, seen.max_completion_tokens),
        (None, Some(64))
    );
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
}

#[tokio::test]
async fn auto_falls_back_to_json_object_within_one_call_and_remembers_it() {
    let warnings = Logs::capture();
    let fake = refusing_formats(&["json_schema"]).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    assert_eq!(client.complete(&asked).await.unwrap().text, ANSWER);
    assert_eq!(
        formats(&fake),
        [Some("json_schema".into()), Some("json_object".into())]
    );
    // The next call goes straight to json_object: 3 requests, not 4.
    assert_eq!(client.complete(&asked).await.unwrap().text, ANSWER);
    assert_eq!(
        formats(&fake),
        [
            Some("json_schema".into()),
            Some("json_object".into()),
            Some("json_object".into())
        ]
    );
    // Clones share what was learned.
    client.clone().complete(&asked).await.unwrap();
    assert_eq!(fake.requests().len(), 4);
    // Logged once, with the endpoint, the model, the step and the reason.
    let lines = warnings.containing("refused");
    assert_eq!(lines.len(), 1, "{lines:?}");
    for part in [
        "WARN",
        &fake.url(),
        "fake-model",
        "json_schema",
        "to=\"json_object\"",
        "'response_format' of type 'json_schema' is not supported",
    ] {
        assert!(lines[0].contains(part), "{part:?} not in {}", lines[0]);
    }
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
}

#[tokio::test]
async fn auto_ends_without_a_response_format_when_every_one_is_refused() {
    let fake = refusing_formats(&["json_schema", "json_object"]).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    assert_eq!(client.complete(&asked).await.unwrap().text, ANSWER);
    assert_eq!(
        formats(&fake),
        [Some("json_schema".into()), Some("json_object".into()), None]
    );
    client.complete(&asked).await.unwrap();
    assert_eq!(formats(&fake).len(), 4);
    assert_eq!(formats(&fake)[3], None);
}

#[tokio::test]
async fn a_forced_json_schema_that_is_refused_is_fatal() {
    let fake = refusing_formats(&["json_schema"]).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::JsonSchema, MaxTokensField::Auto);
    let reason = fatal(client.complete(&asked).await);
    assert!(
        reason.starts_with(
            "HTTP 400 Bad Request: 'response_format' of type 'json_schema' is not supported"
        ),
        "{reason}"
    );
    assert!(reason.contains("JSON_SCHEMA is forced"), "{reason}");
    assert_eq!(fake.requests().len(), 1);
    // Nothing was learned: AUTO still starts at json_schema.
    client
        .complete(&structured(StructuredOutput::Auto, MaxTokensField::Auto))
        .await
        .unwrap();
    assert_eq!(formats(&fake)[1].as_deref(), Some("json_schema"));
}

#[tokio::test]
async fn auto_switches_to_max_completion_tokens_and_stays_there() {
    let fake = refusing_max_tokens().await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    assert_eq!(client.complete(&asked).await.unwrap().text, ANSWER);
    client.complete(&asked).await.unwrap();
    let limits: Vec<_> = fake
        .requests()
        .iter()
        .map(|seen| (seen.max_tokens, seen.max_completion_tokens))
        .collect();
    assert_eq!(
        limits,
        [(Some(64), None), (None, Some(64)), (None, Some(64))]
    );
    // The response_format was kept as it was.
    assert!(
        formats(&fake)
            .iter()
            .all(|f| f.as_deref() == Some("json_schema"))
    );
    assert!(fake.rejected().is_empty(), "{:?}", fake.rejected());
}

#[tokio::test]
async fn a_forced_max_tokens_that_is_refused_stays_fatal() {
    let fake = refusing_max_tokens().await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::MaxTokens);
    for _ in 0..2 {
        let reason = fatal(client.complete(&asked).await);
        assert!(
            reason.contains("'max_tokens' is not supported with this model"),
            "{reason}"
        );
        assert!(reason.contains("MAX_TOKENS is forced"), "{reason}");
    }
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn both_refusals_are_stepped_past_in_one_call() {
    let fake = FakeLlm::start(|seen: &SeenRequest| {
        if seen.max_tokens.is_some() {
            Reply::refuse_max_tokens()
        } else if let Some(kind) = seen.response_format_type() {
            Reply::refuse_response_format(kind)
        } else {
            Reply::answer(ANSWER)
        }
    })
    .await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    assert_eq!(client.complete(&asked).await.unwrap().text, ANSWER);
    // The first request, then one per step: 4 at most.
    assert_eq!(fake.requests().len(), 4);
    let last = fake.requests().pop().unwrap();
    assert_eq!(
        (last.response_format, last.max_completion_tokens),
        (None, Some(64))
    );
    client.complete(&asked).await.unwrap();
    assert_eq!(fake.requests().len(), 5);
}

#[tokio::test]
async fn a_refusal_naming_nothing_known_stays_fatal_and_teaches_nothing() {
    let fake = FakeLlm::start(|_| Reply::status(400, "prompt is too long")).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    for _ in 0..2 {
        let reason = fatal(client.complete(&asked).await);
        assert_eq!(reason, "HTTP 400 Bad Request: prompt is too long");
    }
    let seen = fake.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        seen.iter()
            .all(|s| s.response_format_type() == Some("json_schema") && s.max_tokens == Some(64))
    );
}

#[tokio::test]
async fn a_request_without_a_schema_is_not_stepped_down() {
    // No response_format was sent, so a 400 mentioning a schema is not a
    // refusal of one.
    let fake = FakeLlm::start(|_| Reply::status(400, "invalid schema for tool 'x'")).await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let mut asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    asked.answer_schema = None;
    fatal(client.complete(&asked).await);
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn each_model_learns_for_itself() {
    // Only "strict-less" refuses json_schema.
    let fake = FakeLlm::start(|seen: &SeenRequest| {
        if seen.model == "strict-less" && seen.response_format_type() == Some("json_schema") {
            Reply::refuse_response_format("json_schema")
        } else {
            Reply::answer(ANSWER)
        }
    })
    .await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let mut asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    asked.model = "strict-less".into();
    client.complete(&asked).await.unwrap();
    asked.model = "fake-model".into();
    client.complete(&asked).await.unwrap();
    asked.model = "strict-less".into();
    client.complete(&asked).await.unwrap();
    let seen: Vec<_> = fake
        .requests()
        .iter()
        .map(|s| (s.model.clone(), s.response_format_type().map(str::to_owned)))
        .collect();
    let pair = |m: &str, f: &str| (m.to_owned(), Some(f.to_owned()));
    assert_eq!(
        seen,
        [
            pair("strict-less", "json_schema"),
            pair("strict-less", "json_object"),
            pair("fake-model", "json_schema"),
            pair("strict-less", "json_object"),
        ]
    );
}

#[tokio::test]
async fn concurrent_calls_learn_a_step_once() {
    let warnings = Logs::capture();
    // Slow refusals, so every call is refused before any learns.
    let fake = FakeLlm::start(|seen: &SeenRequest| match seen.response_format_type() {
        Some("json_schema") => Reply::refuse_response_format("json_schema")
            .after(std::time::Duration::from_millis(200)),
        _ => Reply::answer(ANSWER),
    })
    .await;
    let client = LlmClient::new(&fake.setup()).unwrap();
    let asked = structured(StructuredOutput::Auto, MaxTokensField::Auto);
    let calls = (0..4).map(|_| {
        let client = client.clone();
        let asked = asked.clone();
        async move { client.complete(&asked).await }
    });
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer.unwrap().text, ANSWER);
    }
    let kinds = formats(&fake);
    assert_eq!(kinds.len(), 8, "{kinds:?}");
    assert_eq!(
        kinds
            .iter()
            .filter(|k| k.as_deref() == Some("json_object"))
            .count(),
        4
    );
    assert_eq!(
        warnings.containing("refused").len(),
        1,
        "{:?}",
        warnings.containing("refused")
    );
}
