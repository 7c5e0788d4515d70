//! Metrics: names, what each counts, and the Prometheus endpoint. Recording
//! goes through the `metrics` facade, so code that records pays almost
//! nothing when no exporter is installed (tests, `--metrics-listen off`).
//! The text log's field formatting, which escapes control characters, is
//! [`text_log`].

use std::net::SocketAddr;
use std::sync::OnceLock;

use metrics_exporter_prometheus::PrometheusBuilder;

#[cfg(test)]
pub(crate) mod captured_log;
mod otlp_export;
mod otlp_wire;
pub mod spans;
pub mod text_log;
pub mod traces;

/// Counter of finished RPCs, labelled `method` and `code` (gRPC status name).
pub const RPC_REQUESTS: &str = "recapd_rpc_requests_total";
/// Histogram of RPC latency in seconds (to the response headers), by `method`.
pub const RPC_DURATION: &str = "recapd_rpc_duration_seconds";
/// Counter of refreshes, labelled `trigger`.
pub const REFRESHES: &str = "recapd_refreshes_total";
/// Histogram of a refresh's computation time in seconds.
pub const REFRESH_DURATION: &str = "recapd_refresh_duration_seconds";
/// Counter of debounced events folded into an already pending refresh.
pub const DEBOUNCE_COALESCED: &str = "recapd_debounced_events_coalesced_total";
/// Gauge of open `Subscribe` streams.
pub const SUBSCRIBERS: &str = "recapd_subscribers";
/// Counter of injections sent to subscribers.
pub const UPDATES_PUSHED: &str = "recapd_updates_pushed_total";
/// Counter of intermediate revisions a slow subscriber skipped.
pub const UPDATES_SKIPPED: &str = "recapd_updates_skipped_total";
/// Histogram of store commit time in seconds (one transaction).
pub const COMMIT_DURATION: &str = "recapd_store_commit_duration_seconds";
/// Histogram of write groups per store commit: a group is one chat's
/// change, or several events of one chat committed together.
pub const COMMIT_BATCH: &str = "recapd_store_commit_batch_size";
/// Gauge of chats loaded in memory.
pub const CHATS_RESIDENT: &str = "recapd_chats_resident";
/// Gauge: the estimated bytes of the chats held in memory (what
/// `--max-resident-memory` budgets).
pub const RESIDENT_BYTES: &str = "recapd_resident_bytes";
/// Counter of chats dropped from memory to keep within the budget.
pub const CHAT_EVICTIONS: &str = "recapd_chat_evictions_total";
/// Counter of chats read from the store into memory.
pub const CHAT_LOADS: &str = "recapd_chat_loads_total";
/// Histogram of the time to read a chat from the store into memory, in
/// seconds.
pub const CHAT_LOAD_DURATION: &str = "recapd_chat_load_duration_seconds";
/// Counter of chats deleted, labelled `reason` (`api`: DeleteChat,
/// `retention`: `--chat-retention`).
pub const CHATS_DELETED: &str = "recapd_chats_deleted_total";
/// Counter: operations re-run because another replica changed their chat
/// first (shared store).
pub const REPLICA_CONFLICTS: &str = "recapd_replica_conflicts_total";
/// Counter: chats re-read because another replica changed them, by cause
/// (`hint` from a notification, `resync` from a periodic check).
pub const REPLICA_RELOADS: &str = "recapd_replica_reloads_total";

