//! The embeddings API's options: off by default, their defaults, the URL
//! checked naming its flag, the key from its file or the environment.

use super::*;

fn setup(args: &[&str], env_key: Option<&str>) -> Result<Option<EmbeddingSetup>, String> {
    parse(args)
        .unwrap()
        .config
        .embedding
        .setup(env_key.map(str::to_owned))
}

const URL: [&str; 2] = ["--embedding-url", "http://127.0.0.1:8080/v1/"];

#[test]
fn without_a_url_there_is_no_embeddings_api() {
    assert!(setup(&[], Some("sk-env")).unwrap().is_none());
    let files = parse(&[]).unwrap().config.read_startup_files().unwrap();
    assert!(files.embedding.is_none());
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let setup = setup(&URL, None).unwrap().unwrap();
    assert_eq!(setup.base_url, "http://127.0.0.1:8080/v1");
    assert_eq!(setup.model, "");
    assert!(setup.api_key.is_none());
    assert_eq!(setup.concurrency, 2);
    assert_eq!(setup.timeout, Duration::from_secs(30));
    assert_eq!(setup.max_attempts, 5);
    assert_eq!(setup.backoff_base, Duration::from_millis(1000));
    assert_eq!(setup.requests_per_minute, None);
    assert_eq!(setup.batch_size, 32);
}

#[test]
fn every_option_reaches_the_setup() {
    let args = [
        &URL[..],
        &[
            "--embedding-model",
            "nomic-embed-text",
            "--embedding-concurrency",
            "8",
            "--embedding-timeout",
            "2m",
            "--embedding-max-attempts",
            "3",
            "--embedding-backoff-base",
            "250",
            "--embedding-requests-per-minute",
            "90",
            "--embedding-batch-size",
            "2048",
        ],
    ]
    .concat();
    let setup = setup(&args, None).unwrap().unwrap();
    assert_eq!(setup.model, "nomic-embed-text");
    assert_eq!(setup.concurrency, 8);
    assert_eq!(setup.timeout, Duration::from_secs(120));
    assert_eq!(setup.max_attempts, 3);
    assert_eq!(setup.backoff_base, Duration::from_millis(250));
    assert_eq!(setup.requests_per_minute, Some(90));
    assert_eq!(setup.batch_size, 2048);
    let files = parse(&args).unwrap().config.read_startup_files().unwrap();
    assert!(files.embedding.is_some());
}

#[test]
fn a_bad_url_is_refused_naming_the_flag() {
    for url in ["ftp://127.0.0.1/v1", "127.0.0.1:8080/v1", ""] {
        let error = setup(&["--embedding-url", url], None).unwrap_err();
        assert!(error.starts_with("--embedding-url "), "{url:?}: {error}");
    }
    let Err(error) = parse(&["--embedding-url", "localhost:8080"])
        .unwrap()
        .config
        .read_startup_files()
    else {
        panic!("a URL without a scheme was accepted");
    };
    assert!(error.starts_with("--embedding-url "), "{error}");
}

#[test]
fn a_value_out_of_range_is_refused_naming_the_flag() {
    for (flag, text) in [
        ("--embedding-concurrency", "0"),
        ("--embedding-concurrency", "1025"),
        ("--embedding-batch-size", "0"),
        ("--embedding-batch-size", "2049"),
        ("--embedding-max-attempts", "0"),
        ("--embedding-requests-per-minute", "-1"),
    ] {
        let error = parse(&[&format!("{flag}={text}")]).unwrap_err().to_string();
        assert!(error.contains(flag), "{flag} {text}: {error}");
    }
    for (flag, text) in [
        ("--embedding-concurrency", "1024"),
        ("--embedding-batch-size", "1"),
    ] {
        assert!(parse(&[flag, text]).is_ok(), "{flag} {text}");
    }
}

#[test]
fn the_key_is_read_from_its_file_which_wins_over_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    std::fs::write(&file, "  sk-from-file\n").unwrap();
    let file = file.to_str().unwrap();
    let args = [&URL[..], &["--embedding-api-key-file", file]].concat();
    let key = setup(&args, Some("sk-from-env")).unwrap().unwrap().api_key;
    assert_eq!(key, Some(ApiKey("sk-from-file".into())));
    // The key stays out of Debug output.
    let shown = format!("{key:?}");
    assert!(!shown.contains("sk-from-file"), "{shown}");

    let empty = dir.path().join("empty");
    std::fs::write(&empty, " \n").unwrap();
    let missing = dir.path().join("missing");
    for path in [empty, missing] {
        let args = [
            &URL[..],
            &["--embedding-api-key-file", path.to_str().unwrap()],
        ]
        .concat();
        let error = setup(&args, Some("sk-from-env")).unwrap_err();
        assert!(error.starts_with("--embedding-api-key-file "), "{error}");
        assert!(!error.contains("sk-from-env"), "{error}");
    }
}

#[test]
fn the_key_may_come_from_the_environment() {
    let key = |env| setup(&URL, env).unwrap().unwrap().api_key;
    assert_eq!(key(Some(" sk-env \n")), Some(ApiKey("sk-env".into())));
    assert_eq!(key(Some("  ")), None);
    assert_eq!(key(None), None);
}
