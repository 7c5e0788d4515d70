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
        let mut command = Command::new(env!("CARGO_BIN_EXE_recapd"));
        // With RECAPD_TEST_STORE=postgres, the same schema as an in-process
        // server on this directory.
        if let Some((url, schema)) = super::config::test_postgres(data_dir) {
            command
                .arg("--store")
                .arg(url.0)
                .arg("--store-schema")
                .arg(schema);
        }
        Recapd::start_with(command, data_dir)
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
