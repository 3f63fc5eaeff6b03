#!/usr/bin/env bash
# Benchmarks the agent's webhook trigger on PostgreSQL and on SQLite (the default), with the
# `echo` provider so that the figures are the trigger's and the runtime's own (token check,
# body, conversation queue, run-history row), not a model's:
#   - POST at BENCH_CONNECTIONS connections, each request on its own conversation;
#   - the same, all on one conversation (runs serialised by its queue; 429 once
#     limits.queue_depth requests wait);
#   - on SQLite, distinct conversations again with BILLABLE_SQLITE_SYNCHRONOUS=normal, beside
#     the default full: what syncing every acknowledged write costs;
#   - on PostgreSQL, distinct conversations again with two replicas on one database (each
#     taking half the connections), beside pgbench's durable one-row INSERT at the same
#     concurrency, the database's own limit for work that writes per run;
#   - the same load against a bare actix-web handler returning a constant
#     (crates/http-api/examples/bare_handler.rs), one worker per core like the trigger.
# Targets: on distinct conversations, at least half the bare handler's throughput; two
# replicas at least one replica's rate.
# Called by `make bench`. Needs root only to install wrk / start PostgreSQL when missing.
#
# Tunables (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (64), BENCH_THREADS (2),
# BENCH_WARMUP_SECONDS (2), BENCH_POOL_SIZE (32, PostgreSQL), BENCH_SQLITE_POOL_SIZE (4),
# BENCH_QUEUE_DEPTH (64).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_agent

BENCH_NAME=bench-agent
DEFAULT_CONNECTIONS=64
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

QUEUE_DEPTH=${BENCH_QUEUE_DEPTH:-64}
BARE_BIN="$TARGET_DIR/release/examples/bare_handler"

# ---------------------------------------------------------------------------------------------
# Cleanup on any exit: servers stopped, database dropped, scratch files removed.
setup_cleanup

# ---------------------------------------------------------------------------------------------
# Tools.
install_missing_tools wrk pgbench psql pg_isready curl python3 awk cargo
start_postgres

# ---------------------------------------------------------------------------------------------
# Build, release profile. One command for both: features unify as in `-p app` alone, so
# the server shares every artifact with scripts/bench.sh's build and only the example is new.
log "building release binaries"
cargo build --release -p app -p http-api --bin billable --example bare_handler
[[ -x $BIN ]] || die "expected binary at $BIN"
[[ -x $BARE_BIN ]] || die "expected binary at $BARE_BIN"

log "recreating database ${DB_NAME}"
psql_admin -c "DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)" >/dev/null
DB_CREATED=1
psql_admin -c "CREATE DATABASE ${DB_NAME}" >/dev/null

# ---------------------------------------------------------------------------------------------
# Ports (REST API, trigger, bare handler, and the second replica's API and trigger): bound
# together so they differ, then released.
read -r API_PORT TRIGGER_PORT BARE_PORT API_PORT_2 TRIGGER_PORT_2 < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(5)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))')
API_BASE="http://127.0.0.1:${API_PORT}"
TRIGGER_URL="http://127.0.0.1:${TRIGGER_PORT}/"
TRIGGER_URL_2="http://127.0.0.1:${TRIGGER_PORT_2}/"
BARE_URL="http://127.0.0.1:${BARE_PORT}/"

# Hex: safe in YAML, in a header and in a Lua string.
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

cat >"$WORK/agent.yaml" <<YAML
name: bench
model:
  provider: echo
memory:
  scope: none
limits:
  queue_depth: ${QUEUE_DEPTH}
  max_concurrent_runs: ${CONNECTIONS}
triggers:
  - type: webhook
    path: /
    port: ${TRIGGER_PORT}
    token_env: BENCH_WEBHOOK_TOKEN
