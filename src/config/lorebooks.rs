//! The limits on lorebooks (SillyTavern World Info files) a tenant keeps;
//! past each, RESOURCE_EXHAUSTED naming the flag.

use crate::domain::world_info::book::BookLimits;
use crate::domain::world_info::scan::ScanLimits;
use crate::engine::LorebookLimits;

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
            },
            scan: ScanLimits {
                max_passes: self.world_info_max_passes,
                regex_step_limit: self.world_info_regex_steps,
                regex_work_limit: self.world_info_regex_work,
            },
        }
    }
}

#[cfg(test)]
mod tests;
