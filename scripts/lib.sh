# Shell helpers shared by .ci/run, scripts/test.sh, scripts/local-llm.sh,
# scripts/local-embeddings.sh and the bench scripts; source it from the
# repository root (`. scripts/lib.sh`) in a script that runs with
# `set -euo pipefail`.

# Prints a loopback TCP port nothing listens on right now (the OS's pick for
# port 0, released at once), for a server that takes its port as an option.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# ---- Step times: `step NAME` prints "==> NAME" and, for the step before it,
# "==> PREVIOUS (took N s)"; `step_summary` closes the last step and prints
# every step's wall time and the total, so a log tells where the time went.
# A failing run shows the times of the steps that ended and the step it
# failed in.
step_names=()
step_seconds=()
step_name=""
step_start=0

step() {
    step_end
    step_name=$*
    step_start=$SECONDS
    printf '\n==> %s\n' "$step_name"
}

step_end() {
    [ -n "$step_name" ] || return 0
    local took=$((SECONDS - step_start))
    printf '==> %s (took %d s)\n' "$step_name" "$took"
    step_names+=("$step_name")
    step_seconds+=("$took")
    step_name=""
}

# step_summary TITLE: the table of step times, longest first.
step_summary() {
    step_end
    printf '\n==> %s: %d s in all\n' "$1" "$SECONDS"
    local i
    for i in "${!step_names[@]}"; do
        printf '%6d s  %s\n' "${step_seconds[$i]}" "${step_names[$i]}"
    done | sort -rn
}

# ---- The machine's cache of slow builds that depend on pinned versions
# only (llama.cpp's server, the models' virtualenvs): outside any clone, so
# that every clone and every CI run on this machine reuses them.
#   ${RECAPD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recapd}/NAME-HASH
# HASH is the first 16 hex digits of the SHA-256 of the build's ID, the
# string of every version (and flag) that makes it: a version change builds
# a new directory beside the old one (never reusing a stale build; remove
# the old one by hand when you like). Runtime files (pid, log, URL) stay
# under the clone's target/.
cache_root() {
    printf '%s\n' "${RECAPD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/recapd}"
}

# The Python a virtualenv is tied to (its version and installation): part of
# a cached virtualenv's ID, so that a new Python builds it anew.
python_id() {
    python3 -c 'import platform, sys; print(f"python {platform.python_version()} {sys.base_prefix} {platform.machine()}")'
}

# cached NAME ID BUILDER: sets cached_dir to the cache's NAME-HASH directory
# for ID, building it first when it is not there: BUILDER runs with one
# argument, a fresh temporary directory beside it (NAME-HASH.tmp.XXXXXX),
# its output sent to stderr; once it succeeds, ID is written to the
# directory's .id and the directory is renamed into place in one step. So a
# cached directory is always whole: a failed or killed build leaves only its
# temporary directory, which the next build of that NAME-HASH removes. An
# exclusive flock on NAME-HASH.lock serialises two runs building the same
# thing (the second waits, then finds it built). BUILDER runs in a subshell
# with `set -e`; call `cached` as a command of its own, never in a
# condition (`if`, `||`, `&&`), where bash ignores `set -e` inside it.
cached() {
    local name=$1 id=$2 builder=$3 root hash dir lock fd tmp
    root=$(cache_root)
    hash=$(printf '%s' "$id" | sha256sum | cut -c1-16)
    dir=$root/$name-$hash
    cached_dir=$dir
    [ "$(cat "$dir/.id" 2>/dev/null)" = "$id" ] && return 0
    mkdir -p "$root"
    [ -e "$root/CACHEDIR.TAG" ] ||
        printf 'Signature: 8a477f597d28d172789f06886806bc55\n# recapd build cache (scripts/lib.sh); safe to delete.\n' >"$root/CACHEDIR.TAG"
    lock=$dir.lock
    exec {fd}>>"$lock"
    if ! flock -n "$fd"; then
        printf 'cache: waiting for another run building %s\n' "$dir" >&2
        flock "$fd"
    fi
    if [ "$(cat "$dir/.id" 2>/dev/null)" != "$id" ]; then
        # Under the lock nobody else builds this: what is here is left by a
        # killed run (a temporary directory), or is not this ID's build.
        rm -rf "$dir" "$dir".tmp.*
        tmp=$(mktemp -d "$dir.tmp.XXXXXX")
        printf 'cache: building %s (%s)\n' "$dir" "$id" >&2
        local t0=$SECONDS status errexit=${-//[^e]/}
        # A subshell with `set -e` of its own: in a command substitution
        # bash turns `set -e` off, and a failed step must never be cached.
        # The caller's `set -e` is off around it (restored below), so a
        # failure reaches the clean-up; `|| status=$?` would not do: bash
        # ignores `set -e` inside anything left of `||`.
        set +e
        (
            set -e
            "$builder" "$tmp" >&2
        )
        status=$?
        [ -z "$errexit" ] || set -e
        if [ "$status" -ne 0 ]; then
            printf 'cache: building %s failed\n' "$dir" >&2
            rm -rf "$tmp"
            exec {fd}>&-
            return "$status"
        fi
        printf '%s\n' "$id" >"$tmp/.id"
        mv -T "$tmp" "$dir"
        printf 'cache: built %s in %d s\n' "$dir" $((SECONDS - t0)) >&2
    fi
    exec {fd}>&-
}
