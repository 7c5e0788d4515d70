#!/usr/bin/env bash
# The project's test command. On a fresh machine it first installs what the
# tests need (Python packages in a virtualenv, npm packages, Node.js or
# python3-venv from apt when missing, and a PostgreSQL server through
# scripts/postgres.sh, which exports its URL as RECAPD_TEST_DATABASE_URL,
# turns TLS on for a local cluster (a certificate signed by a test CA, which
# the tls_postgres tests verify against) and drops the per-test schemas
# earlier runs left behind), then runs every test:
#   1. cargo tests: domain unit tests (property tests among them, each
#      bounded to seconds by its case count; PROPTEST_CASES overrides the
#      counts), service tests, the integration tests (one binary, tests/it:
#      among them the metrics endpoint and the ghz configuration files)
#   2. the integration tests again, every server on the PostgreSQL store
#      (RECAPD_TEST_STORE=postgres), then, when this script runs the
#      database, the PostgreSQL restart test alone; then the crash and
#      replica tests once more with a 1-byte resident-memory budget
#   3. the recap-job tests once more per llm_structured_output setting and
#      fake model (one that follows the schema it is sent, one that ignores
#      it)
#   4. buf lint (STANDARD rules) on proto/, and buf breaking against the v1
#      proto kept in tests/fixtures/proto-v1-baseline (no wire change)
#   5. the inspector: its committed page rebuilt from inspector/ (no
#      difference allowed), its unit tests (node --test), then the page
#      driven in headless Chromium (installed
#      from Debian's packages when missing)
#   6. a live recapd: grpcurl through reflection, both example clients, the
#      health probe and a clean SIGTERM exit
#   7. the client packages, each installed fresh against live servers:
#      clients/python (a venv), clients/typescript (a new folder, Node and
#      gRPC-Web from Chromium), and `recapd mcp` driven by the official MCP
#      Python SDK (tests/mcp)
# Extra arguments go to both `cargo test` runs. Each step's wall time is
# printed as it ends, and all of them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/lib.sh
tools=$root/target/test-tools
mkdir -p "$tools"

