//! One recapd per conversation: a child process on free loopback ports
//! (gRPC and metrics) with a data directory of its own, killed when the
//! handle is dropped.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tonic::transport::Channel;

type Error = Box<dyn std::error::Error>;

/// A running recapd child.
pub struct Recapd {
    child: tokio::process::Child,
    /// Its Prometheus address, `127.0.0.1:port`.
    pub metrics_addr: String,
    /// A channel to `addr`, connected.
    pub channel: Channel,
    /// Holds the data directory and the log until the handle is dropped.
    dir: tempfile::TempDir,
}

/// Where recapd is when `--recapd` is not given: next to this program
/// (`target/<profile>/recapd` beside `target/<profile>/recapd-bench`), else
/// `target/release/recapd`, else `target/debug/recapd` from the current
/// directory.
pub fn default_recapd_path() -> Result<PathBuf, Error> {
    let mut candidates = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join("recapd"));
        // A test binary lives one level deeper, in target/<profile>/deps.
        if let Some(up) = dir.parent() {
            candidates.push(up.join("recapd"));
        }
    }
    candidates.push(PathBuf::from("target/release/recapd"));
    candidates.push(PathBuf::from("target/debug/recapd"));
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| {
            format!(
                "no recapd binary found (looked at {}); build it (cargo build --release --bin recapd) or pass --recapd",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .into()
        })
}

/// A loopback port free at the time of asking.
fn free_port() -> Result<u16, Error> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

impl Recapd {
    /// Starts `binary` with `--llm-url`, `--llm-model` and a fresh data
    /// directory, and waits until its gRPC port answers (30 s at most).
    pub async fn start(binary: &Path, llm_url: &str, model: &str) -> Result<Recapd, Error> {
        let args = ["--llm-url", llm_url, "--llm-model", model].map(str::to_owned);
        Recapd::start_with(binary, &args).await
    }

    /// Starts `binary` with a fresh data directory, loopback ports,
    /// `--durability normal`, `--log-level warn` and `args`, and waits
    /// until its gRPC port answers (30 s at most).
    pub async fn start_with(binary: &Path, args: &[String]) -> Result<Recapd, Error> {
        let dir = tempfile::tempdir()?;
        let addr = format!("127.0.0.1:{}", free_port()?);
        let metrics_addr = format!("127.0.0.1:{}", free_port()?);
        let log = std::fs::File::create(dir.path().join("recapd.log"))?;
        let child = tokio::process::Command::new(binary)
            .arg("--listen")
            .arg(&addr)
            .arg("--metrics-listen")
            .arg(&metrics_addr)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .arg("--durability")
            .arg("normal")
            .args(args)
            .arg("--log-level")
            .arg("warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", binary.display()))?;
        let mut recapd = Recapd {
            child,
            metrics_addr,
            channel: Channel::from_static("http://127.0.0.1:1").connect_lazy(),
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = recapd.child.try_wait()? {
                return Err(
                    format!("recapd exited at start ({status}): {}", recapd.log_tail()).into(),
                );
            }
            match Channel::from_shared(format!("http://{addr}"))?
                .connect()
                .await
            {
                Ok(channel) => {
                    recapd.channel = channel;
                    return Ok(recapd);
                }
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(e) => {
                    return Err(format!(
                        "recapd did not answer on {addr}: {e}: {}",
                        recapd.log_tail()
                    )
                    .into());
                }
            }
        }
    }

    /// The last lines of its log (warnings and errors), for a failure's message.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.path().join("recapd.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// Stops it (SIGKILL: its data is thrown away anyway) and waits for it.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}
