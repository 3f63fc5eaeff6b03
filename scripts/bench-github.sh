#!/usr/bin/env bash
# Benchmarks the agent's GitHub (repository) trigger: signed `pull_request` deliveries of
# about 24 KB (tests/fixtures/github/pull_request.opened.json, minified), each with a
# delivery id and a body of its own (a sequence field, pull-request numbers 1..BENCH_PRS),
# at BENCH_CONNECTIONS connections, sent by crates/agent/examples/github_load.rs:
#   - `billable serve --agent` with a github trigger and the `echo` provider, on a fresh
#     PostgreSQL database (dropped at exit);
#   - the same with two replicas on that database, each taking half the connections;
#   - pgbench inserting the same body, one durable row per transaction, at the same
#     concurrency: the database's own rate for what each acknowledgement must store;
#   - the same on a SQLite file in a temporary directory;
#   - Debian's `webhook` (adnanh/webhook) checking the same signature
#     (payload-hmac-sha256 over X-Hub-Signature-256) and running /bin/true, which it
#     answers without waiting for.
# The agent runs each accepted delivery in the background while the load goes on; that work
# shares the CPU, as it would in production. Targets: p99 under 10 ms on PostgreSQL, and
# acknowledgements at 0.5x pgbench's inserts or more.
# Called by `make bench`. Needs root only to install webhook / the PostgreSQL client / start
# PostgreSQL when missing.
#
# Tunables (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (64), BENCH_WARMUP_SECONDS (2),
# BENCH_POOL_SIZE (32, PostgreSQL), BENCH_SQLITE_POOL_SIZE (4), BENCH_PRS (500),
# BENCH_MAX_CONCURRENT_RUNS (16).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_github

BENCH_NAME=bench-github
DEFAULT_CONNECTIONS=64
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

PRS=${BENCH_PRS:-500}
MAX_CONCURRENT_RUNS=${BENCH_MAX_CONCURRENT_RUNS:-16}
LOAD_BIN="$TARGET_DIR/release/examples/github_load"
FIXTURE=tests/fixtures/github/pull_request.opened.json

# ---------------------------------------------------------------------------------------------
# Cleanup on any exit: servers stopped, database dropped, scratch files removed.
setup_cleanup

# ---------------------------------------------------------------------------------------------
# Tools.
install_missing_tools pgbench psql pg_isready curl python3 awk cargo
if ! command -v webhook >/dev/null 2>&1; then
    log "installing webhook"
    apt-get update -qq && apt-get install -y -qq webhook >/dev/null
fi
command -v webhook >/dev/null 2>&1 || die "webhook is required but not installed"
start_postgres

# ---------------------------------------------------------------------------------------------
# Build, release profile, in one command so features unify as in `-p app` alone.
log "building release binaries"
cargo build --release -p app -p agent --bin billable --example github_load
[[ -x $BIN ]] || die "expected binary at $BIN"
[[ -x $LOAD_BIN ]] || die "expected binary at $LOAD_BIN"
[[ -f $FIXTURE ]] || die "missing $FIXTURE"

# ---------------------------------------------------------------------------------------------
# Ports (REST API, github trigger, webhook): bound together so they differ, then released.
read -r API_PORT TRIGGER_PORT WEBHOOK_PORT API_PORT_2 TRIGGER_PORT_2 < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(5)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))')
API_BASE="http://127.0.0.1:${API_PORT}"
TRIGGER_URL="http://127.0.0.1:${TRIGGER_PORT}/github"
TRIGGER_URL_2="http://127.0.0.1:${TRIGGER_PORT_2}/github"
WEBHOOK_URL="http://127.0.0.1:${WEBHOOK_PORT}/hooks/github"

# Hex: safe in YAML, JSON and the environment.
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')

cat >"$WORK/agent.yaml" <<YAML
name: bench
model:
  provider: echo
memory:
  scope: thread
limits:
  max_concurrent_runs: ${MAX_CONCURRENT_RUNS}
triggers:
  - type: github
    path: /github
    port: ${TRIGGER_PORT}
    events: ['*']
