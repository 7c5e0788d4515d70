#!/usr/bin/env bash
# A large SillyTavern chat file through `recapd import` and `recapd export`
# (ImportChatStream / ExportChatStream) against a release recapd with the
# default server options, on SQLite and on PostgreSQL: the time of each and
# the growth of the server's peak memory (VmHWM) over the file's size.
#
#   bench/chat_file.sh            100,000 messages of about 3 KB (~300 MB), 3 rounds per store
#   bench/chat_file.sh --smoke    2,000 messages, 1 round: checks that the script works
#
# Each round starts a fresh server (a fresh --data-dir; on PostgreSQL a
# fresh schema, dropped afterwards), reads VmHWM once it answers, imports
# the file, exports it to disk, checks the export's line count, and reads
# VmHWM again (and VmRSS after the import and after the export: what stays
# resident); then restarts the server on the same data and times an export
# that must first load the chat from the store, with the VmHWM it reaches.
# The file is generated once into target/bench/chat-file/ (kept between
# runs). PostgreSQL: RECAPD_BENCH_DATABASE_URL, by default
# postgres://root@127.0.0.1:5432/test; RECAPD_BENCH_STORES=sqlite skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
smoke=0
[ "${1:-}" = "--smoke" ] && smoke=1
if [ $smoke -eq 1 ]; then MESSAGES=2000; ROUNDS=1; else MESSAGES=100000; ROUNDS=3; fi
PG_URL=${RECAPD_BENCH_DATABASE_URL:-postgres://root@127.0.0.1:5432/test}
STORES=${RECAPD_BENCH_STORES:-sqlite postgres}

. bench/lib.sh
bench_build
out=$root/target/bench/chat-file
mkdir -p "$out"

file=$out/big-$MESSAGES.jsonl
if [ ! -s "$file" ]; then
    # The shape SillyTavern writes: a header line with chat_metadata (where
    # ST-Auto-Recap keeps its running-recap versions), then one line per
    # message whose text is also its one swipe; each line about 3 KB.
    python3 - "$file" "$MESSAGES" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
text = ("Bob walks the harbour, café and 日本語 signs along the quay. " * 22)[:1400]
with open(path, "w", encoding="utf-8") as f:
    f.write(json.dumps({"user_name": "User", "character_name": "Bob", "chat_metadata": {
        "auto_recap_running_scene_recaps": {"chat_id": "big", "current_version": 1, "versions": [
            {"version": 1, "timestamp": 1, "content": "So far.", "scene_count": 1,
             "excluded_count": 0, "prev_scene_index": 0, "new_scene_index": 1}]}}}) + "\n")
    for i in range(n):
        mes = f"{i}: {text}"
        f.write(json.dumps({"name": "User" if i % 2 == 0 else "Bob", "is_user": i % 2 == 0,
                            "mes": mes, "swipes": [mes], "swipe_id": 0,
                            "extra": {"auto_recap_memory": {"memory": f"memory {i}"}}},
                           ensure_ascii=False) + "\n")
PY
fi
size=$(stat -c %s "$file")
chat=$(basename "$file" .jsonl)
hwm_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
now() { date +%s.%N; }
results=$out/results.txt
: >"$results"
echo "file: $file, $MESSAGES messages, $size bytes" | tee -a "$results"

for store in $STORES; do
    for round in $(seq "$ROUNDS"); do
        data=$(mktemp -d "$out/data.XXXX")
        port=$(free_port)
        args=(--listen "127.0.0.1:$port" --metrics-listen off --data-dir "$data" --log-level warn)
        schema=""
        if [ "$store" = postgres ]; then
            schema="bench_chat_file_$$_$round"
            args+=(--store "$PG_URL" --store-schema "$schema")
        fi
        "$bin" "${args[@]}" &
        pid=$!
        for _ in $(seq 200); do "$bin" health --addr "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.05; done
        before=$(hwm_kb "$pid")
        t0=$(now)
        "$bin" import --addr "127.0.0.1:$port" "$file" >/dev/null
        t1=$(now)
        rss_import=$(rss_kb "$pid")
        "$bin" export --addr "127.0.0.1:$port" "$chat" >"$out/back.jsonl"
        t2=$(now)
        peak=$(hwm_kb "$pid")
        rss_export=$(rss_kb "$pid")
        lines=$(wc -l <"$out/back.jsonl")
        kill "$pid"; wait "$pid" 2>/dev/null || true
        # Restarted: the export loads the chat from the store first.
        "$bin" "${args[@]}" &
        pid=$!
        for _ in $(seq 200); do "$bin" health --addr "127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.05; done
        t3=$(now)
        "$bin" export --addr "127.0.0.1:$port" "$chat" >"$out/back.jsonl"
        t4=$(now)
        cold_peak=$(hwm_kb "$pid")
        cold_lines=$(wc -l <"$out/back.jsonl")
        kill "$pid"; wait "$pid" 2>/dev/null || true
        rm -rf "$data" "$out/back.jsonl"
        [ -n "$schema" ] && psql -q "$PG_URL" -c "SET client_min_messages = warning; DROP SCHEMA $schema CASCADE" >/dev/null
        [ "$lines" -eq $((MESSAGES + 1)) ] && [ "$cold_lines" -eq "$lines" ] ||
            { echo "exports have $lines and $cold_lines lines, not $((MESSAGES + 1))"; exit 1; }
        python3 - "$store" "$round" "$t0" "$t1" "$t2" "$before" "$peak" "$size" "$rss_import" "$rss_export" "$t3" "$t4" "$cold_peak" <<'PY' | tee -a "$results"
import sys
store, rnd, t0, t1, t2, before, peak, size, rss_import, rss_export, t3, t4, cold_peak = sys.argv[1:]
grown = (int(peak) - int(before)) * 1024
print(f"store={store} round={rnd} import_s={float(t1)-float(t0):.1f} export_s={float(t2)-float(t1):.1f} "
      f"peak_growth_mb={grown/1e6:.0f} growth_over_size={grown/int(size):.2f} vmhwm_mb={int(peak)*1024/1e6:.0f} "
      f"rss_after_import_mb={int(rss_import)*1024/1e6:.0f} rss_after_export_mb={int(rss_export)*1024/1e6:.0f} "
      f"hwm_before_mb={int(before)*1024/1e6:.0f} cold_export_s={float(t4)-float(t3):.1f} "
      f"cold_vmhwm_mb={int(cold_peak)*1024/1e6:.0f}")
PY
    done
done

python3 - "$results" <<'PY'
import re, statistics, sys
rows = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[1]) if l.startswith("store=")]
for store in dict.fromkeys(r["store"] for r in rows):
    mine = [r for r in rows if r["store"] == store]
    med = lambda k: statistics.median(float(r[k]) for r in mine)
    print(f"median of {len(mine)} ({store}): import {med('import_s'):.1f} s, export {med('export_s'):.1f} s, "
          f"peak memory growth {med('peak_growth_mb'):.0f} MB = {med('growth_over_size'):.2f}x the file (target < 3), "
          f"VmHWM {med('hwm_before_mb'):.0f} MB before, {med('vmhwm_mb'):.0f} MB after; RSS {med('rss_after_import_mb'):.0f} MB after the import, "
          f"{med('rss_after_export_mb'):.0f} MB after the export; after a restart, export (cold load included) "
          f"{med('cold_export_s'):.1f} s, VmHWM {med('cold_vmhwm_mb'):.0f} MB")
PY
