#!/usr/bin/env bash
# Recall (issue 31): a release recapd (--workers 1, pinned to CPU 0) with
# --embedding-url pointing at a fake OpenAI-compatible embeddings endpoint
# served by `recapd-bench recall` (on CPU 1): deterministic 384-dimension
# vectors, answered at once or after a fixed latency.
#
#   1. growth: one chat of 1,000, 10,000 and 100,000 messages (a fresh
#      recapd each): time until its index job SUCCEEDED, the server's RSS
#      and recapd_resident_bytes then, Recall p50/p99 for the chat's moment
#      (empty query) and for text queries (embedded by the fake), and the
#      refresh with the recall tier against the same chat without it
#      (rounds of Publish message_sent + Refresh on each, same minutes),
#      with the tier's own histogram (recapd_recall_tier_duration_seconds).
#   2. throughput: chats indexed at once against a fake answering after
#      L ms, --embedding-concurrency C: passages per second against the
#      ideal C x 32 / L (target >= 0.9); and one chat alone.
#   3. memory: two big chats indexed, then read in turn, under a
#      --max-resident-memory below what both need: RSS, resident bytes,
#      loads and evictions after each step.
#
#   bench/recall.sh           about 17 minutes after the release build
#   bench/recall.sh --smoke   tiny chats: checks that the harness works
#
# Besides latencies (which include whatever else runs on the server's CPU),
# the tool reads recapd's own CPU time (/proc/<pid>/task/*/schedstat) per
# call, per indexed passage, and per Refresh with and without the tier.
#
# Knobs (environment): KEYWORD_ONLY=1 (growth without an embeddings
# endpoint: keyword search alone), PHASES ("growth throughput memory"), SIZES, SAMPLES,
# ROUNDS, TP_CHATS, TP_MESSAGES, LATENCY_MS, CONCURRENCIES, REPEAT
# (throughput runs of each configuration; the table gives each and their
# median), MEM_MESSAGES, BUDGET_MIB. Raw lines in target/bench/recall.txt.
# bench/run.sh runs it at its end.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke -eq 1 ]; then
    SIZES=${SIZES:-"300"}; SAMPLES=${SAMPLES:-30}; ROUNDS=${ROUNDS:-20}; WARMUP=3
    TP_CHATS=${TP_CHATS:-3}; TP_MESSAGES=${TP_MESSAGES:-200}; LATENCY_MS=${LATENCY_MS:-20}
    CONCURRENCIES=${CONCURRENCIES:-"2"}; REPEAT=${REPEAT:-1}; MEM_MESSAGES=${MEM_MESSAGES:-500}; BUDGET_MIB=${BUDGET_MIB:-1}
else
    SIZES=${SIZES:-"1000 10000 100000"}; SAMPLES=${SAMPLES:-500}; ROUNDS=${ROUNDS:-300}; WARMUP=20
    TP_CHATS=${TP_CHATS:-8}; TP_MESSAGES=${TP_MESSAGES:-2000}; LATENCY_MS=${LATENCY_MS:-50}
    CONCURRENCIES=${CONCURRENCIES:-"2 4"}; REPEAT=${REPEAT:-3}; MEM_MESSAGES=${MEM_MESSAGES:-100000}; BUDGET_MIB=${BUDGET_MIB:-320}
fi
PHASES=${PHASES:-"growth throughput memory"}
has() { [[ " $PHASES " == *" $1 "* ]]; }

. bench/lib.sh
bench_build
data=$(mktemp -d "$out/recall.XXXX")
results=$out/recall.txt
: >"$results"
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$data"
}
trap cleanup EXIT

