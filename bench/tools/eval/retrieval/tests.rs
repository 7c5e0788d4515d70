use super::*;

fn q(evidence: &[&str], found: &[&str]) -> Retrieved {
    Retrieved {
        question: "Q".into(),
        category: 1,
        evidence: evidence.iter().map(|s| (*s).to_owned()).collect(),
        found: found.iter().map(|s| (*s).to_owned()).collect(),
        scores: found.iter().map(|_| (1.0, None)).collect(),
    }
}

#[test]
fn any_and_all_count_the_evidence_among_the_top_k() {
    let one = q(&["D1:2", "D1:5"], &["D1:9", "D1:5", "D1:1", "D1:2"]);
    assert!(!one.any_within(1) && one.any_within(2));
    assert!(!one.all_within(3) && one.all_within(4));
    let none = q(&["D2:1"], &[]);
    let shares = recall_at(&[&one, &none], &[1, 5]);
    assert_eq!(shares, [(0.0, 0.0), (0.5, 0.5)]);
    let run = |conversation: &str, mode: &'static str| ModeRun {
        conversation: conversation.into(),
        mode,
        messages: 9,
        index_seconds: None,
        asked: vec![one.clone(), none.clone()],
        skipped: 1,
        unknown_evidence: 0,
        recall_seconds: 0.01,
    };
    // Two conversations, each in both modes: one summary row per mode.
    let runs = [
        run("a", "keyword"),
        run("a", "hybrid"),
        run("b", "keyword"),
        run("b", "hybrid"),
    ];
    let text = table(&runs, &[1, 5]);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("keyword cat 1 "))
            .count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("hybrid: ")).count(),
        1,
        "{text}"
    );
    assert!(text.contains("keyword cat 1"), "{text}");
    assert!(text.contains("2 skipped"), "{text}");
}
