//! The configuration's parsing: defaults, refusals naming the option, start-up files.

use super::*;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::from_args(std::iter::once("recapd").chain(args.iter().copied()))
}

#[test]
fn defaults_are_the_documented_ones() {
    let config = parse(&[]).unwrap().config;
    assert_eq!(config.listen.to_string(), "127.0.0.1:50051");
    assert_eq!(config.data_dir, PathBuf::from("./recapd-data"));
    assert_eq!(config.metrics_listen.to_string(), "127.0.0.1:9464");
    assert_eq!(config.shutdown_grace, Duration::from_secs(10));
    assert_eq!(config.resync_interval, Duration::from_secs(5));
    assert_eq!(config.workers, None);
    assert_eq!(config.log_format, LogFormat::Text);
    assert_eq!(config.durability, Durability::Full);
    assert_eq!(config.limits(), Limits::default());
    assert_eq!(config.max_request_bytes(), 4 * 1024 * 1024);
}

#[test]
fn a_bad_value_names_the_option() {
    for (args, option) in [
        (&["--listen", "nowhere"][..], "--listen"),
        (&["--workers", "0"][..], "--workers"),
        (&["--metrics-listen", "yes"][..], "--metrics-listen"),
        (&["--log-format", "xml"][..], "--log-format"),
        (&["--shutdown-grace", "0"][..], "--shutdown-grace"),
        (&["--store-schema", "Recapd"][..], "--store-schema"),
        (&["--store-schema", "a;drop"][..], "--store-schema"),
        (&["--store-pool-size", "0"][..], "--store-pool-size"),
        (&["--resync-interval", "0"][..], "--resync-interval"),
        (
            &["--max-resident-memory", "lots"][..],
            "--max-resident-memory",
        ),
        (
            &["--max-resident-memory", "5 parsecs"][..],
            "--max-resident-memory",
        ),
    ] {
        let err = parse(args).unwrap_err();
        assert!(err.to_string().contains(option), "{err}");
    }
    assert_eq!(
        parse(&["--metrics-listen", "OFF"])
            .unwrap()
            .config
            .metrics_listen,
        MetricsListen::Off
    );
}

#[test]
fn the_resident_memory_budget_reads_binary_and_decimal_units() {
    for (text, bytes) in [
        ("0", 0),
        ("1048576", 1 << 20),
        ("8MiB", 8 << 20),
        ("8 mib", 8 << 20),
        ("256MiB", 256 << 20),
        ("1GiB", 1 << 30),
        ("2KB", 2000),
    ] {
        assert_eq!(parse_size(text), Ok(bytes), "{text}");
    }
    assert_eq!(
        parse(&[]).unwrap().config.limits().max_resident_bytes,
        1 << 30
    );
    let config = parse(&["--max-resident-memory", "64MiB"]).unwrap().config;
    assert_eq!(config.limits().max_resident_bytes, 64 << 20);
}

#[test]
fn a_bad_store_url_is_refused_without_repeating_it() {
    for url in ["mysql://u:s3cret@db/x", "postgres://u:s3cret@db:notaport/x"] {
        let config = parse(&["--store", url]).unwrap().config;
        let Err(error) = config.read_startup_files() else {
            panic!("{url} was accepted");
        };
        assert!(error.starts_with("--store"), "{error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
}

#[test]
fn the_store_is_embedded_unless_a_postgres_url_is_given() {
    let config = parse(&[]).unwrap().config;
    assert_eq!(config.postgres(), Ok(None));
    let config = parse(&[
        "--store",
        "postgresql://recapd:s3cret@db:5433/app",
        "--store-schema",
        "tenant_a",
    ])
    .unwrap()
    .config;
    let options = config.postgres().unwrap().unwrap();
    assert_eq!(
        (options.schema.as_str(), options.pool_size),
        ("tenant_a", 16)
    );
    // The password never reaches a log line through Debug.
    let shown = format!("{config:?}");
    assert!(!shown.contains("s3cret"), "{shown}");
}

#[test]
fn the_start_up_files_are_read_once_and_the_first_bad_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "acme 0123456789abcdef\n").unwrap();
    let tokens = tokens.to_str().unwrap();
    let missing = dir.path().join("missing.pem");
    let missing = missing.to_str().unwrap();

    let files = parse(&["--auth-tokens-file", tokens])
        .unwrap()
        .config
        .read_startup_files()
        .unwrap();
    let tokens = files.tokens.expect("the tokens file was given");
    assert_eq!(
        tokens.iter().collect::<Vec<_>>(),
        [("0123456789abcdef", "acme")]
    );
    assert!(files.postgres.is_none() && files.tls.is_none());
    let nothing = parse(&[]).unwrap().config.read_startup_files().unwrap();
    assert!(nothing.tokens.is_none() && nothing.tls.is_none() && nothing.postgres.is_none());

    let error = |args: &[&str]| match parse(args).unwrap().config.read_startup_files() {
        Ok(_) => panic!("{args:?} was accepted"),
        Err(message) => message,
    };
    assert!(
        error(&["--auth-tokens-file", missing]).starts_with("--auth-tokens-file "),
        "{}",
        error(&["--auth-tokens-file", missing])
    );
    let tls = ["--tls-cert", missing, "--tls-key", missing];
    assert!(error(&tls).starts_with("--tls-cert "), "{}", error(&tls));
    // In order: the store, the tokens, the TLS files.
    let all = [
        &["--store", "mysql://db/x", "--auth-tokens-file", missing][..],
        &tls[..],
    ]
    .concat();
    assert!(error(&all).starts_with("--store"), "{}", error(&all));
    assert!(
        error(&[&["--auth-tokens-file", missing][..], &tls[..]].concat())
            .starts_with("--auth-tokens-file")
    );
}

