#!/usr/bin/env bash
# Clients generated from the served /openapi.json must work on their own: each language
# generates its client from a running server's document, then runs a scenario through
# that client alone, in which every response must parse into the generated models.
#
#   scripts/generated-clients.sh            every language
#   scripts/generated-clients.sh python     only the ones named
#
# BILLABLE_BIN names a prebuilt server binary; without it the debug binary is built.
# A language needs its tools installed first:
#   python       pip install -r tests/clients/python/requirements.txt
#   typescript   node 20.17 or later and npm (the pinned tools install from the lock file)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# shellcheck source=scripts/test-server.sh
source scripts/test-server.sh

# Each language starts a server of its own (on a fresh database, with the settings its
# scenario needs) and stops it when done. Its scratch files go in the server's directory,
# which goes with it; test-server.sh stops the server on any exit.
stop_server() {
    stop_test_server
    TEST_SERVER_PID='' SERVER_DIR=''
}

# Python: openapi-python-client (version pinned in tests/clients/python/requirements.txt).
python_client() {
    local dir="$root/tests/clients/python"
    local pinned installed
    pinned=$(grep -oP '^openapi-python-client==\K.*' "$dir/requirements.txt")
    installed=$(openapi-python-client --version | grep -o '[0-9][0-9.]*$')
    echo "== python: openapi-python-client $installed"
    if [[ $installed != "$pinned" ]]; then
        echo "python: openapi-python-client $installed is installed, $pinned is pinned:" \
            "pip install -r tests/clients/python/requirements.txt" >&2
        return 1
    fi
    # A burst of 150, so that the scenario fits and its last step reaches a 429 soon after.
    start_test_server BILLABLE_RATE_LIMIT=150/60s

    # With `--meta none` the output path is the package itself, so it gets the package's
    # name, and its parent goes on the scenario's sys.path.
    local out="$SERVER_DIR/python"
    local log="$SERVER_DIR/python-generate.log"
    local status=0
    openapi-python-client generate \
        --url "$BASE_URL/openapi.json" \
        --config "$dir/config.yaml" \
        --meta none \
        --output-path "$out/billable_client" \
        --fail-on-warning \
        >"$log" 2>&1 || status=$?
    cat "$log"
    # A warning means the generator skipped something it could not read (an endpoint,
    # a response, a model): the client would silently lack it.
    if (( status != 0 )) || grep -qE 'Warning\(s\) encountered|Error\(s\) encountered' "$log"; then
        echo "python: openapi-python-client could not generate the whole client (see above)" >&2
        return 1
    fi

    BASE_URL="$BASE_URL" API_KEY="$API_KEY" CLIENT_DIR="$out" python3 "$dir/scenario.py"
    stop_server
}

# TypeScript: openapi-typescript writes the `paths` types, `tsc` (strict) checks
# tests/clients/typescript/scenario.ts against them, and node runs the compiled scenario
# (typed openapi-fetch calls). A document that no longer matches what the API takes or
# gives fails at `tsc`; an API that no longer does what the document says fails the run.
typescript_client() {
    node_tools
    echo "== typescript: openapi-typescript, tsc --strict, openapi-fetch"
    start_test_server
    (
        cd "$NODE_TOOLS"
        rm -rf generated dist
        # --default-non-nullable false: a property with a default stays optional in request
        # bodies, where leaving it out is what the default is for.
        npx --no -- openapi-typescript "$BASE_URL/openapi.json" -o generated/schema.d.ts \
            --default-non-nullable false
        npx --no -- tsc -p tsconfig.json
        node dist/scenario.js
    )
    stop_server
}

main() {
    local languages=("$@")
    (( ${#languages[@]} )) || languages=(python typescript)
    local language
    for language in "${languages[@]}"; do
        case $language in
            python) python_client ;;
            typescript) typescript_client ;;
            *) echo "unknown language: $language (known: python, typescript)" >&2; return 2 ;;
        esac
    done
}

main "$@"
