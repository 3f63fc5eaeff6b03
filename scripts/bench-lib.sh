# Shared by the benchmark scripts; sourced, not run. Expects BENCH_NAME and DB_NAME.

PG_HOST=${PG_HOST:-127.0.0.1}
PG_PORT=${PG_PORT:-5432}
PG_USER=${PG_USER:-postgres}

# Settings every benchmark reads, each overridable from the environment. A script sets
# DEFAULT_CONNECTIONS before sourcing this file when 32 is not its load.
PG_DATABASE_URL="postgres://${PG_USER}@${PG_HOST}:${PG_PORT}/${DB_NAME}"
DURATION=${BENCH_SECONDS:-10}          # whole seconds: pgbench -T takes no unit
CONNECTIONS=${BENCH_CONNECTIONS:-${DEFAULT_CONNECTIONS:-32}}
THREADS=${BENCH_THREADS:-2}
WARMUP=${BENCH_WARMUP_SECONDS:-2}
POOL_SIZE=${BENCH_POOL_SIZE:-32}
SQLITE_POOL_SIZE=${BENCH_SQLITE_POOL_SIZE:-4}
TARGET_DIR=${CARGO_TARGET_DIR:-target}
BIN="$TARGET_DIR/release/billable"

# Messages prefixed with the script's BENCH_NAME (set it before sourcing this file).
log() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }
warn() { printf '%s: WARNING: %s\n' "$BENCH_NAME" "$*" >&2; }
die() { printf '%s: error: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }

# psql as the admin (database postgres) and on the benchmark's DB_NAME. No NOTICE for
# "DROP DATABASE IF EXISTS" of a database that isn't there.
export PGOPTIONS="-c client_min_messages=warning"
psql_admin() { psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -X -q -At -v ON_ERROR_STOP=1 "$@"; }
psql_bench() { psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$DB_NAME" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# setup_cleanup: makes the scratch directory WORK and installs the traps that, on any exit
# (Ctrl-C and kill included), stop SERVER_PID (billable) and REFERENCE_PID (the server it is
# compared with) first, as billable holds pool connections, print the tail of every log in
# WORK on failure, drop DB_NAME if DB_CREATED is 1, and remove WORK.
setup_cleanup() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/billable-${BENCH_NAME}.XXXXXX")
    SERVER_PID=
    REFERENCE_PID=
    # Other processes a benchmark starts (a receiver, an SMTP server), stopped last.
    EXTRA_PIDS=()
    DB_CREATED=0
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

cleanup() {
    local status=$?
    set +e
    stop "$SERVER_PID"
    stop "${REPLICA_PID:-}"
    stop "$REFERENCE_PID"
    stop "${REDIS_PID:-}"
    local extra
    for extra in "${EXTRA_PIDS[@]}"; do
        stop "$extra"
    done
    if (( status != 0 )); then
        local server_log
        for server_log in "$WORK"/*.log; do
            if [[ -s $server_log ]]; then
                log "last lines of $(basename "$server_log"):"
                tail -n 20 "$server_log" >&2
            fi
        done
    fi
    if (( DB_CREATED )); then
        drop_bench_database
    fi
    rm -rf "$WORK"
    exit "$status"
}

# drop_bench_database: for the cleanup trap; FORCE (PostgreSQL 13+) ends stray sessions,
# e.g. of a load generator killed by Ctrl-C.
drop_bench_database() {
    psql_admin -c "DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)" >/dev/null 2>&1 \
        || psql_admin -c "DROP DATABASE IF EXISTS ${DB_NAME}" >/dev/null \
        || warn "could not drop database ${DB_NAME}"
}

# Every server measured starts under `setsid`, in a session of its own as a deployed
# service runs (systemd, a container), not in the load generator's. With the kernel's
# autogroup scheduling on (the default), a session shares one CPU quota: a server in the
# benchmark's session would split it with wrk while PostgreSQL's backends have their own,
# and its p99 would measure that. A background job of a script is no process group leader,
# so setsid execs in place and `$!` stays the server's pid.

# serve_agent DATABASE_URL POOL_SIZE LOG [VAR=VALUE...] : starts `$BIN serve --agent
# $WORK/agent.yaml` in the background (SERVER_PID) on that database with that pool, the API on
# API_PORT and the triggers on 127.0.0.1, logging at warn (per-request logs would dominate)
# into $WORK/LOG; the VAR=VALUE pairs (the trigger's secret) join its environment.
# AGENT_YAML and AGENT_API_PORT, when set, replace the definition and the API's port.
serve_agent() {
    local database_url=$1 pool=$2 log_file=$3
    shift 3
    setsid env "$@" \
        DATABASE_URL="$database_url" \
        BILLABLE_LISTEN="127.0.0.1:${AGENT_API_PORT:-$API_PORT}" \
        BILLABLE_TRIGGER_HOST=127.0.0.1 \
        BILLABLE_DB_POOL_SIZE="$pool" \
        BILLABLE_LOG=warn \
        "$BIN" serve --agent "${AGENT_YAML:-$WORK/agent.yaml}" >"$WORK/$log_file" 2>&1 &
    SERVER_PID=$!
}

# serve_replica YAML API_PORT DATABASE_URL POOL_SIZE LOG [VAR=VALUE...] : a second replica,
# as serve_agent starts one, with its own definition (its own trigger port) and API port;
# its pid in REPLICA_PID.
serve_replica() {
    local yaml=$1 api_port=$2 first=$SERVER_PID
    shift 2
    AGENT_YAML=$yaml AGENT_API_PORT=$api_port serve_agent "$@"
    REPLICA_PID=$SERVER_PID
    SERVER_PID=$first
}

# pgbench_insert NAME BODY : PostgreSQL's own rate of durable one-row INSERTs of BODY (text)
# into a table of the benchmark's database, at the benchmark's concurrency, prepared;
# output in $WORK/NAME.txt, echoed. The anchor of the benchmarks of writes.
pgbench_insert() {
    local name=$1 body=$2
    psql_bench -c "DROP TABLE IF EXISTS bench_anchor;
        CREATE TABLE bench_anchor (id bigserial PRIMARY KEY, body text NOT NULL, at timestamptz NOT NULL DEFAULT now())"
    printf 'INSERT INTO bench_anchor (body) VALUES (:body);\n' >"$WORK/$name.sql"
    pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -M prepared -c "$CONNECTIONS" -j "$THREADS" \
        -T "$DURATION" -D body="$body" -f "$WORK/$name.sql" "$DB_NAME" >"$WORK/$name.txt" 2>&1 \
        || { cat "$WORK/$name.txt"; die "pgbench ($name) failed"; }
    cat "$WORK/$name.txt"
    psql_bench -c "DROP TABLE bench_anchor"
}
# pgbench_tps NAME : the tps pgbench printed in $WORK/NAME.txt.
pgbench_tps() { awk '/^tps = / && !/including/ { printf "%.0f", $3; exit }' "$WORK/$1.txt"; }

# stop PID : SIGTERM, wait up to 5 s (graceful shutdown drains in-flight requests), SIGKILL.
stop() {
    local pid=$1
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# install_missing_tools TOOL...: installs wrk, redis-server and the PostgreSQL client tools from Debian when
# missing (root needed only then), then checks that every TOOL is there.
install_missing_tools() {
    if ! command -v wrk >/dev/null 2>&1; then
        log "installing wrk"
        apt-get update -qq && apt-get install -y -qq wrk >/dev/null
    fi
    if ! command -v redis-server >/dev/null 2>&1; then
        log "installing redis-server"
        apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
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

# serve PORT LOG [VAR=VALUE...] : starts `billable serve` on the benchmark's database in the
# background (its pid in SERVED_PID), logging into $WORK/LOG, and waits for /healthz
# (migrations run before the listener binds). Rate limits raised far above what wrk can
# send: the figures must measure the service, not the limiter's 429s. Logging at warn so
# per-request logs don't dominate. VAR=VALUE pairs join its environment.
serve() {
    local port=$1 log_file=$2
    shift 2
    setsid env "$@" \
        DATABASE_URL="$PG_DATABASE_URL" \
        BILLABLE_LISTEN="127.0.0.1:${port}" \
        BILLABLE_RATE_LIMIT="100000000/1s" \
        BILLABLE_IP_RATE_LIMIT="100000000/1s" \
        BILLABLE_DB_POOL_SIZE="$POOL_SIZE" \
        BILLABLE_LOG=warn \
        "$BIN" serve >"$WORK/$log_file" 2>&1 &
    SERVED_PID=$!
    for _ in $(seq 1 60); do
        kill -0 "$SERVED_PID" 2>/dev/null || die "server ($log_file) exited during startup"
        if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:${port}/healthz" 2>/dev/null; then
            # Memory and CPU are read from this pid.
            [[ $(cat "/proc/$SERVED_PID/comm") == billable ]] || die "pid $SERVED_PID is not the server"
            return 0
        fi
        sleep 0.5
    done
    die "server ($log_file) did not answer http://127.0.0.1:${port}/healthz within 30 s"
}

# run_wrk NAME ARGS... : runs wrk, keeps its output in $WORK/NAME.txt and echoes it.
run_wrk() {
    local name=$1
    shift
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" >"$WORK/$name.txt"
    cat "$WORK/$name.txt"
    grep -q '^Requests/sec:' "$WORK/$name.txt" || die "wrk ($name) produced no Requests/sec line"
    if grep -q 'Non-2xx or 3xx responses' "$WORK/$name.txt"; then
        warn "$name: $(grep 'Non-2xx or 3xx responses' "$WORK/$name.txt" | sed 's/^ *//') (figures include errors)"
    fi
    if grep -q 'Socket errors' "$WORK/$name.txt"; then
        warn "$name: $(grep 'Socket errors' "$WORK/$name.txt" | sed 's/^ *//')"
    fi
}
wrk_rps() { awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$WORK/$1.txt"; }
# Lines of the "Latency Distribution" block look like "     99%    4.21ms".
wrk_pct_ms() { awk -v p="$2%" '$1 == p { print $2; exit }' "$WORK/$1.txt" | to_ms; }

# build_release: the release binary the benchmarks measure (debug builds say nothing about
# production speed).
build_release() {
    log "building release binary"
    cargo build --release -p app
    [[ -x $BIN ]] || die "expected binary at $BIN"
}

# fresh_database: DB_NAME dropped and made anew, to be dropped on exit. The server
# bootstraps (and prints a key) only on an empty database.
fresh_database() {
    log "recreating database ${DB_NAME}"
    psql_admin -c "DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)" >/dev/null
    DB_CREATED=1
    psql_admin -c "CREATE DATABASE ${DB_NAME}" >/dev/null
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# first_start_key LOG: the API key the first start's banner printed into $WORK/LOG, its
# only copy.
first_start_key() {
    local key
    key=$(grep -o 'bk_[A-Za-z0-9]*' "$WORK/$1" | head -n 1 || true)
    [[ -n $key ]] || die "no API key (bk_...) in the server's first-start output"
    echo "$key"
}

