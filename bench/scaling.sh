#!/usr/bin/env bash
# Write-path scaling: does durable Publish (the embedded SQLite store,
# --durability full: each answer only once its commit is fsynced) go
# faster with more tokio worker threads (--workers), and what serialises
# it? For W in 1, 2, 4, 8 a fresh recapd (fresh data directory, --workers
# W) takes durable Publish from 200 callers over 8 connections for 6 s,
# once with one chat per caller and once with every caller on one chat
# (--one-chat).
#
# The server and the load sit on separate cores: with n cores, n >= 4 gives
# the server CPUs 0..n/2-1 and the load the rest; 2 or 3 cores give the
# server CPUs 0..n-2 and the load the last one; on 1 core nothing is
# pinned. The split is printed first: on a 2-core machine the server has
# one core whatever W is, so the rows show the cost of more workers on one
# core, not scaling.
#
# Per run: calls/s and p99 (recapd-bench unary), the ratio of calls/s to
# the W=1 row of the same shape in this run, the server's busy cores (the
# utime+stime recapd's process gained in /proc/PID/stat over the load's
# wall time, divided by that wall time) and, likewise from
# /proc/PID/task/TID/stat, the busy share of the store's commit thread
# (named recapd-commit), with its CPU per call and the calls/s at which it
# alone would fill a core: whatever the cores, durable Publish on one
# database cannot go past that ceiling. The run fails when recapd's metrics
# count a Publish that did not answer OK.
#
#   bench/scaling.sh            the full run (about 70 s after the build)
#   bench/scaling.sh --smoke    20 callers for 1 s, W in 1 2: the script works; no figure
#
# Lines go to stdout and to target/bench/scaling.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1

. bench/lib.sh
need taskset util-linux
need curl curl
need python3 python3
bench_build

if [ $smoke -eq 1 ]; then WORKERS=(1 2); CALLERS=20; SECONDS_=1; else WORKERS=(1 2 4 8); CALLERS=200; SECONDS_=6; fi
CONNECTIONS=8

results=$out/scaling.txt
: >"$results"
data=$(mktemp -d "$out/scaling.XXXX")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$data"; }
trap cleanup EXIT
say() { printf '%s\n' "$*" | tee -a "$results"; }

# ---- the CPU split (bench_build's default is CPU 0 / CPU 1)
n=$(nproc)
cpus() { if [ "$1" = "$2" ]; then echo "CPU $1"; else echo "CPUs $1-$2"; fi; }
if [ "$n" -ge 4 ]; then
    server_set=0-$((n / 2 - 1)); load_set=$((n / 2))-$((n - 1))
    split="server on $(cpus 0 $((n / 2 - 1))), load on $(cpus $((n / 2)) $((n - 1)))"
    server_cores=$((n / 2))
elif [ "$n" -ge 2 ]; then
    server_set=0-$((n - 2)); load_set=$((n - 1))
    split="server on $(cpus 0 $((n - 2))), load on $(cpus $((n - 1)) $((n - 1)))"
    server_cores=$((n - 1))
else
    split="no pinning (server and load share the core)"
    server_cores=1
fi
if [ "$n" -ge 2 ]; then server_cpu=(taskset -c "$server_set"); load_cpu=(taskset -c "$load_set"); else server_cpu=(); load_cpu=(); fi

hz=$(getconf CLK_TCK)
# ticks STATFILE: utime+stime of a /proc stat file, in clock ticks (the
# fields after the command name, which may hold spaces, end with ')').
ticks() { sed 's/.*) //' "$1" | awk '{print $12 + $13}'; }
# The store's commit thread of recapd PID, by its name; empty when none.
commit_tid() {
    local t
    for t in /proc/"$1"/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = recapd-commit ] && { echo "${t##*/}"; return; }
    done
    true
}
# Publish calls recapd counted at the metrics address, OK and not OK.
publish_counts() {
    curl -s "http://$1/metrics" | awk '
        index($0, "recapd_rpc_requests_total{") == 1 && index($0, "method=\"recap.v1.EventService/Publish\"") {
            if (index($0, "code=\"OK\"")) ok += $NF; else bad += $NF
        }
        END {printf "%.0f %.0f\n", ok, bad}'
}
calc() { python3 -c "print(f'{$1:.2f}')"; }

say "# recapd write-path scaling $(date -u +%Y-%m-%dT%H:%MZ) on $n cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); smoke=$smoke"
say "$n cores: $split"
say "durable Publish (SQLite, --durability full), $CALLERS callers over $CONNECTIONS connections, ${SECONDS_} s per run"

declare -A base
for w in "${WORKERS[@]}"; do
    port=$(free_port); metrics=127.0.0.1:$(free_port)
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$port" --workers "$w" --durability full \
        --data-dir "$data/recapd" --metrics-listen "$metrics" --log-level warn &
    pid=$!; pids+=("$pid")
    wait_serving "127.0.0.1:$port"
    tid=$(commit_tid "$pid")
    addrs=()
    for _ in $(seq "$CONNECTIONS"); do addrs+=(--addr "127.0.0.1:$port"); done
    sent=0
    for shape in many one; do
        flag=()
        [ $shape = one ] && flag=(--one-chat)
        p0=$(ticks "/proc/$pid/stat"); c0=0
        [ -n "$tid" ] && c0=$(ticks "/proc/$pid/task/$tid/stat")
        t0=$(date +%s.%N)
        line=$("${load_cpu[@]}" "$tool" unary --target publish "${addrs[@]}" --callers "$CALLERS" \
            --seconds "$SECONDS_" "${flag[@]}")
        t1=$(date +%s.%N)
        p1=$(ticks "/proc/$pid/stat"); c1=0
        [ -n "$tid" ] && c1=$(ticks "/proc/$pid/task/$tid/stat")
        rps=$(field per_second "$line")
        sent=$((sent + $(field count "$line")))
        [ "$w" = "${WORKERS[0]}" ] && base[$shape]=$rps
        busy=$(calc "($p1 - $p0) / $hz / ($t1 - $t0)")
        if [ -n "$tid" ]; then
            share=$(calc "($c1 - $c0) / $hz / ($t1 - $t0)")
            # The commit thread's CPU per call, and the calls/s at which it
            # alone would fill a core: the ceiling of the serial part.
            commit="commit thread $share core, $(python3 -c "s=($c1 - $c0) / $hz / ($t1 - $t0); r=$rps; print(f'{s/r*1e6:.1f} us CPU per call, ceiling {r/s:.0f} calls/s' if s > 0 else 'no CPU seen')")"
        else
            commit="commit thread: none named recapd-commit"
        fi
        if [ $shape = many ]; then what="one chat per caller"; else what="all callers on one chat"; fi
        say "Publish durable, --workers $w, $what: $(printf '%.0f' "$rps") calls/s (x$(calc "$rps / ${base[$shape]}") of --workers ${WORKERS[0]}), p99 $(field p99_ms "$line") ms | server busy $busy cores of $server_cores | $commit"
    done
    read -r ok bad <<<"$(publish_counts "$metrics")"
    [ "$bad" = 0 ] || { echo "--workers $w: recapd counted $bad failed Publish calls" >&2; exit 1; }
    # The tool's count leaves out each caller's chat-creating call: recapd
    # must have answered at least as many OK.
    [ "$ok" -ge "$sent" ] || { echo "--workers $w: recapd counted $ok OK Publish calls, the load $sent" >&2; exit 1; }
    kill "$pid"; wait "$pid" 2>/dev/null || true
done
say "(results also in $results)"
