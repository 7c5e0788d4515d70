#!/usr/bin/env bash
# What OpenTelemetry traces cost (issue 47): one recapd build with tracing
# off (no --otlp-endpoint) and with every call sampled (--otlp-endpoint to a
# collector stand-in, `recapd-bench otlp-sink`, over OTLP/gRPC, sampler
# always_on), in the same minutes:
#   - throughput in alternating rounds, each server started afresh with the
#     bench harness's settings (one worker pinned to CPU 0; load and sink on
#     CPU 1): GetInjection with a 2 KB injection (h2load, 50 streams on 1
#     connection) and durable Publish, 50 callers, one chat each, as
#     bench/ab.sh measures them, and the server's CPU time per call (all
#     its threads, /proc schedstat: steadier than calls/s on a shared
#     machine); per round the spans the sink received per call and
#     recapd's recapd_trace_spans_dropped_total (metrics on in both
#     states). Prints every round, then per figure the medians and on/off.
#   - instructions per GetInjection, off and on, counted by callgrind as
#     bench/callgrind.sh counts them (the export task's work is counted too:
#     the count runs until the batch the load left has been sent).
# The issue's targets: off changes nothing against the build before traces
# (that A/B is bench/ab.sh's and bench/callgrind.sh's, run by BASE_RECAPD
# below), and GetInjection with every call sampled keeps 0.9x of off.
#
#   bench/traces.sh [rounds]      (default 3 rounds)
#   bench/traces.sh --smoke       the harness works; tiny loads, no figure
#                                 (BENCH_PROFILE=debug unless set)
#   BASE_RECAPD=/path/to/recapd bench/traces.sh [rounds]
#                                 also tracing off against that build (the
#                                 one before traces): `bench/ab.sh BASE THIS
#                                 rounds` and `bench/callgrind.sh get` of
#                                 each, their output added to the results
#
# With BENCH_RECAPD set, that recapd is measured (recapd-bench must have
# been built). Results in target/bench/traces.txt; the sink's and h2load's
# files stay in target/bench.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. bench/lib.sh
need h2load nghttp2-client
need protoc protobuf-compiler
need taskset util-linux
need python3 python3
need curl curl
need valgrind valgrind
need callgrind_control valgrind

smoke=0
if [ "${1:-}" = "--smoke" ]; then
    smoke=1
    BENCH_PROFILE=${BENCH_PROFILE:-debug} bench_build
    rounds=1; H2_N=2000; PUB_S=0.5; GRIND_WARM=100; GRIND_N=200; SETTLE=4
else
    rounds=${1:-3}
    bench_build
    H2_N=200000; PUB_S=5; GRIND_WARM=2000; GRIND_N=5000; SETTLE=6
