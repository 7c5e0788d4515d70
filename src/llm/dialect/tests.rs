use super::*;

fn dialect(response_format: ResponseFormat, token_field: TokenField) -> Dialect {
    Dialect {
        response_format,
        token_field,
    }
}

#[test]
fn forced_settings_win_and_auto_follows_what_was_learned() {
    let learned = dialect(ResponseFormat::JsonObject, TokenField::MaxCompletionTokens);
    assert_eq!(
        Dialect::resolve(StructuredOutput::Auto, MaxTokensField::Auto, learned),
        learned
    );
    assert_eq!(
        Dialect::resolve(
            StructuredOutput::JsonSchema,
            MaxTokensField::MaxTokens,
            learned
        ),
        dialect(ResponseFormat::JsonSchema, TokenField::MaxTokens)
    );
    assert_eq!(
        Dialect::resolve(StructuredOutput::Off, MaxTokensField::Auto, learned),
        dialect(ResponseFormat::Absent, TokenField::MaxCompletionTokens)
    );
    assert_eq!(
        Dialect::resolve(
            StructuredOutput::JsonObject,
            MaxTokensField::MaxCompletionTokens,
            Dialect::default()
        ),
        dialect(ResponseFormat::JsonObject, TokenField::MaxCompletionTokens)
    );
    assert_eq!(
        Dialect::default(),
        dialect(ResponseFormat::JsonSchema, TokenField::MaxTokens)
    );
}

#[test]
fn refusals_step_down_one_form_at_a_time_and_stop() {
    let learned = Learned::default();
    let start = learned.dialect("m");
    let lesson = learned
        .refused("m", Feature::ResponseFormat, start)
        .unwrap();
    assert!(lesson.first);
    assert_eq!(lesson.dialect.response_format, ResponseFormat::JsonObject);
    assert_eq!(learned.dialect("m"), lesson.dialect);
    let lesson = learned
        .refused("m", Feature::ResponseFormat, lesson.dialect)
        .unwrap();
    assert_eq!(lesson.dialect.response_format, ResponseFormat::Absent);
    assert_eq!(
        learned.refused("m", Feature::ResponseFormat, lesson.dialect),
        None
    );
    let lesson = learned
        .refused("m", Feature::MaxTokens, learned.dialect("m"))
        .unwrap();
    assert_eq!(
        lesson.dialect,
        dialect(ResponseFormat::Absent, TokenField::MaxCompletionTokens)
    );
    assert_eq!(
        learned.refused("m", Feature::MaxTokens, lesson.dialect),
        None
    );
    // Another model knows nothing of it.
    assert_eq!(learned.dialect("other"), Dialect::default());
}

#[test]
fn a_step_learned_concurrently_is_learned_once() {
    let learned = Learned::default();
    let sent = Dialect::default();
    let first = learned.refused("m", Feature::ResponseFormat, sent).unwrap();
    // A request sent before the first refusal was learned is refused too.
    let second = learned.refused("m", Feature::ResponseFormat, sent).unwrap();
    assert!(first.first);
    assert!(!second.first);
    assert_eq!(second.dialect, first.dialect);
    // One that was sent in json_object meanwhile steps on to none; a late
    // json_schema refusal then keeps none rather than going back up.
    let third = learned
        .refused("m", Feature::ResponseFormat, first.dialect)
        .unwrap();
    assert!(third.first);
    let late = learned.refused("m", Feature::ResponseFormat, sent).unwrap();
    assert!(!late.first);
    assert_eq!(late.dialect.response_format, ResponseFormat::Absent);
}

#[test]
fn labels_are_the_metric_values() {
    assert_eq!(ResponseFormat::JsonObject.label(), "json_object");
    assert_eq!(ResponseFormat::Absent.label(), "none");
    assert_eq!(
        TokenField::MaxCompletionTokens.label(),
        "max_completion_tokens"
    );
    assert_eq!(Feature::ResponseFormat.label(), "response_format");
    assert_eq!(Feature::MaxTokens.label(), "max_tokens");
}
