# Shell helpers shared by the bench scripts; source it from the repository
# root (`. bench/lib.sh`). It brings scripts/lib.sh's free_port along.
. scripts/lib.sh

# need COMMAND PACKAGE: installs Debian's PACKAGE with apt when COMMAND is
# missing.
need() {
    command -v "$1" >/dev/null && return
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2"
}

# Builds release recapd and recapd-bench (compiler chatter filtered out) and
# sets: bin and tool (the two binaries), out (target/bench, created), and
# server_cpu / load_cpu, the taskset prefixes that pin a server to CPU 0 and
# its load to CPU 1 (empty arrays on a single core). With BENCH_RECAPD set
# (A/B runs of two builds), that recapd binary is measured and nothing is
# built: recapd-bench must have been built before.
bench_build() {
    if [ -n "${BENCH_RECAPD:-}" ]; then
        bin=$BENCH_RECAPD
    else
        cargo build --release --locked -p recapd --bin recapd -p recapd-bench --bin recapd-bench 2>&1 | grep -v '^\s*Compiling' || true
        bin=$PWD/target/release/recapd
    fi
    tool=$PWD/target/release/recapd-bench
    out=$PWD/target/bench
    mkdir -p "$out"
    if [ "$(nproc)" -ge 2 ]; then server_cpu=(taskset -c 0); load_cpu=(taskset -c 1); else server_cpu=(); load_cpu=(); fi
}

# field NAME LINE: the value of NAME=... in a bench tool's output line.
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }

# Waits up to 10 s for recapd at ADDR to answer its health check SERVING;
# fails when it never does.
wait_serving() {
    for _ in $(seq 200); do "$bin" health --addr "$1" >/dev/null 2>&1 && return; sleep 0.05; done
    "$bin" health --addr "$1" >/dev/null
}
