//! The one wall clock: what time it is now, as the instants rows store
//! ([`UnixMicros`], [`UnixMillis`]). The engine reads it through a
//! [`WallClock`] given in its options ([`SystemClock`] by default), so a test
//! can hand it a [`ManualClock`] it sets and advances. Timers (sleeps,
//! debounces, leases' wake-ups) stay on tokio's clock, which tests pause.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime};

use crate::domain::time::{UnixMicros, UnixMillis};

/// A source of the current wall-clock instant. Implementations never go
/// backwards on their own (a [`ManualClock`] goes where its test sets it).
pub trait WallClock: Debug + Send + Sync + 'static {
    /// Now, in µs since the epoch.
    fn now(&self) -> UnixMicros;

    /// Now, in whole ms since the epoch (rounded towards the past).
    fn now_ms(&self) -> UnixMillis {
        self.now().to_millis()
    }
}

/// The operating system's wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl WallClock for SystemClock {
    fn now(&self) -> UnixMicros {
        now_us()
    }
}

/// The system clock now, in µs since the epoch (the epoch itself when the
/// system clock reads before it, as ever). For code that is given no
/// [`WallClock`]; the engine reads its own.
pub fn now_us() -> UnixMicros {
    UnixMicros::from_system_time(SystemTime::now()).max(UnixMicros::EPOCH)
}

/// [`now_us`] in whole ms since the epoch.
pub fn now_ms() -> UnixMillis {
    now_us().to_millis()
}

/// A clock a test sets and advances; it stands still otherwise. Clones
/// share the same time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    micros: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock reading `at`.
    pub fn new(at: UnixMicros) -> ManualClock {
        ManualClock {
            micros: Arc::new(AtomicI64::new(at.0)),
        }
    }

    /// A clock reading the system clock's time now.
    pub fn starting_now() -> ManualClock {
        ManualClock::new(now_us())
    }

    /// Sets it to `at` (earlier or later).
    pub fn set(&self, at: UnixMicros) {
        self.micros.store(at.0, Ordering::SeqCst);
    }

    /// Moves it `by` later (saturating at the end of time).
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        let _ = self
            .micros
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |us| {
                Some(us.saturating_add(by))
            });
    }
}

impl WallClock for ManualClock {
    fn now(&self) -> UnixMicros {
        UnixMicros(self.micros.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests;
