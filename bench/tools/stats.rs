//! Latency samples and their summary line.

use std::time::Duration;

/// Median, p99 and max of a set of latencies, plus a rate.
pub struct Summary {
    pub count: usize,
    pub per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

pub fn summarize(mut samples: Vec<Duration>, elapsed: Duration) -> Summary {
    samples.sort_unstable();
    let at = |q: f64| -> Duration {
        if samples.is_empty() {
            return Duration::ZERO;
        }
        let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[index]
    };
    Summary {
        count: samples.len(),
        per_second: samples.len() as f64 / elapsed.as_secs_f64().max(1e-9),
        p50: at(0.50),
        p99: at(0.99),
        max: samples.last().copied().unwrap_or_default(),
    }
}

impl Summary {
    /// One machine-readable line: `key=value` pairs, latencies in ms.
    pub fn line(&self, label: &str) -> String {
        format!(
            "{label} count={} per_second={:.1} p50_ms={:.3} p99_ms={:.3} max_ms={:.3}",
            self.count,
            self.per_second,
            self.p50.as_secs_f64() * 1e3,
            self.p99.as_secs_f64() * 1e3,
            self.max.as_secs_f64() * 1e3,
        )
    }
}