apt_install() {
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

step "tools"
command -v python3 >/dev/null || apt_install python3 python3-venv
python3 -m venv --help >/dev/null 2>&1 || apt_install python3-venv
command -v npm >/dev/null || apt_install nodejs npm
[ -x "$tools/venv/bin/python" ] || python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install -q --disable-pip-version-check \
    -r examples/python/requirements.txt -r scripts/requirements-test.txt
(cd examples/node && npm ci --no-audit --no-fund --loglevel=error)
[ -x "$tools/node_modules/.bin/buf" ] ||
    npm install --prefix "$tools" --no-audit --no-fund --loglevel=error @bufbuild/buf@1.57.0

step "postgresql"
# Assigned before the export so that a failure of postgres.sh stops the script.
RECAPD_TEST_DATABASE_URL=$(./scripts/postgres.sh)
export RECAPD_TEST_DATABASE_URL
echo "RECAPD_TEST_DATABASE_URL=$RECAPD_TEST_DATABASE_URL"
# The harness gives each test a schema rt_<hex>; drop those earlier runs left
# behind so the database does not grow without end. One statement per line,
# each in its own transaction, so that many leftovers do not exhaust the lock
# table.
leftovers=$(psql "$RECAPD_TEST_DATABASE_URL" -X -qAt -v ON_ERROR_STOP=1 \
    -c "select format('drop schema %I cascade;', nspname) from pg_namespace where nspname like 'rt\_%'")
if [ -n "$leftovers" ]; then
    echo "dropping $(grep -c . <<<"$leftovers") leftover test schema(s)"
    PGOPTIONS="-c client_min_messages=warning" \
        psql "$RECAPD_TEST_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 <<<"$leftovers"
fi

# The integration tests' pg_restart module cuts every connection at a proxy;
# its ignored test restarts the database for real, which this script runs
# alone (it takes the database from every other test) when the database is
# this machine's own cluster (Debian's pg_ctlcluster, as root).
pg_restart=""
if command -v pg_ctlcluster >/dev/null && [ "$(id -u)" -eq 0 ] && [ -d /etc/postgresql ] &&
    grep -Eq '@(127\.0\.0\.1|localhost)(:5432)?/' <<<"$RECAPD_TEST_DATABASE_URL"; then
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    pg_restart="pg_ctlcluster --skip-systemctl-redirect $version main restart"
    echo "PostgreSQL restart test: $pg_restart"
fi

step "cargo test"
cargo test --locked --workspace --all-targets "$@"

# Every later `cargo test` names --workspace too: cargo resolves the
# dependencies' features over the packages it is given, so a run of the
# root package alone (`cargo test --test it`) would build many of them (and
# recapd) a second time, with recapd-bench's features left out. The domain
# crate is excluded from the PostgreSQL pass (its tests use no store;
# excluding it changes no feature: its one dev-dependency, proptest, shares
# none), which runs recapd's tests and recapd-bench's unit tests.
step "cargo test (PostgreSQL store)"
RECAPD_TEST_STORE=postgres cargo test --locked --workspace --exclude recapd-domain --tests "$@"
if [ -n "$pg_restart" ]; then
    step "cargo test (PostgreSQL restarted for real, alone)"
    RECAPD_TEST_PG_RESTART=$pg_restart cargo test --locked --workspace --test it pg_restart:: -- --ignored
fi

step "crash and replica tests, every chat nothing pins dropped from memory at once"
# A 1-byte --max-resident-memory: each operation's chat leaves memory as
# soon as nothing pins it, so every later call reloads it from the store.
RECAPD_MAX_RESIDENT_MEMORY=1 cargo test --locked --workspace --test it -- crash:: replicas::
RECAPD_MAX_RESIDENT_MEMORY=1 RECAPD_TEST_STORE=postgres cargo test --locked --workspace --test it -- crash::

step "recap jobs under every llm_structured_output, against a model that follows the schema and one that ignores it"
# The runs above were AUTO with a model that ignores the schema.
for setting in AUTO JSON_SCHEMA JSON_OBJECT OFF; do
    for model in follows ignores; do
        [ "$setting/$model" = AUTO/ignores ] && continue
        echo "-- $setting, a model that $model the schema"
        RECAPD_TEST_STRUCTURED_OUTPUT=$setting RECAPD_TEST_FAKE_MODEL=$model \
            cargo test --locked --workspace --test it -- --quiet recap_jobs::
    done
done

step "buf lint"
"$tools/node_modules/.bin/buf" lint

step "buf breaking"
# The wire contract: proto/ against the copy of the v1 API as released
# (tests/fixtures/proto-v1-baseline); a renumbered, retyped or removed field,
# message, enum value or RPC fails here.
"$tools/node_modules/.bin/buf" breaking proto --against tests/fixtures/proto-v1-baseline

step "inspector: the committed page is the build of its sources; the page in a real browser"
# The page is embedded in the binary from src/inspector/assets, built from
# inspector/ (npm, esbuild) and committed so that cargo build needs no
# Node.js: rebuilding it here must change nothing. Then headless Chromium
# (Debian's package) drives it against a live recapd
# (tests/it/inspector_browser.rs); screenshots of the main views are left
# in target/inspector-screenshots.
command -v chromium >/dev/null || apt_install chromium
(cd inspector && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build && npm test --silent)
git diff --exit-code --stat -- src/inspector/assets || {
    echo "src/inspector/assets differs from the build of inspector/: run (cd inspector && npm ci && npm run build) and commit"
    exit 1
}
RECAPD_TEST_CHROMIUM=$(command -v chromium) RECAPD_TEST_SCREENSHOTS=$root/target/inspector-screenshots \
    cargo test --locked --workspace --test it inspector_browser -- --nocapture

step "live server"
cargo build --locked --bin recapd
bin=$root/target/debug/recapd
port=$(free_port)
data=$(mktemp -d)
"$bin" --listen "127.0.0.1:$port" --metrics-listen off --data-dir "$data" --log-level warn &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
for _ in $(seq 100); do
    "$bin" health --addr "127.0.0.1:$port" >/dev/null 2>&1 && break
    sleep 0.1
done
"$bin" health --addr "127.0.0.1:$port"

echo "-- grpcurl through reflection (the README's five-minute walk-through)"
grpcurl=("$tools/venv/bin/grpcurl" -plaintext)
services=$("${grpcurl[@]}" "127.0.0.1:$port" list)
for service in recap.v1.EventService recap.v1.MemoryService recap.v1.SettingsService \
    recap.v1.InjectionService recap.v1.PromptService recap.v1.RecapService grpc.health.v1.Health; do
    grep -qx "$service" <<<"$services" || { echo "reflection does not list $service"; exit 1; }
done
"${grpcurl[@]}" -d '{"event":{"chat_id":"alice-1","chat_changed":{"messages":[
  {"id":"m1","name":"Alice","text":"Hi!","is_user":true},
  {"id":"m2","name":"Bob","text":"Hello, Alice."}]}}}' \
    "127.0.0.1:$port" recap.v1.EventService/Publish | grep -q '"revision": "1"'
