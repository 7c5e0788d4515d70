//! Log capture for tests: what a tracing subscriber writes, kept in memory
//! so that a test can read which lines an operation logged.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// A writer to hand a test's tracing subscriber (`with_writer(move ||
/// log.clone())`): every clone appends to the same buffer, which
/// [`CapturedLog::text`] reads.
#[derive(Clone, Default)]
pub(crate) struct CapturedLog(Arc<Mutex<Vec<u8>>>);

impl CapturedLog {
    /// Everything written so far.
    pub(crate) fn text(&self) -> String {
        let bytes = self.0.lock().expect("no test panics holding it").clone();
        String::from_utf8(bytes).expect("tracing writes UTF-8")
    }
}

impl Write for CapturedLog {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .expect("no test panics holding it")
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `f` and answers its value with the log lines written meanwhile, in
/// tracing's text format without colours.
pub(crate) fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    let log = CapturedLog::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let value = tracing::subscriber::with_default(subscriber, f);
    (value, log.text())
}
