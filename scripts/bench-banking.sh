#!/usr/bin/env bash
# Benchmarks importing a bank statement on PostgreSQL and prints a summary against the
# target:
#   - a camt.053 of 100,000 entries (1,000 of them paying the team's invoices by serial,
#     49,000 strangers' credits, 50,000 debits) imported and matched through
#     POST /v1/bank-statements, beside reading the same file alone (the statements crate's
#     reader, release build, measured in the same run): target within 3x;
#   - the server's peak memory while it imports, beside the file's size (memory bounded);
#   - the same file again (every entry a duplicate);
#   - hostile files refused: an entity bomb, 10,000 nested elements, a body over the limit
#     (the script's 100 MiB, raised from the default 50 MiB for the large file).
#   - the anchor's floor: PostgreSQL copying the 100,000 rows kept into a table of the same
#     indexes in one statement (what any import keeping them durably pays at least).
# After the run the books are checked: exactly the 1,000 invoices are paid.
# Called by `make bench`. Needs root only to install missing tools / start PostgreSQL.
#
# Tunables (environment): BENCH_BANK_ENTRIES (100000), BENCH_BANK_INVOICES (1000).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

DB_NAME=billable_bench_banking
BENCH_NAME=bench-banking
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
ENTRIES=${BENCH_BANK_ENTRIES:-100000}
INVOICES=${BENCH_BANK_INVOICES:-1000}

setup_cleanup
install_missing_tools pg_isready psql curl python3 awk cargo
start_postgres
build_release
cargo build --release --quiet -p statements --example read_bench
fresh_database

PORT=$(free_port)
BASE="http://127.0.0.1:${PORT}"
serve "$PORT" server.log BILLABLE_STATEMENT_LIMIT_MB=100
SERVER_PID=$SERVED_PID
KEY=$(first_start_key server.log)

