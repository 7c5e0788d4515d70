//! The configuration tests run with, and the test database: everything the
//! `RECAPD_TEST_*` variables select lives here, so that recapd itself reads
//! none of them.

use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use recapd::config::{Cli, Config, MetricsListen, StoreUrl};

/// The database tests use: `RECAPD_TEST_DATABASE_URL`, or the development
/// machines' `postgres://root@127.0.0.1:5432/test`.
pub fn test_database_url() -> String {
    std::env::var("RECAPD_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/test".to_owned())
}

/// Whether the tests run against PostgreSQL (`RECAPD_TEST_STORE=postgres`).
pub fn on_postgres() -> bool {
    std::env::var("RECAPD_TEST_STORE").is_ok_and(|store| store == "postgres")
}

/// With `RECAPD_TEST_STORE=postgres`, the store of the tests that keep their
/// data in `data_dir`: the test database, in a schema named after the
/// directory (`rt_` and a hash), so each test has its own and a restart on
/// the same directory finds its data again. `None` otherwise.
pub fn test_postgres(data_dir: &Path) -> Option<(StoreUrl, String)> {
    if !on_postgres() {
        return None;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    data_dir.hash(&mut hasher);
    Some((
        StoreUrl(test_database_url()),
        format!("rt_{:016x}", hasher.finish()),
    ))
}

/// A config for an in-process server: the defaults, port 0 on loopback,
/// data in `data_dir`, no metrics endpoint; with `RECAPD_TEST_STORE=postgres`
/// the test database (see [`test_postgres`]) and a 1 s resync.
pub fn test_config(data_dir: impl Into<PathBuf>) -> Config {
    let mut config = Cli::from_args(["recapd"])
        .expect("the defaults parse")
        .config;
    config.listen = SocketAddr::from(([127, 0, 0, 1], 0));
    config.data_dir = data_dir.into();
    config.metrics_listen = MetricsListen::Off;
    if let Some((url, schema)) = test_postgres(&config.data_dir) {
        config.store = Some(url);
        config.store_schema = schema;
        config.resync_interval = std::time::Duration::from_secs(1);
    }
    config
}
