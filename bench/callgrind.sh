#!/usr/bin/env bash
# Instructions per call, counted by callgrind: the same for the same binary
# and inputs whatever else the machine is doing, so two builds compare on a
# noisy machine. Each server runs under valgrind with one worker;
# instrumentation is switched on only while the load runs (after a warm-up),
# and each thread gets its own count, so the commit thread's share reads
# directly.
#
#   bench/callgrind.sh get       GetInjection, 2 KB injection, recapd and the
#                                bare tonic server answering the same bytes
#   bench/callgrind.sh publish   durable Publish (SQLite, --durability full),
#                                50 callers, one chat each; per thread
#   bench/callgrind.sh fanout    one injection pushed to 500 subscribers of
#                                one chat, per delivery, recapd and the bare
#                                broadcast
#   bench/callgrind.sh all       the three
#   add --smoke for tiny loads (checks that the script works; no figure)
#
# With BENCH_RECAPD=/path/to/recapd, that binary is measured (A/B of two
# builds; recapd-bench is built from this tree). The callgrind files stay
# in target/bench/callgrind-<what>/ for `callgrind_annotate --inclusive=yes`.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?usage: bench/callgrind.sh get|publish|fanout|all [--smoke]}
smoke=0
[ "${2:-}" = "--smoke" ] && smoke=1

. bench/lib.sh
need valgrind valgrind
need callgrind_control valgrind
need h2load nghttp2-client
need curl curl
need protoc protobuf-compiler
bench_build

if [ $smoke -eq 1 ]; then GET_N=200; PUB_S=1; FAN_SUBS=20; FAN_S=(1 2); else GET_N=20000; PUB_S=20; FAN_SUBS=500; FAN_S=(2 6); fi
pids=()
dirs=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for d in "${dirs[@]}"; do rm -rf "$d"; done
}
trap cleanup EXIT

# grind OUT PREFIX COMMAND...: starts COMMAND under callgrind, instrumentation off.
grind() {
    local dir=$1 prefix=$2
    shift 2
    valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
        --callgrind-out-file="$dir/$prefix.cg.%p" "$@" 2>"$dir/$prefix.valgrind.log" &
    pids+=($!)
    grinding=$!
}

# Instructions in callgrind files (their `totals:` lines).
total_ir() { cat "$@" | awk '/^totals:/ {s+=$2} END {printf "%.0f\n", s}'; }

# The calls recapd answered of METHOD, from its metrics at ADDR.
answered() {
    curl -s "http://$1/metrics" | awk -v m="method=\"$2\"" \
        'index($0, "recapd_rpc_requests_total{") == 1 && index($0, m) {s += $NF} END {printf "%.0f\n", s}'
}

# The store's commits so far at ADDR, and the groups they held: "commits groups".
commits() {
    curl -s "http://$1/metrics" | awk '
        index($0, "recapd_store_commit_batch_size_count") == 1 {c += $NF}
        index($0, "recapd_store_commit_batch_size_sum") == 1 {g += $NF}
        END {printf "%.0f %.0f\n", c, g}'
}

# measure PID COMMAND...: zeroes PID's counts, counts while COMMAND runs, dumps.
measure() {
    local pid=$1
    shift
    callgrind_control -z "$pid" >/dev/null 2>&1
    callgrind_control -i on "$pid" >/dev/null 2>&1
    "$@"
    callgrind_control -i off "$pid" >/dev/null 2>&1
    callgrind_control -d "$pid" >/dev/null 2>&1
}

start_recapd() { # dir metrics-port -> sets recapd_pid, recapd_addr
    local dir=$1 data
    data=$(mktemp -d)
    dirs+=("$data")
    recapd_addr=127.0.0.1:$(free_port)
    grind "$dir" recapd "$bin" --listen "$recapd_addr" --workers 1 --durability full --data-dir "$data" \
        --metrics-listen "127.0.0.1:$2" --log-level warn
    recapd_pid=$grinding
    for _ in $(seq 600); do "$bin" health --addr "$recapd_addr" >/dev/null 2>&1 && return; sleep 0.2; done
    echo "recapd under valgrind did not start" >&2
    exit 1
}

start_bare() { # dir -> sets bare_pid, bare_addr
    bare_addr=127.0.0.1:$(free_port)
    grind "$1" bare "$tool" bare-server --listen "$bare_addr" --workers 1
    bare_pid=$grinding
    for _ in $(seq 600); do
        "$tool" unary --target bare --addr "$bare_addr" --callers 1 --seconds 0.2 --reply-bytes 8 >/dev/null 2>&1 && return
        sleep 0.2
    done
    echo "the bare server under valgrind did not start" >&2
    exit 1
}

stop() { kill "$@" 2>/dev/null || true; wait "$@" 2>/dev/null || true; }

