//! One back-off policy for every retry: a pause that doubles from `min`
//! with each failure, capped at `max`, part of it drawn at random so that
//! callers failing together do not retry together. Pure: the random draw
//! is the caller's, passed in, so a test picks it.

use std::time::Duration;

/// The first pause of a recap job's retries unless the operator sets
/// another (`--llm-backoff-base-ms`): the one place this default is
/// written.
pub const DEFAULT_BASE: Duration = Duration::from_millis(1000);

/// The longest pause between a recap job's attempts, whatever its base.
pub const DEFAULT_MAX: Duration = Duration::from_secs(60);

/// How long to wait before retrying after `failures` failures in a row.
///
/// The pause's ceiling is `min` after one failure, doubling with each
/// further one, never past `max`; `jitter` of it (a share, 0.0..=1.0) is
/// drawn at random: 1.0 ("full jitter") waits anywhere in 0..=ceiling, 0.0
/// waits exactly the ceiling. Out-of-range or NaN shares and draws are
/// clamped into 0.0..=1.0, so no input panics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The ceiling after the first failure.
    pub min: Duration,
    /// The ceiling never exceeded, however many failures.
    pub max: Duration,
    /// The share of each pause drawn at random, 0.0..=1.0.
    pub jitter: f64,
}

impl Default for Backoff {
    /// A recap job's retries: from [`DEFAULT_BASE`] to [`DEFAULT_MAX`],
    /// full jitter.
    fn default() -> Self {
        Backoff {
            min: DEFAULT_BASE,
            max: DEFAULT_MAX,
            jitter: 1.0,
        }
    }
}

impl Backoff {
    /// The most [`Backoff::delay`] can give after `failures` failures: `min`
    /// doubled `failures - 1` times (0 failures count as 1), capped at
    /// `max`.
    pub fn ceiling(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(31);
        self.min
            .checked_mul(1u32 << doublings)
            .map_or(self.max, |ceiling| ceiling.min(self.max))
    }

    /// The pause before the next attempt after `failures` failures in a
    /// row, with `random` a uniform draw in 0.0..1.0 (from the caller's
    /// generator): the [`Backoff::ceiling`] minus the drawn part of its
    /// `jitter` share.
    pub fn delay(&self, failures: u32, random: f64) -> Duration {
        let ceiling = self.ceiling(failures);
        let jitter = unit(self.jitter);
        let factor = unit(1.0 - jitter + jitter * unit(random));
        // Through f64 seconds, which cannot overflow back past the ceiling
        // once clamped to it (Duration::mul_f64 would panic near MAX).
        Duration::try_from_secs_f64(ceiling.as_secs_f64() * factor)
            .map_or(ceiling, |pause| pause.min(ceiling))
    }
}

/// `x` within 0.0..=1.0; NaN is 0.0.
fn unit(x: f64) -> f64 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

#[cfg(test)]
mod tests;