/// Counter of job state changes, labelled `kind` and `state` (the state
/// entered).
pub const JOB_TRANSITIONS: &str = "recapd_job_transitions_total";
/// Gauge of chats with a job ready to run (a due PENDING one, or a RUNNING
/// one whose lease expired) at the runner's latest look at the queue, all
/// tenants (at most 1000 are counted).
pub const JOBS_QUEUED: &str = "recapd_jobs_queued";
/// Counter of automatic jobs dropped because their chat had
/// `--max-jobs-per-chat` non-terminal jobs, labelled `kind`.
pub const JOBS_DROPPED: &str = "recapd_jobs_dropped_total";
/// Counter of what lore jobs did to entries, labelled `outcome`:
/// `created`, `merged`, `compacted`, `deduplicated` (an entry merged into
/// another and removed), `locked` (a change skipped: the entry is locked),
/// `full` (a new entity not written: the book holds `lore_max_entries`),
/// `invalid` (a part of an answer skipped as invalid: an entity, a new
/// name).
pub const LORE_ENTRIES: &str = "recapd_lore_entries_total";
/// Histogram of the recall tier's share of a refresh in seconds (the
/// index brought up to date and searched, the passages counted).
pub const RECALL_TIER_DURATION: &str = "recapd_recall_tier_duration_seconds";
/// Histogram of a Recall call's search in seconds (the query's
/// embedding left out), labelled `vectors` (`true` when vector
/// similarity took part).
pub const RECALL_SEARCH_DURATION: &str = "recapd_recall_search_duration_seconds";
/// Counter of passages index jobs asked vectors for, labelled `outcome`:
/// `indexed` (stored), `discarded` (its text changed or went while the
/// request ran).
pub const RECALL_PASSAGES: &str = "recapd_recall_passages_total";
/// Histogram of the time of one LLM call in seconds (resends after a
/// fallback included), labelled `kind` (the request's purpose, a job
/// kind) and `outcome` (`ok`, `retryable`, `fatal`).
pub const LLM_REQUEST_DURATION: &str = "recapd_llm_request_duration_seconds";
/// Counter of LLM requests (attempts), labelled `kind` and `outcome`.
pub const LLM_ATTEMPTS: &str = "recapd_llm_attempts_total";
/// Counter of tokens the LLM reported (`usage`), labelled `kind` (the
/// request's purpose) and `direction` (`in`: the prompt, `out`: the
/// answer).
pub const LLM_TOKENS: &str = "recapd_llm_tokens_total";
/// Counter of forms an LLM endpoint refused and `AUTO` stepped past,
/// once per endpoint, model and step, labelled `feature`
/// (`response_format`, `max_tokens`) and `to` (`json_object`, `none`,
/// `max_completion_tokens`).
pub const LLM_FALLBACKS: &str = "recapd_llm_fallbacks_total";
/// Gauge of LLM requests in flight.
pub const LLM_IN_FLIGHT: &str = "recapd_llm_requests_in_flight";
/// Histogram of one World Info activation's time (ScanWorldInfo,
/// RenderPrompt with a chat), the books' loading not included.
pub const WORLD_INFO_SCAN_DURATION: &str = "recapd_world_info_scan_duration_seconds";
/// Counter of World Info regex keys that hit their step bound and were
/// taken as not matching.
pub const WORLD_INFO_REGEX_OVERRUNS: &str = "recapd_world_info_regex_overruns_total";
/// Counter of World Info activations stopped before their end, labelled
/// `reason`: `budget` (past `--world-info-scan-timeout`, answered
/// RESOURCE_EXHAUSTED) or `cancelled` (the call went away: its client
/// reset it or its deadline passed).
pub const WORLD_INFO_SCANS_INTERRUPTED: &str = "recapd_world_info_scans_interrupted_total";
/// Counter of token counts made with o200k_base instead of a chat's
/// HUGGING_FACE or LLM_ENDPOINT tokenizer, labelled `reason`: `load` (its
/// file could not be loaded: no `--tokenizers-dir`, a file gone or
/// unreadable; once per counter resolved, at most one load try a minute
/// per name), `encode` (the tokenizer failed on one text), `endpoint` (a
/// `/tokenize` request failed: estimates for a minute), `queue_full` (a
/// text not queued for the endpoint: too many waiting) or `no_endpoint`
/// (LLM_ENDPOINT without `--llm-url`; once per counter resolved).
pub const TOKENIZER_FALLBACKS: &str = "recapd_tokenizer_fallbacks_total";

/// Counter of spans lost before reaching the OpenTelemetry collector,
/// labelled `reason`: `queue_full` (`traces::queue::QUEUE_SPANS` spans, or
/// `QUEUE_BYTES` of them, were already waiting), `export` (the collector did not take their batch:
/// down, refusing, or slower than the export timeout, `--otlp-timeout`;
/// or took it but said it rejected some, OTLP's partial success) or `shutdown`
/// (ended after the export stopped).
pub const TRACE_SPANS_DROPPED: &str = "recapd_trace_spans_dropped_total";

