#!/usr/bin/env bash
# Makes sure a PostgreSQL server the tests can use is reachable, and prints its
# URL as the only line on stdout (everything else goes to stderr):
#   1. $RECAPD_TEST_DATABASE_URL, when it is set and accepts a connection;
#   2. else a server already answering on 127.0.0.1:5432 (as user root, then
#      as user postgres, database `test`, no password);
#   3. else Debian's `postgresql` package (installed from apt when missing),
#      its cluster created if there is none and started without systemd, a
#      superuser role `root` and a database `test` owned by it, and trust
#      authentication for TCP connections from 127.0.0.1 and ::1.
# In cases 2 and 3, and in case 1 when the URL is a local Debian cluster's,
# the cluster also gets TLS (setup_tls): a test CA and a server certificate
# for localhost, 127.0.0.1 and ::1 that it signs, in the directory
# recapd-test-tls beside the cluster's postgresql.conf, turned on with
# ALTER SYSTEM and a reload (never a restart: plaintext clients keep
# working, open connections are untouched). The integration tests find the
# CA as ca.crt beside the server's ssl_cert_file.
# Idempotent: running it again finds the server of the previous run.
# Exits non-zero with a message on stderr when no usable server can be had.
set -euo pipefail

log() { printf 'postgres.sh: %s\n' "$*" >&2; }
die() {
    log "error: $*"
    exit 1
}

# as_root CMD...: runs CMD as root, through sudo when we are not root.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        command -v sudo >/dev/null || die "not root and sudo is missing, cannot run: $*"
        sudo "$@"
    fi
}

