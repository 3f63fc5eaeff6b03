#!/usr/bin/env bash
# Benchmarks the billable REST API on PostgreSQL and prints a summary against the targets:
#   - GET /v1/invoices/clients/{id} throughput >= 0.5 x pgbench running the same SELECT,
#     with the rate limits counted in the process and with them shared through Redis
#   - GET p99 latency < 10 ms
#   - idle resident memory < 40 MB
#   - GET /v1/track/time?frequency=month for a user with 2,000 entries that month: p99 < 20 ms;
#     from a server that keeps no listings, >= 400 req/s with p99 < 150 ms, beside pgbench
#     running the listing's two queries
#   (POST /v1/track/time is measured beside it)
#   - POST /v1/invoices with 5 line items, and GET /v1/invoices/{id}: throughput and p99
#   (the PDF renderer is measured by scripts/bench-pdf.sh, which `make bench` runs after)
# Called by `make bench`. Needs root only to install wrk / start PostgreSQL when missing.
#
# Tunables (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (32), BENCH_THREADS (2),
# BENCH_WARMUP_SECONDS (2), BENCH_PORT (a free port), BENCH_POOL_SIZE (32).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench

BENCH_NAME=bench
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh

CLIENT_JSON='{"name":"Bench Client","email":"bench@example.com","line1":"1 Bench Road","postalCode":"1000"}'

# ---------------------------------------------------------------------------------------------
# Cleanup on any exit: servers stopped, database dropped, scratch files removed.
setup_cleanup

# ---------------------------------------------------------------------------------------------
# Tools.
install_missing_tools wrk pgbench psql pg_isready curl python3 awk cargo
start_postgres

# ---------------------------------------------------------------------------------------------
# Build, and a fresh database.
build_release
fresh_database

# ---------------------------------------------------------------------------------------------
# Server.
PORT=${BENCH_PORT:-$(free_port)}
BASE="http://127.0.0.1:${PORT}"

log "starting server on ${BASE}"
serve "$PORT" server.log
SERVER_PID=$SERVED_PID

KEY=$(first_start_key server.log)

# Idle memory: let startup allocations settle, before any load grows buffers and the pool.
sleep 2
rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status"; }
# The anonymous part: what the process allocated, without the binary's pages it mapped.
anon_mb() { awk '/^RssAnon:/ { printf "%.1f", $2 / 1024 }' "/proc/$SERVER_PID/status"; }
IDLE_RSS_MB=$(rss_mb)
IDLE_ANON_MB=$(anon_mb)
log "idle RSS: ${IDLE_RSS_MB} MB, ${IDLE_ANON_MB} MB anonymous"

# ---------------------------------------------------------------------------------------------
# Fixture: one client to read back.
status=$(curl -sS -o "$WORK/create.json" -w '%{http_code}' -X POST \
    -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \
    -d "$CLIENT_JSON" "$BASE/v1/invoices/clients")