/// Latency buckets shared by the duration histograms, in seconds.
const SECONDS_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];
/// LLM requests take seconds to minutes.
const LLM_BUCKETS: [f64; 10] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0];
const BATCH_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 512.0, 4096.0];

static INSTALLED: OnceLock<SocketAddr> = OnceLock::new();

/// Serves `http://addr/metrics` from this process's metrics. Only the first
/// call in a process installs the exporter; later ones report where it is.
pub fn install(addr: SocketAddr) -> Result<SocketAddr, String> {
    if let Some(existing) = INSTALLED.get() {
        return Ok(*existing);
    }
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        format!(
            "cannot listen on {addr}: {e} (another recapd on this machine? give this one \
             --metrics-listen with another address, or off)"
        )
    })?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    // The exporter binds its own socket: free ours just before (this only
    // exists to report a taken port as a clear error, and to resolve port 0).
    drop(listener);
    let builder = PrometheusBuilder::new()
        .with_http_listener(bound)
        .set_buckets(&SECONDS_BUCKETS)
        .and_then(|b| {
            b.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(COMMIT_BATCH.into()),
                &BATCH_BUCKETS,
            )
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(LLM_REQUEST_DURATION.into()),
                &LLM_BUCKETS,
            )
        })
        .map_err(|e| e.to_string())?;
    builder
        .install()
        .map_err(|e| format!("cannot serve metrics on {bound}: {e}"))?;
    describe();
    let _ = INSTALLED.set(bound);
    Ok(bound)
}

/// A metric handle registered at its first use once the exporter is
/// installed, then used as it is: recording through it skips the registry
/// lookup (hashing the name and labels, a shard lock) a `metrics` macro
/// pays on every call. Registering at first use, not before, keeps the
/// exposition as the macros leave it: a series appears when first recorded.
///
/// Before [`install`] (tests, `--metrics-listen off`) the handle is not
/// kept: a handle taken from the no-op recorder would stay no-op after an
/// install, so each use registers anew, exactly as a macro does (and a
/// local recorder of a test still sees the record).
#[derive(Debug)]
pub struct Registered<T> {
    handle: OnceLock<T>,
}

impl<T> Registered<T> {
    /// An empty cell; `const` so that it can be a `static`.
    pub const fn new() -> Self {
        Registered {
            handle: OnceLock::new(),
        }
    }

    /// Calls `record` with the handle, registered by `register` (which
    /// must always name the same metric and labels) when not kept yet.
    pub fn with(&self, register: impl FnOnce() -> T, record: impl FnOnce(&T)) {
        if INSTALLED.get().is_some() {
            record(self.handle.get_or_init(register));
        } else {
            record(&register());
        }
    }
}

impl<T> Default for Registered<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// A counter without labels, named once, registered as [`Registered`]
/// says: `static PUSHED: NamedCounter = NamedCounter::new(UPDATES_PUSHED)`.
#[derive(Debug)]
pub struct NamedCounter {
    name: &'static str,
    handle: Registered<metrics::Counter>,
}

impl NamedCounter {
    /// The counter `name`.
    pub const fn new(name: &'static str) -> Self {
        NamedCounter {
            name,
            handle: Registered::new(),
        }
    }

    /// Adds `by` (0 shows the series at 0, as `counter!(..).increment(0)`).
    pub fn increment(&self, by: u64) {
        self.handle.with(
            || metrics::counter!(self.name),
            |counter| counter.increment(by),
        );
    }
}

