#!/usr/bin/env bash
# Benchmarks tracked time becoming reports and invoices, on PostgreSQL, for a team with
# 50,000 time entries over 2026 (5,000 of them in November) on 20 rated projects:
#   - GET /v1/track/reports?groupBy=project for the whole year: p99 < 50 ms, and its rate
#     >= 0.5 x pgbench running the report's own SQL at the same concurrency
#   - POST /v1/invoices/from-time billing November's 5,000 entries in one request: < 1 s
#     (each run billed, its time then released by deleting the invoice, and billed again)
# Called by `make bench`. Needs root only to install wrk / start PostgreSQL when missing.
#
# Tunables (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (2: one report per core),
# BENCH_THREADS (2), BENCH_WARMUP_SECONDS (2), BENCH_POOL_SIZE (32), BENCH_BILL_RUNS (5).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_time
BENCH_NAME=bench-time
DEFAULT_CONNECTIONS=2
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
BILL_RUNS=${BENCH_BILL_RUNS:-5}

setup_cleanup
install_missing_tools wrk pgbench psql pg_isready curl python3 awk cargo
start_postgres

build_release
fresh_database

PORT=${BENCH_PORT:-$(free_port)}
BASE="http://127.0.0.1:${PORT}"
log "starting server on ${BASE}"
serve "$PORT" server.log
SERVER_PID=$SERVED_PID
KEY=$(first_start_key server.log)

# ---------------------------------------------------------------------------------------------
# Fixture, written straight into the database (the API would take longer to seed than the
# benchmark runs): 20 projects at 50 to 69 an hour; 43,776 entries from January to October
# (one every 10 minutes), 5,000 in November (one every 8), 1,224 in December (one every 30),
# of the key's user, round-robin over the projects.
TEAM_ID=$(psql_bench -c "SELECT team_id FROM api_keys LIMIT 1")
USER_ID=$(psql_bench -c "SELECT user_id FROM api_keys WHERE team_id = '${TEAM_ID}' LIMIT 1")
[[ $USER_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "could not read the key's user (got: $USER_ID)"
log "seeding 50,000 time entries"
psql_bench <<SQL
INSERT INTO projects (team_id, id, title, status, rate, created_at, updated_at)
SELECT '${TEAM_ID}', gen_random_uuid(), 'Project ' || n, 'ACTIVE', 49 + n, now(), now()
FROM generate_series(1, 20) AS n;
CREATE TEMPORARY TABLE numbered AS
SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM projects WHERE team_id = '${TEAM_ID}';
INSERT INTO time_entries (team_id, id, user_id, duration_seconds, task_name, description, date,
                          project_id, ai_generated, created_at, updated_at)
SELECT '${TEAM_ID}', gen_random_uuid(), '${USER_ID}', 600 + (n % 50) * 60, 'Task ' || (n % 40), NULL,
       start + n * step, p.id, false, now(), now()
FROM (VALUES (timestamptz '2026-01-01 00:00:00+00', interval '10 minutes', 43776),
             (timestamptz '2026-11-01 00:00:00+00', interval '8 minutes', 5000),
             (timestamptz '2026-12-01 00:00:00+00', interval '30 minutes', 1224)) AS spans (start, step, count)
CROSS JOIN LATERAL generate_series(0, spans.count - 1) AS n
JOIN numbered p ON p.k = n % 20;
VACUUM ANALYZE projects; VACUUM ANALYZE time_entries;
SQL
count=$(psql_bench -c "SELECT count(*) FROM time_entries WHERE team_id = '${TEAM_ID}'")
[[ $count == 50000 ]] || die "seeded $count entries, expected 50000"
november=$(psql_bench -c "SELECT count(*) FROM time_entries WHERE team_id = '${TEAM_ID}' AND date >= '2026-11-01' AND date < '2026-12-01'")
[[ $november == 5000 ]] || die "seeded $november entries in November, expected 5000"

# ---------------------------------------------------------------------------------------------
# The year's report by project.
REPORT_URL="$BASE/v1/track/reports?from=2026-01-01&to=2026-12-31&groupBy=project"
summed=$(curl -sS -H "X-API-Key: $KEY" "$REPORT_URL" | python3 -c 'import json, sys; r = json.load(sys.stdin); print(len(r["groups"]), r["totalSeconds"])')
expected=$(psql_bench -c "SELECT '20 ' || sum(duration_seconds) FROM time_entries WHERE team_id = '${TEAM_ID}'")
[[ $summed == "$expected" ]] || die "the report says '$summed' (groups, seconds), the table '$expected'"

log "warming up (${WARMUP}s)"
wrk -t1 -c1 -d"${WARMUP}s" -H "X-API-Key: $KEY" "$REPORT_URL" >/dev/null
echo
echo "=== GET /v1/track/reports, a year of 50,000 entries by project (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk report -H "X-API-Key: $KEY" "$REPORT_URL"
echo
echo "=== the same, 1 connection ==="
THREADS=1 CONNECTIONS=1 run_wrk report_single -H "X-API-Key: $KEY" "$REPORT_URL"

# pgbench on the statement the report sends (scripts/report-by-project.sql, which a unit
# test of store-sql holds equal to the code's), sent as the service sends it: an unnamed
# statement with bound parameters (`-M extended`), planned for the values at each
# execution. Prepared once (`-M prepared`), PostgreSQL switches to a generic plan after
# five executions, which runs this statement at half the rate.
sed -e 's/\$1/:team/g; s/\$2/:start/g; s/\$3/:end/g' scripts/report-by-project.sql >"$WORK/report.sql"
echo
echo "=== pgbench, the report's SQL (${CONNECTIONS} connections, ${DURATION}s, extended protocol) ==="
pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" -M extended \
    -D "team=$TEAM_ID" -D "start=2026-01-01T00:00:00Z" -D "end=2027-01-01T00:00:00Z" \
    -f "$WORK/report.sql" "$DB_NAME" >"$WORK/pgbench_report.txt" 2>&1 \
    || { cat "$WORK/pgbench_report.txt"; die "pgbench (report) failed"; }
cat "$WORK/pgbench_report.txt"

# ---------------------------------------------------------------------------------------------
# Billing November: 5,000 entries on 20 projects, one line each.
CLIENT_ID=$(curl -sS -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \
    -d '{"name":"Bench Client","email":"bench@example.com","line1":"1 Bench Road","postalCode":"1000"}' \
    "$BASE/v1/invoices/clients" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
BILL_JSON="{\"clientId\":\"${CLIENT_ID}\",\"from\":\"2026-11-01\",\"to\":\"2026-11-30\"}"
# bill_once FILE [FIELDS] : POSTs the November bill (FIELDS joined to the body), keeps the
# answer in $WORK/FILE and prints "STATUS SECONDS".
bill_once() {
    local body=${BILL_JSON%\}}${2:+,$2}\}
    curl -sS -o "$WORK/$1" -w '%{http_code} %{time_total}\n' -H "X-API-Key: $KEY" \
        -H 'Content-Type: application/json' -d "$body" "$BASE/v1/invoices/from-time"
}
echo
echo "=== POST /v1/invoices/from-time, November's 5,000 entries (${BILL_RUNS} runs, each released after) ==="
: >"$WORK/bills.txt"
for run in $(seq 1 "$BILL_RUNS"); do
    read -r status seconds < <(bill_once preview.json '"preview":true')
    [[ $status == 200 ]] || die "the preview answered $status: $(cat "$WORK/preview.json")"
    read -r status bill_seconds < <(bill_once bill.json)
    [[ $status == 201 ]] || die "the bill answered $status: $(cat "$WORK/bill.json")"
    invoice=$(python3 -c 'import json, sys; i = json.load(sys.stdin); print(i["id"], len(i["lineItems"]))' <"$WORK/bill.json")
    read -r invoice_id lines <<<"$invoice"
    [[ $lines == 20 ]] || die "the bill made $lines lines, expected 20"
    billed=$(psql_bench -c "SELECT count(*) FROM time_entries WHERE invoice_id = '${invoice_id}'")
    [[ $billed == 5000 ]] || die "the bill billed $billed entries, expected 5000"
    printf 'run %s: preview %.0f ms, bill %.0f ms (5,000 entries, 20 lines)\n' "$run" \
        "$(awk -v s="$seconds" 'BEGIN { print s * 1000 }')" "$(awk -v s="$bill_seconds" 'BEGIN { print s * 1000 }')"
    echo "$seconds $bill_seconds" >>"$WORK/bills.txt"
    status=$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE -H "X-API-Key: $KEY" "$BASE/v1/invoices/$invoice_id")
    [[ $status == 200 ]] || die "deleting the invoice answered $status"
