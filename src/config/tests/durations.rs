//! Every duration flag reads a number with a unit through the one parser,
//! and a bare number keeps the unit the flag always had.

use super::*;

use clap::CommandFactory;

const SECOND: Duration = Duration::from_secs(1);

/// A duration flag, the unit a bare number has, and how to read it back.
type DurationFlag = (&'static str, BareUnit, fn(&Config) -> Duration);

/// Every duration flag.
fn flags() -> [DurationFlag; 9] {
    [
        ("--shutdown-grace", BareUnit::Seconds, |c| c.shutdown_grace),
        ("--resync-interval", BareUnit::Seconds, |c| {
            c.resync_interval
        }),
        ("--chat-retention", BareUnit::Seconds, |c| {
            c.chat_retention.unwrap_or_default()
        }),
        ("--llm-timeout", BareUnit::Seconds, |c| c.llm.llm_timeout),
        ("--llm-backoff-base-ms", BareUnit::Milliseconds, |c| {
            c.llm.llm_backoff_base
        }),
        ("--job-retention", BareUnit::Seconds, |c| {
            c.llm.job_retention
        }),
        ("--job-lease", BareUnit::Seconds, |c| c.llm.job_lease),
        ("--embedding-timeout", BareUnit::Seconds, |c| {
            c.embedding.embedding_timeout
        }),
        ("--embedding-backoff-base", BareUnit::Milliseconds, |c| {
            c.embedding.embedding_backoff_base
        }),
    ]
}

#[test]
fn the_issues_examples_are_accepted() {
    let config = parse(&[
        "--llm-timeout",
        "120s",
        "--job-lease",
        "2m",
        "--job-retention",
        "7d",
    ])
    .unwrap()
    .config;
    assert_eq!(config.llm.llm_timeout, 120 * SECOND);
    assert_eq!(config.llm.job_lease, 120 * SECOND);
    assert_eq!(config.llm.job_retention, 7 * 86_400 * SECOND);
    let bare = parse(&["--llm-timeout", "120"]).unwrap().config;
    assert_eq!(bare.llm.llm_timeout, 120 * SECOND);
}

#[test]
fn every_duration_flag_takes_a_unit_and_a_bare_number_in_its_own_unit() {
    for (flag, bare, read) in flags() {
        for (text, expected) in [
            ("3s", 3 * SECOND),
            ("3500ms", Duration::from_millis(3500)),
            ("1m", 60 * SECOND),
            ("5s 250ms", Duration::from_millis(5250)),
        ] {
            let config = parse(&[flag, text]).unwrap().config;
            assert_eq!(read(&config), expected, "{flag} {text}");
        }
        let config = parse(&[flag, "45"]).unwrap().config;
        let expected = match bare {
            BareUnit::Seconds => 45 * SECOND,
            BareUnit::Milliseconds => Duration::from_millis(45),
        };
        assert_eq!(read(&config), expected, "{flag} 45");
    }
}

#[test]
fn the_defaults_are_unchanged_and_reach_the_options_the_parts_take() {
    let config = parse(&["--llm-url", "http://127.0.0.1:1/v1"])
        .unwrap()
        .config;
    assert_eq!(config.shutdown_grace, 10 * SECOND);
    assert_eq!(config.resync_interval, 5 * SECOND);
    assert_eq!(config.chat_retention, None);
    assert_eq!(config.llm.queue(), QueueOptions::default());
    let setup = config.llm.setup(None).unwrap().unwrap();
    assert_eq!(setup.timeout, 120 * SECOND);
    assert_eq!(setup.backoff_base, Duration::from_millis(1000));
    // The flag's default is the back-off policy's, written as text for
    // `--help`: the two stay one value.
    assert_eq!(
        setup.backoff_base,
        crate::domain::backoff::DEFAULT_BASE,
        "--llm-backoff-base-ms's default differs from domain::backoff::DEFAULT_BASE"
    );

    let config = parse(&[
        "--llm-url",
        "http://127.0.0.1:1/v1",
        "--llm-timeout",
        "5m",
        "--llm-backoff-base-ms",
        "250",
        "--job-lease",
        "30",
        "--job-retention",
        "12h",
    ])
    .unwrap()
    .config;
    let queue = config.llm.queue();
    assert_eq!(
        (queue.lease, queue.retention),
        (30 * SECOND, 12 * 3600 * SECOND)
    );
    let setup = config.llm.setup(None).unwrap().unwrap();
    assert_eq!(setup.timeout, 300 * SECOND);
    assert_eq!(setup.backoff_base, Duration::from_millis(250));
}

#[test]
fn a_duration_out_of_range_or_unreadable_is_refused_naming_the_option() {
    for (flag, text) in [
        ("--shutdown-grace", "0"),
        ("--shutdown-grace", "500ms"),
        ("--shutdown-grace", "2h"),
        ("--resync-interval", "0"),
        ("--resync-interval", "61m"),
        ("--llm-timeout", "0"),
        ("--llm-timeout", "3601"),
        ("--llm-timeout", "120x"),
        ("--llm-backoff-base-ms", "0"),
        ("--llm-backoff-base-ms", "60001"),
        ("--llm-backoff-base-ms", "2m"),
        ("--job-lease", "2"),
        ("--job-lease", "2s"),
        ("--job-lease", "2h"),
        ("--job-retention", "soon"),
        ("--job-retention", "-7d"),
        ("--embedding-timeout", "0"),
        ("--embedding-timeout", "3601"),
        ("--embedding-backoff-base", "0"),
        ("--embedding-backoff-base", "60001"),
        ("--embedding-backoff-base", "2m"),
    ] {
        // `--flag=value`, so that a value starting with `-` is one.
        let error = parse(&[&format!("{flag}={text}")]).unwrap_err().to_string();
        assert!(error.contains(flag), "{flag} {text}: {error}");
    }
    // The bounds themselves are accepted.
    for (flag, text) in [
        ("--shutdown-grace", "1h"),
        ("--llm-timeout", "3600"),
        ("--llm-backoff-base-ms", "60000"),
        ("--llm-backoff-base-ms", "1"),
        ("--job-lease", "3"),
        ("--job-lease", "1h"),
    ] {
        assert!(parse(&[flag, text]).is_ok(), "{flag} {text}");
    }
}

#[test]
fn the_help_of_each_duration_flag_says_what_a_bare_number_is() {
    let command = Cli::command();
    for (flag, bare, _) in flags() {
        let name = flag.trim_start_matches("--");
        let argument = command
            .get_arguments()
            .find(|a| a.get_long() == Some(name))
            .unwrap_or_else(|| panic!("{flag} is a flag"));
        let help = argument
            .get_long_help()
            .or(argument.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let unit = match bare {
            BareUnit::Seconds => "a bare number is seconds",
            BareUnit::Milliseconds => "a bare number is milliseconds",
        };
        assert!(help.contains(unit), "{flag}: {help}");
        assert_eq!(
            argument
                .get_value_names()
                .map(|names| names.iter().map(ToString::to_string).collect::<Vec<_>>()),
            Some(vec!["DURATION".to_owned()]),
            "{flag}"
        );
    }
}