#[test]
fn health_dials_loopback_for_a_wildcard_listen() {
    let cli = parse(&["--listen", "0.0.0.0:7000", "health"]).unwrap();
    assert!(matches!(
        cli.command,
        Some(Command::Health {
            addr: None,
            tls: ClientTls {
                tls_ca: None,
                tls: false,
                tls_server_name: None
            }
        })
    ));
    assert_eq!(cli.config.local_dial_addr().to_string(), "127.0.0.1:7000");
}

#[test]
fn chat_retention_is_off_by_default_and_reads_the_job_retention_syntax() {
    assert_eq!(parse(&[]).unwrap().config.chat_retention, None);
    for (text, seconds) in [
        ("90d", 90 * 86_400),
        ("90 days", 90 * 86_400),
        ("1w", 7 * 86_400),
        ("1.5d", 36 * 3600),
        ("12h", 12 * 3600),
        ("30m", 1800),
        ("45s", 45),
        ("45", 45),
    ] {
        let config = parse(&["--chat-retention", text]).unwrap().config;
        assert_eq!(
            config.chat_retention,
            Some(Duration::from_secs(seconds)),
            "{text}"
        );
    }
}

#[test]
fn a_zero_or_unreadable_chat_retention_is_refused_naming_the_option() {
    for text in ["0", "0d", "00h"] {
        let error = parse(&["--chat-retention", text]).unwrap_err().to_string();
        assert!(error.contains("--chat-retention"), "{error}");
        assert!(error.contains("would delete every chat"), "{error}");
    }
    for text in ["", "soon", "-1d", "90 parsecs", "99999999999999999999d"] {
        let error = parse(&[&format!("--chat-retention={text}")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--chat-retention"), "{text:?}: {error}");
    }
}

#[test]
fn the_chats_subcommands_take_the_client_options_and_need_a_chat_to_delete() {
    let cli = parse(&["chats", "list", "--addr", "h:1", "--token", "t0k"]).unwrap();
    let Some(Command::Chats {
        action: ChatsAction::List { client },
    }) = cli.command
    else {
        panic!("not chats list: {:?}", cli.command);
    };
    assert_eq!(
        (client.addr.as_deref(), client.token.as_deref()),
        (Some("h:1"), Some("t0k"))
    );
    let cli = parse(&["chats", "delete", "a", "b", "--tls", "--", "-c"]).unwrap();
    let Some(Command::Chats {
        action: ChatsAction::Delete { client, chats },
    }) = cli.command
    else {
        panic!("not chats delete: {:?}", cli.command);
    };
    assert_eq!(chats, ["a", "b", "-c"]);
    assert!(client.tls.tls && client.addr.is_none());
    assert!(parse(&["chats", "delete"]).is_err());
    assert!(parse(&["chats"]).is_err());
}

mod durations;
mod embedding;

#[test]
fn the_browser_options_are_off_by_default_and_read_as_documented() {
    let config = parse(&[]).unwrap().config;
    assert!(config.web.grpc_web_allowed_origins.is_empty());
    assert!(config.web.allowed_hosts.is_empty());
    assert_eq!(config.web.inspector_listen, None);
    let config = parse(&[
        "--grpc-web-allowed-origins",
        "https://chat.example.com,HTTP://localhost:8000",
        "--allowed-hosts",
        "Recapd.Internal,my_service",
        "--inspector-listen",
        "127.0.0.1:8080",
    ])
    .unwrap()
    .config;
    let origins: Vec<&str> = config
        .web
        .grpc_web_allowed_origins
        .iter()
        .map(AllowedOrigin::as_str)
        .collect();
    assert_eq!(
        origins,
        ["https://chat.example.com", "http://localhost:8000"]
    );
    assert_eq!(
        config.web.inspector_listen,
        Some("127.0.0.1:8080".parse().unwrap())
    );
    let hosts: Vec<String> = config
        .web
        .allowed_hosts
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(hosts, ["recapd.internal", "my_service"]);
    for (args, option) in [
        (
            &["--allowed-hosts", "recapd.internal:50051"][..],
            "--allowed-hosts",
        ),
        (&["--allowed-hosts", "*.internal"][..], "--allowed-hosts"),
        (
            &[
                "--grpc-web-allowed-origins",
                "https://a.test,chat.example.com",
            ][..],
            "--grpc-web-allowed-origins",
        ),
        (&["--inspector-listen", "8080"][..], "--inspector-listen"),
    ] {
        let err = parse(args).unwrap_err();
        assert!(err.to_string().contains(option), "{err}");
    }
}
