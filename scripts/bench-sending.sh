#!/usr/bin/env bash
# Benchmarks what billable sends, on PostgreSQL, and prints each figure beside its anchor:
#   - webhooks: BENCH_EVENTS (10,000) events, queued while no job runner ran, fanned out to a
#     local receiver (scripts/bench-receiver.mjs) by one server's runner: deliveries a
#     second, beside the receiver's own rate for the same signed requests sent straight to
#     it by wrk at the runner's concurrency, and PostgreSQL's durable one-row INSERT
#     (pgbench) at the same concurrency;
#   - the delay from commit to delivery with the runner running, as events come at a steady
#     BENCH_EVENT_RATE (200) a second for BENCH_LATENCY_EVENTS (2,000): p50 and p99 of the
#     receiver's arrival time less the event's `timestamp` (stamped in the transaction that
#     commits the change, so the delay includes the commit);
#   - e-mail: BENCH_MAILS (1,000) invoices sent while no runner ran, then handed to the SMTP
#     server the tests use (tests/mail/smtp_server.py, aiosmtpd) by the runner: mails a
#     second, beside that server's own rate for the same mail (its text and PDF) sent
#     straight to it by Python's smtplib at the runner's concurrency.
# Each run checks what arrived: every event once, every mail with its PDF.
# Called by `make bench`. Needs root only to install wrk / start PostgreSQL when missing.
#
# Tunables (environment): BENCH_CONNECTIONS (the runner's BILLABLE_JOBS_CONCURRENCY and the
# anchors' concurrency, 16), BENCH_SECONDS (wrk's run, 10), BENCH_EVENTS, BENCH_EVENT_RATE,
# BENCH_LATENCY_EVENTS, BENCH_MAILS.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_sending
BENCH_NAME=bench-sending
DEFAULT_CONNECTIONS=16
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
EVENTS=${BENCH_EVENTS:-10000}
EVENT_RATE=${BENCH_EVENT_RATE:-200}
LATENCY_EVENTS=${BENCH_LATENCY_EVENTS:-2000}
MAILS=${BENCH_MAILS:-1000}

setup_cleanup
install_missing_tools wrk pgbench psql pg_isready curl python3 node awk cargo
python3 -c 'import aiosmtpd' 2>/dev/null || python3 -m pip install --quiet -r tests/mail/requirements.txt
start_postgres
build_release
fresh_database

# start_service NAME COMMAND... : runs COMMAND (which prints `port=N`) in the background,
# stopped on exit; its port in SERVICE_PORT.
start_service() {
    local name=$1
    shift
    setsid "$@" >"$WORK/$name.out" 2>"$WORK/$name.log" &
    EXTRA_PIDS+=("$!")
    SERVICE_PORT=''
    for _ in $(seq 1 100); do
        SERVICE_PORT=$(grep -oP '^port=\K[0-9]+' "$WORK/$name.out" || true)
        [[ -n $SERVICE_PORT ]] && return 0
        sleep 0.1
    done
    die "$name did not start"
}
start_service receiver node scripts/bench-receiver.mjs
RECEIVER="http://127.0.0.1:$SERVICE_PORT"
start_service smtp python3 tests/mail/smtp_server.py --out "$WORK/mails.jsonl"
SMTP_PORT=$SERVICE_PORT

PORT=$(free_port)
BASE="http://127.0.0.1:${PORT}"
SENDING=(BILLABLE_WEBHOOK_ALLOW_PRIVATE=true BILLABLE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT"
    BILLABLE_MAIL_FROM=billing@bench.example BILLABLE_JOBS_CONCURRENCY="$CONNECTIONS")
# serve_sending LOG RUN_JOBS : the server, its job runner on or off.
serve_sending() {
    serve "$PORT" "$1" "${SENDING[@]}" BILLABLE_RUN_JOBS="$2"
    SERVER_PID=$SERVED_PID
}
restart_sending() {
    stop "$SERVER_PID"
    serve_sending "$1" "$2"
}
serve_sending server.log false
KEY=$(first_start_key server.log)

