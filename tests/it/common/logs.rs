//! The log lines recapd writes while a test runs, in recapd's text format,
//! kept in memory for the test to read.
//!
//! The capture is this thread's default subscriber: the test must run on a
//! current-thread runtime (`#[tokio::test]`'s default), where the server's
//! tasks, and so its log lines, run on the test's thread.

use std::sync::{Arc, Mutex, OnceLock};

use tracing::Dispatch;
use tracing::subscriber::DefaultGuard;

/// A dispatcher kept for the process's life, wanting INFO and above and
/// writing them nowhere. While a single dispatcher lives, tracing judges a
/// log site's interest, once, by the dispatcher of the thread that reaches
/// it first: a parallel test without a capture would leave that site
/// unwanted for good, and a capture would miss its lines. With two alive,
/// every live one is asked.
static WANTS_INFO: OnceLock<Dispatch> = OnceLock::new();

/// Captured log lines; capturing stops when this is dropped.
pub struct Logs {
    lines: Arc<Mutex<Vec<u8>>>,
    _guard: DefaultGuard,
}

/// Appends what it is given to the shared buffer.
#[derive(Clone)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    /// Captures this thread's log lines (INFO and above, as recapd logs by
    /// default) from now on.
    pub fn capture() -> Logs {
        WANTS_INFO.get_or_init(|| {
            Dispatch::new(
                tracing_subscriber::fmt()
                    .with_max_level(tracing::Level::INFO)
                    .with_writer(std::io::sink)
                    .finish(),
            )
        });
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Sink(lines.clone());
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || sink.clone())
            .finish();
        Logs {
            lines,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// Every line so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.lines.lock().unwrap()).into_owned()
    }

    /// The lines that contain `text`.
    pub fn containing(&self, text: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|line| line.contains(text))
            .map(str::to_owned)
            .collect()
    }

    /// The lines logged under error id `id` (the `error_id` field).
    pub fn with_id(&self, id: &str) -> Vec<String> {
        self.containing(&format!("error_id={id}"))
    }
}
