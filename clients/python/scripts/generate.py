#!/usr/bin/env python3
"""Generate the recapd.v1 stubs from the repository's proto.

Usage (from anywhere; needs the pinned grpcio-tools, see GRPCIO_TOOLS below):

    python clients/python/scripts/generate.py          # rewrite src/recapd/v1/
    python clients/python/scripts/generate.py --check  # fail if they are stale

It runs grpcio-tools' protoc on ``proto/recap/v1/recap.proto`` of this
repository and writes ``recap_pb2.py``, ``recap_pb2.pyi`` and
``recap_pb2_grpc.py`` into ``clients/python/src/recapd/v1/``. ``--check``
generates into a temporary directory instead and exits 1, naming the files,
when anything differs from the checked-in stubs (CI runs it).

How the stubs end up importable as ``recapd.v1``: protoc names Python modules
after the proto's path, so ``recap/v1/recap.proto`` gives ``recap.v1``. This
script generates from the proto where it is (``-I proto``, so the file keeps
its canonical name ``recap/v1/recap.proto``) and then rewrites the two places
that name the module: the import in ``recap_pb2_grpc.py`` and the module name
given to the descriptor builder in ``recap_pb2.py``. Each rewrite must match
exactly once, or the script fails (a grpcio-tools upgrade that changes the
generated text must be looked at, not silently half-rewritten).

Why not generate from a copy laid out as ``recapd/v1/recap.proto``? The
descriptor would then register the file as ``recapd/v1/recap.proto``, and a
program that also loads stubs generated from the canonical path (the
repository's examples, another package built from the same proto) fails at
import with ``duplicate symbol 'recap.v1.InjectionPosition'``: protobuf's
default pool holds one file per symbol. With the canonical name both sets of
stubs share one file and coexist, and the descriptor's file name matches what
the server's reflection reports.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import pathlib
import shutil
import subprocess
import sys
import tempfile
from typing import NoReturn

# The grpcio-tools release the checked-in stubs come from. Changing it changes
# the generated code and the minimum grpcio/protobuf versions: update
# pyproject.toml's dependencies to match (grpcio >= this version; protobuf >=
# the "Protobuf Python Version" in recap_pb2.py's header, same major).
GRPCIO_TOOLS = "1.85.1"

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent
REPOSITORY_ROOT = PACKAGE_DIR.parent.parent
PROTO_ROOT = REPOSITORY_ROOT / "proto"
PROTO_FILE = PROTO_ROOT / "recap" / "v1" / "recap.proto"
STUBS_DIR = PACKAGE_DIR / "src" / "recapd" / "v1"
GENERATED_FILES = ("recap_pb2.py", "recap_pb2.pyi", "recap_pb2_grpc.py")

# (file, text protoc writes, text it must become). Each must occur once.
REWRITES = (
    (
        "recap_pb2_grpc.py",
        "from recap.v1 import recap_pb2 as recap_dot_v1_dot_recap__pb2\n",
        "from recapd.v1 import recap_pb2 as recap_dot_v1_dot_recap__pb2\n",
    ),
    (
        "recap_pb2.py",
        "_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'recap.v1.recap_pb2', _globals)\n",
        "_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'recapd.v1.recap_pb2', _globals)\n",
    ),
)


def fail(message: str) -> NoReturn:
    """Print `message` to stderr and exit 1."""
    print(f"generate.py: {message}", file=sys.stderr)
    sys.exit(1)


def require_pinned_grpcio_tools() -> None:
    """Exit 1 unless the installed grpcio-tools is exactly GRPCIO_TOOLS."""
    try:
        installed = importlib.metadata.version("grpcio-tools")
    except importlib.metadata.PackageNotFoundError:
        fail(f"grpcio-tools is not installed: pip install grpcio-tools=={GRPCIO_TOOLS}")
    if installed != GRPCIO_TOOLS:
        fail(
            f"grpcio-tools {installed} is installed but the stubs are pinned to "
            f"{GRPCIO_TOOLS}: pip install grpcio-tools=={GRPCIO_TOOLS}"
        )


def generate_into(out_dir: pathlib.Path) -> None:
    """Run protoc on the proto and leave the rewritten stubs in `out_dir`."""
    with tempfile.TemporaryDirectory(prefix="recapd-protoc-") as raw:
        raw_dir = pathlib.Path(raw)
        command = [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"--proto_path={PROTO_ROOT}",
            f"--python_out={raw_dir}",
            f"--pyi_out={raw_dir}",
            f"--grpc_python_out={raw_dir}",
            str(PROTO_FILE),
        ]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"protoc failed ({result.returncode}):\n{result.stderr}")
        produced = raw_dir / "recap" / "v1"
        for name in GENERATED_FILES:
            text = (produced / name).read_text(encoding="utf-8")
            for file_name, old, new in REWRITES:
                if file_name != name:
                    continue
                count = text.count(old)
                if count != 1:
                    fail(f"expected {old.strip()!r} once in {name}, found it {count} times")
                text = text.replace(old, new)
            if "recap.v1 import" in text:
                fail(f"{name} still imports from recap.v1 after the rewrite")
            (out_dir / name).write_text(text, encoding="utf-8")


def main() -> int:
    """Parse the command line and generate or check the stubs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary directory and fail if the checked-in stubs differ",
    )
    args = parser.parse_args()
    require_pinned_grpcio_tools()
    if not PROTO_FILE.is_file():
        fail(f"proto not found at {PROTO_FILE}")

    if args.check:
        with tempfile.TemporaryDirectory(prefix="recapd-stubs-") as fresh:
            fresh_dir = pathlib.Path(fresh)
            generate_into(fresh_dir)
            stale = []
            for name in GENERATED_FILES:
                checked_in = STUBS_DIR / name
                if not checked_in.is_file() or checked_in.read_bytes() != (fresh_dir / name).read_bytes():
                    stale.append(str(checked_in.relative_to(REPOSITORY_ROOT)))
            if stale:
                fail(
                    "stale generated stubs (run clients/python/scripts/generate.py and commit): "
                    + ", ".join(stale)
                )
        print(f"generate.py: {', '.join(GENERATED_FILES)} are up to date with {PROTO_FILE.relative_to(REPOSITORY_ROOT)}")
        return 0

    STUBS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="recapd-stubs-") as fresh:
        fresh_dir = pathlib.Path(fresh)
        generate_into(fresh_dir)
        for name in GENERATED_FILES:
            shutil.copyfile(fresh_dir / name, STUBS_DIR / name)
    print(f"generate.py: wrote {', '.join(GENERATED_FILES)} into {STUBS_DIR.relative_to(REPOSITORY_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
