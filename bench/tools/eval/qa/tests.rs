use super::*;

#[test]
fn reads_the_judges_verdict() {
    assert_eq!(verdict(r#"{"correct": true}"#), Some(true));
    assert_eq!(verdict(r#" {"correct": "false"} "#), Some(false));
    assert_eq!(verdict("The answer is correct: true."), Some(true));
    assert_eq!(
        verdict("false, it names another city (true answer: Paris)"),
        Some(false)
    );
    assert_eq!(verdict("I cannot tell."), None);
}

#[test]
fn accuracy_counts_per_condition_and_category() {
    let q = |category| Question {
        question: "Q".into(),
        answer: "A".into(),
        category,
        evidence_sessions: vec![],
        evidence: vec![],
    };
    let g = |correct| Graded {
        answer: String::new(),
        correct,
    };
    let asked = vec![
        Asked {
            question: q(1),
            graded: BTreeMap::from([("memory", g(Some(true))), ("no_memory", g(Some(false)))]),
        },
        Asked {
            question: q(2),
            graded: BTreeMap::from([("memory", g(None)), ("no_memory", g(Some(true)))]),
        },
    ];
    let by = accuracy(&asked);
    assert_eq!(by["memory"].by_category[&1], (1, 1));
    assert_eq!(by["memory"].by_category[&2], (1, 0));
    assert_eq!(by["memory"].total(), (2, 1));
    assert_eq!(by["no_memory"].total(), (2, 1));
}
