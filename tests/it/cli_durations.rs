//! The duration flags on the real binary: a number with a unit is read by
//! every one of them, from a flag or a `RECAPD_*` variable, a bare number
//! keeps the unit the flag always had (shown by the bounds: a bare number
//! just past a flag's range is refused, exit 64), and `--help` says the
//! unit.

use std::time::Duration;

use crate::common::process::{Recapd, run_recapd as recapd};

/// Each duration flag with a value in units (where the issue gives one,
/// its example).
const WITH_UNITS: [(&str, &str, &str); 7] = [
    ("--llm-timeout", "RECAPD_LLM_TIMEOUT", "120s"),
    ("--job-lease", "RECAPD_JOB_LEASE", "2m"),
    ("--job-retention", "RECAPD_JOB_RETENTION", "7d"),
    (
        "--llm-backoff-base-ms",
        "RECAPD_LLM_BACKOFF_BASE_MS",
        "250ms",
    ),
    ("--shutdown-grace", "RECAPD_SHUTDOWN_GRACE", "1m"),
    ("--resync-interval", "RECAPD_RESYNC_INTERVAL", "5s"),
    ("--chat-retention", "RECAPD_CHAT_RETENTION", "90d"),
];

/// Starts the binary with `args` and `env`, waits until it serves, stops it
/// with SIGTERM and checks it exits cleanly.
async fn serves_and_stops(args: &[&str], env: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Recapd::command(dir.path());
    command
        .args(["--llm-url", "http://127.0.0.1:9/v1"])
        .args(args)
        .envs(env.iter().copied());
    let mut recapd = Recapd::start_with(command, dir.path());
    recapd.channel().await;
    assert!(recapd.health().success(), "{args:?} {env:?}");
    recapd.terminate();
    let status = recapd.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{args:?} {env:?}: {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_duration_flag_and_variable_takes_a_unit_and_a_bare_number() {
    let flags: Vec<&str> = WITH_UNITS
        .iter()
        .flat_map(|(flag, _, value)| [*flag, *value])
        .collect();
    serves_and_stops(&flags, &[]).await;
    let variables: Vec<(&str, &str)> = WITH_UNITS
        .iter()
        .map(|(_, variable, value)| (*variable, *value))
        .collect();
    serves_and_stops(&[], &variables).await;
    // Bare numbers, as deployments wrote them before units.
    serves_and_stops(
        &[
            "--llm-timeout",
            "120",
            "--job-lease",
            "30",
            "--job-retention",
            "604800",
            "--llm-backoff-base-ms",
            "1000",
            "--shutdown-grace",
            "10",
            "--resync-interval",
            "5",
        ],
        &[],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_number_is_in_the_flags_unit_and_a_bad_duration_exits_64() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let base = [
        "--data-dir",
        data.to_str().unwrap(),
        "--listen",
        "127.0.0.1:1",
        "--metrics-listen",
        "off",
    ];
    // Just past each range with a bare number: refused, so the number is
    // seconds (3601 s > 1 h; 2 s < 3 s) or milliseconds (60001 ms > 60 s).
    // Then a value no parser reads.
    for (flag, value) in [
        ("--llm-timeout", "3601"),
        ("--job-lease", "2"),
        ("--llm-backoff-base-ms", "60001"),
        ("--shutdown-grace", "3601"),
        ("--llm-timeout", "120x"),
        ("--job-retention", "soon"),
    ] {
        let args = [&base[..], &[flag, value][..]].concat();
        let (code, _, stderr) = recapd(&args, &[]).await;
        assert_eq!(code, Some(64), "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
        assert!(!data.exists(), "nothing written");
    }
}

#[tokio::test]
async fn help_names_each_duration_flag_with_the_unit_of_a_bare_number() {
    let (code, help, stderr) = recapd(&["--help"], &[]).await;
    assert_eq!(code, Some(0), "{stderr}");
    // clap wraps long help; compare with the line breaks as spaces.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for (flag, _, _) in WITH_UNITS {
        let unit = if flag.ends_with("-ms") {
            "a bare number is milliseconds"
        } else {
            "a bare number is seconds"
        };
        let at = help
            .find(&format!("{flag} <DURATION>"))
            .unwrap_or_else(|| panic!("{flag} <DURATION> in --help: {help}"));
        // The flag's own help ends where its `[env: ...]` line starts.
        let own = &help[at..];
        let own = &own[..own.find("[env:").unwrap_or(own.len())];
        assert!(own.contains(unit), "{flag}: {own}");
    }
    for default in [
        "[default: 120s]",
        "[default: 60s]",
        "[default: 7d]",
        "[default: 1000ms]",
    ] {
        assert!(help.contains(default), "{default}");
    }
}
