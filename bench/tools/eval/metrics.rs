//! recapd's LLM metrics read from its Prometheus text: samples with their
//! labels, summed by the labels asked for. Metrics or labels a recapd
//! version lacks read as absent, never as an error.

use std::collections::BTreeMap;

/// One sample line: `name{labels} value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// Every sample of the exposition (comments and lines that do not parse
/// are skipped).
pub fn samples(exposition: &str) -> Vec<Sample> {
    exposition.lines().filter_map(sample).collect()
}

fn sample(line: &str) -> Option<Sample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (name, labels, rest) = match line.find('{') {
        Some(open) => {
            let close = line.rfind('}').filter(|&close| close > open)?;
            (
                &line[..open],
                labels(&line[open + 1..close])?,
                &line[close + 1..],
            )
        }
        None => {
            let (name, rest) = line.split_once(' ')?;
            (name, BTreeMap::new(), rest)
        }
    };
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// `a="x",b="y"` (values may hold escaped quotes and commas).
fn labels(text: &str) -> Option<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=')?;
        let after = after.strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(if escaped == 'n' { '\n' } else { escaped });
                    }
                }
                '"' => {
                    end = Some(i);
                    break;
                }
                c => value.push(c),
            }
        }
        let end = end?;
        out.insert(key.trim().trim_start_matches(',').trim().to_owned(), value);
        rest = after[end + 1..].trim_start_matches(',').trim();
    }
    Some(out)
}

/// The sums of `name`'s samples whose labels include every `filter` pair,
/// keyed by the value of label `by` ("" for samples without it). Empty
/// when the metric is absent.
pub fn sum_by(
    samples: &[Sample],
    name: &str,
    filter: &[(&str, &str)],
    by: &str,
) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for s in samples.iter().filter(|s| s.name == name) {
        if filter
            .iter()
            .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        {
            let key = s.labels.get(by).cloned().unwrap_or_default();
            *out.entry(key).or_insert(0.0) += s.value;
        }
    }
    out
}

/// Per job kind (the `kind` label; "" when recapd does not label it): LLM
/// time, requests, tokens in and out, unusable answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindFigures {
    /// `recapd_llm_request_duration_seconds_sum`.
    pub seconds: f64,
    /// `recapd_llm_request_duration_seconds_count`.
    pub requests: f64,
    /// `recapd_llm_tokens_total{direction="in"}`.
    pub tokens_in: f64,
    /// `recapd_llm_tokens_total{direction="out"}`.
    pub tokens_out: f64,
    /// `recapd_llm_attempts_total{outcome="unusable"}`; `None` while
    /// recapd has no such outcome.
    pub unusable_attempts: Option<f64>,
    /// `recapd_llm_attempts_total`, every outcome.
    pub attempts: f64,
}

/// The LLM figures of one scrape, by job kind.
pub fn llm_figures(exposition: &str) -> BTreeMap<String, KindFigures> {
    let all = samples(exposition);
    let mut out: BTreeMap<String, KindFigures> = BTreeMap::new();
    let seconds = "recapd_llm_request_duration_seconds_sum";
    let count = "recapd_llm_request_duration_seconds_count";
    for (kind, v) in sum_by(&all, seconds, &[], "kind") {
        out.entry(kind).or_default().seconds = v;
    }
    for (kind, v) in sum_by(&all, count, &[], "kind") {
        out.entry(kind).or_default().requests = v;
    }
    let tokens = "recapd_llm_tokens_total";
    for (kind, v) in sum_by(&all, tokens, &[("direction", "in")], "kind") {
        out.entry(kind).or_default().tokens_in = v;
    }
    for (kind, v) in sum_by(&all, tokens, &[("direction", "out")], "kind") {
        out.entry(kind).or_default().tokens_out = v;
    }
    let attempts = "recapd_llm_attempts_total";
    for (kind, v) in sum_by(&all, attempts, &[], "kind") {
        out.entry(kind).or_default().attempts = v;
    }
    let unusable_known = all
        .iter()
        .any(|s| s.name == attempts && s.labels.get("outcome").is_some_and(|o| o == "unusable"));
    if unusable_known {
        for figures in out.values_mut() {
            figures.unusable_attempts.get_or_insert(0.0);
        }
        for (kind, v) in sum_by(&all, attempts, &[("outcome", "unusable")], "kind") {
            out.entry(kind).or_default().unusable_attempts = Some(v);
        }
    }
    out
}

#[cfg(test)]
mod tests;
