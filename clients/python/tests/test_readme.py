"""The README's examples run as written against a live recapd: every
```python block right after a ``<!-- readme-test: runs -->`` line is run as
a script, with the README's address 127.0.0.1:50051 replaced by the test
server's."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
MARKER = "<!-- readme-test: runs -->"
README_ADDRESS = "127.0.0.1:50051"
BLOCK = re.compile(r"^" + re.escape(MARKER) + r"\n```python\n(.*?)\n```", re.DOTALL | re.MULTILINE)
MARKER_LINE = re.compile(r"^" + re.escape(MARKER) + r"$", re.MULTILINE)


def runnable_blocks() -> list[str]:
    """The code of each marked block, in README order."""
    text = README.read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    # Every marker must be followed by a python block (no silent skips).
    assert len(blocks) == len(MARKER_LINE.findall(text)), "a readme-test marker is not followed by a ```python block"
    return blocks


def run_block(code: str, address: str) -> str:
    """Run one block against `address`; its stdout (fails on a non-zero exit)."""
    assert README_ADDRESS in code, "the block does not dial the README's address"
    result = subprocess.run(
        [sys.executable, "-c", code.replace(README_ADDRESS, address)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"README block failed:\n{code}\nstderr:\n{result.stderr}"
    return result.stdout


def test_first_injection_example_is_at_most_ten_lines():
    first = runnable_blocks()[0]
    assert "events.Publish" in first and "GetInjection" in first
    assert len(first.splitlines()) <= 10, first


def test_readme_examples_run_as_written(make_server):
    server = make_server()
    blocks = runnable_blocks()
    assert len(blocks) == 2, "expected the first-injection and the errors examples"

    first_injection = run_block(blocks[0], server.address)
    assert first_injection.startswith("2 INJECTION_POSITION_BEFORE_PROMPT "), first_injection
    assert "Alice and Bob met." in first_injection

    errors = run_block(blocks[1], server.address)
    assert errors.startswith("NOT_FOUND "), errors
    assert "no-such-chat" in errors
