use super::*;

const TODAY: &str = r#"# HELP recapd_llm_attempts_total LLM requests by job kind and outcome.
# TYPE recapd_llm_attempts_total counter
recapd_llm_attempts_total{kind="scene_recap",outcome="ok"} 3
recapd_llm_attempts_total{kind="scene_recap",outcome="retryable"} 1
recapd_llm_attempts_total{kind="detect_scene_break",outcome="ok"} 2
recapd_llm_request_duration_seconds_bucket{outcome="ok",le="0.1"} 1
recapd_llm_request_duration_seconds_sum{outcome="ok"} 12.5
recapd_llm_request_duration_seconds_count{outcome="ok"} 6
recapd_llm_tokens_total{direction="in"} 900
recapd_llm_tokens_total{direction="out"} 80
"#;

#[test]
fn metrics_without_a_kind_label_go_under_the_empty_kind() {
    let figures = llm_figures(TODAY);
    assert_eq!(figures[""].seconds, 12.5);
    assert_eq!(figures[""].requests, 6.0);
    assert_eq!(figures[""].tokens_in, 900.0);
    assert_eq!(figures["scene_recap"].attempts, 4.0);
    assert_eq!(figures["detect_scene_break"].attempts, 2.0);
    // No `unusable` outcome in this recapd: absent, not zero.
    assert_eq!(figures["scene_recap"].unusable_attempts, None);
}

#[test]
fn labelled_metrics_split_by_kind() {
    let text = r#"recapd_llm_attempts_total{kind="running_recap",outcome="unusable"} 2
recapd_llm_attempts_total{kind="scene_recap",outcome="ok"} 1
recapd_llm_request_duration_seconds_sum{kind="running_recap",outcome="ok"} 4
recapd_llm_request_duration_seconds_count{kind="running_recap",outcome="ok"} 2
recapd_llm_tokens_total{kind="running_recap",direction="out"} 30
recapd_llm_tokens_total{direction="out",kind="scene_recap"} 7
"#;
    let figures = llm_figures(text);
    assert_eq!(figures["running_recap"].unusable_attempts, Some(2.0));
    assert_eq!(figures["scene_recap"].unusable_attempts, Some(0.0));
    assert_eq!(figures["running_recap"].seconds, 4.0);
    assert_eq!(figures["scene_recap"].tokens_out, 7.0);
    assert!(!figures.contains_key(""));
}

#[test]
fn label_values_may_hold_quotes_and_commas() {
    let s = samples("m{a=\"x,\\\"y\",b=\"z\"} 1.5\nbroken{ 3\nback} to{ 4\n");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].labels["a"], "x,\"y");
    assert_eq!(s[0].labels["b"], "z");
    assert_eq!(s[0].value, 1.5);
}
