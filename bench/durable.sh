#!/usr/bin/env bash
# Durable writes side by side: recapd's Publish (message_sent, fsynced
# before the answer) against Redis SET with appendonly yes and appendfsync
# always (each write fsynced before its answer, as Motorhead's store would
# run for the same promise). Both servers are pinned to CPU 0 (recapd with
# one worker), the load to CPU 1, and the rounds alternate so that both
# see the same machine; the figures are medians over the rounds.
#
# Three comparisons, as BENCHMARKS.md and the targets of issue 17 state them:
#   - one chat per caller vs random keys, 50 callers / clients;
#   - the same at 200;
#   - 50 callers on one chat vs 50 clients SETting one key.
# Each line also gives the bare tonic server's pace at the same concurrency
# (a tiny unary call, no storage, no logic, same core): the ceiling of any
# gRPC service on this machine.
#
#   bench/durable.sh [ROUNDS [SECONDS]]   default 3 rounds of 5 s per server
#   bench/durable.sh --smoke              one short round: the harness works
#   BENCH_RECAPD=path bench/durable.sh    measures that recapd binary, no build
#
# Redis values are the size of recapd's Publish request message, and Redis
# data sits on the same disk as recapd's (under target/bench).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need taskset util-linux
need python3 python3
need redis-server redis-server
need redis-benchmark redis-tools

rounds=${1:-3}
seconds=${2:-5}
if [ "$rounds" = "--smoke" ]; then rounds=1; seconds=0.5; fi

bench_build
results=$out/durable.txt
: >"$results"
data=$(mktemp -d "$out/durable.XXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
say() { printf '%s\n' "$*" | tee -a "$results"; }

recapd_port=$(free_port)
"${server_cpu[@]}" "$bin" --listen "127.0.0.1:$recapd_port" --workers 1 --data-dir "$data/recapd" \
    --metrics-listen off --log-level warn &
pids+=($!)
wait_serving "127.0.0.1:$recapd_port"

# The ceiling of any gRPC service here: a bare tonic server answering a tiny
# unary call, with no storage and no logic, on the same core.
bare_port=$(free_port)
"${server_cpu[@]}" "$tool" bare-server --listen "127.0.0.1:$bare_port" --workers 1 2>/dev/null &
pids+=($!)

redis_port=$(free_port)
mkdir "$data/redis"
"${server_cpu[@]}" redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$data/redis" --daemonize no \
    --appendonly yes --appendfsync always --save '' --logfile "$out/durable-redis.log" &
pids+=($!)
for _ in $(seq 200); do [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] && break; sleep 0.05; done
[ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ] ||
    { echo "redis-server did not start; its log:"; cat "$out/durable-redis.log"; exit 1; }

publish() { # callers [--one-chat] -> the bench tool's line
    "${load_cpu[@]}" "$tool" unary --target publish --addr "127.0.0.1:$recapd_port" \
        --callers "$1" --seconds "$seconds" ${2:+"$2"}
}
# redis-benchmark runs a fixed number of requests: a short calibration per
# shape sizes them to about `seconds`.
redis_set() { # clients keys(random|one) requests -> "rps p99_ms"
    local spread=(-r 1000000)
    [ "$2" = one ] && spread=()
    "${load_cpu[@]}" redis-benchmark -h 127.0.0.1 -p "$redis_port" -t set -c "$1" -d "$bytes" \
        "${spread[@]}" -n "$3" --csv | python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(sys.stdin) if r["test"] == "SET"]
if len(rows) != 1:
    sys.exit("redis-benchmark printed no SET row")
print("%.0f %.3f" % (float(rows[0]["rps"]), float(rows[0]["p99_latency_ms"])))'
}

bytes=$(field request_bytes "$(publish 1)")
shapes=("50 random" "200 random" "50 one")
declare -A n
for shape in "${shapes[@]}"; do
    read -r clients keys <<<"$shape"
    read -r rps _ <<<"$(redis_set "$clients" "$keys" 2000)"
    n[$shape]=$(python3 -c "print(max(2000, int($rps * $seconds)))")
done

say "# durable writes $(date -u +%Y-%m-%dT%H:%MZ), $rounds rounds of ${seconds} s, ${bytes}-byte values"
declare -A rows bare
for round in $(seq "$rounds"); do
    for shape in "${shapes[@]}"; do
        read -r clients keys <<<"$shape"
        one=""
        [ "$keys" = one ] && one=--one-chat
        line=$(publish "$clients" $one)
        [ "$(field failures "$line")" = 0 ] || { echo "Publish failed: $line"; exit 1; }
        read -r redis_rps redis_p99 <<<"$(redis_set "$clients" "$keys" "${n[$shape]}")"
        rows[$shape]+="$(field per_second "$line") $(field p99_ms "$line") $redis_rps $redis_p99;"
        say "round $round, $clients callers, $keys: recapd $(field per_second "$line")/s p99 $(field p99_ms "$line") ms | Redis ${redis_rps}/s p99 ${redis_p99} ms"
    done
    for clients in 50 200; do
        line=$("${load_cpu[@]}" "$tool" unary --target bare --addr "127.0.0.1:$bare_port" \
            --callers "$clients" --seconds "$seconds" --reply-bytes 2)
        bare[$clients]+="$(field per_second "$line") "
    done
done
# Redis counts error replies as answers: trust its figures only when every
# AOF write succeeded.
redis-cli -p "$redis_port" info persistence | grep -q '^aof_last_write_status:ok' ||
    { echo "Redis: an AOF write failed (see $out/durable-redis.log)"; exit 1; }

for shape in "${shapes[@]}"; do
    read -r clients keys <<<"$shape"
    python3 - "$clients" "$keys" "${rows[$shape]}" "${bare[$clients]}" <<'PY' | tee -a "$results"
import statistics, sys
clients, keys, raw = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = [list(map(float, r.split())) for r in raw.split(";") if r.strip()]
med = lambda i: statistics.median(r[i] for r in rounds)
ratios = ", ".join(f"x{r[0] / r[2]:.2f}" for r in rounds)
shape = "one chat vs one key" if keys == "one" else "one chat per caller"
bare = statistics.median(map(float, sys.argv[4].split()))
print(f"median {clients} callers, {shape}: recapd {med(0):.0f}/s p99 {med(1):.2f} ms | "
      f"Redis {med(2):.0f}/s p99 {med(3):.2f} ms | throughput x{med(0) / med(2):.2f} "
      f"(rounds {ratios}), p99 x{med(1) / med(3):.2f} | bare tonic (no storage) "
      f"{bare:.0f}/s = Redis x{bare / med(2):.2f}")
PY
done
