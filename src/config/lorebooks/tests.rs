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
        "--world-info-max-passes",
        "7",
        "--world-info-regex-steps",
        "8000",
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
            },
            scan: ScanLimits {
                max_passes: 7,
                regex_step_limit: 8000,
                regex_work_limit: 9_000_000,
            },
        }
    );
    for zero in [
        "--max-lorebooks-per-tenant",
        "--max-lorebook-entries",
        "--max-lorebook-key-bytes",
        "--max-lorebook-content-bytes",
        "--world-info-max-passes",
        "--world-info-regex-work",
    ] {
        assert!(limits(&[zero, "0"]).is_err(), "{zero} 0");
    }
}
