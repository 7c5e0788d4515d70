//! A second recapd on one machine: its metrics port is taken, and the
//! error says which flag frees it (issue 43: the README's "Run it" never
//! mentioned the port, and the failure did not say what to change).

use std::process::Command;

#[test]
fn a_taken_metrics_port_names_the_flag_that_moves_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let metrics = taken.local_addr().expect("its address").to_string();
    let dir = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_recapd"))
        .args(["--listen", "127.0.0.1:0", "--metrics-listen", &metrics])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .expect("recapd runs");
    assert!(!output.status.success(), "it must not start");
    // The error is logged (stdout, or stderr with a log file set).
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains(&metrics), "{said}");
    assert!(said.contains("--metrics-listen"), "{said}");
}