fi
[ -x "$tool" ] || { echo "no recapd-bench at $tool: build it first" >&2; exit 1; }
bin=$(realpath "$bin")
results=$out/traces.txt
: >"$results"
data=$(mktemp -d "$out/traces.XXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
say() { printf '%s\n' "$*" | tee -a "$results"; }
stop() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

grpc_body "$root/proto/recap/v1/recap.proto" "$root/proto" recap.v1.GetInjectionRequest 'chat_id: "bench-0"' "$out/traces-get.bin"

# start_sink: the collector stand-in on the load CPU; sets sink_pid,
# sink_port, sink_file (its count, rewritten every 100 ms).
start_sink() {
    sink_port=$(free_port)
    sink_file=$data/sink-$sink_port.count
    "${load_cpu[@]}" "$tool" otlp-sink --listen "127.0.0.1:$sink_port" --count-file "$sink_file" \
        >"$out/traces-sink.txt" 2>&1 &
    sink_pid=$!
    pids+=("$sink_pid")
    for _ in $(seq 200); do
        (: <"/dev/tcp/127.0.0.1/$sink_port") 2>/dev/null && [ -s "$sink_file" ] && return
        sleep 0.05
    done
    echo "otlp-sink did not start: $(cat "$out/traces-sink.txt")" >&2
    exit 1
}

# The spans the sink has received once recapd's queue has drained: the
# count unchanged for SETTLE polls of 0.2 s (1.2 s; 0.8 s in smoke runs),
# as recapd sends a batch at the latest 0.5 s after its first span.
spans() {
    local last=-1 now same=0
    while [ "$same" -lt "$SETTLE" ]; do
        sleep 0.2
        now=$(field spans "$(cat "$sink_file")")
        if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; last=$now; fi
    done
    echo "$last"
}

# Spans recapd at metrics ADDR dropped, all reasons: "total reason=n,...".
dropped() {
    curl -s "http://$1/metrics" | awk '
        index($0, "recapd_trace_spans_dropped_total") == 1 {
            s += $NF; r = $1; sub(/.*reason="/, "", r); sub(/".*/, "", r); why = why sep r "=" $NF; sep = ","
        }
        END {printf "%.0f %s\n", s, (why == "" ? "-" : why)}'
}

# CPU time recapd (PID) has had so far, all its threads, in ns: the
# server's own cost of a figure, which a busy machine moves much less
# than the throughput (the server is pinned to one CPU, so calls per
# second at saturation are about 1 / CPU per call).
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'; }
per_call_us() { python3 -c "print(f'{($2 - $1) / 1000 / max(1, $3):.2f}')"; }

# The flags of each state: off has no endpoint; on sends every span.
flags() { [ "$1" = on ] && echo "--otlp-endpoint http://127.0.0.1:$sink_port --otlp-protocol grpc --traces-sampler always_on"; true; }

# round STATE: one recapd with tracing STATE (off|on), each figure once.
# The sink runs in both states (the load CPU's work alike), so off also
# checks that no span leaves recapd without an endpoint.
round() {
    local state=$1 port mp pid line res rps p99 s0 s1 s2 c0 c1 c2 calls drop why
    port=$(free_port); mp=$(free_port)
    start_sink
    rm -rf "$data/recapd"
    # shellcheck disable=SC2046 # the flags are words
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$port" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen "127.0.0.1:$mp" --log-level warn $(flags "$state") &
    pid=$!
    pids+=("$pid")
    wait_serving "127.0.0.1:$port"
    "${load_cpu[@]}" "$tool" prepare --addr "127.0.0.1:$port" --chats 1 --bytes 2048 >/dev/null
    s0=$(spans); c0=$(cpu_ns "$pid")
    res=$(h2 traces-get "http://127.0.0.1:$port/recap.v1.InjectionService/GetInjection" "$out/traces-get.bin")
    read -r rps p99 <<<"$res"
    # The CPU count waits for the spans too: their export is part of the cost.
    s1=$(spans); c1=$(cpu_ns "$pid")
    say "$state get_injection rps=$rps p99_ms=$p99 cpu_us_per_call=$(per_call_us "$c0" "$c1" "$H2_N") spans_per_call=$(python3 -c "print(f'{($s1 - $s0) / $H2_N:.3f}')")"
    line=$("${load_cpu[@]}" "$tool" unary --target publish --addr "127.0.0.1:$port" --callers 50 --seconds "$PUB_S")
    [ "$(field failures "$line")" = 0 ] || { echo "Publish failed: $line"; exit 1; }
    calls=$(field count "$line")
    s2=$(spans); c2=$(cpu_ns "$pid")
    say "$state publish rps=$(field per_second "$line") p99_ms=$(field p99_ms "$line") cpu_us_per_call=$(per_call_us "$c1" "$c2" "$calls") spans_per_call=$(python3 -c "print(f'{($s2 - $s1) / max(1, $calls):.3f}')")"
    read -r drop why <<<"$(dropped "127.0.0.1:$mp")"
    say "$state spans received=$s2 dropped=$drop ($why)"
    stop "$pid"
    stop "$sink_pid"
}

# Instructions per GetInjection with tracing STATE, under callgrind as
# bench/callgrind.sh counts them (instrumentation on only while the load
# runs, after a warm-up; all of recapd's threads summed).
grind_get() {
    local state=$1 dir=$out/callgrind-traces-$1 port mp pid before after s0 s1 ir
    rm -rf "$dir"; mkdir -p "$dir"
    start_sink
    port=$(free_port); mp=$(free_port)
    rm -rf "$data/recapd"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
        --callgrind-out-file="$dir/recapd.cg.%p" \
        "$bin" --listen "127.0.0.1:$port" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen "127.0.0.1:$mp" --log-level warn $(flags "$state") 2>"$dir/valgrind.log" &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 600); do "$bin" health --addr "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.2; done
    "$bin" health --addr "127.0.0.1:$port" >/dev/null || { echo "recapd under valgrind did not start" >&2; exit 1; }
    "$tool" prepare --addr "127.0.0.1:$port" --chats 1 --bytes 2048 >/dev/null
    local url=http://127.0.0.1:$port/recap.v1.InjectionService/GetInjection
    h2load -n "$GRIND_WARM" -c 1 -m 50 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' \
        -d "$out/traces-get.bin" "$url" >/dev/null
    s0=$(spans)
    before=$(curl -s "http://127.0.0.1:$mp/metrics" | awk 'index($0, "recapd_rpc_requests_total{") == 1 && /GetInjection/ {s += $NF} END {printf "%.0f\n", s}')
    callgrind_control -z "$pid" >/dev/null 2>&1
    callgrind_control -i on "$pid" >/dev/null 2>&1
    h2load -n "$GRIND_N" -c 1 -m 50 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' \
        -d "$out/traces-get.bin" "$url" >/dev/null
    # Until the sink has every span of the load: the export is part of the cost.
    s1=$(spans)
    callgrind_control -i off "$pid" >/dev/null 2>&1
    callgrind_control -d "$pid" >/dev/null 2>&1
    after=$(curl -s "http://127.0.0.1:$mp/metrics" | awk 'index($0, "recapd_rpc_requests_total{") == 1 && /GetInjection/ {s += $NF} END {printf "%.0f\n", s}')
    stop "$pid"
    stop "$sink_pid"
    [ $((after - before)) -eq "$GRIND_N" ] || { echo "GetInjection: $((after - before)) calls answered of $GRIND_N" >&2; exit 1; }
    ir=$(cat "$dir"/recapd.cg.* | awk '/^totals:/ {s += $2} END {printf "%.0f\n", s}')
    say "$state callgrind_get calls=$GRIND_N ir_per_call=$((ir / GRIND_N)) spans_per_call=$(python3 -c "print(f'{($s1 - $s0) / $GRIND_N:.3f}')")"
}

