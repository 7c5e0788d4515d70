//! The real `recapd` binary as a child process, for tests that signal or
//! kill it.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tonic::transport::Channel;

use super::free_port;

/// The real `recapd` binary as a child process.
pub struct Recapd {
    pub child: Child,
    pub addr: String,
}

impl Recapd {
    pub fn start(data_dir: &std::path::Path) -> Recapd {
        Recapd::start_with(Recapd::command(data_dir), data_dir)
    }

    /// The binary with, under RECAPD_TEST_STORE=postgres, the same store
    /// and schema as an in-process server on `data_dir`; more options can
    /// be added before [`Recapd::start_with`].
    pub fn command(data_dir: &std::path::Path) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_recapd"));
        if let Some((url, schema)) = super::config::test_postgres(data_dir) {
            command
                .arg("--store")
                .arg(url.0)
                .arg("--store-schema")
                .arg(schema);
        }
        command
    }

    /// The child's resident set size now (VmRSS), in bytes.
    pub fn rss_bytes(&self) -> u64 {
        self.status_kib("VmRSS:") * 1024
    }

    /// A `/proc/<pid>/status` figure in KiB.
    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the child's /proc status is readable");
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc status"))
    }

    /// Starts `command` (the binary, maybe with store or metrics options) on
    /// a free port over `data_dir`; without `--metrics-listen` in `command`,
    /// no metrics endpoint.
    pub fn start_with(mut command: Command, data_dir: &std::path::Path) -> Recapd {
        let addr = format!("127.0.0.1:{}", free_port());
        if !command.get_args().any(|arg| arg == "--metrics-listen") {
            command.args(["--metrics-listen", "off"]);
        }
        let child = command
            .args(["--listen", &addr, "--log-level", "warn"])
            .arg("--data-dir")
            .arg(data_dir)
            .stdout(Stdio::null())
            .spawn()
            .expect("recapd starts");
        Recapd { child, addr }
    }

    pub async fn channel(&self) -> Channel {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let endpoint = Channel::from_shared(format!("http://{}", self.addr)).unwrap();
            match endpoint.connect().await {
                Ok(channel) => return channel,
                Err(_) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Err(e) => panic!("recapd did not come up: {e}"),
            }
        }
    }

    pub fn health(&self) -> std::process::ExitStatus {
        Command::new(env!("CARGO_BIN_EXE_recapd"))
            .args(["health", "--addr", &self.addr])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
    }

    /// SIGKILL: no shutdown, no flush.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "recapd did not exit within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Recapd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of `GET /metrics` at `addr` (HTTP/1.0: no chunked encoding).
pub async fn scrape(addr: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the metrics endpoint accepts");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .expect("request sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("a UTF-8 response");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("an HTTP response with a body");
    assert!(head.starts_with("HTTP/1."), "not HTTP: {head}");
    assert!(head.contains(" 200 "), "GET /metrics answered {head}");
    body.to_owned()
}

/// The value of the unlabelled series `name` in a scrape; 0 when absent.
pub fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|line| {
            let (series, value) = line.split_once(' ')?;
            (series == name).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0.0)
}

/// Runs the recapd binary to completion with `args`, without any
/// `RECAPD_*` variable of the test's own environment but those in `env`:
/// (exit code, stdout, stderr). For the tool subcommands and start-up
/// refusals.
pub async fn run_recapd(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_recapd"));
    for (name, _) in std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value)))
        .filter(|(name, _)| name.starts_with("RECAPD_"))
    {
        command.env_remove(name);
    }
    let output = command
        .args(args)
        .envs(env.iter().copied())
        .output()
        .await
        .expect("the recapd binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
