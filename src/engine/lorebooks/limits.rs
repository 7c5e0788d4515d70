//! The operator's limits on lorebooks and on World Info scans, as the
//! engine enforces them (the flags are `config::lorebooks`).

use std::time::Duration;

use crate::domain::world_info::book::BookLimits;
use crate::domain::world_info::scan::ScanLimits;

/// The operator's limits on lorebooks (`--max-lorebooks-per-tenant`,
/// `--max-lorebook-entries`, `--max-lorebook-key-bytes`,
/// `--max-lorebook-content-bytes`, `--max-lorebook-bytes`); past them
/// RESOURCE_EXHAUSTED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LorebookLimits {
    /// Most books one tenant keeps.
    pub max_books_per_tenant: usize,
    /// Entries per book, bytes per key, bytes of content, bytes of the
    /// whole file.
    pub book: BookLimits,
    /// One World Info scan's bounds: passes, and the backtracking steps
    /// and estimated work of a regex key per haystack.
    pub scan: ScanLimits,
    /// Where scans run and for how long: see [`ScanPool`].
    pub scan_pool: ScanPool,
}

/// How World Info activations share the machine
/// (`--world-info-scan-timeout`, `--world-info-scan-threads`,
/// `--world-info-scans-per-tenant`): each runs on one of `threads`
/// blocking threads, never on an async worker, at most `per_tenant` of one
/// tenant at once (the others wait in arrival order), and stops with
/// RESOURCE_EXHAUSTED once it has run for `timeout`. Every field is at
/// least 1 (a zero would refuse or stall every scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanPool {
    /// One activation's time budget, counted from when it starts on its
    /// thread (waiting for a thread or for the chat is not counted).
    pub timeout: Duration,
    /// Most activations running at once, all tenants.
    pub threads: usize,
    /// Most activations of one tenant running at once.
    pub per_tenant: usize,
}

impl Default for ScanPool {
    fn default() -> Self {
        ScanPool {
            timeout: Duration::from_secs(1),
            threads: 2,
            per_tenant: 1,
        }
    }
}

impl Default for LorebookLimits {
    fn default() -> Self {
        LorebookLimits {
            max_books_per_tenant: 1_000,
            book: BookLimits {
                max_entries: 10_000,
                max_key_bytes: 4 * 1024,
                max_content_bytes: 1024 * 1024,
                max_book_bytes: 16 * 1024 * 1024,
            },
            scan: ScanLimits::default(),
            scan_pool: ScanPool::default(),
        }
    }
}