# The sink's other door: recapd's default protocol, http/protobuf (POST
# /v1/traces), a few calls; a check that spans arrive, no figure.
check_http() {
    local port spans0 spans1
    start_sink
    port=$(free_port)
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$port" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen off --log-level warn --otlp-endpoint "http://127.0.0.1:$sink_port" \
        --otlp-protocol http/protobuf --traces-sampler always_on &
    local pid=$!
    pids+=("$pid")
    wait_serving "127.0.0.1:$port"
    "${load_cpu[@]}" "$tool" prepare --addr "127.0.0.1:$port" --chats 1 --bytes 2048 >/dev/null
    spans0=$(spans)
    h2load -n 1000 -c 1 -m 50 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' \
        -d "$out/traces-get.bin" "http://127.0.0.1:$port/recap.v1.InjectionService/GetInjection" >/dev/null
    spans1=$(spans)
    stop "$pid"
    stop "$sink_pid"
    say "# http/protobuf check: 1000 GetInjection, $((spans1 - spans0)) spans received"
    [ $((spans1 - spans0)) -ge 1000 ] || { echo "http/protobuf: spans missing" >&2; exit 1; }
}

say "# traces $(date -u +%Y-%m-%dT%H:%MZ), $rounds rounds, recapd=$bin"
say "# load: $(uptime | sed 's/.*load average/load average/')"
for r in $(seq "$rounds"); do
    # Alternate which state goes first, so neither always meets a warmer
    # or a busier machine.
    if [ $((r % 2)) -eq 1 ]; then round off; round on; else round on; round off; fi
done
# (A smoke run counts only with traces on: the same code as off, and a
# debug build under valgrind is slow to start.)
[ $smoke -eq 1 ] || grind_get off
grind_get on
check_http
say "# load: $(uptime | sed 's/.*load average/load average/')"

python3 - "$results" "$smoke" <<'PY' | tee -a "$results"
import collections, re, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"(off|on) (\w+) (.*)", line)
    if not m:
        continue
    for key, value in re.findall(r"(\w+)=([\d.]+)", m.group(3)):
        if key == "calls":
            continue
        rows[(m.group(2), key, m.group(1))].append(float(value))
for figure, key in sorted({(f, k) for f, k, _ in rows}):
    if not rows[(figure, key, "off")] or not rows[(figure, key, "on")]:
        continue
    off = statistics.median(rows[(figure, key, "off")])
    on = statistics.median(rows[(figure, key, "on")])
    ratio = f"x{on / off:.3f}" if off else "-"
    print(f"median {figure} {key}: off {off:g} | on {on:g} | on/off {ratio}")
# What the harness must see whatever the machine: no span without an
# endpoint, spans for every call with one.
if max(rows[("get_injection", "spans_per_call", "off")] + rows[("publish", "spans_per_call", "off")]) != 0:
    sys.exit("spans were received with tracing off")
if min(rows[("get_injection", "spans_per_call", "on")]) < 1:
    print("warning: fewer spans than GetInjection calls with every call sampled (dropped? see above)")
if sys.argv[2] == "1":
    print("smoke: the harness works (no figure)")
PY

if [ -n "${BASE_RECAPD:-}" ] && [ $smoke -eq 0 ]; then
    # Tracing off against the build before traces: the existing harnesses.
    base=$(realpath "$BASE_RECAPD")
    say "# off vs before: bench/ab.sh $base $bin $rounds"
    bench/ab.sh "$base" "$bin" "$rounds" | tee -a "$results"
    for b in "$base" "$bin"; do
        say "# BENCH_RECAPD=$b bench/callgrind.sh get"
        BENCH_RECAPD=$b bench/callgrind.sh get | tee -a "$results"
    done
fi
