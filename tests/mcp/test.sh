#!/usr/bin/env bash
# Tests `recapd mcp` with the official MCP Python SDK against a live recapd
# (tests/mcp/test_mcp.py): a fresh virtual environment with `mcp` (pinned in
# requirements.txt) and the repository's Python client (clients/python, which
# seeds the chat the tools read). The recapd binary: $RECAPD_BIN, else
# target/debug/recapd (build it first: `cargo build --bin recapd`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
recapd_bin="${RECAPD_BIN:-$root/target/debug/recapd}"
if [[ ! -x "$recapd_bin" ]]; then
    echo "tests/mcp/test.sh: no recapd binary at $recapd_bin (run cargo build --bin recapd)" >&2
    exit 2
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/recapd-mcp-test.XXXXXX")"
leftovers=()
[[ -e "$root/clients/python/build" ]] || leftovers+=("$root/clients/python/build")
[[ -e "$root/clients/python/src/recapd_client.egg-info" ]] || leftovers+=("$root/clients/python/src/recapd_client.egg-info")
trap 'rm -rf "$work" "${leftovers[@]}"' EXIT
python3 -m venv "$work/venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
"$work/venv/bin/python" -m pip install --quiet "$root/clients/python" -r "$here/requirements.txt"
cd "$work"
RECAPD_BIN="$recapd_bin" PYTHONDONTWRITEBYTECODE=1 "$work/venv/bin/python" "$here/test_mcp.py"
