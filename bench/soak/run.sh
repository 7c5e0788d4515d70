#!/usr/bin/env bash
# Soak: mixed load (events, reads, subscriptions coming and going) against a
# release recapd for MINUTES (default 10), sampling its resident memory and
# open file descriptors every 5 s; fails when either grows by more than 5%
# after the first fifth of the run (warm-up).
#   bench/soak/run.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes=${1:-10}
cargo build --release --locked -p recapd --bin recapd -p recapd-bench --bin recapd-bench 2>&1 | grep -v '^\s*Compiling' || true
. scripts/lib.sh
port=$(free_port)
data=$(mktemp -d)
target/release/recapd --listen "127.0.0.1:$port" --data-dir "$data" --metrics-listen off --log-level warn &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
until target/release/recapd health --addr "127.0.0.1:$port" >/dev/null 2>&1; do sleep 0.05; done
target/release/recapd-bench soak --addr "127.0.0.1:$port" --pid "$pid" \
    --seconds "$(python3 -c "print($minutes * 60)")" | tee target/soak.txt