# api METHOD PATH [BODY] : the answer's body; fails on an error status.
api() {
    curl -fsS -X "$1" "$BASE$2" -H "X-API-Key: $KEY" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
# stats FIELD : a field of the receiver's /_stats (a.b for a nested one).
stats() {
    curl -fsS "$RECEIVER/_stats" | python3 -c 'import json, sys
value = json.load(sys.stdin)
for part in sys.argv[1].split("."):
    value = value[part]
print(value)' "$1"
}
# wait_for WHAT COUNT COMMAND... : until COMMAND prints COUNT or more, within 10 minutes.
wait_for() {
    local what=$1 count=$2
    shift 2
    local seen=0
    for _ in $(seq 1 6000); do
        seen=$("$@")
        (( seen >= count )) && return 0
        sleep 0.1
    done
    die "$what: $seen of $count after 10 minutes"
}
# writes COUNT RATE PATH BODY : COUNT POSTs of BODY to PATH from 8 threads, at most RATE a
# second in all (0: as fast as they go).
writes() {
    python3 - "$BASE" "$KEY" "$@" <<'PY'
import http.client, sys, time
from concurrent.futures import ThreadPoolExecutor
base, key, count, rate, path, body = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5], sys.argv[6]
host, port = base.removeprefix("http://").split(":")
threads = 8
start = time.monotonic()
def run(offset):
    connection = http.client.HTTPConnection(host, int(port))
    for n in range(offset, count, threads):
        if rate > 0:
            delay = start + n / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        connection.request("POST", path, body.replace("{n}", str(n)), {"X-API-Key": key, "Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        assert 200 <= answer.status < 300, (answer.status, path)
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(run, range(threads)))
PY
}
CLIENT='{"name": "Client {n}", "email": "client{n}@example.com", "line1": "1 Main St", "postalCode": "1000"}'

# ---------------------------------------------------------------------------------------------
# Webhooks: a backlog of EVENTS client.created events, then a runner.
api POST /v1/webhooks "{\"url\": \"$RECEIVER/hook\", \"events\": [\"*\"]}" >/dev/null
log "queueing ${EVENTS} events (client.created), no runner"
writes "$EVENTS" 0 /v1/invoices/clients "$CLIENT"
curl -fsS -X POST "$RECEIVER/_reset"
log "starting the runner"
restart_sending server-fanout.log true
wait_for "deliveries" "$EVENTS" stats count
FANOUT_COUNT=$(stats count)
FANOUT_UNIQUE=$(stats unique)
(( FANOUT_UNIQUE == EVENTS )) || die "the receiver got ${FANOUT_UNIQUE} distinct events of ${EVENTS}"
FANOUT_RATE=$(awk -v n="$FANOUT_COUNT" -v a="$(stats firstMs)" -v b="$(stats lastMs)" \
    'BEGIN { printf "%.0f", (b > a) ? (n - 1) * 1000 / (b - a) : 0 }')
SUCCEEDED=$(psql_bench -c "SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded'")
(( SUCCEEDED == EVENTS )) || die "${SUCCEEDED} deliveries succeeded of ${EVENTS}"

# The delay from commit to delivery, events coming at a steady rate.
curl -fsS -X POST "$RECEIVER/_reset"
log "${LATENCY_EVENTS} events at ${EVENT_RATE} a second, the runner running"
writes "$LATENCY_EVENTS" "$EVENT_RATE" /v1/invoices/clients "$CLIENT"
wait_for "deliveries" "$LATENCY_EVENTS" stats count
ms() { awk -v v="$1" 'BEGIN { printf "%.1f", v }'; }
LATENCY_P50=$(ms "$(stats latencyMs.p50)")
LATENCY_P99=$(ms "$(stats latencyMs.p99)")
LATENCY_MAX=$(ms "$(stats latencyMs.max)")

# The anchor: the receiver's own rate for a delivery as billable sent it, straight from wrk.
curl -fsS "$RECEIVER/_sample" >"$WORK/sample.json"
python3 - "$WORK/sample.json" >"$WORK/receiver.lua" <<'PY'
import json, sys
sample = json.load(open(sys.argv[1]))
print('wrk.method = "POST"')
print("wrk.body = " + json.dumps(sample["body"]))
for name, value in sample["headers"].items():
    print(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
PY
echo
echo "=== the receiver's own rate: the same delivery sent straight to it (wrk, ${CONNECTIONS} connections, ${DURATION}s) ==="
run_wrk receiver -s "$WORK/receiver.lua" "$RECEIVER/hook"

# The anchor of what a delivery writes: PostgreSQL's durable one-row INSERT.
echo
echo "=== pgbench, durable one-row INSERT (${CONNECTIONS} connections, ${DURATION}s, prepared) ==="
pgbench_insert pg-insert "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["body"])' "$WORK/sample.json")"
PG_TPS=$(pgbench_tps pg-insert)
[[ -n $PG_TPS ]] || die "could not read tps from pgbench output"

# ---------------------------------------------------------------------------------------------
# E-mail: MAILS invoices sent while no runner ran, then a runner.
restart_sending server-mail.log false
log "making ${MAILS} invoices and sending each, no runner"
python3 - "$BASE" "$KEY" "$MAILS" >"$WORK/invoices.txt" <<'PY'
import http.client, json, sys
from concurrent.futures import ThreadPoolExecutor
base, key, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
host, port = base.removeprefix("http://").split(":")
headers = {"X-API-Key": key, "Content-Type": "application/json"}
def make(offset):
    connection = http.client.HTTPConnection(host, int(port))
    made = []
    for n in range(offset, count, 8):
        invoice = json.dumps({"client": {"email": f"payer{n}@example.com", "name": f"Payer {n}"},
                              "dueDate": "2026-12-31",
                              "lineItems": [{"description": "Consulting", "unitPrice": 950, "quantity": 1}]})
        connection.request("POST", "/v1/invoices", invoice, headers)
        answer = connection.getresponse()
        made_id = json.loads(answer.read())["id"]
        assert answer.status == 201, answer.status
        connection.request("POST", f"/v1/invoices/{made_id}/send", "", {"X-API-Key": key})
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 202, answer.status
        made.append(made_id)
    return made
with ThreadPoolExecutor(8) as pool:
    for made in pool.map(make, range(8)):
        print("\n".join(made))
PY
: >"$WORK/mails.jsonl"
log "starting the runner"
restart_sending server-mail-run.log true
wait_for "mails" "$MAILS" awk 'END { print NR }' "$WORK/mails.jsonl"
read -r MAIL_COUNT MAIL_RATE PDFS < <(python3 - "$WORK/mails.jsonl" <<'PY'
import json, sys
mails = [json.loads(line) for line in open(sys.argv[1])]
times = sorted(mail["received_at"] for mail in mails)
pdfs = sum(1 for mail in mails if any(a["content_type"] == "application/pdf" for a in mail["attachments"]))
rate = (len(times) - 1) / (times[-1] - times[0]) if times[-1] > times[0] else 0
print(len({mail["message_id"] for mail in mails}), f"{rate:.0f}", pdfs)
PY
)
(( MAIL_COUNT == MAILS && PDFS >= MAILS )) || die "${MAIL_COUNT} distinct mails, ${PDFS} with a PDF, of ${MAILS}"

# The anchor: the SMTP server's own rate for the same mail (text and PDF) from smtplib.
curl -fsS -o "$WORK/invoice.pdf" "$BASE/v1/invoices/pdf?id=$(head -n 1 "$WORK/invoices.txt")"
: >"$WORK/mails.jsonl"
SMTP_RATE=$(python3 - "$SMTP_PORT" "$MAILS" "$CONNECTIONS" "$WORK/invoice.pdf" <<'PY'
import smtplib, sys, time
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
port, count, threads, pdf = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), open(sys.argv[4], "rb").read()
def message(n):
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "billing@bench.example", f"payer{n}@example.com", f"Invoice INV-{n:04}"
    mail.set_content("Hello,\n\nplease find the invoice attached.\n")
    mail.add_attachment(pdf, maintype="application", subtype="pdf", filename=f"INV-{n:04}.pdf")
    return mail
def send(offset):
    with smtplib.SMTP("127.0.0.1", port) as smtp:
        for n in range(offset, count, threads):
            smtp.send_message(message(n))
start = time.monotonic()
with ThreadPoolExecutor(threads) as pool:
    list(pool.map(send, range(threads)))
print(f"{count / (time.monotonic() - start):.0f}")
PY
)

# ---------------------------------------------------------------------------------------------
RECEIVER_RPS=$(wrk_rps receiver)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo
echo "=== Summary ($(nproc) cores, PostgreSQL, the runner at concurrency ${CONNECTIONS}) ==="
printf '%-46s %s deliveries/s (%s events, each once)\n' "webhooks, a backlog fanned out:" "$FANOUT_RATE" "$EVENTS"
printf '%-46s %s req/s\n' "  the receiver's own rate (wrk, same request):" "$RECEIVER_RPS"
printf '%-46s %s\n' "  ratio:" "$(ratio "$FANOUT_RATE" "$RECEIVER_RPS")"
printf '%-46s %s tps (ratio %s)\n' "  pgbench, durable one-row INSERT:" "$PG_TPS" "$(ratio "$FANOUT_RATE" "$PG_TPS")"
printf '%-46s p50 %s ms, p99 %s ms, max %s ms\n' "commit to delivery at ${EVENT_RATE} events/s:" \
    "$LATENCY_P50" "$LATENCY_P99" "$LATENCY_MAX"
printf '%-46s %s mails/s (%s invoices, each with its PDF)\n' "e-mail, a backlog handed to SMTP:" "$MAIL_RATE" "$MAILS"
printf '%-46s %s mails/s\n' "  the SMTP server's own rate (smtplib, same mail):" "$SMTP_RATE"
printf '%-46s %s\n' "  ratio:" "$(ratio "$MAIL_RATE" "$SMTP_RATE")"
