use super::*;
use crate::config::Cli;

fn limits(args: &[&str]) -> Result<LorebookLimits, clap::Error> {
    Cli::from_args(std::iter::once("recapd").chain(args.iter().copied()))
        .map(|cli| cli.config.lorebooks.limits())
}

#[test]
fn the_lorebook_flags_default_to_the_engines_limits_and_set_each_one() {
    assert_eq!(limits(&[]).unwrap(), LorebookLimits::default());
    let set = limits(&[
        "--max-lorebooks-per-tenant",
        "3",
        "--max-lorebook-entries",
        "4",
        "--max-lorebook-key-bytes",
        "5",
        "--max-lorebook-content-bytes",
        "6",
        "--max-lorebook-bytes",
        "2MiB",
        "--world-info-max-passes",
        "7",
        "--world-info-regex-steps",
        "8000",
        "--world-info-scan-timeout",
        "250ms",
        "--world-info-scan-threads",
        "3",
        "--world-info-scans-per-tenant",
        "2",
        "--world-info-regex-work",
        "9000000",
    ])
    .unwrap();
    assert_eq!(
        set,
        LorebookLimits {
            max_books_per_tenant: 3,
            book: BookLimits {
                max_entries: 4,
                max_key_bytes: 5,
                max_content_bytes: 6,
                max_book_bytes: 2 * 1024 * 1024,
            },
            scan: ScanLimits {
                max_passes: 7,
                regex_step_limit: 8000,
                regex_work_limit: 9_000_000,
            },
            scan_pool: ScanPool {
                timeout: Duration::from_millis(250),
                threads: 3,
                per_tenant: 2,
            },
        }
    );
    for zero in [
        "--max-lorebooks-per-tenant",
        "--max-lorebook-entries",
        "--max-lorebook-key-bytes",
        "--max-lorebook-content-bytes",
        "--max-lorebook-bytes",
        "--world-info-max-passes",
        "--world-info-scan-timeout",
        "--world-info-scan-threads",
        "--world-info-scans-per-tenant",
        "--world-info-regex-work",
    ] {
        assert!(limits(&[zero, "0"]).is_err(), "{zero} 0");
    }
    // The scan timeout is a duration: a bare number is seconds.
    assert_eq!(
        limits(&["--world-info-scan-timeout", "2"])
            .unwrap()
            .scan_pool
            .timeout,
        Duration::from_secs(2)
    );
}

#[test]
fn the_lorebook_size_takes_units_and_refuses_out_of_range() {
    assert_eq!(limits(&[]).unwrap().book.max_book_bytes, 16 * 1024 * 1024);
    assert_eq!(
        limits(&["--max-lorebook-bytes", "64KiB"])
            .unwrap()
            .book
            .max_book_bytes,
        64 * 1024
    );
    for bad in ["1000", "2GiB", "lots"] {
        assert!(limits(&["--max-lorebook-bytes", bad]).is_err(), "{bad}");
    }
}