[[ $status == 201 ]] || die "creating the client answered $status: $(cat "$WORK/create.json")"
CLIENT_ID=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' <"$WORK/create.json")
[[ $CLIENT_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "unexpected client id: $CLIENT_ID"
GET_URL="$BASE/v1/invoices/clients/$CLIENT_ID"

# Fail fast on auth/routing mistakes rather than benchmarking 4xx responses.
status=$(curl -sS -o /dev/null -w '%{http_code}' -H "X-API-Key: $KEY" "$GET_URL")
[[ $status == 200 ]] || die "GET $GET_URL answered $status"

# ---------------------------------------------------------------------------------------------
# wrk helpers.

# post_script NAME BODY : a wrk Lua script POSTing BODY with the key, at $WORK/NAME.lua.
# wrk can only send bodies from Lua; the key is base62, safe in a Lua string.
post_script() {
    cat >"$WORK/$1.lua" <<LUA
wrk.method = "POST"
wrk.body = '$2'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-API-Key"] = "${KEY}"
LUA
}

# ---------------------------------------------------------------------------------------------
# GET benchmark. A short warm-up first fills the connection pool and the key cache, so
# the measured run doesn't include connection setup.
log "warm-up (${WARMUP}s)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -H "X-API-Key: $KEY" "$GET_URL" >/dev/null

echo
echo "=== GET /v1/invoices/clients/{id} (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk get -H "X-API-Key: $KEY" "$GET_URL"

# ---------------------------------------------------------------------------------------------
# pgbench on the SELECT the GET endpoint issues, at the same concurrency. Run right after
# the GET benchmark, before the POST run grows the table and wakes autovacuum, so both read
# the same data. pgbench's \set only does numbers, so the uuids come in through -D; in
# prepared mode each :var becomes a bind parameter, like the service's own query.
TEAM_ID=$(psql_bench -c "SELECT team_id FROM clients WHERE id = '${CLIENT_ID}'")
[[ $TEAM_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "could not read the client's team_id (got: $TEAM_ID)"

cat >"$WORK/select.sql" <<'SQL'
SELECT team_id, id, name, email, phone, vat_number, line1, line2, line3, postal_code, created_at, updated_at FROM clients WHERE team_id = :team AND id = :id LIMIT 1;
SQL

echo
echo "=== pgbench, same SELECT (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" \
    -M prepared -D "team=$TEAM_ID" -D "id=$CLIENT_ID" -f "$WORK/select.sql" "$DB_NAME" \
    >"$WORK/pgbench.txt" 2>&1 || { cat "$WORK/pgbench.txt"; die "pgbench failed"; }
cat "$WORK/pgbench.txt"
# PostgreSQL 14+ prints "(without initial connection time)", older "(excluding connections
# establishing)" next to an "including" line; either way skip the "including" figure.
PG_TPS=$(awk '/^tps = / && !/including/ { printf "%.0f", $3; exit }' "$WORK/pgbench.txt")
PG_LAT=$(awk '/^latency average = / { print $4 }' "$WORK/pgbench.txt")
[[ -n $PG_TPS ]] || die "could not read tps from pgbench output"

# ---------------------------------------------------------------------------------------------
# The same GET on a second server whose rate limits are shared through Redis (as replicas
# count them), against a redis-server of the benchmark's own. The first server idles.
REDIS_PORT=$(free_port)
setsid redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
SHARED_PORT=$(free_port)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
serve "$SHARED_PORT" shared.log BILLABLE_REDIS_URL="redis://127.0.0.1:${REDIS_PORT}"
SHARED_PID=$SERVED_PID
SHARED_URL="http://127.0.0.1:${SHARED_PORT}/v1/invoices/clients/$CLIENT_ID"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -H "X-API-Key: $KEY" "$SHARED_URL" >/dev/null
echo
echo "=== GET /v1/invoices/clients/{id}, rate limits shared through Redis (${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk get_shared -H "X-API-Key: $KEY" "$SHARED_URL"
REDIS_CALLS=$(redis-cli -p "$REDIS_PORT" info commandstats | awk -F'[=,]' '/^cmdstat_evalsha/ { print $2 }')
stop "$SHARED_PID"
stop "$REDIS_PID"
REDIS_PID=

# ---------------------------------------------------------------------------------------------
# POST benchmark.
post_script post "$CLIENT_JSON"

echo
echo "=== POST /v1/invoices/clients (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk post -s "$WORK/post.lua" "$BASE/v1/invoices/clients"

# ---------------------------------------------------------------------------------------------
# Time tracking. Fixture: 2,000 entries of the key's user in October 2026, each with two of
# three tags, written straight into the database (the API would take as long to seed as
# the benchmark runs). The POST run logs into November, so the month measured stays at
# 2,000 entries.
USER_ID=$(psql_bench -c "SELECT user_id FROM api_keys WHERE team_id = '${TEAM_ID}' LIMIT 1")
[[ $USER_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "could not read the key's user (got: $USER_ID)"
psql_bench <<SQL
INSERT INTO tags (team_id, id, title, created_at, updated_at)
SELECT '${TEAM_ID}', gen_random_uuid(), 'tag ' || n, now(), now() FROM generate_series(1, 3) AS n;
INSERT INTO time_entries (team_id, id, user_id, duration_seconds, task_name, description, date,
                          ai_generated, created_at, updated_at)
SELECT '${TEAM_ID}', gen_random_uuid(), '${USER_ID}', 900 + n, 'Task ' || n, 'Bench entry ' || n,
       timestamptz '2026-10-01 00:00:00+00' + (n * interval '22 minutes'), false, now(), now()
FROM generate_series(1, 2000) AS n;
INSERT INTO time_entry_tags (team_id, entry_id, tag_id)
SELECT e.team_id, e.id, t.id FROM time_entries e
JOIN (SELECT id, row_number() OVER (ORDER BY id) AS k FROM tags WHERE team_id = '${TEAM_ID}') t ON t.k <= 2
WHERE e.team_id = '${TEAM_ID}';
-- Each entry's own list of its tags' ids, as the service writes it with the links.
UPDATE time_entries SET tag_ids = links.ids
FROM (SELECT entry_id, string_agg(tag_id::text, ',') AS ids FROM time_entry_tags
      WHERE team_id = '${TEAM_ID}' GROUP BY entry_id) AS links
WHERE time_entries.team_id = '${TEAM_ID}' AND time_entries.id = links.entry_id;
VACUUM ANALYZE tags; VACUUM ANALYZE time_entries; VACUUM ANALYZE time_entry_tags;
SQL
MONTH_URL="$BASE/v1/track/time?date=2026-10-15&frequency=month"
count=$(curl -sS -H "X-API-Key: $KEY" "$MONTH_URL" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[[ $count == 2000 ]] || die "the month listing returned $count entries, expected 2000"

echo
echo "=== GET /v1/track/time?frequency=month, 2,000 entries (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk month -H "X-API-Key: $KEY" "$MONTH_URL"

# The same for a client that accepts gzip, as browsers and HTTP libraries do: the kept
# listing goes out gzipped, about a tenth of the bytes.
echo
echo "=== the same, Accept-Encoding: gzip (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk month_gzip -H "X-API-Key: $KEY" -H "Accept-Encoding: gzip" "$MONTH_URL"

# The same listing one request at a time: what a single caller waits, without the queue
# that 32 concurrent ~1 MB answers build on 2 cores.
echo
echo "=== GET /v1/track/time?frequency=month, 2,000 entries (wrk, 1 connection, ${DURATION}s) ==="
THREADS=1 CONNECTIONS=1 run_wrk month_single -H "X-API-Key: $KEY" "$MONTH_URL"

# The same listing from a second server on the same database that keeps no listings
# (BILLABLE_LISTING_CACHE_MB=0): what every request cost before listings were kept, and
# what the first listing after a change costs.
UNCACHED_PORT=$(free_port)
log "starting a server that keeps no listings on port ${UNCACHED_PORT}"
serve "$UNCACHED_PORT" uncached.log BILLABLE_LISTING_CACHE_MB=0
REFERENCE_PID=$SERVED_PID
UNCACHED_URL="http://127.0.0.1:${UNCACHED_PORT}/v1/track/time?date=2026-10-15&frequency=month"
echo
echo "=== the same, nothing kept (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk month_uncached -H "X-API-Key: $KEY" "$UNCACHED_URL"
echo
echo "=== the same, nothing kept (wrk, 1 connection, ${DURATION}s) ==="
THREADS=1 CONNECTIONS=1 run_wrk month_uncached_single -H "X-API-Key: $KEY" "$UNCACHED_URL"
stop "$REFERENCE_PID"
REFERENCE_PID=

# pgbench on the two queries that listing sends with nothing kept (prepared, so every :var
# is a bind parameter, as in the service): the month's entries, which carry their tags'
# ids, and the titles of those tags.
TAG_IDS="{$(psql_bench -c "SELECT string_agg(id::text, ',') FROM tags WHERE team_id = '${TEAM_ID}'")}"
cat >"$WORK/listing.sql" <<'SQL'
SELECT team_id, id, user_id, duration_seconds, task_name, description, date, project_id, section_id, ai_generated, created_at, updated_at, tag_ids FROM time_entries WHERE team_id = :team AND date >= :start AND date < :end ORDER BY date, created_at, id;
SELECT id, title FROM tags WHERE team_id = :team AND id = ANY(:tags);
SQL
echo
echo "=== pgbench, the listing's two queries (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" -M prepared \
    -D "team=$TEAM_ID" -D "start=2026-10-01T00:00:00Z" -D "end=2026-11-01T00:00:00Z" -D "tags=$TAG_IDS" \
    -f "$WORK/listing.sql" "$DB_NAME" >"$WORK/pgbench_listing.txt" 2>&1 \
    || { cat "$WORK/pgbench_listing.txt"; die "pgbench (listing) failed"; }
cat "$WORK/pgbench_listing.txt"
LISTING_PG_TPS=$(awk '/^tps = / && !/including/ { printf "%.0f", $3; exit }' "$WORK/pgbench_listing.txt")

post_script track '{"durationSeconds": 1800, "taskName": "Bench task", "date": "2026-11-20T09:00:00Z"}'

echo
echo "=== POST /v1/track/time (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk track_post -s "$WORK/track.lua" "$BASE/v1/track/time"

# ---------------------------------------------------------------------------------------------
# Invoices: one client, 5 line items per invoice, 19 % tax.
INVOICE_CLIENT=$(curl -sS -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \
    -d "$CLIENT_JSON" "$BASE/v1/invoices/clients" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
INVOICE_JSON=$(python3 -c 'import json, sys; print(json.dumps({"clientId": sys.argv[1], "taxPercentage": 19,
  "lineItems": [{"description": f"Item {i}", "unitPrice": round(19.99 + i, 2), "quantity": i} for i in range(1, 6)]}))' "$INVOICE_CLIENT")
INVOICE_ID=$(curl -sS -H "X-API-Key: $KEY" -H 'Content-Type: application/json' -d "$INVOICE_JSON" \
    "$BASE/v1/invoices" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
[[ $INVOICE_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "could not create the benchmark invoice"

echo
echo "=== GET /v1/invoices/{id}, 5 items (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk invoice_get -H "X-API-Key: $KEY" "$BASE/v1/invoices/$INVOICE_ID"

post_script invoice "$INVOICE_JSON"
echo
echo "=== POST /v1/invoices, 5 items (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk invoice_post -s "$WORK/invoice.lua" "$BASE/v1/invoices"
serials=$(psql_bench -c "SELECT count(*) = max(serial) AND count(DISTINCT serial) = count(*) FROM invoices WHERE team_id = '${TEAM_ID}'")
[[ $serials == t ]] || die "invoice serials have a gap or a repeat after the POST run"

LOADED_RSS_MB=$(rss_mb)

# ---------------------------------------------------------------------------------------------
# Summary.
GET_RPS=$(wrk_rps get)
GET_P99=$(wrk_pct_ms get 99)
MONTH_P99=$(wrk_pct_ms month 99)
MONTH_GZIP_P99=$(wrk_pct_ms month_gzip 99)
# figures LABEL NAME : one summary line of a wrk run.
figures() {
    printf '%-32s %s req/s, p50 %s ms, p99 %s ms\n' "$1" "$(wrk_rps "$2")" "$(wrk_pct_ms "$2" 50)" "$(wrk_pct_ms "$2" 99)"
}

ratio_to_pgbench() { awk -v a="$1" -v b="$PG_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
half_or_more() { awk -v r="$1" 'BEGIN { print (r != "n/a" && r + 0 >= 0.5) ? "met" : "not met" }'; }
RATIO=$(ratio_to_pgbench "$GET_RPS")
ratio_met=$(half_or_more "$RATIO")
SHARED_RATIO=$(ratio_to_pgbench "$(wrk_rps get_shared)")
p99_met=$(awk -v p="$GET_P99" 'BEGIN { print (p + 0 < 10) ? "met" : "not met" }')
below_20() { awk -v p="$1" 'BEGIN { print (p + 0 < 20) ? "met" : "not met" }'; }
month_met=$(below_20 "$MONTH_P99")
month_gzip_met=$(below_20 "$MONTH_GZIP_P99")
rss_met=$(awk -v m="$IDLE_RSS_MB" 'BEGIN { print (m + 0 < 40) ? "met" : "not met" }')

echo
echo "=== Summary ($(nproc) cores, ${CONNECTIONS} connections, ${DURATION}s per run) ==="
figures "GET /v1/invoices/clients/{id}:" get
figures "  limits shared (Redis):" get_shared
figures "POST /v1/invoices/clients:" post
figures "GET /v1/track/time (month):" month
figures "  the same, gzip accepted:" month_gzip
figures "  the same, 1 connection:" month_single
figures "  nothing kept:" month_uncached
figures "  nothing kept, 1 connection:" month_uncached_single
printf '%-32s %s tps\n' "  pgbench, its two queries:" "${LISTING_PG_TPS:-?}"
figures "POST /v1/track/time:" track_post
figures "GET /v1/invoices/{id}:" invoice_get
figures "POST /v1/invoices (5 items):" invoice_post
printf '%-32s %s invoices, serials gapless\n' "invoices after the POST run:" "$(psql_bench -c "SELECT count(*) FROM invoices WHERE team_id = '${TEAM_ID}'")"
printf '%-32s %s tps (latency average %s ms)\n' "pgbench same SELECT:" "$PG_TPS" "${PG_LAT:-?}"
printf '%-32s %s (target >= 0.5: %s)\n' "ratio API GET / pgbench:" "$RATIO" "$ratio_met"
printf '%-32s %s (target >= 0.5: %s; %s Redis calls in the run)\n' "  limits shared (Redis):" "$SHARED_RATIO" "$(half_or_more "$SHARED_RATIO")" "${REDIS_CALLS:-?}"
printf '%-32s %s (p99 %s ms)\n' "GET p99 target < 10 ms:" "$p99_met" "$GET_P99"
printf '%-32s %s (p99 %s ms)\n' "month listing p99 < 20 ms:" "$month_met" "$MONTH_P99"
printf '%-32s %s (p99 %s ms)\n' "  the same, gzip accepted:" "$month_gzip_met" "$MONTH_GZIP_P99"
UNCACHED_RPS=$(wrk_rps month_uncached)
UNCACHED_P99=$(wrk_pct_ms month_uncached 99)
uncached_met=$(awk -v r="$UNCACHED_RPS" -v p="$UNCACHED_P99" 'BEGIN { print (r + 0 >= 400 && p + 0 < 150) ? "met" : "not met" }')
printf '%-32s %s (%s req/s, p99 %s ms; pgbench %s tps)\n' "nothing kept >= 400/s, p99 < 150:" "$uncached_met" "$UNCACHED_RPS" "$UNCACHED_P99" "${LISTING_PG_TPS:-?}"
printf '%-32s %s MB (target < 40 MB: %s)\n' "idle RSS:" "$IDLE_RSS_MB" "$rss_met"
anon_met=$(awk -v m="$IDLE_ANON_MB" 'BEGIN { print (m + 0 < 24) ? "met" : "not met" }')
printf '%-32s %s MB (target < 24 MB: %s)\n' "idle anonymous memory:" "$IDLE_ANON_MB" "$anon_met"
printf '%-32s %s MB\n' "RSS after load:" "$LOADED_RSS_MB"
