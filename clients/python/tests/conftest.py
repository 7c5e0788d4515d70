"""Fixtures that run the real recapd: RECAPD_BIN (default: the repository's
target/debug/recapd), a free port on 127.0.0.1 and a temporary data dir."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Optional

import pytest

REPOSITORY_ROOT = pathlib.Path(__file__).resolve().parents[3]
DEFAULT_RECAPD_BIN = REPOSITORY_ROOT / "target" / "debug" / "recapd"

# Every wait in these tests is bounded by one of these (seconds).
STARTUP_TIMEOUT = 30.0
SHUTDOWN_TIMEOUT = 20.0
HEALTH_PROBE_TIMEOUT = 5.0
EVENT_TIMEOUT = 20.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RecapdServer:
    """One recapd process on a fixed port and data dir, which the test can
    kill (-9), stop (SIGTERM) and start again on the same port and data."""

    def __init__(
        self,
        binary: pathlib.Path,
        work_dir: pathlib.Path,
        extra_args: tuple[str, ...] = (),
        health_args: tuple[str, ...] = (),
    ) -> None:
        self.binary = binary
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.data_dir = work_dir / "data"
        self.log_path = work_dir / "recapd.log"
        self.extra_args = extra_args
        self.health_args = health_args
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.starts = 0

    def start(self) -> None:
        """Start recapd and wait (bounded) until `recapd health` answers."""
        assert self.process is None, "already running"
        command = [
            str(self.binary),
            "--listen", self.address,
            "--metrics-listen", "off",
            "--data-dir", str(self.data_dir),
            "--log-level", "warn",
            *self.extra_args,
        ]
        with open(self.log_path, "ab") as log:
            log.write(f"--- start #{self.starts + 1}: {' '.join(command)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self.starts += 1
        self.wait_healthy()

    def is_healthy(self) -> bool:
        """One `recapd health` probe; True when it exits 0."""
        try:
            probe = subprocess.run(
                [str(self.binary), "health", "--addr", self.address, *self.health_args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=HEALTH_PROBE_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return False
        return probe.returncode == 0

    def wait_healthy(self) -> None:
        """Poll health until SERVING; fail (with the log) after STARTUP_TIMEOUT."""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.fail(f"recapd exited with {self.process.returncode} at start\n{self.log_tail()}")
            if self.is_healthy():
                return
            time.sleep(0.1)
        pytest.fail(f"recapd not healthy on {self.address} within {STARTUP_TIMEOUT} s\n{self.log_tail()}")

    def kill9(self) -> None:
        """SIGKILL the server and reap it."""
        assert self.process is not None, "not running"
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=SHUTDOWN_TIMEOUT)
        self.process = None

    def terminate(self) -> int:
        """SIGTERM the server (a clean shutdown); returns its exit code."""
        assert self.process is not None, "not running"
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=SHUTDOWN_TIMEOUT)
            pytest.fail(f"recapd did not stop within {SHUTDOWN_TIMEOUT} s of SIGTERM\n{self.log_tail()}")
        self.process = None
        return code

    def stop(self) -> None:
        """Stop the server if it runs (SIGTERM, then SIGKILL when stuck)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=SHUTDOWN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=SHUTDOWN_TIMEOUT)
        self.process = None

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log, for failure messages."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "recapd log:\n" + "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="session")
def recapd_bin() -> pathlib.Path:
    """The recapd binary: $RECAPD_BIN, else the repository's target/debug/recapd."""
    binary = pathlib.Path(os.environ.get("RECAPD_BIN", DEFAULT_RECAPD_BIN))
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.exit(
            f"recapd binary not found at {binary}: set RECAPD_BIN or run "
            "`cargo build --bin recapd` in the repository root",
            returncode=2,
        )
    return binary


@pytest.fixture
def make_server(recapd_bin: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A factory of started RecapdServer instances, all stopped at teardown.

    ``make_server(*extra_args, health_args=())`` starts one with extra
    command-line options (e.g. ``--auth-tokens-file FILE``).
    """
    servers: list[RecapdServer] = []

    def start(*extra_args: str, health_args: tuple[str, ...] = ()) -> RecapdServer:
        server = RecapdServer(recapd_bin, tmp_path_factory.mktemp("recapd"), extra_args, health_args)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def shared_server(recapd_bin: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecapdServer]:
    """A plaintext server without authentication, shared by a module's tests
    (each uses its own chat ids)."""
    server = RecapdServer(recapd_bin, tmp_path_factory.mktemp("recapd-shared"))
    server.start()
    yield server
    server.stop()
