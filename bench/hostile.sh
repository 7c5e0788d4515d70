#!/usr/bin/env bash
# Hostile World Info (issue 41): what a hostile book costs a scan, and the
# chats beside it (recapd-bench hostile, bench/tools/hostile.rs). recapd runs
# on CPU 0 with 2 workers and the default bounds; the client on CPU 1.
#
#   bench/hostile.sh          5 scans of each book alone, 20 s of
#                             GetInjection alone and 20 s under one finding-1
#                             and two finding-2 scan loops, then a scan whose
#                             300 ms deadline passes, with the scan budget
#                             raised to 60 s so that only the cancellation
#                             can stop it (about 2 minutes)
#   bench/hostile.sh --smoke  a short text and 1 s of each: checks the harness
#
# The targets: finding 1's scan (a `/(?=(a+)+$)a/` key over two messages of
# 200,000 `a`) answers in at most 1 s; finding 2's (a 98-entry recursion
# chain of 35 KB contents) in at most 2 s; under both in loops GetInjection
# of another chat misses no 1 s deadline and its p99 is at most 250 ms; the
# server's CPU is idle again within 1 s after a cancelled scan.
# Results also in target/bench/hostile.txt, recapd's log in
# target/bench/hostile-server.log.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke -eq 1 ]; then
    ARGS=(--redos-chars 2000 --rounds 2 --seconds 1)
else
    ARGS=(--redos-chars 200000 --rounds 5 --seconds 20)
fi

. bench/lib.sh
bench_build
data=$(mktemp -d "$out/hostile.XXXX")
results=$out/hostile.txt
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

run() { # extra recapd flags...
    local listen; listen=$(free_port)
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 2 --data-dir "$data/recapd-$RANDOM" \
        --log-level warn --max-request-bytes $((64 * 1024 * 1024)) "$@" \
        >>"$out/hostile-server.log" 2>&1 &
    pid=$!
    wait_serving "127.0.0.1:$listen"
    addr=127.0.0.1:$listen
}
: >"$out/hostile-server.log"
run
"${load_cpu[@]}" "$tool" hostile --addr "$addr" "${ARGS[@]}" | tee "$results"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
# The cancellation, with a scan budget that would let the scan run on.
run --world-info-scan-timeout 60s
"${load_cpu[@]}" "$tool" hostile --addr "$addr" --redos-chars 10 --cancel-only --server-pid "$pid" \
    | grep '^cancelled_scan' | tee -a "$results"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
