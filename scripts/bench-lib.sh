# Shared by the benchmark scripts; sourced, not run. Expects PG_HOST, PG_PORT, log and die.

# install_missing_tools TOOL...: installs wrk and the PostgreSQL client tools from Debian when
# missing (root needed only then), then checks that every TOOL is there.
install_missing_tools() {
    if ! command -v wrk >/dev/null 2>&1; then
        log "installing wrk"
        apt-get update -qq && apt-get install -y -qq wrk >/dev/null
    fi
    if ! command -v pgbench >/dev/null 2>&1 || ! command -v psql >/dev/null 2>&1 \
        || ! command -v pg_isready >/dev/null 2>&1; then
        log "installing postgresql-client"
        apt-get update -qq && apt-get install -y -qq postgresql-client >/dev/null
    fi
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null 2>&1 || die "$tool is required but not installed"
    done
}

# start_postgres: starts the local cluster if nothing answers on PG_HOST:PG_PORT.
start_postgres() {
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && return 0
    local version
    version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1 || true)
    [[ -n $version ]] || die "PostgreSQL is not running and no cluster is configured in /etc/postgresql"
    log "starting PostgreSQL ${version}/main"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    for _ in $(seq 1 30); do
        pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && break
        sleep 0.5
    done
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" || die "PostgreSQL did not come up on ${PG_HOST}:${PG_PORT}"
}

# wrk's "850.12us" / "1.20ms" / "1.03s" / "1.50m" on stdin -> milliseconds.
to_ms() {
    awk '{
        v = $1
        if (v ~ /us$/)      { sub(/us$/, "", v); v = v / 1000 }
        else if (v ~ /ms$/) { sub(/ms$/, "", v); v = v + 0 }
        else if (v ~ /s$/)  { sub(/s$/, "", v);  v = v * 1000 }
        else if (v ~ /m$/)  { sub(/m$/, "", v);  v = v * 60000 }
        else if (v ~ /h$/)  { sub(/h$/, "", v);  v = v * 3600000 }
        printf "%.2f\n", v
    }'
}