YAML
# The second replica: the same agent, its trigger on a port of its own.
sed "s/port: ${TRIGGER_PORT}\$/port: ${TRIGGER_PORT_2}/" "$WORK/agent.yaml" >"$WORK/agent-2.yaml"

# The same check of the same secret, and an answer without waiting for the command.
cat >"$WORK/hooks.json" <<JSON
[
  {
    "id": "github",
    "execute-command": "/bin/true",
    "http-methods": ["POST"],
    "response-message": "accepted",
    "trigger-rule-mismatch-http-response-code": 401,
    "trigger-rule": {
      "match": {
        "type": "payload-hmac-sha256",
        "secret": "${SECRET}",
        "parameter": {"source": "header", "name": "X-Hub-Signature-256"}
      }
    }
  }
]
JSON

# probe URL SIGNED(yes|no) : POSTs the fixture as a pull_request delivery with a fresh
# delivery id (and a field making its body new), signed with the secret or with another key;
# prints "STATUS BODY", or "000 ERROR" when nothing answers.
probe() {
    python3 - "$1" "$SECRET" "$2" "$FIXTURE" <<'PY'
import hashlib, hmac, json, sys, urllib.error, urllib.request, uuid
url, secret, signed, fixture = sys.argv[1], sys.argv[2].encode(), sys.argv[3] == "yes", sys.argv[4]
delivery = str(uuid.uuid4())
with open(fixture) as f:
    payload = json.load(f)
payload["bench_probe"] = delivery
body = json.dumps(payload, separators=(",", ":")).encode()
key = secret if signed else b"not-the-secret"
headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
           "X-GitHub-Delivery": delivery,
           "X-Hub-Signature-256": "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()}
try:
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=5) as answer:
        print(answer.status, answer.read().decode(errors="replace"))
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode(errors="replace"))
except Exception as error:  # not up yet
    print("000", error)
PY
}

# wait_for_probe URL PID NAME : until a signed probe gets any HTTP answer (at most 30 s); the
# answer is left in $PROBE.
wait_for_probe() {
    local url=$1 pid=$2 name=$3
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || die "$name exited during startup"
        PROBE=$(probe "$url" yes)
        [[ $PROBE == 000* ]] || return 0
        sleep 0.5
    done
    die "$name did not answer $url within 30 s: $PROBE"
}

# check_probes URL NAME OK_STATUS BAD_STATUS : a signed probe must get OK_STATUS, a wrongly
# signed one BAD_STATUS, or the benchmark would not measure a signature check.
check_probes() {
    local url=$1 name=$2 ok=$3 bad=$4 answer
    [[ ${PROBE%% *} == "$ok" ]] || die "$name answered a signed delivery with: $PROBE"
    answer=$(probe "$url" no)
    [[ ${answer%% *} == "$bad" ]] || die "$name answered a wrongly signed delivery with: $answer"
}

# run_load NAME URL [CONNECTIONS] : github_load at the benchmark's settings; output kept in
# $WORK/NAME.txt and echoed.
run_load() {
    local name=$1 url=$2
    "$LOAD_BIN" "$url" "$SECRET" "$FIXTURE" "${3:-$CONNECTIONS}" "$DURATION" "$WARMUP" "$PRS" \
        >"$WORK/$name.txt"
    cat "$WORK/$name.txt"
    grep -q '^github_load ' "$WORK/$name.txt" || die "github_load ($name) printed no result line"
    local other
    other=$(( $(kv "$name" requests) - $(kv "$name" acks) ))
    (( other == 0 )) || warn "$name: ${other} answers were not fresh acknowledgements (see above)"
    (( $(kv "$name" errors) == 0 )) || warn "$name: $(kv "$name" errors) requests failed"
}
# kv NAME KEY : a value of github_load's result line ("0" when absent).
kv() {
    awk -v k="$2" '$1 == "github_load" {
        for (i = 2; i <= NF; i++) { split($i, f, "="); if (f[1] == k) { v = f[2] } }
    } END { print (v == "" ? 0 : v) }' "$WORK/$1.txt"
}

