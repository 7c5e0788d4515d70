//! Stopping a scan before its end: the caller's "stop now?"
//! ([`ScanInput::interrupt`](super::ScanInput::interrupt)), asked between
//! passes, between entries and between key tests, so a scan stops within
//! one key test of the answer turning.
//!
//! The domain reads no clock: the caller decides (a deadline passed, the
//! client went away) and says why with a [`ScanStop`].

use std::cell::Cell;

use crate::DomainError;

/// Why a scan stops before its end: the answer of
/// [`ScanInput::interrupt`](super::ScanInput::interrupt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStop {
    /// The scan's work budget is spent.
    OverBudget,
    /// Nobody waits for the answer any more (its client went away, or the
    /// client's deadline passed).
    Cancelled,
}

impl ScanStop {
    /// The scan's error for this stop: ResourceExhausted in both cases
    /// (a cancelled scan's answer reaches nobody).
    pub fn error(self) -> DomainError {
        DomainError::ResourceExhausted(
            match self {
                ScanStop::OverBudget => "a World Info scan ran past its work budget",
                ScanStop::Cancelled => "the World Info scan was cancelled",
            }
            .to_owned(),
        )
    }
}

/// The caller's question, asked until it first answers a stop; from then
/// on every check fails with that stop, whatever the caller would answer
/// next, so one stop ends the scan even where a check's failure is only
/// seen at the next check.
pub(crate) struct Interrupt<'a> {
    ask: &'a dyn Fn() -> Option<ScanStop>,
    stopped: Cell<Option<ScanStop>>,
}

impl<'a> Interrupt<'a> {
    /// Checks that ask `ask`.
    pub(crate) fn new(ask: &'a dyn Fn() -> Option<ScanStop>) -> Self {
        Interrupt {
            ask,
            stopped: Cell::new(None),
        }
    }

    /// Fails with the stop's error once the caller asked the scan to stop.
    pub(crate) fn check(&self) -> Result<(), DomainError> {
        let stop = match self.stopped.get() {
            Some(stop) => stop,
            None => match (self.ask)() {
                Some(stop) => {
                    self.stopped.set(Some(stop));
                    stop
                }
                None => return Ok(()),
            },
        };
        Err(stop.error())
    }
}
