//! Wall-clock instants as stored in rows: whole milliseconds or
//! microseconds since the Unix epoch, as a type rather than a bare `i64`,
//! so that a millisecond is never read as a microsecond and an instant is
//! never added to another. Serialized as the bare number (serde
//! transparent), so a stored row reads the same either way.
//!
//! Pure: nothing here reads the clock. The engine's clock gives the
//! current instant ([`UnixMicros::from_system_time`] turns a
//! [`SystemTime`] into one).

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// An instant in whole milliseconds since the Unix epoch (negative before
/// it). Ordered as time is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct UnixMillis(pub i64);

/// An instant in whole microseconds since the Unix epoch (negative before
/// it). Ordered as time is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct UnixMicros(pub i64);

impl UnixMicros {
    /// The epoch itself.
    pub const EPOCH: UnixMicros = UnixMicros(0);

    /// `time` in µs since the epoch; saturating at the ends of `i64`
    /// (about 292,000 years either way).
    pub fn from_system_time(time: SystemTime) -> UnixMicros {
        match time.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(after) => UnixMicros(i64::try_from(after.as_micros()).unwrap_or(i64::MAX)),
            Err(before) => {
                UnixMicros(i64::try_from(before.duration().as_micros()).map_or(i64::MIN, |us| -us))
            }
        }
    }

    /// The same instant in whole milliseconds, rounded towards the past.
    pub fn to_millis(self) -> UnixMillis {
        UnixMillis(self.0.div_euclid(1000))
    }

    /// `self` moved `by` later, saturating at the end of time.
    pub fn saturating_add(self, by: Duration) -> UnixMicros {
        UnixMicros(
            self.0
                .saturating_add(i64::try_from(by.as_micros()).unwrap_or(i64::MAX)),
        )
    }

    /// `self` moved `by` earlier, saturating at the start of time.
    pub fn saturating_sub(self, by: Duration) -> UnixMicros {
        UnixMicros(
            self.0
                .saturating_sub(i64::try_from(by.as_micros()).unwrap_or(i64::MAX)),
        )
    }

    /// How long after `earlier` this is; zero when it is not after.
    pub fn since(self, earlier: UnixMicros) -> Duration {
        let micros = self.0.saturating_sub(earlier.0);
        Duration::from_micros(u64::try_from(micros).unwrap_or(0))
    }
}

impl UnixMillis {
    /// The epoch itself.
    pub const EPOCH: UnixMillis = UnixMillis(0);

    /// The same instant in microseconds, saturating at the ends of `i64`.
    pub fn to_micros(self) -> UnixMicros {
        UnixMicros(self.0.saturating_mul(1000))
    }

    /// `self` moved `by` later, saturating at the end of time.
    pub fn saturating_add(self, by: Duration) -> UnixMillis {
        UnixMillis(
            self.0
                .saturating_add(i64::try_from(by.as_millis()).unwrap_or(i64::MAX)),
        )
    }

    /// `self` moved `by` earlier, saturating at the start of time.
    pub fn saturating_sub(self, by: Duration) -> UnixMillis {
        UnixMillis(
            self.0
                .saturating_sub(i64::try_from(by.as_millis()).unwrap_or(i64::MAX)),
        )
    }

    /// How long after `earlier` this is; zero when it is not after.
    pub fn since(self, earlier: UnixMillis) -> Duration {
        let millis = self.0.saturating_sub(earlier.0);
        Duration::from_millis(u64::try_from(millis).unwrap_or(0))
    }
}

impl From<UnixMillis> for UnixMicros {
    fn from(instant: UnixMillis) -> UnixMicros {
        instant.to_micros()
    }
}

impl From<UnixMicros> for UnixMillis {
    fn from(instant: UnixMicros) -> UnixMillis {
        instant.to_millis()
    }
}

impl From<UnixMicros> for i64 {
    fn from(instant: UnixMicros) -> i64 {
        instant.0
    }
}

impl From<UnixMillis> for i64 {
    fn from(instant: UnixMillis) -> i64 {
        instant.0
    }
}

#[cfg(test)]
mod tests;