run() { # concurrency recapd-args... -- tool-args...: one recapd, one tool run
    local concurrency=$1; shift
    local extra=()
    while [ "$1" != "--" ]; do extra+=("$1"); shift; done; shift
    local listen metrics embed
    listen=$(free_port); metrics=$(free_port); embed=$(free_port)
    local embedding=(--embedding-url "http://127.0.0.1:$embed/v1" --embedding-model bench) keyword=()
    if [ "${KEYWORD_ONLY:-0}" = 1 ]; then embedding=(); keyword=(--keyword-only); fi
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen "127.0.0.1:$metrics" --log-level warn "${extra[@]}" "${embedding[@]}" \
        --embedding-concurrency "$concurrency" --embedding-batch-size 32 >>"$out/recall-server.log" 2>&1 &
    pid=$!
    wait_serving "127.0.0.1:$listen"
    "${load_cpu[@]}" "$tool" recall --addr "127.0.0.1:$listen" --metrics "127.0.0.1:$metrics" \
        --embed-listen "127.0.0.1:$embed" --pid "$pid" --concurrency "$concurrency" --batch 32 "${keyword[@]}" "$@" | tee -a "$results"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

: >"$out/recall-server.log"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if has growth; then
    for n in $SIZES; do
        run 2 -- --phase growth --messages "$n" --samples "$SAMPLES" --rounds "$ROUNDS" --warmup "$WARMUP" >/dev/null
    done
fi
if has throughput; then
    for _ in $(seq "$REPEAT"); do
        for c in $CONCURRENCIES; do
            run "$c" -- --phase throughput --chats "$TP_CHATS" --messages "$TP_MESSAGES" --latency-ms "$LATENCY_MS" >/dev/null
        done
        # One chat alone: its index job asks one batch at a time.
        run 2 -- --phase throughput --chats 1 --messages "$TP_MESSAGES" --latency-ms "$LATENCY_MS" >/dev/null
    done
fi
if has memory; then
    run 2 --max-resident-memory "${BUDGET_MIB}MiB" -- --phase memory --chats 2 --messages "$MEM_MESSAGES" --cycles 2 >/dev/null
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$results" "$(nproc)" "$BUDGET_MIB" <<'PY'
import re, sys
rows = [(l.split()[0], dict(re.findall(r"(\w+)=(\S+)", l))) for l in open(sys.argv[1]) if l.strip()]
cores, budget = sys.argv[2], sys.argv[3]
yes = lambda ok: "yes" if ok else "**no**"
print(f"Recall (issue 31), {cores} cores, recapd --workers 1 on CPU 0, the tool and its fake embeddings on CPU 1; 384 dimensions")
print()
print("| messages | passages | import ms | indexed in s (passages/s; recapd CPU us per passage) | RSS MiB / recapd_resident_bytes MiB (budget 1024) | Recall moment p50 / p99 ms | Recall query p50 / p99 ms (target p99 <= 10) | search in server p50 / p99 ms | recapd CPU ms per Recall |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
growth = [r for kind, r in rows if kind == "recall_growth"]
for r in growth:
    worst = max(float(r["moment_p99_ms"]), float(r["query_p99_ms"]))
    print(f"| {int(r['messages']):,} | {int(r['passages']):,} | {r['import_ms']} | {r['index_s']} ({r['index_per_s']}) "
          f"| {r['rss_mib']} / {r['resident_mib']} | {r['moment_p50_ms']} / {r['moment_p99_ms']} "
          f"| {r['query_p50_ms']} / {r['query_p99_ms']} ({yes(worst <= 10)}) | {r['search_p50_ms']} / {r['search_p99_ms']} "
          f"| {r['recall_cpu_ms_per_call']} |")
print()
print("| messages | calls each | Refresh with the tier p50 / p99 ms | without p50 / p99 ms | added p50 / p99 ms (target p99 <= 2) | tier in server p50 / p99 ms (histogram; count) | recapd CPU ms per call with / without (added) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for label, what in (("refresh", "Refresh alone"), ("append", "Publish message_sent + Refresh")):
    for r in growth:
        g = lambda k: r[f"{label}_{k}"]
        print(f"| {int(r['messages']):,}, {what} | {g('rounds')} | {g('on_p50_ms')} / {g('on_p99_ms')} | {g('off_p50_ms')} / {g('off_p99_ms')} "
              f"| {g('added_p50_ms')} / {g('added_p99_ms')} ({yes(float(g('added_p99_ms')) <= 2)}) | {g('tier_p50_ms')} / {g('tier_p99_ms')} ({g('tiers')}) "
              f"| {g('cpu_on_ms')} / {g('cpu_off_ms')} ({g('cpu_added_ms')}) |")
print()
for r in growth:
    print(f"{int(r['messages']):,} messages: {r['recalls']} Recall calls of each kind, {r['moment_hits_mean']} hits for the moment, "
          f"the query's own message in the top 10 {float(r['query_found_own']):.0%}; Publish with recall p50/p99 "
          f"{r['append_publish_on_p50_ms']}/{r['append_publish_on_p99_ms']} ms, without {r['append_publish_off_p50_ms']}/{r['append_publish_off_p99_ms']} ms")
print()
runs = {}
print("| chats x messages | fake latency | --embedding-concurrency | passages | s | passages/s | ideal/s | ratio (target >= 0.9) | most in flight |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for kind, r in rows:
    if kind == "recall_throughput":
        ratio = r.get("ratio")
        runs.setdefault((r['chats'], r['concurrency']), []).append(float(ratio or 0))
        print(f"| {r['chats']} x {int(r['messages']):,} | {r['latency_ms']} ms | {r['concurrency']} | {int(r['passages']):,} | {r['seconds']} "
              f"| {r['passages_per_s']} | {r.get('ideal_per_s', '-')} | {ratio if ratio is None else ratio + ' (' + yes(float(ratio) >= 0.9) + ')'} "
              f"| {r['max_in_flight']} |")
print()
for (chats, concurrency), ratios in runs.items():
    ratios.sort()
    print(f"{chats} chats, --embedding-concurrency {concurrency}: median ratio {ratios[len(ratios) // 2]:.3f} of {len(ratios)} runs")
print()
print(f"Memory, --max-resident-memory {budget} MiB:")
print()
print("| step | ms | RSS MiB | recapd_resident_bytes MiB | chats resident | loads | evictions |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for kind, r in rows:
    if kind == "recall_memory":
        print(f"| {r['step']} | {r['call_ms']} | {r['rss_mib']} | {r['resident_mib']} | {r['chats_resident']} | {r['loads']} | {r['evictions']} |")
PY
