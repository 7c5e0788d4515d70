#!/usr/bin/env bash
# Memory bounded by a budget (issue 15): a release recapd started with
# --max-resident-memory and --workers 1 (pinned to CPU 0; the load on CPU 1)
# is given many more chats than the budget holds. `recapd-bench resident`
# writes them (Publish chat_changed, full transcripts), reads them in random
# order (GetInjection twice per chat: the first read cold when the chat was
# evicted, confirmed by recapd_chat_loads_total, the second warm) and
# exports a sample to check that evicted chats come back exact.
#
# Figures: peak RSS (VmHWM) against budget + idle RSS + 64 MiB, cold p99
# against 3x warm p99, the write rate, the server's loads and evictions.
#
#   bench/resident.sh           200,000 chats x 20 messages (about 840 MB of
#                               text), 256 MiB budget, 20,000 reads
#   bench/resident.sh --smoke   2,000 chats, 4 MiB budget, 500 reads: checks
#                               the harness in seconds (bench/run.sh --smoke)
#
# Knobs (environment): CHATS, BUDGET_MIB, SAMPLES (chats read), VERIFY
# (chats exported and compared), CALLERS (concurrent writers, 32),
# MESSAGES (per chat, 20), TEXT_BYTES (about this much text per message,
# 210). BUDGET_MIB=0 runs without a budget (nothing is evicted): with a few
# thousand chats, the results line's bytes per resident chat is what a chat
# of that shape costs in memory (the sizing table of docs/operating.md, Memory).
# RECAPD_BENCH_NO_BUDGET=1 starts recapd without --max-resident-memory (a
# build from before the option; nothing is evicted, so no read is cold).
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke -eq 1 ]; then
    CHATS=${CHATS:-2000}; BUDGET_MIB=${BUDGET_MIB:-4}; SAMPLES=${SAMPLES:-500}; VERIFY=${VERIFY:-100}
else
    CHATS=${CHATS:-200000}; BUDGET_MIB=${BUDGET_MIB:-256}; SAMPLES=${SAMPLES:-20000}; VERIFY=${VERIFY:-1000}
fi
CALLERS=${CALLERS:-32}; MESSAGES=${MESSAGES:-20}; TEXT_BYTES=${TEXT_BYTES:-210}; MARGIN_MIB=64

. bench/lib.sh
bench_build
data=$(mktemp -d "$out/resident.XXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$data"
}
trap cleanup EXIT

budget=(--max-resident-memory "${BUDGET_MIB}MiB"); require=(--require-cold)
if [ "$BUDGET_MIB" = 0 ]; then require=(); fi
if [ "${RECAPD_BENCH_NO_BUDGET:-0}" = 1 ]; then budget=(); require=(); fi
listen=$(free_port); metrics=$(free_port)
"${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
    --metrics-listen "127.0.0.1:$metrics" --log-level warn "${budget[@]}" &
pid=$!
wait_serving "127.0.0.1:$listen"
kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$pid/status"; }
idle_kb=$(kb VmRSS)

started=$(date +%s.%N)
line=$("${load_cpu[@]}" "$tool" resident --addr "127.0.0.1:$listen" --metrics "127.0.0.1:$metrics" \
    --chats "$CHATS" --messages "$MESSAGES" --text-bytes "$TEXT_BYTES" --callers "$CALLERS" --samples "$SAMPLES" --verify "$VERIFY" --pid "$pid" "${require[@]}")
finished=$(date +%s.%N)
peak_kb=$(kb VmHWM); end_kb=$(kb VmRSS)
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo "$line" >"$out/resident.json"

python3 - "$line" "$idle_kb" "$peak_kb" "$end_kb" "$BUDGET_MIB" "$MARGIN_MIB" "$started" "$finished" "${#budget[@]}" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
idle, peak, end = (int(v) / 1024 for v in sys.argv[2:5])
# The tool resets the peak between writing and reading: VmHWM at the end is
# the peak since then.
peak = max(peak, r["peak_rss_mib_write"])
mib = lambda b: "n/a" if b is None else f"{b / 1048576:.0f}"
budget, margin = int(sys.argv[5]), int(sys.argv[6])
seconds = float(sys.argv[8]) - float(sys.argv[7])
flag = f"--max-resident-memory {budget}MiB" if sys.argv[9] != "0" else "no budget flag"
target = budget + idle + margin
yes = lambda ok: "yes" if ok else "NO"
n = lambda v: "n/a" if v is None else f"{v:.0f}"
ratio = r["cold_warm_p99_ratio"]
cold = r["cold_reads"]
text_per_chat = r["text_bytes"] / r["chats"]
resident, held = r["resident_bytes_after_write"], r["chats_resident_after_write"]
per_chat = "n/a" if not resident or not held else (
    f"{resident / held:.0f} B for {text_per_chat:.0f} B of text ({resident / held / text_per_chat:.2f}x; "
    f"limit 2x + 1 KiB = {2 * text_per_chat + 1024:.0f} B: {yes(resident / held <= 2 * text_per_chat + 1024)})")
print(
    f"Resident memory, {flag}, {r['chats']} chats x {r['messages_per_chat']} messages "
    f"({r['text_mb']:.0f} MB of text): peak RSS {peak:.0f} MiB (idle {idle:.0f}, at the end {end:.0f}; "
    f"target <= {budget} + {idle:.0f} + {margin} = {target:.0f} MiB: {yes(peak <= target)}; "
    f"peak writing {r['peak_rss_mib_write']:.0f}, reading {r['peak_rss_mib_read']:.0f}; "
    f"anonymous after writing {r['anon_mib_after_write']:.0f}, after reading {r['anon_mib_after_read']:.0f}; "
    f"recapd_resident_bytes after writing {mib(r['resident_bytes_after_write'])} MiB "
    f"({n(r['chats_resident_after_write'])} chats), after reading {mib(r['resident_bytes_after_read'])} MiB "
    f"({n(r['chats_resident_after_read'])} chats); per resident chat after writing: {per_chat}) | "
    f"GetInjection cold p50 {r['cold_p50_ms']} p99 {r['cold_p99_ms']} ms ({cold} of {r['samples']} first reads "
    f"loaded their chat), warm p50 {r['warm_p50_ms']} p99 {r['warm_p99_ms']} ms: cold p99 x{ratio} "
    f"(target <= 3: {yes(cold > 0 and ratio <= 3)}), p50 x{r['cold_warm_p50_ratio']}; "
    f"{r['cold_evicting_reads']} cold reads ran an eviction pass: p50 {r['cold_evicting_p50_ms']} "
    f"p99 {r['cold_evicting_p99_ms']} ms | "
    f"writes {r['writes_per_s']:.0f} chats/s ({r['write_text_mb_per_s']} MB/s of text, {r['write_seconds']} s) | "
    f"server: {n(r['loads_during_read'])} loads and {n(r['evictions_during_read'])} evictions while reading, "
    f"{n(r['evictions_during_write'])} evictions while writing, mean load {r['server_load_mean_ms']} ms | "
    f"{r['verified_chats']} chats exported, {r['verify_differing']} differing | {seconds:.0f} s in all"
)
PY
