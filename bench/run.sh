#!/usr/bin/env bash
# recapd's benchmark harness: builds release binaries, starts recapd and the
# bare tonic baseline with the same runtime settings (one worker thread,
# pinned to CPU 0), drives both with the same load from CPU 1, and prints
# every figure of BENCHMARKS.md with its ratio to the baseline. Durable
# Publish is also compared with the store users would pick instead for
# durable writes, Redis fsyncing every write, by bench/durable.sh.
#
#   bench/run.sh            the full run (about 4 minutes, needs ~2 GB of disk), then
#                           bench/durable.sh (about 3), bench/jobs.sh (about 1),
#                           bench/resident.sh (about 3.5), bench/world_info.sh
#                           (about 10), bench/lore.sh (under 1) and
#                           bench/recall.sh (about 17)
#   bench/run.sh --smoke    tiny loads: checks that the harness works, no timing
#   bench/run.sh --core     recapd against the bare server only (GetInjection,
#                           Publish, subscribers, a big chat, restart: about 5
#                           minutes), none of the scripts after it
#
# Replicas sharing a PostgreSQL store (--store) are measured apart, by
# bench/replicas.sh: it needs a database, so this script does not run it.
# Durable Publish over recapd's --workers 1, 2, 4, 8 (calls/s, the server's
# busy cores, the commit thread's share) is bench/scaling.sh, run apart too.
# Recaps written by recapd (bench/jobs.sh, with a fake LLM) run at the end,
# on the embedded store and on PostgreSQL, then the memory budget
# (bench/resident.sh: 200,000 chats past a 256 MiB budget).
#
# Unary load uses h2load (Debian nghttp2-client) with request bodies encoded
# by `protoc --encode` (Debian protobuf-compiler) and the 5-byte gRPC prefix.
# h2load counts gRPC errors as successes, so every figure is trusted only
# after a real client got OK from the same call, and recapd's own metrics
# show no failed call afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
smoke=0
core_only=0
case "${1:-}" in
--smoke) smoke=1 ;;
--core) core_only=1 ;;
esac

. bench/lib.sh
need h2load nghttp2-client
need protoc protobuf-compiler
need taskset util-linux
need python3 python3

bench_build
results=$out/results.txt
: >"$results"