done

# ---------------------------------------------------------------------------------------------
# Summary.
REPORT_RPS=$(wrk_rps report)
REPORT_P99=$(wrk_pct_ms report 99)
PG_TPS=$(pgbench_tps pgbench_report)
RATIO=$(awk -v a="$REPORT_RPS" -v b="$PG_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
# column N of bills.txt, in ms: its median and its largest.
bill_ms() { awk -v c="$1" '{ print $c * 1000 }' "$WORK/bills.txt" | sort -g | awk '{ v[NR] = $1 } END { printf "median %.0f ms, slowest %.0f ms", v[int((NR + 1) / 2)], v[NR] }'; }
slowest_bill=$(awk '{ print $2 * 1000 }' "$WORK/bills.txt" | sort -g | tail -n 1)
met() { [[ $1 == 1 ]] && echo met || echo "NOT met"; }

echo
echo "=== Summary ($(nproc) cores, ${CONNECTIONS} connections, ${DURATION}s per run) ==="
printf '%-36s %s req/s, p50 %s ms, p99 %s ms\n' "report, a year by project:" "$REPORT_RPS" "$(wrk_pct_ms report 50)" "$REPORT_P99"
printf '%-36s %s req/s, p50 %s ms, p99 %s ms\n' "  the same, 1 connection:" "$(wrk_rps report_single)" "$(wrk_pct_ms report_single 50)" "$(wrk_pct_ms report_single 99)"
printf '%-36s %s tps\n' "pgbench, the report's SQL:" "$PG_TPS"
printf '%-36s %s (target >= 0.5: %s)\n' "ratio report / pgbench:" "$RATIO" "$(met "$(awk -v r="$RATIO" 'BEGIN { print (r != "n/a" && r + 0 >= 0.5) }')")"
printf '%-36s %s (p99 %s ms)\n' "report p99 < 50 ms:" "$(met "$(awk -v p="$REPORT_P99" 'BEGIN { print (p + 0 < 50) }')")" "$REPORT_P99"
printf '%-36s %s\n' "preview of November (5,000 entries):" "$(bill_ms 1)"
printf '%-36s %s\n' "bill of November (5,000 entries):" "$(bill_ms 2)"
printf '%-36s %s (slowest %.0f ms)\n' "billing 5,000 entries < 1 s:" "$(met "$(awk -v s="$slowest_bill" 'BEGIN { print (s + 0 < 1000) }')")" "$slowest_bill"
