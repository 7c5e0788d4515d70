//! The fake OpenAI-compatible embeddings endpoint of `recall`, served by
//! this process (recapd is started with `--embedding-url
//! http://EMBED_LISTEN/v1`): `POST /v1/embeddings` answers each request
//! after a fixed latency (0: at once) with one deterministic vector per
//! input.
//!
//! A text's vector is the normalised sum of one pseudo-random vector per
//! word (lowercased, cut at anything but letters and digits), each drawn
//! from the word's hash: texts sharing words point the same way, so a
//! query finds the messages it took its words from, and unrelated texts
//! have the small positive similarities common words give. The same text
//! always has the same vector, in any request.
//!
//! It counts requests, inputs, the most requests in flight at once, and
//! when the first request arrived and the last answer left.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::routing::post;

type Error = Box<dyn std::error::Error>;

/// What the fake counts, and how it answers.
pub struct Fake {
    latency: Duration,
    dims: usize,
    /// When the fake started: the clock of `first_us` and `last_us`.
    epoch: Instant,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    requests: AtomicUsize,
    inputs: AtomicUsize,
    /// µs after `epoch` when the first request arrived (`u64::MAX`: none yet).
    first_us: AtomicU64,
    /// µs after `epoch` when the latest answer was sent.
    last_us: AtomicU64,
}

/// The fake's counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counts {
    pub requests: usize,
    pub inputs: usize,
    pub max_in_flight: usize,
    /// From the first request's arrival to the latest answer, seconds
    /// (0 before any).
    pub busy_seconds: f64,
}

impl Fake {
    /// Serves the fake on `listen`, answering after `latency` with vectors
    /// of `dims` dimensions.
    pub async fn serve(
        listen: std::net::SocketAddr,
        latency: Duration,
        dims: usize,
    ) -> Result<Arc<Fake>, Error> {
        let fake = Arc::new(Fake {
            latency,
            dims: dims.max(1),
            epoch: Instant::now(),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
            inputs: AtomicUsize::new(0),
            first_us: AtomicU64::new(u64::MAX),
            last_us: AtomicU64::new(0),
        });
        let app = axum::Router::new()
            .route("/v1/embeddings", post(embeddings))
            .with_state(fake.clone());
        let listener = tokio::net::TcpListener::bind(listen).await?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok(fake)
    }

    /// The counters now.
    pub fn counts(&self) -> Counts {
        let first = self.first_us.load(Ordering::SeqCst);
        let last = self.last_us.load(Ordering::SeqCst);
        Counts {
            requests: self.requests.load(Ordering::SeqCst),
            inputs: self.inputs.load(Ordering::SeqCst),
            max_in_flight: self.max_in_flight.load(Ordering::SeqCst),
            busy_seconds: if first == u64::MAX || last < first {
                0.0
            } else {
                (last - first) as f64 / 1e6
            },
        }
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }
}

async fn embeddings(
    State(fake): State<Arc<Fake>>,
    Json(body): Json<serde_json::Value>,
) -> impl axum::response::IntoResponse {
    fake.first_us.fetch_min(fake.now_us(), Ordering::SeqCst);
    let now = fake.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    fake.max_in_flight.fetch_max(now, Ordering::SeqCst);
    fake.requests.fetch_add(1, Ordering::SeqCst);
    let texts: Vec<String> = match &body["input"] {
        serde_json::Value::String(one) => vec![one.clone()],
        serde_json::Value::Array(many) => many
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => Vec::new(),
    };
    fake.inputs.fetch_add(texts.len(), Ordering::SeqCst);
    let started = Instant::now();
    let data: Vec<serde_json::Value> = texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            serde_json::json!({"object": "embedding", "index": index, "embedding": vector(text, fake.dims)})
        })
        .collect();
    let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
    let answer = serde_json::json!({
        "object": "list",
        "model": body["model"],
        "data": data,
        "usage": {"prompt_tokens": words, "total_tokens": words}
    });
    let bytes = serde_json::to_vec(&answer).unwrap_or_default();
    // The latency is the whole answer's: computing the vectors and
    // encoding the answer (about 250 KB of JSON for 32 vectors of 384
    // numbers) count in it.
    if let Some(rest) = fake.latency.checked_sub(started.elapsed()) {
        tokio::time::sleep(rest).await;
    }
    fake.in_flight.fetch_sub(1, Ordering::SeqCst);
    fake.last_us.fetch_max(fake.now_us(), Ordering::SeqCst);
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        bytes,
    )
}

/// FNV-1a of a word: the seed of its vector.
fn word_seed(word: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in word.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// SplitMix64's next value.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The fake's vector of `text` (see the module documentation): unit
/// length, `dims` values; a text without words gets a fixed direction.
pub fn vector(text: &str, dims: usize) -> Vec<f32> {
    let mut sum = vec![0f32; dims];
    let lower = text.to_lowercase();
    let mut words = 0;
    for word in lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        words += 1;
        let mut state = word_seed(word);
        for x in &mut sum {
            // Uniform in -1..1: the sum of a few is close enough to normal.
            *x += (splitmix(&mut state) >> 40) as f32 / (1u64 << 23) as f32 - 1.0;
        }
    }
    if words == 0 {
        sum[0] = 1.0;
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    sum.iter_mut().for_each(|x| *x /= norm);
    sum
}

#[cfg(test)]
mod tests;