apt_install() {
    log "installing $* from apt"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# try_url URL: succeeds when psql can log in to URL and run a query.
try_url() {
    PGCONNECT_TIMEOUT=5 psql "$1" -X -qAt -c 'select 1' >/dev/null 2>&1
}

# port_open PORT: succeeds when something accepts TCP connections on it.
port_open() {
    timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

ensure_psql() {
    command -v psql >/dev/null || apt_install postgresql-client
    command -v psql >/dev/null || die "psql is still missing after installing postgresql-client"
}

# as_postgres CMD...: runs CMD as the postgres OS user (peer auth over the
# local socket), from / so that it does not complain about our directory.
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        command -v sudo >/dev/null || die "not root and sudo is missing, cannot run as user postgres: $*"
        (cd / && sudo -u postgres -- "$@")
    fi
}

# The installed server versions (those with a postgres binary), newest first.
server_versions() {
    local bin
    for bin in /usr/lib/postgresql/*/bin/postgres; do
        if [ -x "$bin" ]; then basename "$(dirname "$(dirname "$bin")")"; fi
    done | sort -rn
}

# The local clusters, one per line: version name port status.
clusters() {
    command -v pg_lsclusters >/dev/null || return 0
    pg_lsclusters -h 2>/dev/null | awk '{ print $1, $2, $3, $4 }'
}

# setup_cluster VERSION NAME PORT: role root, database test, trust over TCP.
setup_cluster() {
    local version=$1 name=$2 port=$3 hba
    local -a psql_admin=(psql -X -q -v ON_ERROR_STOP=1 -p "$port")
    log "configuring cluster $version/$name (port $port): role root, database test, trust on 127.0.0.1 and ::1"
    as_postgres "${psql_admin[@]}" -d postgres >&2 <<'SQL'
select 'create role root superuser login'
 where not exists (select from pg_roles where rolname = 'root') \gexec
select 'create database test owner root'
 where not exists (select from pg_database where datname = 'test') \gexec
SQL
    hba=$(as_postgres "${psql_admin[@]}" -At -d postgres -c 'show hba_file')
    if [ -z "$hba" ] || ! as_root test -f "$hba"; then
        die "cannot find pg_hba.conf of cluster $version/$name"
    fi
    # pg_hba.conf is read top to bottom and the first matching line wins, so
    # the trust lines go first; the marker keeps this from being done twice.
    if ! as_root grep -q '^# recapd tests (scripts/postgres.sh)' "$hba"; then
        log "trusting TCP connections from 127.0.0.1 and ::1 in $hba"
        as_root sed -i '1i\
# recapd tests (scripts/postgres.sh): TCP connections from this machine need no password\
host    all             all             127.0.0.1/32            trust\
host    all             all             ::1/128                 trust' "$hba"
    fi
    as_postgres "${psql_admin[@]}" -At -d postgres -c 'select pg_reload_conf()' >/dev/null
}

# setup_tls VERSION NAME PORT: TLS on, with a certificate signed by a test CA
# (see the top of this file); nothing when it is already so.
setup_tls() {
    local version=$1 name=$2 port=$3 conf dir
    local -a psql_admin=(psql -X -q -v ON_ERROR_STOP=1 -p "$port" -d postgres -At)
    conf=$(as_postgres "${psql_admin[@]}" -c 'show config_file')
    dir=$(dirname "$conf")/recapd-test-tls
    if [ "$(as_postgres "${psql_admin[@]}" -c 'show ssl')" = on ] &&
        [ "$(as_postgres "${psql_admin[@]}" -c 'show ssl_cert_file')" = "$dir/server.crt" ] &&
        as_root test -s "$dir/ca.crt"; then
        return 0
    fi
    command -v openssl >/dev/null || apt_install openssl
    log "turning TLS on for cluster $version/$name (certificate in $dir, signed by a test CA; reload, no restart)"
    as_root mkdir -p "$dir"
    if ! as_root test -s "$dir/server.crt" || ! as_root test -s "$dir/ca.crt"; then
        as_root openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -keyout "$dir/ca.key" -out "$dir/ca.crt" -days 3650 -subj "/CN=recapd test CA" \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
        as_root openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
            -keyout "$dir/server.key" -out "$dir/server.csr" -subj "/CN=localhost" 2>/dev/null
        printf '%s\n' 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1' 'basicConstraints=CA:FALSE' \
            'keyUsage=critical,digitalSignature' 'extendedKeyUsage=serverAuth' |
            as_root tee "$dir/server.ext" >/dev/null
        as_root openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
            -CAcreateserial -days 3650 -extfile "$dir/server.ext" -out "$dir/server.crt" 2>/dev/null
    fi
    as_root chown -R postgres:postgres "$dir"
    as_root chmod 0600 "$dir/server.key" "$dir/ca.key"
    as_root chmod 0644 "$dir/ca.crt" "$dir/server.crt"
    as_root chmod 0755 "$dir"
    as_postgres "${psql_admin[@]}" >/dev/null <<SQL
alter system set ssl_cert_file = '$dir/server.crt';
alter system set ssl_key_file = '$dir/server.key';
alter system set ssl = on;
select pg_reload_conf();
SQL
    for _ in $(seq 20); do
        [ "$(as_postgres "${psql_admin[@]}" -c 'show ssl_cert_file')" = "$dir/server.crt" ] && break
        sleep 0.2
    done
    [ "$(as_postgres "${psql_admin[@]}" -c 'show ssl')" = on ] ||
        die "cluster $version/$name: ssl is still off after the reload (see its log)"
}

# local_tls URL: setup_tls for the local Debian cluster URL reaches on
# 127.0.0.1 or localhost, when there is one; a warning otherwise (the TLS
# tests then fail, saying so).
local_tls() {
    local port version name
    if [[ $1 =~ @(127\.0\.0\.1|localhost)(:([0-9]+))?/ ]]; then
        port=${BASH_REMATCH[3]:-5432}
        read -r version name _ <<<"$(clusters | awk -v p="$port" '$3 == p && $4 == "online" { print; exit }')"
        if [ -n "${version:-}" ]; then
            setup_tls "$version" "$name" "$port"
            return 0
        fi
    fi
    log "warning: the database is not a local Debian cluster; TLS is not set up (the TLS tests need it)"
}

# 1. The URL the caller chose.
if [ -n "${RECAPD_TEST_DATABASE_URL:-}" ]; then
    ensure_psql
    if try_url "$RECAPD_TEST_DATABASE_URL"; then
        log "using RECAPD_TEST_DATABASE_URL"
        local_tls "$RECAPD_TEST_DATABASE_URL"
        printf '%s\n' "$RECAPD_TEST_DATABASE_URL"
        exit 0
    fi
    log "warning: RECAPD_TEST_DATABASE_URL is set but psql cannot connect to it; looking for a local server instead"
fi

# 2. A server already running on 127.0.0.1:5432.
if port_open 5432; then
    ensure_psql
    for user in root postgres; do
        url="postgres://$user@127.0.0.1:5432/test"
        if try_url "$url"; then
            log "found a server on 127.0.0.1:5432, user $user"
            local_tls "$url"
            printf '%s\n' "$url"
            exit 0
        fi
    done
    # A local Debian cluster that is not set up for the tests yet.
    read -r version name _ <<<"$(clusters | awk '$3 == 5432 && $4 == "online" { print; exit }')"
    [ -n "${version:-}" ] ||
        die "something answers on 127.0.0.1:5432, but neither user root nor user postgres can open database test without a password, and it is not a local Debian cluster this script could configure"
    setup_cluster "$version" "$name" 5432
    url="postgres://root@127.0.0.1:5432/test"
    try_url "$url" || die "configured cluster $version/$name, but psql still cannot connect to $url"
    setup_tls "$version" "$name" 5432
    printf '%s\n' "$url"
    exit 0
fi

# 3. A local Debian cluster, installed and started here.
if ! command -v pg_ctlcluster >/dev/null || [ -z "$(server_versions)" ]; then
    apt_install postgresql
fi
command -v pg_ctlcluster >/dev/null || die "pg_ctlcluster is still missing after installing postgresql"
[ -n "$(server_versions)" ] || die "no PostgreSQL server under /usr/lib/postgresql after installing postgresql"
ensure_psql

# Prefer the cluster on port 5432, then a cluster named main, newest first;
# create main with the newest server when there is no cluster at all.
pick=$(clusters | sort -k1,1rn | awk '$3 == 5432 { print; exit }')
[ -n "$pick" ] || pick=$(clusters | sort -k1,1rn | awk '$2 == "main" { print; exit }')
if [ -z "$pick" ]; then
    version=$(server_versions | awk '{ print; exit }')
    log "no cluster yet: creating $version/main on port 5432"
    # pg_createcluster runs initdb as the cluster owner, user postgres.
    as_root pg_createcluster --port 5432 "$version" main >&2
    pick=$(clusters | awk -v v="$version" '$1 == v && $2 == "main" { print; exit }')
    [ -n "$pick" ] || die "pg_createcluster $version main did not create a cluster"
fi
read -r version name port status <<<"$pick"

if [ "$status" != online ]; then
    log "starting cluster $version/$name (port $port)"
    rc=0
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start >&2 || rc=$?
    # Exit 2 means it was already running.
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
        as_root tail -n 20 "/var/log/postgresql/postgresql-$version-$name.log" >&2 || true
        die "pg_ctlcluster $version $name start failed (exit $rc)"
    fi
fi

ready=""
for _ in $(seq 30); do
    if pg_isready -q -h 127.0.0.1 -p "$port" -t 1; then
        ready=yes
        break
    fi
    sleep 1
done
[ -n "$ready" ] || die "cluster $version/$name does not accept connections on 127.0.0.1:$port after 30 s"

setup_cluster "$version" "$name" "$port"
url="postgres://root@127.0.0.1:$port/test"
try_url "$url" || die "cluster $version/$name is running, but psql cannot connect to $url"
setup_tls "$version" "$name" "$port"
log "cluster $version/$name is ready"
printf '%s\n' "$url"