fn describe() {
    metrics::describe_histogram!(
        WORLD_INFO_SCAN_DURATION,
        "Time of one World Info activation."
    );
    metrics::describe_counter!(
        WORLD_INFO_REGEX_OVERRUNS,
        "World Info regex keys that hit their step bound (taken as not matching)."
    );
    metrics::describe_counter!(
        WORLD_INFO_SCANS_INTERRUPTED,
        "World Info activations stopped before their end, by reason (budget, cancelled)."
    );
    metrics::describe_counter!(
        JOB_TRANSITIONS,
        "Job state changes by kind and state entered."
    );
    metrics::describe_gauge!(
        JOBS_QUEUED,
        "Chats with a job ready to run at the runner's latest look."
    );
    metrics::describe_histogram!(
        RECALL_TIER_DURATION,
        metrics::Unit::Seconds,
        "The recall tier's share of one refresh."
    );
    metrics::describe_histogram!(
        RECALL_SEARCH_DURATION,
        metrics::Unit::Seconds,
        "One Recall search (the query's embedding left out), by whether vectors took part."
    );
    metrics::describe_counter!(
        RECALL_PASSAGES,
        "Passages index jobs asked vectors for, by outcome (indexed, discarded)."
    );
    metrics::describe_counter!(
        LORE_ENTRIES,
        "Lorebook entries lore jobs created, merged, compacted or deduplicated, and changes skipped (locked entry, full book, invalid entity)."
    );
    metrics::describe_counter!(
        JOBS_DROPPED,
        "Automatic jobs dropped at --max-jobs-per-chat, by kind."
    );
    metrics::describe_histogram!(
        LLM_REQUEST_DURATION,
        metrics::Unit::Seconds,
        "LLM call time (fallback resends included) by kind and outcome."
    );
    metrics::describe_counter!(LLM_ATTEMPTS, "LLM requests by job kind and outcome.");
    metrics::describe_counter!(
        LLM_TOKENS,
        "Tokens the LLM reported, by kind and direction."
    );
    metrics::describe_counter!(
        LLM_FALLBACKS,
        "Request forms an LLM endpoint refused and AUTO stepped past (once per endpoint, model and step), by feature and the form used instead."
    );
    metrics::describe_gauge!(LLM_IN_FLIGHT, "LLM requests in flight.");
    metrics::describe_counter!(
        RPC_REQUESTS,
        "Finished RPCs by method and gRPC status code."
    );
    metrics::describe_histogram!(
        RPC_DURATION,
        metrics::Unit::Seconds,
        "RPC latency to the response headers."
    );
    metrics::describe_counter!(REFRESHES, "Refreshes by trigger.");
    metrics::describe_histogram!(
        REFRESH_DURATION,
        metrics::Unit::Seconds,
        "Time to compute one refresh."
    );
    metrics::describe_counter!(
        DEBOUNCE_COALESCED,
        "Debounced events folded into a pending refresh."
    );
    metrics::describe_gauge!(SUBSCRIBERS, "Open Subscribe streams.");
    metrics::describe_counter!(UPDATES_PUSHED, "Injections sent to subscribers.");
    metrics::describe_counter!(
        UPDATES_SKIPPED,
        "Intermediate revisions slow subscribers skipped."
    );
    metrics::describe_histogram!(
        COMMIT_DURATION,
        metrics::Unit::Seconds,
        "Store commit (one transaction) time."
    );
    metrics::describe_histogram!(COMMIT_BATCH, "Client operations per store commit.");
    metrics::describe_counter!(
        REPLICA_CONFLICTS,
        "Operations re-run because another replica changed their chat first."
    );
    metrics::describe_counter!(
        REPLICA_RELOADS,
        "Chats re-read because another replica changed them, by cause."
    );
    metrics::describe_gauge!(CHATS_RESIDENT, "Chats loaded in memory.");
    metrics::describe_gauge!(
        RESIDENT_BYTES,
        "Estimated bytes of the chats held in memory (budgeted by --max-resident-memory)."
    );
    metrics::describe_counter!(
        CHAT_EVICTIONS,
        "Chats dropped from memory to keep within --max-resident-memory."
    );
    metrics::describe_counter!(CHAT_LOADS, "Chats read from the store into memory.");
    metrics::describe_counter!(
        TRACE_SPANS_DROPPED,
        "Spans lost before the OpenTelemetry collector, by reason (queue_full, export, shutdown)."
    );
    metrics::describe_counter!(
        CHATS_DELETED,
        "Chats deleted, by reason (api: DeleteChat, retention: --chat-retention)."
    );
    metrics::describe_histogram!(
        CHAT_LOAD_DURATION,
        "Time to read a chat from the store into memory, in seconds."
    );
}