h2n() { h2load -n "$1" -c 1 -m 50 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' -d "$3" "$2" >/dev/null; }

grind_get() {
    local dir=$out/callgrind-get mp
    rm -rf "$dir"; mkdir -p "$dir"
    mp=$(free_port)
    start_recapd "$dir" "$mp"
    start_bare "$dir"
    local prep reply
    prep=$("$tool" prepare --addr "$recapd_addr" --chats 1 --bytes 2048)
    reply=$(field reply_bytes "$prep")
    grpc_body proto/recap/v1/recap.proto proto recap.v1.GetInjectionRequest 'chat_id: "bench-0"' "$dir/get.bin"
    grpc_body bench/proto/bench/v1/bare.proto bench/proto bench.v1.BareRequest "reply_bytes: $((reply - 3))" "$dir/bare.bin"
    local get_url=http://$recapd_addr/recap.v1.InjectionService/GetInjection
    local bare_url=http://$bare_addr/bench.v1.BareService/Unary
    h2n 2000 "$get_url" "$dir/get.bin"
    h2n 2000 "$bare_url" "$dir/bare.bin"
    local before after
    before=$(answered "127.0.0.1:$mp" recap.v1.InjectionService/GetInjection)
    measure "$recapd_pid" h2n "$GET_N" "$get_url" "$dir/get.bin"
    after=$(answered "127.0.0.1:$mp" recap.v1.InjectionService/GetInjection)
    [ $((after - before)) -eq "$GET_N" ] || { echo "GetInjection: $((after - before)) calls answered of $GET_N" >&2; exit 1; }
    measure "$bare_pid" h2n "$GET_N" "$bare_url" "$dir/bare.bin"
    stop "$recapd_pid" "$bare_pid"
    local r b
    r=$(( $(total_ir "$dir"/recapd.cg.*) / GET_N ))
    b=$(( $(total_ir "$dir"/bare.cg.*) / GET_N ))
    echo "get: reply_bytes=$reply calls=$GET_N recapd_ir_per_call=$r bare_ir_per_call=$b ratio=$(python3 -c "print(f'{$r/$b:.3f}')")"
}

grind_publish() {
    local dir=$out/callgrind-publish mp
    rm -rf "$dir"; mkdir -p "$dir"
    mp=$(free_port)
    start_recapd "$dir" "$mp"
    "$tool" unary --target publish --addr "$recapd_addr" --callers 50 --seconds 2 >/dev/null
    local before after calls c0 g0 c1 g1
    before=$(answered "127.0.0.1:$mp" recap.v1.EventService/Publish)
    read -r c0 g0 <<<"$(commits "127.0.0.1:$mp")"
    measure "$recapd_pid" "$tool" unary --target publish --addr "$recapd_addr" --callers 50 --seconds "$PUB_S" >/dev/null
    after=$(answered "127.0.0.1:$mp" recap.v1.EventService/Publish)
    read -r c1 g1 <<<"$(commits "127.0.0.1:$mp")"
    stop "$recapd_pid"
    calls=$((after - before))
    # Groups per commit: the commit thread's BEGIN/COMMIT is shared by
    # that many calls, so its share per call depends on it.
    echo "publish: calls=$calls ir_per_call=$(( $(total_ir "$dir"/recapd.cg.*) / calls )) groups_per_commit=$(python3 -c "print(f'{($g1-$g0)/max(1,$c1-$c0):.1f}')")"
    local f t name
    for f in "$dir"/recapd.cg.*; do
        t=$(total_ir "$f")
        [ "${t:-0}" -gt $((calls * 100)) ] || continue
        # What the thread is: the function at the root of its costs.
        root=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null | sed -n '/file:function/,$p' |
            sed -n '3s/.*???:\([^ []*\).*/\1/p')
        case $root in
        *commit_loop* | *run_blocking*) name=commit ;;
        *worker::Context::run*) name=worker ;;
        *) name=${root:-unknown} ;;
        esac
        echo "publish: thread=${f##*.} ($name) ir_per_call=$((t / calls))"
    done
}

grind_fanout() {
    local dir=$out/callgrind-fanout mp
    rm -rf "$dir"; mkdir -p "$dir"
    mp=$(free_port)
    start_recapd "$dir" "$mp"
    start_bare "$dir"
    "$tool" prepare --addr "$recapd_addr" --chats 1 --bytes 2048 >/dev/null
    local who pid addr s line ir delivered
    for who in recapd bare; do
        if [ $who = recapd ]; then pid=$recapd_pid; addr=$recapd_addr; else pid=$bare_pid; addr=$bare_addr; fi
        local irs=() counts=()
        for s in "${FAN_S[@]}"; do
            measure "$pid" "$tool" fanout --target "$who" --addr "$addr" --subscribers "$FAN_SUBS" --chats 1 \
                --rate 1 --seconds "$s" --payload-bytes 2048 >"$dir/$who.$s.txt"
            sleep 0.5
            # Zeroed before the run: the dump holds this run alone.
            ir=$(total_ir "$dir"/$who.cg.*)
            mkdir -p "$dir/$who.$s"; mv "$dir"/$who.cg.* "$dir/$who.$s/"
            delivered=$(field count "$(cat "$dir/$who.$s.txt")")
            irs+=("$ir"); counts+=("${delivered:-0}")
        done
        local d=$(( counts[1] - counts[0] ))
        [ "$d" -gt 0 ] || { echo "fanout $who: no more deliveries in the longer run (${counts[*]})" >&2; exit 1; }
        echo "fanout: $who subscribers=$FAN_SUBS deliveries=${counts[*]} ir_per_delivery=$(( (irs[1] - irs[0]) / d ))"
    done
    stop "$recapd_pid" "$bare_pid"
}

case $what in
get) grind_get ;;
publish) grind_publish ;;
fanout) grind_fanout ;;
all) grind_get; grind_publish; grind_fanout ;;
*) echo "usage: bench/callgrind.sh get|publish|fanout|all [--smoke]" >&2; exit 64 ;;
esac
