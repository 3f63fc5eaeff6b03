#!/usr/bin/env bash
# /mcp as an MCP client application meets it: the official MCP Python SDK
# (tests/mcp/requirements.txt) connects to a throwaway server over streamable HTTP and runs
# tests/mcp/client.py, which e-mails an invoice to a real SMTP server. BILLABLE_BIN names a prebuilt server binary; without it the debug
# binary is built.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/test-server.sh
source scripts/test-server.sh

pinned=$(grep -oP '^mcp==\K.*' tests/mcp/requirements.txt)
installed=$(python3 -c 'from importlib.metadata import version; print(version("mcp"))' 2>/dev/null || echo none)
if [[ $installed != "$pinned" ]]; then
    echo "mcp-check: the mcp package is $installed, $pinned is pinned: pip install -r tests/mcp/requirements.txt" >&2
    exit 1
fi
echo "== mcp: the Python SDK $installed"
start_smtp_server
start_test_server BILLABLE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" BILLABLE_MAIL_FROM=billing@billable.localhost
python3 tests/mcp/client.py "$BASE_URL" "$API_KEY" "$SMTP_MAILS"