log "making ${INVOICES} invoices of 119.00"
python3 - "$BASE" "$KEY" "$INVOICES" <<'PY'
import http.client, json, sys
from concurrent.futures import ThreadPoolExecutor
base, key, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
host, port = base.removeprefix("http://").split(":")
headers = {"X-API-Key": key, "Content-Type": "application/json"}
connection = http.client.HTTPConnection(host, int(port))
connection.request("POST", "/v1/invoices/clients", json.dumps({"name": "Bench Client", "email": "bench@example.com", "line1": "1 Bench Road", "postalCode": "1000"}), headers)
client = json.loads(connection.getresponse().read())["id"]
body = json.dumps({"clientId": client, "lineItems": [{"description": "Work", "unitPrice": 119, "quantity": 1}]})
def make(n):
    connection = http.client.HTTPConnection(host, int(port))
    for _ in range(n):
        connection.request("POST", "/v1/invoices", body, headers)
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 201, answer.status
with ThreadPoolExecutor(8) as pool:
    list(pool.map(make, [count // 8 + (1 if i < count % 8 else 0) for i in range(8)]))
PY
SERIALS=$(psql_bench -c "SELECT number FROM invoices ORDER BY serial" | tr '\n' ' ')
CURRENCY=$(psql_bench -c "SELECT currency FROM invoices LIMIT 1")

log "writing a camt.053 of ${ENTRIES} entries"
python3 - "$WORK/statement.xml" "$ENTRIES" "$SERIALS" "$CURRENCY" <<'PY'
import sys
path, count, serials, currency = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
entries, total = [], 0
def entry(n, cents, name, text):
    indicator = "CRDT" if cents > 0 else "DBIT"
    party = f"<Dbtr><Nm>{name}</Nm></Dbtr>" if cents > 0 else f"<Cdtr><Nm>{name}</Nm></Cdtr>"
    day = f"2026-11-{n % 28 + 1:02d}"
    return (f"<Ntry><Amt Ccy=\"{currency}\">{abs(cents) // 100}.{abs(cents) % 100:02d}</Amt><CdtDbtInd>{indicator}</CdtDbtInd>"
            f"<Sts>BOOK</Sts><BookgDt><Dt>{day}</Dt></BookgDt>"
            f"<AcctSvcrRef>BENCH-{n:07d}</AcctSvcrRef>"
            f"<NtryDtls><TxDtls><RltdPties>{party}</RltdPties>"
            f"<RmtInf><Ustrd>{text}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>")
for n in range(count):
    if n < len(serials):
        cents, name, text = 11900, "Bench Client", f"Rechnung {serials[n]}"
    elif n % 2:
        cents, name, text = 1000 + n % 5000, "Fremde Firma AG", f"Spende {n}"
    else:
        cents, name, text = -(500 + n % 7000), "Lieferant GmbH", f"Bestellung {n}"
    total += cents
    entries.append(entry(n, cents, name, text))
def balance(code, cents):
    return (f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp><Amt Ccy=\"{currency}\">{abs(cents) // 100}.{abs(cents) % 100:02d}</Amt>"
            f"<CdtDbtInd>{'CRDT' if cents >= 0 else 'DBIT'}</CdtDbtInd><Dt><Dt>2026-11-28</Dt></Dt></Bal>")
opening = 10_000_000
with open(path, "w") as out:
    out.write("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Document xmlns=\"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02\">"
              "<BkToCstmrStmt><GrpHdr><MsgId>BENCH</MsgId><CreDtTm>2026-11-29T06:00:00</CreDtTm></GrpHdr>"
              "<Stmt><Id>BENCH-1</Id><CreDtTm>2026-11-29T06:00:00</CreDtTm>"
              f"<Acct><Id><IBAN>DE44500105175407324931</IBAN></Id><Ccy>{currency}</Ccy></Acct>")
    out.write(balance("OPBD", opening) + balance("CLBD", opening + total))
    out.write("".join(entries))
    out.write("</Stmt></BkToCstmrStmt></Document>")
PY
FILE_KB=$(( $(stat -c %s "$WORK/statement.xml") / 1024 ))

echo
echo "=== reading the file alone (statements crate, release, median of 5) ==="
READ=$("$TARGET_DIR/release/examples/read_bench" camt.053 "$WORK/statement.xml" 5)
echo "$READ"
READ_MS=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' <<<"$READ")

rss_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
post_statement() {
    curl -sS -o "$WORK/$1.json" -w '%{http_code} %{time_total}\n' -H "X-API-Key: $KEY" \
        -H 'Content-Type: application/xml' --data-binary "@$2" "$BASE/v1/bank-statements?format=camt.053"
}

echo
echo "=== POST /v1/bank-statements, ${ENTRIES} entries, imported and matched ==="
BEFORE_KB=$(rss_kb "$SERVER_PID" VmRSS)
read -r CODE SECONDS_IMPORT < <(post_statement first "$WORK/statement.xml")
[[ $CODE == 201 ]] || die "import answered $CODE: $(head -c 300 "$WORK/first.json")"
PEAK_KB=$(rss_kb "$SERVER_PID" VmHWM)
AFTER_KB=$(rss_kb "$SERVER_PID" VmRSS)
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ("entries","duplicates","matched","suggested")})' "$WORK/first.json"

echo
echo "=== the same file again (every entry a duplicate) ==="
read -r CODE SECONDS_AGAIN < <(post_statement again "$WORK/statement.xml")
[[ $CODE == 201 ]] || die "second import answered $CODE"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print({k: d[k] for k in ("entries","duplicates","matched","suggested")})' "$WORK/again.json"

PAID=$(psql_bench -c "SELECT count(*) FROM invoices WHERE id IN (SELECT invoice_id FROM ledger_entries WHERE voided_at IS NULL)")
[[ $PAID == "$INVOICES" ]] || die "expected ${INVOICES} paid invoices, found ${PAID}"
KEPT=$(psql_bench -c "SELECT count(*) FROM bank_transactions")
[[ $KEPT == "$ENTRIES" ]] || die "expected ${ENTRIES} transactions kept, found ${KEPT}"

echo
echo "=== PostgreSQL keeping the same rows in one statement (the floor) ==="
FLOOR_MS=$(psql_bench <<'SQL' | awk '/^Time:/ { printf "%.0f", $2 }'
CREATE TABLE bench_floor (LIKE bank_transactions INCLUDING ALL);
\timing on
INSERT INTO bench_floor SELECT * FROM bank_transactions;
SQL
)
echo "INSERT … SELECT of ${KEPT} rows: ${FLOOR_MS} ms"

echo
echo "=== hostile files ==="
python3 - "$WORK" <<'PY'
import sys
work = sys.argv[1]
open(f"{work}/bomb.xml", "w").write('<?xml version="1.0"?><!DOCTYPE d [' + "".join(
    f'<!ENTITY e{i} "{"&e%d;" % (i - 1) * 10 if i else "ha"}">' for i in range(10)) + ']><Document>&e9;</Document>')
open(f"{work}/deep.xml", "w").write("<Document>" + "<a>" * 10000 + "</a>" * 10000 + "</Document>")
with open(f"{work}/big.xml", "w") as out:
    out.write("<Document>" + "x" * (101 << 20) + "</Document>")
PY
for hostile in bomb deep big; do
    read -r CODE TIME < <(post_statement "$hostile" "$WORK/$hostile.xml")
    printf '%-5s %s in %.3f s: %s\n' "$hostile" "$CODE" "$TIME" "$(head -c 120 "$WORK/$hostile.json")"
done

IMPORT_MS=$(awk -v s="$SECONDS_IMPORT" 'BEGIN { printf "%.0f", s * 1000 }')
AGAIN_MS=$(awk -v s="$SECONDS_AGAIN" 'BEGIN { printf "%.0f", s * 1000 }')
RATIO=$(awk -v a="$IMPORT_MS" -v b="$READ_MS" 'BEGIN { printf "%.1f", a / b }')
echo
echo "=== summary (PostgreSQL, ${ENTRIES} entries, ${FILE_KB} KiB) ==="
printf 'reading alone:            %8.1f ms (anchor)\n' "$READ_MS"
printf 'import and match:         %8d ms  = %sx reading (target <= 3x)\n' "$IMPORT_MS" "$RATIO"
printf 'import again (duplicates):%8d ms\n' "$AGAIN_MS"
printf 'PostgreSQL, the rows alone:%7d ms  = %sx reading (the floor of any durable import)\n' "$FLOOR_MS" \
    "$(awk -v a="$FLOOR_MS" -v b="$READ_MS" 'BEGIN { printf "%.1f", a / b }')"
printf 'server memory:            %d KiB before, peak %d KiB, %d KiB after (file %d KiB)\n' \
    "$BEFORE_KB" "$PEAK_KB" "$AFTER_KB" "$FILE_KB"
