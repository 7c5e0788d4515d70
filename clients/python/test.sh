#!/usr/bin/env bash
# Tests the Python client (clients/python) against a live recapd:
#   1. a fresh virtual environment in a temporary directory, with the
#      package installed from this folder (`pip install .`, as a user would)
#      and the pinned test requirements (tests/requirements.txt);
#   2. scripts/generate.py --check: the checked-in stubs match the proto;
#   3. pytest tests/: the tests start and kill recapd servers of their own.
# The recapd binary: $RECAPD_BIN, else ../../target/debug/recapd relative to
# this script. Building it is not this script's job: run
# `cargo build --bin recapd` in the repository root first.
# Extra arguments go to pytest (e.g. -k follow). Exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
recapd_bin="${RECAPD_BIN:-$here/../../target/debug/recapd}"

if [[ ! -x "$recapd_bin" ]]; then
  echo "test.sh: no recapd binary at $recapd_bin" >&2
  echo "test.sh: build it with 'cargo build --bin recapd' in the repository root, or set RECAPD_BIN" >&2
  exit 2
fi
recapd_bin="$(cd "$(dirname "$recapd_bin")" && pwd)/$(basename "$recapd_bin")"

started=$SECONDS
work="$(mktemp -d "${TMPDIR:-/tmp}/recapd-python-client.XXXXXX")"
# pip builds a local folder in place: remove the build/ and egg-info it
# leaves behind, unless they were there before.
leftovers=()
[[ -e "$here/build" ]] || leftovers+=("$here/build")
[[ -e "$here/src/recapd_client.egg-info" ]] || leftovers+=("$here/src/recapd_client.egg-info")
cleanup() { rm -rf "$work" "${leftovers[@]}"; }
trap cleanup EXIT

echo "== virtual environment in $work/venv"
"$python" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"$venv_python" -m pip install --quiet "$here" -r "$here/tests/requirements.txt"
"$venv_python" -m pip list --format=freeze | grep -iE '^(recapd-client|grpcio|grpcio-tools|protobuf|pytest|cryptography)=' | sed 's/^/   /'

echo "== stubs up to date with the proto"
"$venv_python" "$here/scripts/generate.py" --check

echo "== pytest against $recapd_bin"
# Run from the temporary directory so that `import recapd` finds the
# installed package, never the source tree; no cache or bytecode left in it.
cd "$work"
RECAPD_BIN="$recapd_bin" RECAPD_CLIENT_EXPECT_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 \
  "$venv_python" -m pytest -p no:cacheprovider --rootdir "$here" -c "$here/pyproject.toml" "$here/tests" "$@"

echo "== clients/python: all passed in $((SECONDS - started)) s"
