#!/usr/bin/env bash
# Lorebook entries written by recapd (issue 30), end to end, with a fake
# OpenAI-compatible LLM served by recapd-bench that answers at once from a
# scripted story of ten scenes (recapd-bench lore, bench/tools/lore/):
#
#   1. requests and tokens per scene by kind (scene recap, running recap,
#      lore extraction, resolution, merge, compaction), next to the
#      requests ST-Auto-Summarize's pipeline makes for the same scenes;
#   2. the queue's overhead per lore job: queued -> claimed, claimed ->
#      request, answer -> SUCCEEDED.
#
#   bench/lore.sh            three chats per store, SQLite and PostgreSQL;
#                            under a minute after the release build
#   bench/lore.sh --smoke    one chat, SQLite only: checks that the harness works
#
# recapd runs with --workers 1 pinned to CPU 0, the tool on CPU 1. The
# database: as bench/jobs.sh finds it; a fresh schema per run, dropped at
# the end. Raw lines in target/bench/lore-<store>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
CHATS=3; STORES="sqlite postgres"
[ $smoke -eq 1 ] && { CHATS=1; STORES="sqlite"; }

url=""
if [ $smoke -eq 0 ]; then
    if [ -x scripts/postgres.sh ]; then
        url=$(timeout 300 ./scripts/postgres.sh | tail -n 1) || url=""
        case "$url" in postgres://* | postgresql://*) ;; *) url="" ;; esac
    fi
    [ -n "$url" ] || url=${RECAPD_TEST_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}
fi

. bench/lib.sh
bench_build
schema="bench_lore_$RANDOM$RANDOM"
data=$(mktemp -d "$out/lore.XXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$data"
    if [ -n "$url" ] && command -v psql >/dev/null; then
        psql -q "$url" -c "DROP SCHEMA IF EXISTS \"$schema\" CASCADE" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

for store in $STORES; do
    args=()
    [ "$store" = postgres ] && args=(--store "$url" --store-schema "$schema")
    listen=$(free_port); llm=$(free_port); metrics=$(free_port)
    rm -rf "$data/recapd"
    "${server_cpu[@]}" "$bin" --listen "127.0.0.1:$listen" --workers 1 --data-dir "$data/recapd" \
        --metrics-listen "127.0.0.1:$metrics" --log-level warn "${args[@]}" \
        --llm-url "http://127.0.0.1:$llm/v1" --llm-model bench >"$out/lore-$store-server.log" 2>&1 &
    pid=$!
    wait_serving "127.0.0.1:$listen"
    "${load_cpu[@]}" "$tool" lore --addr "127.0.0.1:$listen" --metrics "127.0.0.1:$metrics" \
        --llm-listen "127.0.0.1:$llm" --chats "$CHATS" --prefix "lore-$store-$RANDOM" >"$out/lore-$store.txt"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done

python3 - "$out" $STORES <<'PY'
import re, sys
out, stores = sys.argv[1], sys.argv[2:]
def rows(store):
    return [(l.split()[0], dict(re.findall(r"(\w+)=(\S+)", l))) for l in open(f"{out}/lore-{store}.txt")]
first = rows(stores[0])
print("Requests per scene (recapd measured; the extension computed from its pipeline, scene detection left out on both sides):")
print()
print("| scene | entities: new / known / ambiguous (same, new) | recapd: scene recap + running recap + extract + resolve + merge + compact | recapd requests | extension, every entity looked up | extension, fewest | recapd tokens in / out (lore kinds only) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for kind, r in first:
    if kind == "lore_scene":
        print(f"| {r['scene']} | {r['new']} / {r['known']} / {r['ambiguous_same']}, {r['ambiguous_new']} "
              f"| {r['scene_recap']} + {r['running_recap']} + {r['lore_extract']} + {r['lore_resolve']} + {r['lore_merge']} + {r['lore_compact']} "
              f"| {r['recapd']} | {r['ext_typical']} | {r['ext_fewest']} "
              f"| {r['tokens_in']} / {r['tokens_out']} ({r['lore_tokens_in']} / {r['lore_tokens_out']}) |")
for kind, r in first:
    if kind == "lore_total":
        print(f"| all {r['scenes']} | {r['entities']} entities | {r['scene_recap']} + {r['running_recap']} + {r['lore_extract']} + {r['lore_resolve']} + {r['lore_merge']} + {r['lore_compact']} "
              f"| **{r['recapd']}** | **{r['ext_typical']}** | **{r['ext_fewest']}** "
              f"| {r['tokens_in']} / {r['tokens_out']} ({r['lore_tokens_in']} / {r['lore_tokens_out']}) |")
        print()
        print(f"Every chat the same: {r['same_in_all_chats']}.")
print()
print("| store | job kind | jobs | queued -> claimed ms p50/p90/max | claimed -> request ms | answer -> SUCCEEDED ms |")
print("| --- | --- | --- | --- | --- | --- |")
for store in stores:
    for kind, r in rows(store):
        if kind == "lore_overhead":
            print(f"| {store} | {r['kind']} | {r['jobs']} | {r['queued_to_claimed_ms']} | {r['claimed_to_request_ms']} | {r['answer_to_succeeded_ms']} |")
print()
for store in stores:
    for kind, r in rows(store):
        if kind == "lore_book":
            rest = " ".join(f"{k}={v}" for k, v in r.items() if k not in ("chat", "entries", "expected", "duplicate_comments"))
            print(f"{store} chat {r['chat']}: book of {r['entries']} entries (expected {r['expected']}), "
                  f"{r['duplicate_comments']} duplicate comments; jobs {rest}")
PY