# run_billable NAME DATABASE_URL POOL_SIZE : serves the agent on that database, checks the
# trigger, runs the load, stops the server.
run_billable() {
    local name=$1 database_url=$2 pool=$3
    log "starting billable ($name) on ${API_BASE}, trigger on ${TRIGGER_URL}"
    serve_agent "$database_url" "$pool" "$name.log" GITHUB_WEBHOOK_SECRET="$SECRET"
    # Migrations run before the listeners bind; the trigger listener binds after the API's.
    wait_for_probe "$TRIGGER_URL" "$SERVER_PID" "billable ($name)"
    check_probes "$TRIGGER_URL" "billable ($name)" 202 401
    grep -q '"status":"accepted"' <<<"$PROBE" || die "unexpected trigger reply: $PROBE"

    echo
    echo "=== billable github trigger, ${name} (${CONNECTIONS} connections, ${DURATION}s after ${WARMUP}s warm-up) ==="
    run_load "$name" "$TRIGGER_URL"
    stop "$SERVER_PID"
    SERVER_PID=
}

# ---------------------------------------------------------------------------------------------
# (a) PostgreSQL, fresh database.
log "recreating database ${DB_NAME}"
psql_admin -c "DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)" >/dev/null
DB_CREATED=1
psql_admin -c "CREATE DATABASE ${DB_NAME}" >/dev/null
run_billable postgres "$PG_DATABASE_URL" "$POOL_SIZE"
# Accepted deliveries are stored before the answer; runs go on in the background and stop
# with the server.
PG_STORED=$(psql_bench -c "SELECT count(*) FILTER (WHERE verdict = 'accepted'), count(*) FILTER (WHERE state = 'done') FROM agent_deliveries" 2>/dev/null | tr '|' ' ' || echo "? ?")

# (a2) Two replicas on that database, half the connections and half the pool each.
log "starting two replicas on postgres: triggers ${TRIGGER_URL} and ${TRIGGER_URL_2}"
serve_agent "$PG_DATABASE_URL" $(( POOL_SIZE / 2 )) replica-a.log GITHUB_WEBHOOK_SECRET="$SECRET"
serve_replica "$WORK/agent-2.yaml" "$API_PORT_2" "$PG_DATABASE_URL" $(( POOL_SIZE / 2 )) replica-b.log \
    GITHUB_WEBHOOK_SECRET="$SECRET"
wait_for_probe "$TRIGGER_URL" "$SERVER_PID" "billable (replica a)"
wait_for_probe "$TRIGGER_URL_2" "$REPLICA_PID" "billable (replica b)"
echo
echo "=== billable github trigger, postgres, two replicas (${CONNECTIONS} connections in all, ${DURATION}s after ${WARMUP}s warm-up) ==="
run_load replica-a "$TRIGGER_URL" $(( CONNECTIONS / 2 )) &
second_load=$!
run_load replica-b "$TRIGGER_URL_2" $(( CONNECTIONS / 2 ))
wait "$second_load"
stop "$REPLICA_PID"
REPLICA_PID=
stop "$SERVER_PID"
SERVER_PID=

# (a3) pgbench inserting the body github_load sends (minified), durably, row by row.
echo
echo "=== pgbench, durable one-row INSERT of the same body (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench_insert pg-insert "$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")))' "$FIXTURE")"

# (b) SQLite, a file in the work directory (absolute path: sqlite:///tmp/...).
run_billable sqlite "sqlite://${WORK}/bench.db" "$SQLITE_POOL_SIZE"
SQLITE_STORED=$(python3 - "$WORK/bench.db" <<'PY' 2>/dev/null || echo "? ?"
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT count(*) FILTER (WHERE verdict = 'accepted'), count(*) FILTER (WHERE state = 'done') "
    "FROM agent_deliveries").fetchone()
print(row[0], row[1])
PY
)

# (c) Debian's webhook, same secret, same load.
log "starting webhook $(webhook -version | awk '{print $NF}') on ${WEBHOOK_URL}"
setsid webhook -hooks "$WORK/hooks.json" -ip 127.0.0.1 -port "$WEBHOOK_PORT" -http-methods POST \
    >"$WORK/webhook.log" 2>&1 &
