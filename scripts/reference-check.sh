#!/usr/bin/env bash
# The interactive reference in headless Chromium against a throwaway server:
# tests/clients/typescript/reference.mjs opens /, lands on the Swagger UI at /reference/,
# authorizes with the API key, runs "Try it out" on GET /v1/invoices/clients, then Execute
# with the example body shown, unedited, on POST /v1/invoices/clients, POST /v1/invoices
# (its client inline) and POST /v1/track/time (each must be a 201), then an edited body,
# and checks that /mcp is listed; it checks the answers the page shows and that the page
# sent the key. A screenshot of a failed step goes to a temporary directory (the path is
# printed).
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
node "$NODE_TOOLS/reference.mjs"
