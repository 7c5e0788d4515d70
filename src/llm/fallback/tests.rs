use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics::{
    Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};

use super::*;
use crate::llm::dialect::ResponseFormat;
use crate::llm::{AnswerSchema, FailureKind, LlmSetup};

/// Every counter increment, as `name{label=value,...} += n`.
#[derive(Default)]
struct Increments(Arc<Mutex<Vec<String>>>);

struct Recorded {
    key: String,
    into: Arc<Mutex<Vec<String>>>,
}

impl CounterFn for Recorded {
    fn increment(&self, value: u64) {
        self.into
            .lock()
            .unwrap()
            .push(format!("{} += {value}", self.key));
    }
    fn absolute(&self, _: u64) {}
}

impl Recorder for Increments {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        Counter::from_arc(Arc::new(Recorded {
            key: format!("{}{{{}}}", key.name(), labels.join(",")),
            into: self.0.clone(),
        }))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn client() -> LlmClient {
    LlmClient::new(&LlmSetup {
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key: None,
        concurrency: 1,
        timeout: Duration::from_secs(5),
        max_attempts: 1,
        backoff_base: Duration::from_millis(10),
        requests_per_minute: None,
    })
    .unwrap()
}

fn request(output: StructuredOutput, field: MaxTokensField) -> CompletionRequest {
    CompletionRequest {
        model: "m".into(),
        prompt: "p".into(),
        max_tokens: 8,
        temperature: None,
        answer_schema: Some(AnswerSchema {
            name: "answer".into(),
            schema: serde_json::json!({"type": "object"}),
        }),
        structured_output: output,
        max_tokens_field: field,
        purpose: "scene_recap",
    }
}

fn refusal(response_format: bool, max_tokens: bool) -> Failure {
    Failure {
        error: LlmError::Fatal {
            kind: FailureKind::Status(400),
            reason: "HTTP 400 Bad Request: not supported".into(),
        },
        named: Named {
            response_format,
            max_tokens,
        },
    }
}

#[test]
fn each_step_is_counted_once_with_its_labels() {
    let recorder = Increments::default();
    let client = client();
    let auto = request(StructuredOutput::Auto, MaxTokensField::Auto);
    let start = Dialect::default();
    let steps = metrics::with_local_recorder(&recorder, || {
        let first = client.learn(&auto, start, &refusal(true, false)).unwrap();
        // A concurrent request refused in the same form learns nothing new.
        let again = client.learn(&auto, start, &refusal(true, false)).unwrap();
        assert_eq!(again, first);
        let second = client.learn(&auto, first, &refusal(true, false)).unwrap();
        let third = client.learn(&auto, second, &refusal(false, true)).unwrap();
        // Nothing is left to step past.
        assert_eq!(client.learn(&auto, third, &refusal(true, true)), None);
        [first, second, third]
    });
    assert_eq!(steps[0].response_format, ResponseFormat::JsonObject);
    assert_eq!(steps[1].response_format, ResponseFormat::Absent);
    assert_eq!(steps[2].token_field, TokenField::MaxCompletionTokens);
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            "recapd_llm_fallbacks_total{feature=response_format,to=json_object} += 1",
            "recapd_llm_fallbacks_total{feature=response_format,to=none} += 1",
            "recapd_llm_fallbacks_total{feature=max_tokens,to=max_completion_tokens} += 1",
        ]
    );
}

#[test]
fn forced_settings_learn_nothing_and_say_so() {
    let recorder = Increments::default();
    let client = client();
    let forced = request(StructuredOutput::JsonSchema, MaxTokensField::MaxTokens);
    let start = Dialect::default();
    metrics::with_local_recorder(&recorder, || {
        assert_eq!(client.learn(&forced, start, &refusal(true, false)), None);
        assert_eq!(client.learn(&forced, start, &refusal(false, true)), None);
    });
    assert!(recorder.0.lock().unwrap().is_empty());
    assert_eq!(client.inner.learned.dialect("m"), Dialect::default());
    let reason = |failure| explain(&forced, start, failure).reason().to_owned();
    assert!(
        reason(refusal(true, false))
            .ends_with("(llm_structured_output JSON_SCHEMA is forced; AUTO would fall back)"),
    );
    assert!(reason(refusal(false, true)).contains("MAX_TOKENS is forced"));
    // A refusal naming nothing keeps its reason as it is.
    assert_eq!(
        reason(refusal(false, false)),
        "HTTP 400 Bad Request: not supported"
    );
}