YAML
# The second replica: the same agent, its trigger on a port of its own.
sed "s/port: ${TRIGGER_PORT}\$/port: ${TRIGGER_PORT_2}/" "$WORK/agent.yaml" >"$WORK/agent-2.yaml"

# ---------------------------------------------------------------------------------------------
# wrk helpers.

# post_script NAME CONVERSATION [PREFIX] : a wrk Lua script at $WORK/NAME.lua POSTing a run
# request with the token. CONVERSATION "" gives every request a conversation of its own
# (PREFIX, default "bench", thread number and a per-thread counter); any other value is the
# one conversation of all requests.
# Counts the answers by status; `done` prints "status 200: N" lines, and "status other: N".
# Every run, the bare handler's included, uses such a script: the client does the same work.
post_script() {
    cat >"$WORK/$1.lua" <<LUA
local conversation = "$2"
local prefix = "${3:-bench}"
local threads = {}

function setup(thread)
    table.insert(threads, thread)
    thread:set("thread_id", #threads)
end

wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer ${TOKEN}"
wrk.headers["Content-Type"] = "application/json"

local sent = 0
ok, rejected, other = 0, 0, 0

function request()
    sent = sent + 1
    local id = conversation
    if id == "" then
        id = string.format("%s-%d-%d", prefix, thread_id, sent)
    end
    return wrk.format(nil, nil, nil,
        string.format('{"input": "hello %d", "conversation_id": "%s"}', sent, id))
end

function response(status, headers, body)
    if status == 200 then
        ok = ok + 1
    elseif status == 429 then
        rejected = rejected + 1
    else
        other = other + 1
    end
end

function done(summary, latency, requests)
    local totals = { ok = 0, rejected = 0, other = 0 }
    for _, thread in ipairs(threads) do
        for name, _ in pairs(totals) do
            totals[name] = totals[name] + thread:get(name)
        end
    end
    io.write(string.format("status 200: %d\nstatus 429: %d\nstatus other: %d\n",
        totals.ok, totals.rejected, totals.other))
end
LUA
}

# run_wrk_lua NAME URL SCRIPT : runs wrk with $WORK/SCRIPT.lua, keeps its output in
# $WORK/NAME.txt and echoes it.
run_wrk_lua() {
    local name=$1 url=$2 script=$3
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/$script.lua" "$url" \
        >"$WORK/$name.txt"
    cat "$WORK/$name.txt"
    grep -q '^Requests/sec:' "$WORK/$name.txt" || die "wrk ($name) produced no Requests/sec line"
    if grep -q 'Socket errors' "$WORK/$name.txt"; then
        warn "$name: $(grep 'Socket errors' "$WORK/$name.txt" | sed 's/^ *//')"
    fi
    if (( $(wrk_status "$name" other) > 0 )); then
        warn "$name: $(wrk_status "$name" other) answers neither 200 nor 429 (figures include them)"
    fi
}
# run_wrk_pair NAME URL_A URL_B SCRIPT_A SCRIPT_B : two wrk at once, half the connections
# and threads each, against two replicas; outputs in $WORK/NAME-a.txt and -b.txt, echoed.
run_wrk_pair() {
    local name=$1 half=$(( CONNECTIONS / 2 )) threads=$(( THREADS > 1 ? THREADS / 2 : 1 )) first
    wrk -t"$threads" -c"$half" -d"${DURATION}s" --latency -s "$WORK/$4.lua" "$2" >"$WORK/$name-a.txt" &
    first=$!
    wrk -t"$threads" -c"$half" -d"${DURATION}s" --latency -s "$WORK/$5.lua" "$3" >"$WORK/$name-b.txt"
    wait "$first"
    cat "$WORK/$name-a.txt" "$WORK/$name-b.txt"
    grep -q '^Requests/sec:' "$WORK/$name-a.txt" "$WORK/$name-b.txt" || die "wrk ($name) produced no Requests/sec line"
}
# pair_rps NAME / pair_p99_ms NAME : the pair's summed rate, its worse p99.
pair_rps() { echo $(( $(wrk_rps "$1-a") + $(wrk_rps "$1-b") )); }
pair_p99_ms() { printf '%s\n%s\n' "$(wrk_pct_ms "$1-a" 99)" "$(wrk_pct_ms "$1-b" 99)" | sort -g | tail -n 1; }
# wrk_status NAME 200|429|other : the count the script's `done` printed.
wrk_status() { awk -v s="$2" '$1 == "status" && $2 == s ":" { n = $3 } END { print n + 0 }' "$WORK/$1.txt"; }

post_script distinct ""
post_script one "bench-one"
post_script distinct-a "" replica-a
post_script distinct-b "" replica-b

# ---------------------------------------------------------------------------------------------
# The billable server with the agent's trigger.

# wait_for URL PID NAME [CURL ARGS...] : until URL answers 2xx (at most 30 s).
wait_for() {
    local url=$1 pid=$2 name=$3
    shift 3
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || die "$name exited during startup"
        if curl -fsS -o /dev/null --max-time 1 "$@" "$url" 2>/dev/null; then
            return 0
        fi
        sleep 0.5
    done
    die "$name did not answer $url within 30 s"
}

# Fail fast on a token, routing or definition mistake rather than benchmarking 4xx.
trigger_call() {
    curl -sS -o "$WORK/probe.json" -w '%{http_code}' --max-time 5 -X POST \
        -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
        -d '{"input": "hello", "conversation_id": "probe"}' "$1"
}

# trigger_ready URL : waits until the trigger at URL answers (at most 10 s) and checks that
# the answer is a run's reply.
trigger_ready() {
    local status
    for _ in $(seq 1 20); do
        status=$(trigger_call "$1" 2>/dev/null || true)
        [[ $status == 000 || -z $status ]] || break
        sleep 0.5
    done
    [[ $status == 200 ]] || die "the trigger at $1 answered ${status:-nothing}: $(cat "$WORK/probe.json" 2>/dev/null)"
    grep -q '"status":"ok"' "$WORK/probe.json" || die "unexpected trigger reply: $(cat "$WORK/probe.json")"
}

# run_trigger BACKEND DATABASE_URL POOL_SIZE COUNT_COMMAND... : serves the agent on that
# database, runs both loads (results in $WORK/BACKEND-distinct.txt and -one.txt), stops the
# server, and sets RUNS_RECORDED (rows COUNT_COMMAND counts, less those of the warm-up) and
# RUNS_ANSWERED (answers wrk counted).
run_trigger() {
    local backend=$1 database_url=$2 pool=$3 before
    shift 3
    log "starting billable on ${backend}: API ${API_BASE}, trigger ${TRIGGER_URL}"
    serve_agent "$database_url" "$pool" "server-${backend}.log" BENCH_WEBHOOK_TOKEN="$TOKEN"
    # Migrations run before the listeners bind; the trigger listener binds after the API's.
    wait_for "$API_BASE/healthz" "$SERVER_PID" billable
    trigger_ready "$TRIGGER_URL"

    # A short warm-up first fills the connection pool.
    log "warm-up (${WARMUP}s)"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/distinct.lua" "$TRIGGER_URL" >/dev/null
    before=$("$@")

    echo
    echo "=== webhook trigger on ${backend}, distinct conversations (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
    run_wrk_lua "${backend}-distinct" "$TRIGGER_URL" distinct

    echo
    echo "=== webhook trigger on ${backend}, one conversation (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
    run_wrk_lua "${backend}-one" "$TRIGGER_URL" one

    # Let runs still in flight (the one conversation's queue) finish and be recorded.
    sleep 1
    stop "$SERVER_PID"
    SERVER_PID=
    RUNS_RECORDED=$(( $("$@") - before ))
    RUNS_ANSWERED=0
    for name in distinct one; do
        for s in 200 429 other; do
            RUNS_ANSWERED=$(( RUNS_ANSWERED + $(wrk_status "${backend}-${name}" "$s") ))
        done
    done
}

# ---------------------------------------------------------------------------------------------
# The trigger on PostgreSQL, then on SQLite (a file in the work directory).
count_pg_runs() { psql_bench -c "SELECT count(*) FROM agent_runs"; }
count_sqlite_runs() {
    python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM agent_runs").fetchone()[0])' "$WORK/bench.db"
}
run_trigger postgres "$PG_DATABASE_URL" "$POOL_SIZE" count_pg_runs
PG_RUNS="$RUNS_RECORDED $RUNS_ANSWERED"

# Two replicas on the same database, each half the connections and half the pool.
log "starting two replicas on postgres: triggers ${TRIGGER_URL} and ${TRIGGER_URL_2}"
serve_agent "$PG_DATABASE_URL" $(( POOL_SIZE / 2 )) server-replica-a.log BENCH_WEBHOOK_TOKEN="$TOKEN"
serve_replica "$WORK/agent-2.yaml" "$API_PORT_2" "$PG_DATABASE_URL" $(( POOL_SIZE / 2 )) server-replica-b.log \
    BENCH_WEBHOOK_TOKEN="$TOKEN"
wait_for "$API_BASE/healthz" "$SERVER_PID" billable
trigger_ready "$TRIGGER_URL"
trigger_ready "$TRIGGER_URL_2"
wrk -t1 -c$(( CONNECTIONS / 2 )) -d"${WARMUP}s" -s "$WORK/distinct-a.lua" "$TRIGGER_URL" >/dev/null &
warming=$!
wrk -t1 -c$(( CONNECTIONS / 2 )) -d"${WARMUP}s" -s "$WORK/distinct-b.lua" "$TRIGGER_URL_2" >/dev/null
wait "$warming"
echo
echo "=== webhook trigger on postgres, two replicas, distinct conversations (wrk, ${CONNECTIONS} connections in all, ${DURATION}s) ==="
run_wrk_pair replicas "$TRIGGER_URL" "$TRIGGER_URL_2" distinct-a distinct-b
stop "$REPLICA_PID"
REPLICA_PID=
stop "$SERVER_PID"
SERVER_PID=

# One replica keeping its conversations' lines in the process (BILLABLE_AGENT_TURNS=local):
# what sharing them through the database costs.
log "starting billable on postgres with its lines in the process"
serve_agent "$PG_DATABASE_URL" "$POOL_SIZE" server-local-turns.log BENCH_WEBHOOK_TOKEN="$TOKEN" \
    BILLABLE_AGENT_TURNS=local
wait_for "$API_BASE/healthz" "$SERVER_PID" billable
trigger_ready "$TRIGGER_URL"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/distinct.lua" "$TRIGGER_URL" >/dev/null
echo
echo "=== webhook trigger on postgres, lines in the process, distinct conversations (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk_lua postgres-local "$TRIGGER_URL" distinct
stop "$SERVER_PID"
SERVER_PID=

echo
echo "=== pgbench, durable one-row INSERT (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench_insert pg-insert "hello"
run_trigger sqlite "sqlite://${WORK}/bench.db" "$SQLITE_POOL_SIZE" count_sqlite_runs
SQLITE_RUNS="$RUNS_RECORDED $RUNS_ANSWERED"

# The same on SQLite with commits synced at checkpoints only (BILLABLE_SQLITE_SYNCHRONOUS=
# normal): what syncing every acknowledged write (the default, full) costs.
log "starting billable on sqlite with synchronous = NORMAL"
serve_agent "sqlite://${WORK}/bench-normal.db" "$SQLITE_POOL_SIZE" server-sqlite-normal.log \
    BENCH_WEBHOOK_TOKEN="$TOKEN" BILLABLE_SQLITE_SYNCHRONOUS=normal
wait_for "$API_BASE/healthz" "$SERVER_PID" billable
trigger_ready "$TRIGGER_URL"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/distinct.lua" "$TRIGGER_URL" >/dev/null
echo
echo "=== webhook trigger on sqlite, synchronous = NORMAL, distinct conversations (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk_lua sqlite-normal "$TRIGGER_URL" distinct
stop "$SERVER_PID"
SERVER_PID=

# ---------------------------------------------------------------------------------------------
# The bare handler, same client script, the billable server stopped.
log "starting the bare handler on ${BARE_URL}"
setsid "$BARE_BIN" "127.0.0.1:${BARE_PORT}" >"$WORK/bare.log" 2>&1 &
REFERENCE_PID=$!
wait_for "$BARE_URL" "$REFERENCE_PID" bare_handler -X POST -d '{}'
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/distinct.lua" "$BARE_URL" >/dev/null

echo
echo "=== bare actix-web handler (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk_lua bare "$BARE_URL" distinct
stop "$REFERENCE_PID"
REFERENCE_PID=

# ---------------------------------------------------------------------------------------------
# Summary.
line() {
    printf '  %-36s %8s req/s   p99 %8s ms' "$1" "$(wrk_rps "$2")" "$(wrk_pct_ms "$2" 99)"
}
ratio() {
    awk -v a="$(wrk_rps "$1")" -v b="$(wrk_rps bare)" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}
met() { awk -v r="$1" 'BEGIN { print (r != "n/a" && r + 0 >= 0.5) ? "met" : "NOT met" }'; }

echo
echo "agent webhook trigger (echo provider, ${CONNECTIONS} connections, ${DURATION} s, $(nproc) cores):"
for backend in postgres sqlite; do
    for name in distinct one; do
        label="${backend}, distinct conversations"
        [[ $name == one ]] && label="${backend}, one conversation"
        line "$label" "${backend}-${name}"
        printf '   (200: %s, 429: %s' "$(wrk_status "${backend}-${name}" 200)" "$(wrk_status "${backend}-${name}" 429)"
        (( $(wrk_status "${backend}-${name}" other) == 0 )) || printf ', other: %s' "$(wrk_status "${backend}-${name}" other)"
        printf ')\n'
    done
done
line "bare actix-web handler" bare
printf '\n'
printf '  %-36s %8s req/s   p99 %8s ms\n' "postgres, two replicas, distinct" "$(pair_rps replicas)" "$(pair_p99_ms replicas)"
line "postgres, lines in process, distinct" postgres-local
printf '\n'
line "sqlite, synchronous NORMAL, distinct" sqlite-normal
printf '\n'
printf '  %-36s %8s tps\n' "pgbench, durable one-row INSERT" "$(pgbench_tps pg-insert)"
printf '\n'
two=$(awk -v a="$(pair_rps replicas)" -v b="$(wrk_rps postgres-distinct)" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
printf '  two replicas / one replica (postgres, distinct) ratio %s   target >= 1: %s\n' "$two" \
    "$(awk -v r="$two" 'BEGIN { print (r != "n/a" && r + 0 >= 1) ? "met" : "NOT met" }')"
for backend in postgres sqlite; do
    r=$(ratio "${backend}-distinct")
    printf '  trigger on %-8s / bare (distinct) ratio %s   target >= 0.5: %s\n' "$backend" "$r" "$(met "$r")"
done
# Requests in flight when wrk stops go unanswered to wrk but still run and are recorded.
read -r pg_recorded pg_answered <<<"$PG_RUNS"
read -r sqlite_recorded sqlite_answered <<<"$SQLITE_RUNS"
printf '  run-history rows: PostgreSQL %s for %s answers, SQLite %s for %s (queue_depth %s)\n' \
    "$pg_recorded" "$pg_answered" "$sqlite_recorded" "$sqlite_answered" "$QUEUE_DEPTH"