"${grpcurl[@]}" -d '{"chat_id":"alice-1","message_id":"m2","data":{"memory":"Bob greets Alice.","scene_break":true,"scene_recap_memory":"They meet."}}' \
    "127.0.0.1:$port" recap.v1.MemoryService/SetMessageData >/dev/null
"${grpcurl[@]}" -d '{"chat_id":"alice-1","content":"Alice and Bob met.","scene_count":1,"new_scene_message_id":"m2"}' \
    "127.0.0.1:$port" recap.v1.MemoryService/AddRunningRecap >/dev/null
"${grpcurl[@]}" -d '{"chat_id":"alice-1"}' "127.0.0.1:$port" recap.v1.InjectionService/GetInjection |
    grep -q 'Alice and Bob met.' || { echo "grpcurl: the recap is not in the injection"; exit 1; }
# Without --llm-url: jobs can be listed, generation is refused by name.
"${grpcurl[@]}" -d '{"chat_id":"alice-1"}' "127.0.0.1:$port" recap.v1.RecapService/ListJobs >/dev/null
refused=$("${grpcurl[@]}" -d '{"chat_id":"alice-1"}' "127.0.0.1:$port" recap.v1.RecapService/DetectSceneBreaks 2>&1 || true)
grep -q 'FailedPrecondition' <<<"$refused" || { echo "grpcurl: DetectSceneBreaks without an LLM: $refused"; exit 1; }
echo "grpcurl: OK"

echo "-- the World Info walk-through (docs/world-info.md), as written"
command -v jq >/dev/null || apt_install jq
python3 scripts/walkthrough.py docs/world-info.md "A walk-through with grpcurl" \
    "127.0.0.1:$port" "$tools/venv/bin/grpcurl"

echo "-- python example"
rm -rf examples/python/gen && mkdir -p examples/python/gen
"$tools/venv/bin/python" -m grpc_tools.protoc -I proto \
    --python_out=examples/python/gen --grpc_python_out=examples/python/gen proto/recap/v1/recap.proto
"$tools/venv/bin/python" examples/python/recap_client.py "127.0.0.1:$port"

echo "-- node example"
node examples/node/recap_client.js "127.0.0.1:$port"

echo "-- grpcurl: ListChats and DeleteChat (the end of the README's five-minute walk-through)"
"${grpcurl[@]}" -d '{}' "127.0.0.1:$port" recap.v1.MemoryService/ListChats |
    grep -q '"chatId": "alice-1"' || { echo "grpcurl: ListChats does not list alice-1"; exit 1; }
"${grpcurl[@]}" -d '{"chat_id":"alice-1"}' "127.0.0.1:$port" recap.v1.MemoryService/DeleteChat |
    grep -q '"revision"' || { echo "grpcurl: DeleteChat answered no revision"; exit 1; }
gone=$("${grpcurl[@]}" -d '{"chat_id":"alice-1"}' "127.0.0.1:$port" recap.v1.InjectionService/GetInjection 2>&1 || true)
grep -q 'NotFound' <<<"$gone" || { echo "grpcurl: a deleted chat is still readable: $gone"; exit 1; }

echo "-- SIGTERM"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
trap 'rm -rf "$data"' EXIT
[ "$status" -eq 0 ] || { echo "recapd exited with $status after SIGTERM"; exit 1; }
echo "clean exit"

step "client packages: Python, TypeScript (Node and gRPC-Web), and recapd mcp driven by the MCP SDK"
RECAPD_BIN=$bin clients/python/test.sh
RECAPD_BIN=$bin clients/typescript/test.sh
RECAPD_BIN=$bin tests/mcp/test.sh
step_summary "scripts/test.sh"
printf '\n==> all tests passed\n'