REFERENCE_PID=$!
wait_for_probe "$WEBHOOK_URL" "$REFERENCE_PID" webhook
# webhook 2.8.0 answers a signature that does not match with 500 ("Error occurred while
# evaluating hook rules"), not with trigger-rule-mismatch-http-response-code.
check_probes "$WEBHOOK_URL" webhook 200 500
echo
echo "=== webhook $(webhook -version | awk '{print $NF}') (${CONNECTIONS} connections, ${DURATION}s after ${WARMUP}s warm-up) ==="
run_load webhook "$WEBHOOK_URL"
stop "$REFERENCE_PID"
REFERENCE_PID=

# ---------------------------------------------------------------------------------------------
# Summary.
ratio() {
    awk -v a="$(kv "$1" acks_per_sec)" -v b="$(kv "$2" acks_per_sec)" \
        'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}
line() {
    printf '  %-28s %9.0f acks/s   p50 %8.2f ms   p99 %8.2f ms   (%s)\n' "$1" \
        "$(kv "$2" acks_per_sec)" "$(kv "$2" p50_ms)" "$(kv "$2" p99_ms)" \
        "$(awk '$1 == "github_load" { s = ""; for (i = 2; i <= NF; i++) if ($i ~ /^status_/) { sub(/^status_/, "", $i); sub(/=/, ": ", $i); s = s (s == "" ? "" : ", ") $i } print (s == "" ? "no answers" : s) }' "$WORK/$2.txt")"
}
P99_PG=$(kv postgres p99_ms)
target_met=$(awk -v p="$P99_PG" -v n="$(kv postgres acks)" \
    'BEGIN { print (n > 0 && p + 0 < 10) ? "met" : "NOT met" }')

echo
echo "GitHub trigger: signed pull_request deliveries of $(kv postgres body_bytes) bytes, ${CONNECTIONS} connections," \
    "${DURATION} s, echo provider, max_concurrent_runs ${MAX_CONCURRENT_RUNS}, $(nproc) cores:"
line "billable, PostgreSQL" postgres
line "billable, SQLite" sqlite
line "webhook $(webhook -version | awk '{print $NF}') (Debian)" webhook
printf '\n'
printf '  %-28s %9.0f acks/s   p99 %8.2f ms\n' "billable, PostgreSQL x2" \
    "$(awk -v a="$(kv replica-a acks_per_sec)" -v b="$(kv replica-b acks_per_sec)" 'BEGIN { print a + b }')" \
    "$(printf '%s\n%s\n' "$(kv replica-a p99_ms)" "$(kv replica-b p99_ms)" | sort -g | tail -n 1)"
printf '  %-28s %9.0f tps\n' "pgbench INSERT of the body" "$(pgbench_tps pg-insert)"
printf '\n'
printf '  billable PostgreSQL / webhook, acks/s   %s\n' "$(ratio postgres webhook)"
printf '  billable SQLite / webhook, acks/s       %s\n' "$(ratio sqlite webhook)"
printf '  p99 on PostgreSQL %s ms, target < 10 ms: %s\n' "$P99_PG" "$target_met"
pg_ratio=$(awk -v a="$(kv postgres acks_per_sec)" -v b="$(pgbench_tps pg-insert)" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
printf '  billable PostgreSQL / pgbench INSERT     %s   target >= 0.5: %s\n' "$pg_ratio" \
    "$(awk -v r="$pg_ratio" 'BEGIN { print (r != "n/a" && r + 0 >= 0.5) ? "met" : "NOT met" }')"
read -r pg_accepted pg_done <<<"$PG_STORED"
read -r sqlite_accepted sqlite_done <<<"$SQLITE_STORED"
printf '  accepted deliveries stored (probe and warm-up included), of which run when the server\n'
printf '  stopped: PostgreSQL %s, %s run; SQLite %s, %s run\n' \
    "$pg_accepted" "$pg_done" "$sqlite_accepted" "$sqlite_done"
# Every acknowledged delivery must be in the log: the answer comes after the write.
for name in postgres sqlite; do
    stored=$pg_accepted
    [[ $name == sqlite ]] && stored=$sqlite_accepted
    if [[ $stored =~ ^[0-9]+$ ]] && (( stored < $(kv "$name" acks) )); then
        warn "$name: ${stored} accepted deliveries stored, fewer than the $(kv "$name" acks) acknowledged"
    fi
done
