#!/usr/bin/env bash
# The client's page of an invoice in headless Chromium against a throwaway server: a German
# team's invoice to a German client, with an EPC QR code, at a desktop's and a phone's width
# (tests/clients/typescript/invoice-page.mjs): it reads "Rechnung" and "1.439,90 €", offers
# "Pay by card", loads nothing from another host, and axe-core finds no WCAG 2.1 A or AA
# violation; then, paid, the receipt a client back from Stripe sees. Then a quote's page:
# the same checks, and the client accepting it there with JavaScript off
# (tests/clients/typescript/quote-accept.mjs). Screenshots go to target/page-screenshots/
# (CI keeps them).
#
# Needs node (20 or later), npm and Chromium (CHROMIUM, default /usr/bin/chromium).
# BILLABLE_BIN names a built binary (else it is built).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-server.sh

node_tools
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[[ -x $CHROMIUM ]] || { echo "no Chromium at $CHROMIUM (apt-get install chromium)" >&2; exit 1; }

start_test_server
api() {
    curl -fsS -H "X-API-Key: $API_KEY" -H 'Content-Type: application/json' "$@"
}
api -X PATCH "$BASE_URL/v1/team" -d '{"currency": "EUR", "sender": {"name": "Muster & Söhne GmbH", "line1": "Hauptstraße 1",
    "postalCode": "10115", "city": "Berlin", "countryCode": "DE", "language": "de",
    "iban": "DE02 1203 0000 0000 2020 51", "bic": "BYLADEM1001"}}' >/dev/null
client=$(api -X POST "$BASE_URL/v1/invoices/clients" -d '{"name": "Müller GmbH", "email": "buch@mueller.example",
    "line1": "Marktplatz 5", "postalCode": "80331", "city": "München", "countryCode": "DE"}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
hosted=$(api -X POST "$BASE_URL/v1/invoices" -d '{"clientId": "'"$client"'", "issueDate": "2026-11-27",
    "dueDate": "2026-12-27", "taxPercentage": 19, "servicePeriod": {"from": "2026-11-01", "to": "2026-11-30"},
    "lineItems": [{"description": "Workshop „Barrierefreie Rechnungen“", "unitPrice": 1000, "quantity": 1},
                  {"description": "Beratung", "unitPrice": 30, "quantity": 7, "unitCode": "HUR"}]}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["hostedUrl"])')

# The team takes cards: the page offers "Pay by card" (no Stripe is called to show it).
api -X PUT "$BASE_URL/v1/payment-providers/stripe" \
    -d '{"secretKey": "sk_test_page_check", "webhookSecret": "whsec_page_check"}' >/dev/null

export SHOTS_DIR="${SHOTS_DIR:-target/page-screenshots}"
PAGE_URL="$BASE_URL$hosted" SHOT_NAME=invoice-page \
    PAGE_EXPECT="Rechnung INV-0001|1.439,90 €|RF40 INV0 001|Offen|Scannen Sie den Code|Mit Karte bezahlen" \
    node "$NODE_TOOLS/invoice-page.mjs"

# Paid, and the client back from Stripe's Checkout: the receipt.
invoice_id=${hosted##*/}
api -X POST "$BASE_URL/v1/invoices/$invoice_id/payments" -d '{"amount": 1439.90, "method": "card"}' >/dev/null
PAGE_URL="$BASE_URL$hosted?payment=paid" SHOT_NAME=invoice-receipt \
    PAGE_EXPECT="Zahlung erhalten. Vielen Dank!|Bezahlt|0,00 €" \
    node "$NODE_TOOLS/invoice-page.mjs"

# A quote to the same client: its page in German, in Chromium and to axe-core; then the
# client accepts it there, with JavaScript off, and the decision is the page's.
quote=$(api -X POST "$BASE_URL/v1/quotes" -d '{"clientId": "'"$client"'", "taxPercentage": 19,
    "validUntil": "2099-12-31T23:59:59Z", "notes": "Zahlbar 50 % bei Auftrag, 50 % bei Lieferung.",
    "lineItems": [{"description": "Workshop „Barrierefreie Rechnungen“", "unitPrice": 1000, "quantity": 1},
                  {"description": "Beratung", "unitPrice": 30, "quantity": 7, "unitCode": "HUR"}]}' \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
quote_page=$(api -X POST "$BASE_URL/v1/quotes/$quote/finalize" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["hostedUrl"])')
PAGE_URL="$BASE_URL$quote_page" SHOT_NAME=quote-page \
    PAGE_EXPECT="Angebot Q-0001|1.439,90 €|Gültig bis|Ihre Entscheidung|Angebot annehmen|Angebot ablehnen" \
    node "$NODE_TOOLS/invoice-page.mjs"
PAGE_URL="$BASE_URL$quote_page" SIGNER="Dr. Erika Beispiel" \
    PAGE_EXPECT="Angenommen von Dr. Erika Beispiel|Angenommen" \
    node "$NODE_TOOLS/quote-accept.mjs"
api "$BASE_URL/v1/quotes/$quote" | python3 -c '
import json, sys
decision = json.load(sys.stdin)["decision"]
assert decision["source"] == "page" and decision["signerName"] == "Dr. Erika Beispiel", decision
assert "Chrome" in decision["userAgent"], decision
print("ok   the acceptance is recorded as the page'"'"'s, with the browser it came from")'
PAGE_URL="$BASE_URL$quote_page" SHOT_NAME=quote-decided PAGE_EXPECT="Angenommen von Dr. Erika Beispiel" \
    node "$NODE_TOOLS/invoice-page.mjs"
