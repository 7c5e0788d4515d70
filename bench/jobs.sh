#!/usr/bin/env bash
# Recaps written by recapd, end to end, with a fake OpenAI-compatible LLM
# served by recapd-bench: message-recap jobs through the whole pipeline
# (claim commit, request, commit that applies the recap and refreshes the
# chat), on the embedded store and on PostgreSQL.
#
#   1. queue overhead: the fake answers at once; jobs per second.
#   2. concurrency: the fake answers after L ms, recapd runs with
#      --llm-concurrency C over more than C chats; jobs per second as a
#      ratio of the ideal C/L (target >= 0.9), and the most requests the
#      fake saw in flight (never more than C).
#
#   bench/jobs.sh            about 1 minute
#   bench/jobs.sh --smoke    tiny loads: checks that the harness works
#
# bench/run.sh runs it at its end. The database: as bench/replicas.sh finds
# it (scripts/postgres.sh, else $RECAPD_TEST_DATABASE_URL, else the local
# test database); a fresh schema per run, dropped at the end with psql.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke -eq 1 ]; then
    CHATS=4; PER_CHAT=5; LAT_CHATS=8; LAT_PER_CHAT=3; LATENCY_MS=50; CONCURRENCY=4
else
    CHATS=50; PER_CHAT=20; LAT_CHATS=16; LAT_PER_CHAT=10; LATENCY_MS=200; CONCURRENCY=4
fi

url=""
if [ -x scripts/postgres.sh ]; then
    url=$(timeout 300 ./scripts/postgres.sh | tail -n 1) || url=""
    case "$url" in postgres://* | postgresql://*) ;; *) url="" ;; esac
fi
[ -n "$url" ] || url=${RECAPD_TEST_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}

. bench/lib.sh
bench_build
schema="bench_jobs_$RANDOM$RANDOM"
data=$(mktemp -d "$out/jobs.XXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$data"
    command -v psql >/dev/null && psql -q "$url" -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

run() { # store-name store-args... -- tool-args... -> the tool's line
    local name=$1; shift
    local store=()
    while [ "$1" != "--" ]; do store+=("$1"); shift; done; shift
    local listen llm
    listen=$(free_port); llm=$(free_port)
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen off --log-level warn "${store[@]}" \
        --llm-url "http://127.0.0.1:$llm/v1" --llm-model bench --llm-concurrency "$CONCURRENCY" &
    pid=$!
    wait_serving "127.0.0.1:$listen"
    "${load_cpu[@]}" "$tool" jobs --addr "127.0.0.1:$listen" --llm-listen "127.0.0.1:$llm" \
        --concurrency "$CONCURRENCY" --prefix "$name-$RANDOM" "$@"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "| store | fake LLM | jobs | jobs/s | ideal/s | ratio (target >= 0.9) | most in flight (<= $CONCURRENCY) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for store in sqlite postgres; do
    args=()
    [ "$store" = postgres ] && args=(--store "$url" --store-schema "$schema")
    instant=$(run "$store" "${args[@]}" -- --chats "$CHATS" --per-chat "$PER_CHAT" --latency-ms 0)
    echo "| $store | answers at once | $(field jobs "$instant") | $(field jobs_per_s "$instant") | | | $(field max_in_flight "$instant") |"
    slow=$(run "$store" "${args[@]}" -- --chats "$LAT_CHATS" --per-chat "$LAT_PER_CHAT" --latency-ms "$LATENCY_MS")
    echo "| $store | ${LATENCY_MS} ms, C=$CONCURRENCY, $LAT_CHATS chats | $(field jobs "$slow") | $(field jobs_per_s "$slow") | $(field ideal_per_s "$slow") | $(field ratio "$slow") | $(field max_in_flight "$slow") |"
done
