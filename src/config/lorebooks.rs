//! The limits on lorebooks (SillyTavern World Info files) a tenant keeps;
//! past each, RESOURCE_EXHAUSTED naming the flag.

use std::time::Duration;

use super::duration::{self, BareUnit};
use crate::domain::world_info::book::BookLimits;
use crate::domain::world_info::scan::ScanLimits;
use crate::engine::{LorebookLimits, ScanPool};

/// The lorebook limits, flattened into [`super::Config`].
#[derive(Debug, Clone, clap::Args)]
pub struct LorebookOptions {
    /// Most lorebooks one tenant keeps; importing a new name past it is
    /// refused (replacing a book is not).
    #[arg(long, env = "RECAPD_MAX_LOREBOOKS_PER_TENANT",
          default_value_t = LorebookLimits::default().max_books_per_tenant as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_lorebooks_per_tenant: u64,

    /// Most entries one lorebook holds.
    #[arg(long, env = "RECAPD_MAX_LOREBOOK_ENTRIES",
          default_value_t = LorebookLimits::default().book.max_entries as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_lorebook_entries: u64,

    /// Longest key of an entry (each string of `key` and `keysecondary`),
    /// in bytes.
    #[arg(long, env = "RECAPD_MAX_LOREBOOK_KEY_BYTES",
          default_value_t = LorebookLimits::default().book.max_key_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..=(1024 * 1024)))]
    pub max_lorebook_key_bytes: u64,

    /// Longest `content` of an entry, in bytes.
    #[arg(long, env = "RECAPD_MAX_LOREBOOK_CONTENT_BYTES",
          default_value_t = LorebookLimits::default().book.max_content_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..=(64 * 1024 * 1024)))]
    pub max_lorebook_content_bytes: u64,

    /// Largest lorebook, in bytes with an optional KiB/MiB/GiB suffix:
    /// the length of its file as stored and exported. An import, an entry
    /// put or a lore job's write past it is refused. 1KiB to 1GiB.
    #[arg(long, env = "RECAPD_MAX_LOREBOOK_BYTES", default_value = "16MiB",
          value_parser = parse_lorebook_bytes)]
    pub max_lorebook_bytes: u64,

    /// Most passes one World Info scan may run (recursion, min
    /// activations, delay levels); a scan that needs more is refused with
    /// RESOURCE_EXHAUSTED. SillyTavern's own cap is the
    /// world_info_max_recursion_steps setting.
    #[arg(long, env = "RECAPD_WORLD_INFO_MAX_PASSES",
          default_value_t = LorebookLimits::default().scan.max_passes,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub world_info_max_passes: u32,

    /// Most backtracking steps one World Info regex key may take on one
    /// scanned text; past it the key counts as not matching for the rest
    /// of the scan, and the event is logged and counted
    /// (recapd_world_info_regex_overruns_total).
    #[arg(long, env = "RECAPD_WORLD_INFO_REGEX_STEPS",
          default_value_t = LorebookLimits::default().scan.regex_step_limit,
          value_parser = clap::value_parser!(u64).range(1000..=1_000_000_000))]
    pub world_info_regex_steps: u64,

    /// Most work one test of a World Info regex key with a lookaround or
    /// a backreference may be estimated to take on one scanned text, in
    /// units of about a nanosecond (the regex crate's scans inside
    /// lookarounds and backreferences' comparisons, which the step bound
    /// does not see); past it the key is not run: it counts as not
    /// matching for the rest of the scan, and the event is logged and
    /// counted (recapd_world_info_regex_overruns_total). Keys without
    /// either run in linear time and are never refused.
    #[arg(long, env = "RECAPD_WORLD_INFO_REGEX_WORK",
          default_value_t = LorebookLimits::default().scan.regex_work_limit,
          value_parser = clap::value_parser!(u64).range(1_000_000..=1_000_000_000_000))]
    pub world_info_regex_work: u64,

    /// How long one World Info activation (ScanWorldInfo, RenderPrompt
    /// with a chat) may run before it is stopped and answered
    /// RESOURCE_EXHAUSTED: a duration from 10ms to 10m such as 1s or
    /// 500ms; a bare number is seconds. Counted from when the activation
    /// starts on its scan thread.
    #[arg(long, env = "RECAPD_WORLD_INFO_SCAN_TIMEOUT", value_name = "DURATION",
          default_value = "1s", value_parser = parse_scan_timeout)]
    pub world_info_scan_timeout: Duration,

    /// Threads World Info activations run on (never on the async
    /// workers); more scans wait for a free one.
    #[arg(long, env = "RECAPD_WORLD_INFO_SCAN_THREADS",
          default_value_t = ScanPool::default().threads as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub world_info_scan_threads: u64,

    /// Most World Info activations of one tenant running at once; the
    /// tenant's other scans wait in arrival order, holding no thread.
    #[arg(long, env = "RECAPD_WORLD_INFO_SCANS_PER_TENANT",
          default_value_t = ScanPool::default().per_tenant as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub world_info_scans_per_tenant: u64,
}

/// Parses `--world-info-scan-timeout`: 10 ms to 10 min, a bare number in
/// seconds.
fn parse_scan_timeout(text: &str) -> Result<Duration, String> {
    duration::parse_duration_in(
        text,
        BareUnit::Seconds,
        Duration::from_millis(10)..=duration::seconds(600),
    )
}

impl LorebookOptions {
    /// The limits the engine enforces.
    pub fn limits(&self) -> LorebookLimits {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        LorebookLimits {
            max_books_per_tenant: size(self.max_lorebooks_per_tenant),
            book: BookLimits {
                max_entries: size(self.max_lorebook_entries),
                max_key_bytes: size(self.max_lorebook_key_bytes),
                max_content_bytes: size(self.max_lorebook_content_bytes),
                max_book_bytes: size(self.max_lorebook_bytes),
            },
            scan: ScanLimits {
                max_passes: self.world_info_max_passes,
                regex_step_limit: self.world_info_regex_steps,
                regex_work_limit: self.world_info_regex_work,
            },
            scan_pool: ScanPool {
                timeout: self.world_info_scan_timeout,
                threads: size(self.world_info_scan_threads),
                per_tenant: size(self.world_info_scans_per_tenant),
            },
        }
    }
}

/// Parses `--max-lorebook-bytes`: a size from 1 KiB to 1 GiB.
fn parse_lorebook_bytes(text: &str) -> Result<u64, String> {
    let bytes = super::parse_size(text)?;
    if (1024..=1024 * 1024 * 1024).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(format!("{text:?} is not from 1KiB to 1GiB"))
    }
}

#[cfg(test)]
mod tests;
