#!/usr/bin/env python3
"""Runs a documentation walk-through as written, against a live recapd.

    walkthrough.py DOC HEADING ADDR GRPCURL

Takes the ```sh blocks of DOC's section HEADING (the `## ` heading's text),
and runs each command in them from the repository's root, one after
another, as a reader would: `127.0.0.1:50051` becomes ADDR and `grpcurl`
the GRPCURL program (wherever a command starts: at a line's start, after
`|`, `;`, `&`, `(`, `while`, `until`, `do` or `then`); `recapd` is the
one on PATH. A command that fails fails the run, printing the command and
what it said. Streaming calls (`/Subscribe`, `/WatchJobs`) run for two
seconds. A command may run for two minutes, a waiting step (a `while` or
`until` loop, as a reader pastes to wait until `ListJobs` lists no job
pending or running) for 30 minutes. The server itself (`recapd` followed
by an option, `recapd --llm-url ...`, not a subcommand such as `recapd
import`) is the one the reader leaves running in a terminal of its own:
it is skipped, and the caller starts one with the same options at ADDR
first. A `# => ...` comment after a command is its expected
answer: every complete `"key":value` pair written in it (a string without
`...`, a number, true or false) must be in the answer (grpcurl's spacing
aside). Other comments are the reader's and are skipped.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC_ADDR = "127.0.0.1:50051"
STREAMING = ("/Subscribe", "/WatchJobs")
COMMAND_SECONDS = 120
WAIT_SECONDS = 30 * 60
GRPCURL = re.compile(r"(^|[|;&(]\s*|\n\s*|\b(?:while|until|do|then)\s+)grpcurl\b")
SERVER = re.compile(r"^\s*recapd\s+-")
WAITING = re.compile(r"^\s*(?:while|until)\b")
PAIR = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)":\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false)')


def section(text, heading):
    """The text under `## heading`, to the next `## ` heading."""
    lines = text.splitlines()
    try:
        start = lines.index("## " + heading)
    except ValueError:
        sys.exit(f"walkthrough: no '## {heading}' heading")
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
        len(lines),
    )
    return lines[start + 1 : end]


def sh_blocks(lines):
    """The lines of each ```sh block."""
    blocks, block = [], None
    for line in lines:
        if block is None and line.strip() == "```sh":
            block = []
        elif block is not None and line.strip() == "```":
            blocks.append(block)
            block = None
        elif block is not None:
            block.append(line)
    return blocks


def complete(command):
    """Whether a command's text is whole: quotes balanced, no trailing
    continuation or pipe."""
    stripped = command.rstrip()
    if stripped.endswith("\\") or stripped.endswith("|"):
        return False
    in_single = in_double = False
    for ch in command:
        if ch == "'" and not in_double:
            in_single = not in_single
        elif ch == '"' and not in_single:
            in_double = not in_double
    return not in_single and not in_double


def commands(block):
    """(command, expectation) pairs of a block, in order."""
    out = []
    current = []
    expecting = False
    for line in block:
        if not current:
            if line.lstrip().startswith("# =>"):
                if not out:
                    sys.exit("walkthrough: an expectation before any command")
                cmd, exp = out[-1]
                out[-1] = (cmd, exp + " " + line.split("# =>", 1)[1])
                expecting = True
                continue
            if line.lstrip().startswith("#"):
                if expecting and line.lstrip().startswith("#  "):
                    cmd, exp = out[-1]
                    out[-1] = (cmd, exp + " " + line.lstrip()[1:])
                    continue
                expecting = False
                continue
            if not line.strip():
                expecting = False
                continue
        expecting = False
        current.append(line)
        text = "\n".join(current)
        if complete(text):
            out.append((text, ""))
            current = []
    if current:
        sys.exit("walkthrough: an unfinished command at the end of a block:\n" + "\n".join(current))
    return out


def expected_pairs(expectation):
    """The complete `"key":value` pairs an expectation writes."""
    return [
        (key, value)
        for key, value in PAIR.findall(expectation)
        if "..." not in value
    ]


def run(command, expectation, addr, grpcurl):
    text = command.replace(DOC_ADDR, addr)
    text = GRPCURL.sub(lambda m: m.group(1) + grpcurl, text)
    streaming = any(s in text for s in STREAMING)
    if streaming:
        text = "timeout 2 " + text
    seconds = WAIT_SECONDS if WAITING.match(text) else COMMAND_SECONDS
    try:
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", text],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired:
        sys.exit(f"walkthrough: this command ran for more than {seconds} s:\n{command}")
    ok = result.returncode == 0 or (streaming and result.returncode == 124)
    if not ok:
        sys.exit(
            f"walkthrough: this command failed ({result.returncode}):\n{command}\n"
            f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
    answer = re.sub(r'":\s+', '":', result.stdout)
    for key, value in expected_pairs(expectation):
        if f'"{key}":{value}' not in answer:
            sys.exit(
                f"walkthrough: the answer of\n{command}\nlacks \"{key}\":{value} "
                f"(expected: {expectation.strip()})\n--- answer\n{result.stdout}"
            )


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    doc, heading, addr, grpcurl = sys.argv[1:]
    lines = section((ROOT / doc).read_text(encoding="utf-8"), heading)
    ran = 0
    for block in sh_blocks(lines):
        for command, expectation in commands(block):
            if SERVER.match(command):
                continue
            run(command, expectation, addr, grpcurl)
            ran += 1
    if ran == 0:
        sys.exit(f"walkthrough: no command under '## {heading}' in {doc}")
    print(f"walkthrough: {doc} '{heading}': {ran} commands OK")


if __name__ == "__main__":
    main()
