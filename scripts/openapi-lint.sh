#!/usr/bin/env bash
# Lints the served /openapi.json of a throwaway server: openapi-spec-validator checks it
# against the OpenAPI 3.1 schema, and Spectral (the repository's .spectral.yaml, which
# extends spectral:oas) fails on any error or warning.
#
# Needs python3 with openapi-spec-validator, node (20 or later) and npm. BILLABLE_BIN
# names a built binary (else it is built).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-server.sh

node_tools
command -v openapi-spec-validator >/dev/null 2>&1 || { echo "openapi-spec-validator is not installed (pip install openapi-spec-validator)" >&2; exit 1; }

start_test_server
# Indented, so that findings point at a line of their own.
doc="$SERVER_DIR/openapi.json"
curl -fsS "$BASE_URL/openapi.json" | python3 -m json.tool --indent 2 >"$doc"

status=0
echo "== openapi-spec-validator"
# A message can quote the whole document (an unresolvable $ref does): lines are cut.
openapi-spec-validator "$doc" 2>&1 | cut -c1-2000 || status=1
echo "== spectral (.spectral.yaml)"
"$NODE_TOOLS/node_modules/.bin/spectral" lint --ruleset .spectral.yaml --fail-severity=warn "$doc" || status=1
exit "$status"
