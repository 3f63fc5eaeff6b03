#!/usr/bin/env bash
# Benchmarks recording payments on PostgreSQL and prints a summary against the targets:
#   - POST /v1/invoices/{id}/payments on distinct invoices at 64 connections, beside
#     pgbench's durable one-row INSERT at the same concurrency (target >= 0.25 x its rate), and
#     pgbench running the payment's own transaction (target >= 0.7 x its rate)
#   - the same on one invoice, where every payment waits for the one before it (each locks
#     the invoice it pays): its rate and p99
#   - Stripe's webhook taking signed payment_intent.succeeded events, each a payment of its
#     own on the invoices in turn, beside the same pgbench figure
# Each payment is one transaction: lock the invoice row, read its balance, insert the entry,
# write the balance the ledger leaves. After the runs the books are checked: every invoice's
# amountPaid is the sum of its entries, and no invoice took more than its total.
# Called by `make bench`. Needs root only to install wrk / start PostgreSQL when missing.
#
# Tunables (environment): BENCH_SECONDS (10), BENCH_CONNECTIONS (64), BENCH_THREADS (2),
# BENCH_WARMUP_SECONDS (2), BENCH_POOL_SIZE (the connections), BENCH_INVOICES (2000).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_payments
BENCH_NAME=bench-payments
DEFAULT_CONNECTIONS=64
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
POOL_SIZE=${BENCH_POOL_SIZE:-$CONNECTIONS}
INVOICES=${BENCH_INVOICES:-2000}

setup_cleanup
install_missing_tools wrk pgbench psql pg_isready curl python3 awk cargo
start_postgres
build_release
fresh_database

PORT=$(free_port)
BASE="http://127.0.0.1:${PORT}"
log "starting server on ${BASE} (pool ${POOL_SIZE})"
serve "$PORT" server.log
SERVER_PID=$SERVED_PID
KEY=$(first_start_key server.log)

