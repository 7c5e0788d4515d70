#!/usr/bin/env bash
# An A/B of two recapd builds in the same minutes: alternating rounds, each
# build started afresh per round with the bench harness's settings (one
# worker thread pinned to CPU 0, load from CPU 1), measuring the figures a
# change to the server's code can move:
#   - GetInjection with a 2 KB injection (h2load, 50 streams on 1 connection)
#   - durable Publish, 50 callers, one chat each
#   - durable Publish, 50 callers on one chat (group commits)
#   - Subscribe fan-out: SUBS subscribers on one chat, 5 refreshes/s
# Prints every round, then per figure the median of each build and B/A.
#
#   bench/ab.sh A_RECAPD B_RECAPD [rounds]     (default 3 rounds)
#   bench/ab.sh --smoke                        the harness works; no timing
#
# recapd-bench is built from this checkout (the load is the same for both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. bench/lib.sh
need h2load nghttp2-client
need protoc protobuf-compiler
need taskset util-linux
need python3 python3

if [ "${1:-}" = "--smoke" ]; then
    bench_build
    a=$bin; b=$bin; rounds=1; H2_N=2000; PUB_S=0.5; SUBS=100; FAN_S=1
else
    [ $# -ge 2 ] || { echo "usage: bench/ab.sh A_RECAPD B_RECAPD [rounds]" >&2; exit 64; }
    a=$(realpath "$1"); b=$(realpath "$2"); rounds=${3:-3}
    BENCH_RECAPD=$a bench_build
    [ -x "$tool" ] || cargo build --release --locked -p recapd-bench --bin recapd-bench
    H2_N=200000; PUB_S=5; SUBS=5000; FAN_S=4
fi
results=$out/ab.txt
: >"$results"
data=$(mktemp -d "$out/ab.XXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
say() { printf '%s\n' "$*" | tee -a "$results"; }

grpc_body "$root/proto/recap/v1/recap.proto" "$root/proto" recap.v1.GetInjectionRequest 'chat_id: "bench-0"' "$out/ab-get.bin"

get_injection() { # port -> "rps p99_ms"
    h2 ab-get "http://127.0.0.1:$1/recap.v1.InjectionService/GetInjection" "$out/ab-get.bin"
}

# round BUILD_NAME BINARY: one server of that build, every figure once.
round() {
    local name=$1 server=$2 port line
    port=$(free_port)
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$server" --listen "127.0.0.1:$port" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen off --log-level warn &
    local pid=$!
    pids+=("$pid")
    bin=$server wait_serving "127.0.0.1:$port"
    "${load_cpu[@]}" "$tool" prepare --addr "127.0.0.1:$port" --chats 1 --bytes 2048 >/dev/null
    read -r rps p99 <<<"$(get_injection "$port")"
    say "$name get_injection rps=$rps p99_ms=$p99"
    for shape in "" --one-chat; do
        line=$("${load_cpu[@]}" "$tool" unary --target publish --addr "127.0.0.1:$port" \
            --callers 50 --seconds "$PUB_S" $shape)
        [ "$(field failures "$line")" = 0 ] || { echo "Publish failed: $line"; exit 1; }
        say "$name publish${shape:+_one_chat} rps=$(field per_second "$line") p99_ms=$(field p99_ms "$line")"
    done
    line=$("${load_cpu[@]}" "$tool" fanout --target recapd --addr "127.0.0.1:$port" \
        --subscribers "$SUBS" --chats 1 --rate 5 --seconds "$FAN_S")
    say "$name fanout p50_ms=$(field p50_ms "$line") p99_ms=$(field p99_ms "$line")"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

say "# A/B $(date -u +%Y-%m-%dT%H:%MZ), $rounds rounds: A=$a B=$b"
for r in $(seq "$rounds"); do
    # Alternate which build goes first, so neither always meets a warmer
    # or a busier machine.
    if [ $((r % 2)) -eq 1 ]; then round A "$a"; round B "$b"; else round B "$b"; round A "$a"; fi
done

python3 - "$results" <<'PY' | tee -a "$results"
import collections, re, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"([AB]) (\w+) (.*)", line)
    if not m:
        continue
    for key, value in re.findall(r"(\w+)=([\d.]+)", m.group(3)):
        rows[(m.group(2), key, m.group(1))].append(float(value))
for figure, key in sorted({(f, k) for f, k, _ in rows}):
    a = statistics.median(rows[(figure, key, "A")])
    b = statistics.median(rows[(figure, key, "B")])
    print(f"median {figure} {key}: A {a:g} | B {b:g} | B/A x{b / a:.2f}")
PY
