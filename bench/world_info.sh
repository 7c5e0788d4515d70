#!/usr/bin/env bash
# SillyTavern World Info (issue 29): ScanWorldInfo and RenderPrompt on a
# chat of 10,000 messages with generated books (recapd-bench world-info,
# bench/tools/world_info/), recapd pinned to CPU 0 with one worker thread,
# the client on CPU 1. The baseline is RenderPrompt of the same chat without
# World Info, measured in the same rounds (calls interleaved one at a time).
#
#   bench/world_info.sh            books of 100, 1,000 and 10,000 entries at
#                                  world_info_depth 2, then depths 2, 10, 100
#                                  and 1000 with the 1,000-entry book
#                                  (about 12 minutes: each configuration stops
#                                  after 90 s of measured rounds)
#   bench/world_info.sh --lengths [N,N,...]
#                                  chats of 1,000, 10,000 and 100,000 messages
#                                  (or the lengths given) side by side, one
#                                  ScanWorldInfo each per round with a 20-entry
#                                  book at depth 2 (issue 44: a scan costs the
#                                  same at every length; about 3 minutes)
#   bench/world_info.sh --smoke    tiny book and chat: checks that the harness works
#
# The targets (issue 29, 1,000 entries, depth 2, recursion on):
# ScanWorldInfo p99 <= 5 ms; RenderPrompt p99 <= 1.5x the baseline's.
# bench/run.sh runs it at its end. Results also in target/bench/world-info.txt,
# recapd's log (its warnings of regex keys past their bound) in
# target/bench/world-info-server.log.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ "${1:-}" = "--lengths" ]; then
    ARGS=(--lengths "${2:-1000,10000,100000}" --rounds 3000 --warmup 100 --max-seconds 120)
elif [ $smoke -eq 1 ]; then
    ARGS=(--entries 20,50 --depths 2,10 --depth-entries 50 --messages 300 --rounds 20 --warmup 2)
else
    ARGS=(--entries 100,1000,10000 --depths 2,10,100,1000 --depth-entries 1000 --messages 10000 --rounds 400 --warmup 30)
fi

. bench/lib.sh
bench_build
data=$(mktemp -d "$out/world-info.XXXX")
results=$out/world-info.txt
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

listen=$(free_port); metrics=$(free_port)
# The 10,000-entry book is one ImportLorebook request of about 12 MB.
"${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
    --metrics-listen "127.0.0.1:$metrics" --log-level warn --max-request-bytes $((64 * 1024 * 1024)) \
    >"$out/world-info-server.log" 2>&1 &
pid=$!
wait_serving "127.0.0.1:$listen"
"${load_cpu[@]}" "$tool" world-info --addr "127.0.0.1:$listen" --metrics "127.0.0.1:$metrics" "${ARGS[@]}" >"$results"
if [ $smoke -eq 1 ]; then
    # The --lengths harness too, on two small chats.
    "${load_cpu[@]}" "$tool" world-info --addr "127.0.0.1:$listen" --lengths 100,300 --rounds 10 --warmup 2 >>"$results"
fi
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

python3 - "$results" <<'PY'
import re, sys
rows = [(l.split()[0], dict(re.findall(r"(\w+)=(\S+)", l))) for l in open(sys.argv[1])]
for kind, r in rows:
    if kind == "world_info_book":
        print(f"book of {r['entries']} entries ({int(r['bytes']) / 1e6:.1f} MB: {r['regex_key_entries']} with regex keys, "
              f"{r['secondary_key_entries']} with secondary keys, {r['constant']} constant, {r['at_depth']} at depth, "
              f"{r['in_groups']} in inclusion groups): ImportLorebook {r['import_ms']} ms")
print()
print("| entries | world_info_depth | rounds | activated (mean) | ScanWorldInfo p50 / p99 ms | dry run p50 / p99 ms "
      "| activation in the server, mean ms | regex keys past their bound per activation | RenderPrompt p50 / p99 ms | without World Info p50 / p99 ms | p99 ratio |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for kind, r in rows:
    if kind == "world_info":
        print(f"| {r['entries']} | {r['depth']} | {r['rounds']} | {r['activated_mean']} | {r['scan_p50_ms']} / {r['scan_p99_ms']} "
              f"| {r['dry_p50_ms']} / {r['dry_p99_ms']} | {r['activation_in_server_mean_ms']} | {r['regex_overruns_per_activation']} "
              f"| {r['render_p50_ms']} / {r['render_p99_ms']} "
              f"| {r['base_p50_ms']} / {r['base_p99_ms']} | x{r['render_over_base_p99']} |")
lengths = [r for kind, r in rows if kind == "world_info_length"]
if lengths:
    print(f"| messages | rounds | activated (mean) | ScanWorldInfo p50 / p99 ms | p50 ratio to {lengths[0]['messages']} messages |")
    print("| --- | --- | --- | --- | --- |")
    for r in lengths:
        print(f"| {r['messages']} | {r['rounds']} | {r['activated_mean']} | {r['scan_p50_ms']} / {r['scan_p99_ms']} | x{r['p50_over_first']} |")
head = [r for kind, r in rows if kind == "world_info" and r["entries"] == "1000" and r["depth"] == "2"]
for r in head[:1]:
    print()
    print(f"Target (1,000 entries, depth 2, {r['messages']} messages): ScanWorldInfo p99 {r['scan_p99_ms']} ms "
          f"(target <= 5), RenderPrompt p99 x{r['render_over_base_p99']} of the baseline's (target <= 1.5)")
PY