# ---------------------------------------------------------------------------------------------
# Fixture: INVOICES invoices of 1,000,000.00 for one client, made through the API, so that
# payments of 0.01 never run out of what is due.
CLIENT_ID=$(curl -fsS -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \
    -d '{"name":"Bench Client","email":"bench@example.com","line1":"1 Bench Road","postalCode":"1000"}' "$BASE/v1/invoices/clients" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
[[ $CLIENT_ID =~ ^[0-9a-fA-F-]{36}$ ]] || die "could not create the client"
log "making ${INVOICES} invoices"
python3 - "$BASE" "$KEY" "$CLIENT_ID" "$INVOICES" <<'PY'
import http.client, json, sys
from concurrent.futures import ThreadPoolExecutor
base, key, client, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
host, port = base.removeprefix("http://").split(":")
body = json.dumps({"clientId": client, "lineItems": [{"description": "Retainer", "unitPrice": 1000000, "quantity": 1}]})
def make(n):
    connection = http.client.HTTPConnection(host, int(port))
    for _ in range(n):
        connection.request("POST", "/v1/invoices", body, {"X-API-Key": key, "Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 201, answer.status
with ThreadPoolExecutor(8) as pool:
    list(pool.map(make, [count // 8 + (1 if i < count % 8 else 0) for i in range(8)]))
PY
psql_bench -c "SELECT id FROM invoices ORDER BY serial" >"$WORK/invoices.txt"
[[ $(wc -l <"$WORK/invoices.txt") == "$INVOICES" ]] || die "expected ${INVOICES} invoices"
ONE_INVOICE=$(head -n 1 "$WORK/invoices.txt")
psql_bench -c "VACUUM ANALYZE"

# lua_in_turn FILE : the start of a wrk Lua script whose next_item() answers the lines of
# FILE in turn: each thread walks them from its own offset, so the requests in flight at any
# moment take distinct lines.
lua_in_turn() {
    cat <<LUA
local items = {}
for line in io.lines("$1") do items[#items + 1] = line end
local threads = 0
function setup(thread)
    thread:set("offset", threads)
    threads = threads + 1
end
local sent = 0
local function next_item()
    sent = sent + 1
    return items[(sent * ${THREADS} + (offset or 0)) % #items + 1]
end
LUA
}

# payment_script NAME : a wrk Lua script at $WORK/NAME.lua paying 0.01 by bank transfer on
# the invoices of $WORK/NAME.ids, in turn.
payment_script() {
    {
        lua_in_turn "$WORK/$1.ids"
        cat <<LUA
local headers = { ["Content-Type"] = "application/json", ["X-API-Key"] = "${KEY}" }
local body = '{"amount": 0.01, "method": "bank_transfer"}'
function request()
    return wrk.format("POST", "/v1/invoices/" .. next_item() .. "/payments", headers, body)
end
LUA
    } >"$WORK/$1.lua"
}
cp "$WORK/invoices.txt" "$WORK/distinct.ids"
payment_script distinct
echo "$ONE_INVOICE" >"$WORK/one.ids"
payment_script one

log "warm-up (${WARMUP}s)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/distinct.lua" "$BASE" >/dev/null

echo
echo "=== POST /v1/invoices/{id}/payments, distinct invoices (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk distinct -s "$WORK/distinct.lua" "$BASE"

echo
echo "=== POST /v1/invoices/{id}/payments, one invoice (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk one -s "$WORK/one.lua" "$BASE"
ONE_ENTRIES=$(psql_bench -c "SELECT count(*) FROM ledger_entries WHERE invoice_id = '${ONE_INVOICE}'")

# Stripe's webhook: the team connects Stripe, and the load is signed payment_intent.succeeded
# events, each a PaymentIntent of its own paying 0.01 on the fixture's invoices in turn. Each
# is verified (HMAC-SHA256, constant time), its account found by its address's token, and
# booked as the payment above is, keyed by the PaymentIntent so that it books once.
STRIPE_URL=$(curl -fsS -X PUT -H "X-API-Key: $KEY" -H 'Content-Type: application/json' \
    -d '{"secretKey":"sk_test_bench","webhookSecret":"whsec_bench"}' "$BASE/v1/payment-providers/stripe" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["webhookUrl"])')
STRIPE_PATH="/v1/payment-providers/stripe/webhook/${STRIPE_URL##*/}"
CURRENCY=$(psql_bench -c "SELECT lower(currency) FROM invoices LIMIT 1")
# Enough distinct events for the warm-up and the run at several thousand a second; they are
# signed now, and Stripe's tolerance is 300 s, so the runs must start within it.
STRIPE_EVENTS=$(( (DURATION + WARMUP) * 4000 ))
log "signing ${STRIPE_EVENTS} Stripe events"
python3 - "$WORK/invoices.txt" "$CURRENCY" "$STRIPE_EVENTS" >"$WORK/stripe.events" <<'PY'
import hashlib, hmac, json, sys, time
invoices = open(sys.argv[1]).read().split()
currency, count, now = sys.argv[2], int(sys.argv[3]), int(time.time())
for n in range(count):
    body = json.dumps({"id": f"evt_bench_{n}", "type": "payment_intent.succeeded", "created": now,
        "data": {"object": {"id": f"pi_bench_{n}", "object": "payment_intent", "amount": 1,
            "amount_received": 1, "currency": currency,
            "metadata": {"invoice_id": invoices[n % len(invoices)]}}}}, separators=(",", ":"))
    mac = hmac.new(b"whsec_bench", f"{now}.{body}".encode(), hashlib.sha256).hexdigest()
    print(f"t={now},v1={mac}\t{body}")
PY
{
    lua_in_turn "$WORK/stripe.events"
    cat <<LUA
function request()
    local event = next_item()
    local tab = event:find("\t", 1, true)
    local headers = { ["Content-Type"] = "application/json", ["Stripe-Signature"] = event:sub(1, tab - 1) }
    return wrk.format("POST", "${STRIPE_PATH}", headers, event:sub(tab + 1))
end
LUA
} >"$WORK/stripe.lua"
log "warm-up (${WARMUP}s)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$WORK/stripe.lua" "$BASE" >/dev/null
echo
echo "=== POST ${STRIPE_PATH%/*}/{token}, signed events (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk stripe -s "$WORK/stripe.lua" "$BASE"
STRIPE_BOOKED=$(psql_bench -c "SELECT count(*) FROM card_receipts")
[[ $(psql_bench -c "SELECT count(DISTINCT payment) FROM card_receipts") == "$STRIPE_BOOKED" ]] \
    || die "a PaymentIntent was booked twice"
(( STRIPE_BOOKED > 0 )) || die "no Stripe event was booked"

# The books after the load: each invoice's amount_paid is what its entries sum to, within
# its total.
books=$(psql_bench -c "SELECT bool_and(i.amount_paid = coalesce(e.paid, 0) AND i.amount_paid <= i.total)
    FROM invoices i LEFT JOIN (SELECT invoice_id, sum(amount) AS paid FROM ledger_entries GROUP BY invoice_id) e
    ON e.invoice_id = i.id")
[[ $books == t ]] || die "an invoice's amount_paid differs from its entries after the run"
stop "$SERVER_PID"
SERVER_PID=

echo
echo "=== pgbench, durable one-row INSERT (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench_insert pg-insert '{"amount": 0.01, "method": "bank_transfer"}'
PG_TPS=$(pgbench_tps pg-insert)
[[ -n $PG_TPS ]] || die "could not read tps from pgbench output"

# pgbench on the payment's own transaction, on random invoices of the fixture: lock the
# invoice and read it, read its lines, insert the entry at the next position, write the
# balance. What PostgreSQL itself does per payment, without HTTP, keys or the ledger's rules.
TEAM_ID=$(psql_bench -c "SELECT team_id FROM invoices LIMIT 1")
cat >"$WORK/payment.sql" <<'SQL'
\set n random(1, :invoices)
BEGIN;
UPDATE invoices SET updated_at = now() WHERE team_id = :team AND serial = :n RETURNING id, ledger_events AS events \gset
SELECT * FROM line_items WHERE team_id = :team AND invoice_id = :id ORDER BY position;
INSERT INTO ledger_entries (team_id, id, invoice_id, position, kind, amount, on_day, method, created_at) VALUES (:team, gen_random_uuid(), :id, :events, 'payment', 0.01, current_date, 'bank_transfer', now());
UPDATE invoices SET amount_paid = amount_paid + 0.01, ledger_events = :events + 1, status = 'PAID_PARTIAL' WHERE team_id = :team AND id = :id;
END;
SQL
echo
echo "=== pgbench, the payment's transaction (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n -M prepared -c "$CONNECTIONS" -j "$THREADS" -T "$DURATION" \
    -D "team=$TEAM_ID" -D "invoices=$INVOICES" -f "$WORK/payment.sql" "$DB_NAME" >"$WORK/pg-payment.txt" 2>&1 \
    || { cat "$WORK/pg-payment.txt"; die "pgbench (payment) failed"; }
cat "$WORK/pg-payment.txt"
PG_PAYMENT_TPS=$(pgbench_tps pg-payment)

# ---------------------------------------------------------------------------------------------
DISTINCT_RPS=$(wrk_rps distinct)
RATIO=$(awk -v a="$DISTINCT_RPS" -v b="$PG_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
ratio_met=$(awk -v r="$RATIO" 'BEGIN { print (r != "n/a" && r + 0 >= 0.25) ? "met" : "not met" }')
SAME_RATIO=$(awk -v a="$DISTINCT_RPS" -v b="$PG_PAYMENT_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
same_met=$(awk -v r="$SAME_RATIO" 'BEGIN { print (r != "n/a" && r + 0 >= 0.7) ? "met" : "not met" }')
figures() {
    printf '%-36s %s req/s, p50 %s ms, p99 %s ms\n' "$1" "$(wrk_rps "$2")" "$(wrk_pct_ms "$2" 50)" "$(wrk_pct_ms "$2" 99)"
}

echo
echo "=== Summary ($(nproc) cores, ${CONNECTIONS} connections, pool ${POOL_SIZE}, ${DURATION}s per run) ==="
figures "payments, distinct invoices:" distinct
figures "payments, one invoice:" one
printf '%-36s %s entries on it, books balanced\n' "  the one invoice after the runs:" "$ONE_ENTRIES"
figures "Stripe webhook, distinct payments:" stripe
printf '%-36s %s PaymentIntents, each once\n' "  booked after warm-up and run:" "$STRIPE_BOOKED"
printf '%-36s %s tps\n' "pgbench durable one-row INSERT:" "$PG_TPS"
printf '%-36s %s tps\n' "pgbench, the payment's transaction:" "$PG_PAYMENT_TPS"
printf '%-36s %s (target >= 0.25: %s)\n' "ratio distinct payments / pgbench:" "$RATIO" "$ratio_met"
printf '%-36s %s (target >= 0.7: %s)\n' "  to the payment's transaction:" "$SAME_RATIO" "$same_met"
STRIPE_RATIO=$(awk -v a="$(wrk_rps stripe)" -v b="$PG_TPS" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
printf '%-36s %s\n' "ratio Stripe webhook / pgbench:" "$STRIPE_RATIO"
