#!/usr/bin/env bash
# The TypeScript client's tests, against live recapd servers:
#   RECAPD_BIN=path/to/recapd ./test.sh
# 1. src/gen and dist are what the proto and sources give (scripts/check.mjs);
# 2. the package, installed into a fresh folder with
#    `npm install --install-links <this folder>` (a copy, as a published
#    package would be), passes tests/ run from there: publish and read,
#    tokens, follow across kill -9 and restarts, the README example as
#    written, and a page in headless Chromium over gRPC-Web.
# Exits non-zero on any failure. Needs node (20+), npm and the npm registry.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
started=$SECONDS

if [[ -z "${RECAPD_BIN:-}" ]]; then
  if [[ -x "$here/../../target/debug/recapd" ]]; then
    RECAPD_BIN="$here/../../target/debug/recapd"
  else
    echo "test.sh: set RECAPD_BIN to the recapd binary (cargo build --bin recapd)" >&2
    exit 2
  fi
fi
RECAPD_BIN="$(cd "$(dirname "$RECAPD_BIN")" && pwd)/$(basename "$RECAPD_BIN")"
export RECAPD_BIN

cd "$here"
if [[ ! -f node_modules/.package-lock.json ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "== npm ci"
  npm ci --no-audit --no-fund
fi

echo "== generated code and build are up to date"
node scripts/check.mjs

if [[ -z "${CHROMIUM:-}" ]]; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "== installing Debian's chromium"
    apt-get update -qq && apt-get install -y -qq chromium
  fi
  CHROMIUM="$(command -v chromium)"
fi
export CHROMIUM

work="$(mktemp -d "${TMPDIR:-/tmp}/recapd-client-test-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -r "$here/tests" "$work/tests"
version_of() { node -p "require('$here/package.json').devDependencies['$1']"; }

echo "== npm install --install-links $here (in $work)"
cd "$work"
npm init -y >/dev/null
npm install --install-links --no-audit --no-fund --save-exact \
  "$here" "esbuild@$(version_of esbuild)" "playwright-core@$(version_of playwright-core)"

echo "== tests (recapd: $RECAPD_BIN)"
export RECAPD_CLIENT_DIR="$here"
status=0
timeout 300 node --test --test-timeout=150000 tests/*.test.mjs || status=$?
echo "== test.sh: $([[ $status -eq 0 ]] && echo passed || echo "FAILED ($status)") in $((SECONDS - started)) s"
exit "$status"
