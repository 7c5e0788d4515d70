#!/usr/bin/env bash
# recapd replicas sharing one PostgreSQL store (--store): Publish events/s
# through 1 replica and through 2 (same callers in all), and the delivery
# latency from a Publish on replica B to a Subscribe stream on replica A.
# Prints a markdown table; exits non-zero when a call failed or an event
# never reached A.
#
#   bench/replicas.sh            about 1 minute
#   bench/replicas.sh --smoke    short loads: checks that the harness works
#
# The database: the last stdout line of scripts/postgres.sh when that script
# exists, else $RECAPD_TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/test.
# Each run uses fresh schemas bench_<random>_1 / _2, dropped at the end (with
# psql, when installed).
# Knobs (environment): CALLERS (50), UNARY_S (10), XR_RATE (50 events/s),
# XR_CHATS (20), XR_S (10), WORKERS (1 worker thread per replica, as in
# bench/run.sh; 0 = recapd's default).
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1

if [ $smoke -eq 1 ]; then
    CALLERS=${CALLERS:-10}; UNARY_S=${UNARY_S:-1}; XR_RATE=${XR_RATE:-20}; XR_CHATS=${XR_CHATS:-5}; XR_S=${XR_S:-2}
else
    CALLERS=${CALLERS:-50}; UNARY_S=${UNARY_S:-10}; XR_RATE=${XR_RATE:-50}; XR_CHATS=${XR_CHATS:-20}; XR_S=${XR_S:-10}
fi
WORKERS=${WORKERS:-1}

url=""
if [ -x scripts/postgres.sh ]; then
    url=$(timeout 300 ./scripts/postgres.sh | tail -n 1) || url=""
    case "$url" in postgres://* | postgresql://*) ;; *)
        echo "scripts/postgres.sh printed no postgres:// URL; falling back" >&2; url="" ;;
    esac
fi
[ -n "$url" ] || url=${RECAPD_TEST_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}

. bench/lib.sh
bench_build
"$bin" --help | grep -q -- '--store ' || { echo "this recapd has no --store option" >&2; exit 1; }
tmp=$(mktemp -d "$out/replicas.XXXX")
schema=bench_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')

pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    if command -v psql >/dev/null; then
        psql -q "$url" -c "DROP SCHEMA IF EXISTS ${schema}_1 CASCADE" -c "DROP SCHEMA IF EXISTS ${schema}_2 CASCADE" \
            >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

port() { free_port; }

# start_replica SCHEMA NAME -> sets $addr; the pid goes to pids
start_replica() {
    local p workers=()
    p=$(port)
    [ "$WORKERS" = 0 ] || workers=(--workers "$WORKERS")
    "$bin" --store "$url" --store-schema "$1" --listen "127.0.0.1:$p" "${workers[@]}" \
        --metrics-listen off --data-dir "$tmp/$2" --log-level warn >"$out/replica-$2.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 600); do
        "$bin" health --addr "127.0.0.1:$p" >/dev/null 2>&1 && { addr=127.0.0.1:$p; return; }
        kill -0 "$!" 2>/dev/null || break
        sleep 0.05
    done
    echo "replica $2 did not become healthy; its log:" >&2
    cat "$out/replica-$2.log" >&2
    exit 1
}
stop_replicas() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    pids=()
}

echo "database $(sed -E 's#(//[^:/@]*):[^@]*@#\1:***@#' <<<"$url"), schemas ${schema}_1 and ${schema}_2" >&2

# ---- 1 replica
start_replica "${schema}_1" one
one=$addr
pub1=$("$tool" unary --target publish --addr "$one" --callers "$CALLERS" --seconds "$UNARY_S")
stop_replicas

# ---- 2 replicas on one schema: callers round-robin, then the cross-replica latency
start_replica "${schema}_2" a
a=$addr
start_replica "${schema}_2" b
b=$addr
pub2=$("$tool" unary --target publish --addr "$a" --addr "$b" --callers "$CALLERS" --seconds "$UNARY_S")
xr_rc=0
xr=$("$tool" replicas --subscribe-addr "$a" --publish-addr "$b" --chats "$XR_CHATS" --rate "$XR_RATE" \
    --seconds "$XR_S") || xr_rc=$?
stop_replicas

ratio() { python3 -c "print(f'{float(\"$1\")/float(\"$2\"):.2f}')"; }
echo
echo "recapd replicas on one PostgreSQL store, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores (replicas, PostgreSQL and load share them), $([ "$WORKERS" = 0 ] && echo "recapd's default" || echo "$WORKERS") worker thread(s) per replica, smoke=$smoke"
echo
echo "| Figure | events/s | p50 ms | p99 ms | max ms | Notes |"
echo "|---|---:|---:|---:|---:|---|"
echo "| Publish message_sent, $CALLERS callers, 1 replica | $(field per_second "$pub1") | $(field p50_ms "$pub1") | $(field p99_ms "$pub1") | $(field max_ms "$pub1") | ${UNARY_S}s, answer latency |"
echo "| Publish message_sent, $CALLERS callers, 2 replicas | $(field per_second "$pub2") | $(field p50_ms "$pub2") | $(field p99_ms "$pub2") | $(field max_ms "$pub2") | callers round-robin, x$(ratio "$(field per_second "$pub2")" "$(field per_second "$pub1")") vs 1 replica |"
if [ -n "$xr" ]; then
    echo "| Publish on B -> Subscribe on A | $XR_RATE offered | $(field p50_ms "$xr") | $(field p99_ms "$xr") | $(field max_ms "$xr") | ${XR_S}s over $XR_CHATS chats: sent $(field sent "$xr"), received $(field received "$xr"), lost $(field lost "$xr"), skipped $(field skipped "$xr"), failed $(field failed "$xr"); Publish answer p50 $(field publish_p50_ms "$xr") p99 $(field publish_p99_ms "$xr") ms |"
else
    echo "| Publish on B -> Subscribe on A | - | - | - | - | failed, see above |"
fi
echo
printf '%s\n' "$pub1" "$pub2" "$xr" >"$out/replicas.txt"
exit "$xr_rc"
