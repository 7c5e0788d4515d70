//! Durations on the command line: every duration flag and `RECAPD_*`
//! variable is read by [`parse_duration`], one parser for all of them, so
//! `120s`, `5m`, `7d` and `250ms` mean the same wherever they are given.
//! A bare number keeps the unit the flag had before units were accepted
//! (seconds for most, milliseconds for a flag named `*-ms`), so no
//! deployment's configuration changes meaning.

use std::ops::RangeInclusive;
use std::time::Duration;

/// What a bare number (no unit) means for one flag: the unit the flag has
/// always been documented in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareUnit {
    /// A bare number is seconds (`--llm-timeout 120`).
    Seconds,
    /// A bare number is milliseconds (`--llm-backoff-base-ms 250`).
    Milliseconds,
}

impl BareUnit {
    fn duration(self, count: u64) -> Duration {
        match self {
            BareUnit::Seconds => Duration::from_secs(count),
            BareUnit::Milliseconds => Duration::from_millis(count),
        }
    }
}

/// Parses a duration: a number with a unit as `humantime` reads it (`ms`,
/// `s`, `m`, `h`, `d`, `w` and their long forms, several terms allowed as
/// in `1h 30m`), or a bare number of `bare` units. Errors give an example
/// and never panic; a value past `u64` seconds is refused.
pub fn parse_duration(text: &str, bare: BareUnit) -> Result<Duration, String> {
    let text = text.trim();
    // A bare number as Rust's integer parsing (clap's before) reads it:
    // digits, after at most one `+`.
    let digits = text.strip_prefix('+').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u64>()
            .map(|count| bare.duration(count))
            .map_err(|_| format!("{text:?} is too large"));
    }
    humantime::parse_duration(text).map_err(|error| {
        format!("{text:?} is not a duration ({error}); write a number with a unit, e.g. 250ms, 120s, 5m, 12h or 7d")
    })
}

/// `count` seconds, for the bounds of a flag's range.
pub const fn seconds(count: u64) -> Duration {
    Duration::from_secs(count)
}

/// [`parse_duration`], then refuses a value outside `range` with a message
/// giving the bounds in the flag's units.
pub fn parse_duration_in(
    text: &str,
    bare: BareUnit,
    range: RangeInclusive<Duration>,
) -> Result<Duration, String> {
    let duration = parse_duration(text, bare)?;
    if range.contains(&duration) {
        Ok(duration)
    } else {
        Err(format!(
            "{:?} is outside the range {} to {}",
            text.trim(),
            humantime::format_duration(*range.start()),
            humantime::format_duration(*range.end())
        ))
    }
}

#[cfg(test)]
mod tests;
