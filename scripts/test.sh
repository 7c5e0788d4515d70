#!/usr/bin/env bash
# The project's test command (the README's): every unit, service and
# integration test. Needs only the Rust toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --all-targets "$@"
