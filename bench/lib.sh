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

# Builds recapd and recapd-bench (compiler chatter filtered out) and sets:
# bin and tool (the two binaries, under $CARGO_TARGET_DIR when it is set),
# out (target/bench, created), and server_cpu / load_cpu, the taskset
# prefixes that pin a server to CPU 0 and its load to CPU 1 (empty arrays
# on a single core). BENCH_PROFILE picks the build: `release` (the default;
# every figure is measured on it) or `debug`, for smoke runs that check
# only that a harness works (.ci/run's): the workspace's debug build of
# every target, the build `cargo test --workspace --all-targets` makes (the
# same features), so that after the tests only the two binaries are
# compiled anew. With BENCH_RECAPD set (A/B runs of two builds), that recapd
# binary is measured and nothing is built: recapd-bench must have been
# built before.
bench_build() {
    local profile=${BENCH_PROFILE:-release} dir=${CARGO_TARGET_DIR:-$PWD/target} build
    case $profile in
    release) build=(cargo build --release --locked -p recapd --bin recapd -p recapd-bench --bin recapd-bench) ;;
    debug) build=(cargo build --locked --workspace --all-targets) ;;
    *) echo "BENCH_PROFILE is release or debug, not $profile" >&2; exit 64 ;;
    esac
    if [ -n "${BENCH_RECAPD:-}" ]; then
        bin=$BENCH_RECAPD
    else
        # pipefail: a failed build fails the script, whatever grep keeps.
        "${build[@]}" 2>&1 | { grep -v '^\s*Compiling' || true; }
        bin=$dir/$profile/recapd
    fi
    tool=$dir/$profile/recapd-bench
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

# grpc_body PROTO_FILE INCLUDE MESSAGE TEXT OUT: writes MESSAGE (protobuf text
# format) encoded, with the 5-byte gRPC prefix, to OUT, for h2load's -d.
# h2 NAME URL BODY: h2load of H2_N requests of BODY to URL (1 connection, 50
# streams, from the load CPU), logged under $out/h2load-NAME.*; prints
# "rps p99_ms" and fails when any request failed.
grpc_body() { # proto-file include message text -> file with the 5-byte prefix
    local raw; raw=$(mktemp)
    protoc --encode="$3" -I "$2" "$1" <<<"$4" >"$raw"
    python3 -c "import sys,struct; b=open(sys.argv[1],'rb').read(); sys.stdout.buffer.write(b'\x00'+struct.pack('>I',len(b))+b)" "$raw" >"$5"
    rm -f "$raw"
}

h2() { # name url body -> "rps p99_ms"
    local log=$out/h2load-$1.log
    rm -f "$log"
    "${load_cpu[@]}" h2load -n "$H2_N" -c 1 -m 50 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' \
        -d "$3" --log-file "$log" "$2" >"$out/h2load-$1.txt"
    python3 - "$out/h2load-$1.txt" "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", text).group(1))
ok = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed", text)
if int(ok.group(3)) != 0:
    sys.exit(f"h2load: {ok.group(3)} failed requests")
lat = sorted(int(l.split()[2]) for l in open(sys.argv[2]) if l.strip())
print(f"{rps:.0f} {lat[int((len(lat)-1)*0.99)]/1000:.3f}")
PY
}
