//! Configuration: every option is a flag with a `RECAPD_*` environment
//! fallback. Parsing goes through [`Config::from_args`], a seam tests fill
//! with their own argument list; [`Config::for_tests`] gives a config on an
//! ephemeral port.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

use crate::domain::Limits;

/// Exit code for invalid configuration (EX_USAGE), reported before any port
/// is bound or file written.
pub const EXIT_INVALID_CONFIG: i32 = 64;

/// recapd: ST-Auto-Recap's memory injection as a gRPC sidecar.
#[derive(Debug, Clone, Parser)]
#[command(name = "recapd", version, about)]
pub struct Config {
    /// Address the gRPC server listens on.
    #[arg(long, env = "RECAPD_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Directory of the embedded database; created when missing.
    #[arg(long, env = "RECAPD_DATA_DIR", default_value = "./recapd-data")]
    pub data_dir: PathBuf,

    /// Longest accepted text field (message text, memory, recap, template), in bytes.
    #[arg(long, env = "RECAPD_MAX_TEXT_BYTES", default_value_t = Limits::default().max_text_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..=(64 * 1024 * 1024)))]
    pub max_text_bytes: u64,

    /// Log filter: a level (error, warn, info, debug, trace) or a tracing directive list.
    #[arg(long, env = "RECAPD_LOG", default_value = "info")]
    pub log_level: String,
}

impl Config {
    /// Parses arguments (the first is the program name) with the environment
    /// as fallback.
    pub fn from_args<I, T>(args: I) -> Result<Config, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Config::try_parse_from(args)
    }

    /// A config for tests: port 0 on loopback, data in `data_dir`.
    pub fn for_tests(data_dir: impl Into<PathBuf>) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: data_dir.into(),
            max_text_bytes: Limits::default().max_text_bytes as u64,
            log_level: "warn".into(),
        }
    }

    /// The text limits this config sets.
    pub fn limits(&self) -> Limits {
        Limits {
            max_text_bytes: usize::try_from(self.max_text_bytes).unwrap_or(usize::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let config = Config::from_args(["recapd"]).unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:50051");
        assert_eq!(config.data_dir, PathBuf::from("./recapd-data"));
        assert_eq!(config.limits(), Limits::default());
    }

    #[test]
    fn a_bad_value_names_the_option() {
        let err = Config::from_args(["recapd", "--listen", "nowhere"]).unwrap_err();
        assert!(err.to_string().contains("--listen"), "{err}");
        assert!(Config::from_args(["recapd", "--max-text-bytes", "0"]).is_err());
    }
}
