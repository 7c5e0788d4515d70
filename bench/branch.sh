#!/usr/bin/env bash
# BranchChat's cost (issue 45): chats of 1,000 and 100,000 messages (the
# recall benchmark's generated lines) imported, then each branched at its
# last message five times; recapd pinned to CPU 0 with one worker thread,
# the client on CPU 1. Reports each length's median and slowest call and
# the memory each branch adds (VmRSS and recapd_resident_bytes).
#
#   bench/branch.sh            about 2 minutes after the release build
#   bench/branch.sh --smoke    small chats: checks that the harness works
#
# Target (issue 45): a branch of a 100,000-message chat within 2 s.
# Knobs: LENGTHS (comma-separated), SAMPLES. Raw lines in
# target/bench/branch.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--smoke" ]; then
    LENGTHS=${LENGTHS:-"100,300"}; SAMPLES=${SAMPLES:-2}
else
    LENGTHS=${LENGTHS:-"1000,100000"}; SAMPLES=${SAMPLES:-5}
fi

. bench/lib.sh
bench_build
data=$(mktemp -d "$out/branch.XXXX")
results=$out/branch.txt
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

listen=$(free_port); metrics=$(free_port)
"${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
    --metrics-listen "127.0.0.1:$metrics" --log-level warn --max-resident-memory 8GiB \
    >"$out/branch-server.log" 2>&1 &
pid=$!
wait_serving "127.0.0.1:$listen"
"${load_cpu[@]}" "$tool" branch --addr "127.0.0.1:$listen" --metrics "127.0.0.1:$metrics" --pid "$pid" \
    --lengths "$LENGTHS" --samples "$SAMPLES" >"$results"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

python3 - "$results" <<'PY'
import re, sys
rows = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[1]) if l.startswith("branch ")]
print("BranchChat (issue 45), recapd --workers 1 on CPU 0, the client on CPU 1")
print("| messages | import ms | BranchChat p50 / max ms (target at 100,000: 2,000) | RSS MiB per branch | recapd_resident_bytes MiB per branch |")
print("| --- | --- | --- | --- | --- |")
for r in rows:
    print(f"| {int(r['messages']):,} | {r['import_ms']} | {r['p50_ms']} / {r['max_ms']} | {r['rss_mib_per_branch']} | {r['resident_mib_per_branch']} |")
PY