port() { free_port; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
say() { printf '%s\n' "$*" | tee -a "$results"; }

if [ $smoke -eq 1 ]; then
    H2_N=2000; UNARY_S=1; SUBS=200; FAN_RATE=5; FAN_S=1; MANY_CHATS=20; MANY_RATE=50; MANY_S=1
    BIG=2000; FILL_MB=5
else
    H2_N=300000; UNARY_S=10; SUBS=10000; FAN_RATE=5; FAN_S=4; MANY_CHATS=10000; MANY_RATE=1000; MANY_S=30
    BIG=100000; FILL_MB=1024
fi
PUB_CALLERS=50

data=$(mktemp -d "$out/data.XXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT

start_servers() {
    bare_port=$(port); recapd_port=$(port); metrics_port=$(port)
    "${server_cpu[@]}" "$tool" bare-server --listen "127.0.0.1:$bare_port" --workers 1 2>/dev/null &
    bare_pid=$!; pids+=("$bare_pid")
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$recapd_port" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen "127.0.0.1:$metrics_port" --log-level warn &
    recapd_pid=$!; pids+=("$recapd_pid")
    wait_serving "127.0.0.1:$recapd_port"
}

failed_calls() { # method -> number of non-OK answers recapd counted
    curl -s "127.0.0.1:$metrics_port/metrics" 2>/dev/null | python3 -c "
import sys
m = sys.argv[1]
print(sum(float(l.rsplit(' ', 1)[1]) for l in sys.stdin
          if l.startswith('recapd_rpc_requests_total{') and f'method=\"{m}\"' in l and 'code=\"OK\"' not in l))" "$1"
}


ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.2f}')"; }

say "# recapd benchmarks $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); smoke=$smoke"
start_servers

# ---- GetInjection with a 2 KB injection vs the bare unary answering the same bytes
prep=$("${load_cpu[@]}" "$tool" prepare --addr "127.0.0.1:$recapd_port" --chats 1 --bytes 2048)
reply_bytes=$(field reply_bytes "$prep")
"${load_cpu[@]}" "$tool" unary --target bare --addr "127.0.0.1:$bare_port" --callers 1 --seconds 0.2 \
    --reply-bytes "$((reply_bytes - 3))" >/dev/null   # real-client OK check of the baseline
grpc_body "$root/proto/recap/v1/recap.proto" "$root/proto" recap.v1.GetInjectionRequest 'chat_id: "bench-0"' "$out/get.bin"
grpc_body "$root/bench/proto/bench/v1/bare.proto" "$root/bench/proto" bench.v1.BareRequest "reply_bytes: $((reply_bytes - 3))" "$out/bare.bin"
# Three alternating rounds (bare, then recapd); each side's median round
# (by calls/s) is reported.
get_rounds=(); bare_rounds=()
for _ in 1 2 3; do
    bare_rounds+=("$(h2 bare "http://127.0.0.1:$bare_port/bench.v1.BareService/Unary" "$out/bare.bin")")
    get_rounds+=("$(h2 get "http://127.0.0.1:$recapd_port/recap.v1.InjectionService/GetInjection" "$out/get.bin")")
done
median_rps() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
read -r bare_rps bare_p99 <<<"$(median_rps "${bare_rounds[@]}")"
read -r get_rps get_p99 <<<"$(median_rps "${get_rounds[@]}")"
[ "$(failed_calls recap.v1.InjectionService/GetInjection)" = "0" ] || { echo "GetInjection calls failed during h2load"; exit 1; }
say "GetInjection 2KB (median of 3 alternating rounds): recapd ${get_rps}/s p99 ${get_p99} ms | bare ${bare_rps}/s p99 ${bare_p99} ms | throughput x$(ratio "$get_rps" "$bare_rps") (target >= 1.0), p99 x$(ratio "$get_p99" "$bare_p99") (target <= 1.5) | rounds recapd ${get_rounds[*]// /\/} bare ${bare_rounds[*]// /\/}"

# ---- Publish message_sent, 50 callers, durable (fsync) vs bare tiny unary, same client
# Three alternating rounds (bare, then recapd); each side's median round.
pub_rounds=(); base_rounds=()
for _ in 1 2 3; do
    base_rounds+=("$("${load_cpu[@]}" "$tool" unary --target bare --addr "127.0.0.1:$bare_port" --callers "$PUB_CALLERS" --seconds "$UNARY_S" --reply-bytes 2)")
    pub_rounds+=("$("${load_cpu[@]}" "$tool" unary --target publish --addr "127.0.0.1:$recapd_port" --callers "$PUB_CALLERS" --seconds "$UNARY_S")")
done
median_round_by() { local name=$1; shift; for line in "$@"; do echo "$(field "$name" "$line") $line"; done | sort -n | sed -n 2p | cut -d' ' -f2-; }
pub=$(median_round_by per_second "${pub_rounds[@]}"); base=$(median_round_by per_second "${base_rounds[@]}")
[ "$(failed_calls recap.v1.EventService/Publish)" = "0" ] || { echo "Publish calls failed"; exit 1; }

say "Publish message_sent x$PUB_CALLERS callers (median of 3 alternating rounds): recapd $(field per_second "$pub")/s p99 $(field p99_ms "$pub") ms | bare $(field per_second "$base")/s p99 $(field p99_ms "$base") ms | throughput x$(ratio "$(field per_second "$pub")" "$(field per_second "$base")") (target >= 0.50) (against Redis: bench/durable.sh, below)"

# ---- memory per idle subscriber
before=$(rss_kb "$recapd_pid")
"${load_cpu[@]}" "$tool" fanout --target recapd --addr "127.0.0.1:$recapd_port" --subscribers "$SUBS" --chats 1 --hold-idle 3 >"$out/idle.txt" &
idle_pid=$!
for _ in $(seq 600); do grep -q idle_streams "$out/idle.txt" 2>/dev/null && break; sleep 0.1; done
sleep 1
after=$(rss_kb "$recapd_pid")
wait "$idle_pid"
say "Idle subscribers: $SUBS streams add $(( (after - before) )) KiB to recapd's RSS = $(python3 -c "print(f'{($after-$before)/$SUBS:.2f}')") KiB each (target <= 16)"

# ---- fan-out: SUBS subscribers on one chat
# Three alternating rounds; the median round of each side is reported.
fan_r_all=(); fan_b_all=()
for _ in 1 2 3; do
    fan_r_all+=("$("${load_cpu[@]}" "$tool" fanout --target recapd --addr "127.0.0.1:$recapd_port" --subscribers "$SUBS" --chats 1 --rate "$FAN_RATE" --seconds "$FAN_S")")
    fan_b_all+=("$("${load_cpu[@]}" "$tool" fanout --target bare --addr "127.0.0.1:$bare_port" --subscribers "$SUBS" --chats 1 --rate "$FAN_RATE" --seconds "$FAN_S" --payload-bytes 2048)")
done
median_round() { for line in "$@"; do echo "$(field p99_ms "$line") $line"; done | sort -n | sed -n 2p | cut -d' ' -f2-; }
fan_r=$(median_round "${fan_r_all[@]}"); fan_b=$(median_round "${fan_b_all[@]}")
say "Fan-out $SUBS subscribers, 1 chat (median of 3 rounds): recapd p50 $(field p50_ms "$fan_r") p99 $(field p99_ms "$fan_r") ms ($(field count "$fan_r") deliveries) | bare p50 $(field p50_ms "$fan_b") p99 $(field p99_ms "$fan_b") ms ($(field count "$fan_b")) | p99 x$(ratio "$(field p99_ms "$fan_r")" "$(field p99_ms "$fan_b")") (target <= 1.1)"

# ---- fan-out: MANY_CHATS subscribers on as many chats, MANY_RATE refreshes/s
"${load_cpu[@]}" "$tool" prepare --addr "127.0.0.1:$recapd_port" --chats "$MANY_CHATS" --bytes 2048 >/dev/null
commit_histogram() { curl -s "127.0.0.1:$metrics_port/metrics" | grep '^recapd_store_commit_duration_seconds_bucket' || true; }
commit_histogram >"$out/commits-before.txt"
many_r=$("${load_cpu[@]}" "$tool" fanout --target recapd --addr "127.0.0.1:$recapd_port" --subscribers "$MANY_CHATS" --chats "$MANY_CHATS" --rate "$MANY_RATE" --seconds "$MANY_S")
commit_histogram >"$out/commits-after.txt"
# The store's commit p99 over the same run: recapd's commit-duration
# histogram read before and after, its buckets subtracted, the p99 placed
# within its bucket by linear interpolation (the buckets are coarse: 0.25,
# 0.5, 1, 2.5, 5, 10 ms...).
commit_p99=$(python3 - "$out/commits-before.txt" "$out/commits-after.txt" <<'PY'
import re, sys
def read(path):
    out = {}
    for line in open(path):
        m = re.match(r'.*le="([^"]+)"\} (\S+)', line)
        if m:
            out[float("inf") if m.group(1) == "+Inf" else float(m.group(1))] = float(m.group(2))
    return out
before, after = read(sys.argv[1]), read(sys.argv[2])
bounds = sorted(after)
counts = [after[b] - before.get(b, 0) for b in bounds]
total = counts[-1] if counts else 0
if total == 0:
    print("nan")
    sys.exit()
rank, lower, below = 0.99 * total, 0.0, 0.0
for bound, count in zip(bounds, counts):
    if count >= rank:
        upper = bound if bound != float("inf") else lower
        share = (rank - below) / (count - below) if count > below else 1.0
        print(f"{(lower + (upper - lower) * share) * 1000:.2f}")
        break
    lower, below = bound, count
PY
)
many_b=$("${load_cpu[@]}" "$tool" fanout --target bare --addr "127.0.0.1:$bare_port" --subscribers "$MANY_CHATS" --chats "$MANY_CHATS" --rate "$MANY_RATE" --seconds "$MANY_S" --payload-bytes 2048)
say "Fan-out $MANY_CHATS chats x 1 subscriber, $MANY_RATE refreshes/s for ${MANY_S}s: recapd p99 $(field p99_ms "$many_r") ms ($(field count "$many_r") of $(field triggers "$many_r") delivered) | bare p99 $(field p99_ms "$many_b") ms ($(field count "$many_b") of $(field triggers "$many_b")) | p99 x$(ratio "$(field p99_ms "$many_r")" "$(field p99_ms "$many_b")") (target <= 1.25) | store commit p99 over the run ${commit_p99} ms: delivery p99 x$(ratio "$(field p99_ms "$many_r")" "$commit_p99") of it (target <= 2)"

kill "$recapd_pid" "$bare_pid"; wait "$recapd_pid" "$bare_pid" 2>/dev/null || true

# ---- a huge chat: refresh work of one appended message, cold load
big=$("${server_cpu[@]}" "$tool" big-chat --messages "$BIG")
say "Chat of $BIG messages: append + refresh median $(field append_refresh_p50_ms "$big") ms (target <= 1), cold load $(field cold_load_ms "$big") ms (target <= 1000)"

# ---- restart with FILL_MB of data
"$tool" fill --data-dir "$data/fill" --megabytes "$FILL_MB" >"$out/fill.txt"
sync
restart_port=$(port)
t0=$(date +%s.%N)
"${server_cpu[@]}" "$bin" --listen "127.0.0.1:$restart_port" --workers 1 --data-dir "$data/fill" --metrics-listen off --log-level warn &
restart_pid=$!; pids+=("$restart_pid")
until "$bin" health --addr "127.0.0.1:$restart_port" >/dev/null 2>&1; do sleep 0.01; done
t1=$(date +%s.%N)
say "Restart with $(field megabytes "$(cat "$out/fill.txt")") MB stored: serving after $(python3 -c "print(f'{$t1-$t0:.2f}')") s (target <= 2)"
kill "$restart_pid"; wait "$restart_pid" 2>/dev/null || true
if [ $core_only -eq 1 ]; then say "(--core: the other scripts not run; results also in $results)"; exit 0; fi
# ---- durable writes against Redis, alternating rounds: one chat per caller
# at 50 and 200 callers, and 50 callers on one chat
if [ $smoke -eq 1 ]; then bench/durable.sh --smoke | tee -a "$results"; else bench/durable.sh | tee -a "$results"; fi
# ---- recaps written by recapd: jobs through the pipeline with a fake LLM
if [ $smoke -eq 1 ]; then bench/jobs.sh --smoke | tee -a "$results"; else bench/jobs.sh | tee -a "$results"; fi
# ---- a memory budget far below the chats written: peak RSS, cold vs warm reads
if [ $smoke -eq 1 ]; then bench/resident.sh --smoke | tee -a "$results"; else bench/resident.sh | tee -a "$results"; fi
# ---- World Info (issue 29): ScanWorldInfo and RenderPrompt with generated
# books, against RenderPrompt without World Info
if [ $smoke -eq 1 ]; then bench/world_info.sh --smoke | tee -a "$results"; else bench/world_info.sh | tee -a "$results"; fi
# ---- lore writing (issue 30): requests per scene against the extension's,
# and the queue's overhead per lore job, with a scripted fake LLM
if [ $smoke -eq 1 ]; then bench/lore.sh --smoke | tee -a "$results"; else bench/lore.sh | tee -a "$results"; fi
# ---- recall (issue 31): indexing, Recall latency, the recall tier's cost
# per refresh and memory, with a fake embeddings endpoint
if [ $smoke -eq 1 ]; then bench/recall.sh --smoke | tee -a "$results"; else bench/recall.sh | tee -a "$results"; fi
say "(results also in $results)"
