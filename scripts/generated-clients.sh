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
# which goes with it.
#
#   start_servers [VAR=value ...]
#
# starts the SMTP server (test-server.sh), a test server with the settings given that
# mails it and may deliver webhooks to 127.0.0.1, and the webhook receiver of the
# scenarios (tests/webhooks/receiver.py: it verifies each delivery with the official
# Standard Webhooks library against the secrets POSTed to its /_secrets). Sets, besides
# what start_test_server and start_smtp_server set,
#   WEBHOOK_RECEIVER    the receiver's URL, http://127.0.0.1:PORT
#   WEBHOOK_DELIVERIES  the file where it writes each delivery as a JSON line
# stop_server stops all three, and so does any exit.
start_servers() {
    start_smtp_server
    start_test_server "$@" \
        BILLABLE_SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" BILLABLE_MAIL_FROM=billing@billable.localhost \
        BILLABLE_WEBHOOK_ALLOW_PRIVATE=true
    start_webhook_receiver
}

start_webhook_receiver() {
    WEBHOOK_DELIVERIES="$SERVER_DIR/deliveries.jsonl"
    python3 tests/webhooks/receiver.py --out "$WEBHOOK_DELIVERIES" >"$SERVER_DIR/receiver.out" &
    RECEIVER_PID=$!
    trap stop_server EXIT
    local port='' _
    for _ in $(seq 100); do
        port=$(grep -oP '^port=\K[0-9]+' "$SERVER_DIR/receiver.out" || true)
        [[ -n $port ]] && break
        kill -0 "$RECEIVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z $port ]]; then
        echo "the webhook receiver did not start (pip install -r tests/webhooks/requirements.txt)" >&2
        return 1
    fi
    WEBHOOK_RECEIVER="http://127.0.0.1:$port"
    export WEBHOOK_RECEIVER WEBHOOK_DELIVERIES
}

# The EXIT trap once the receiver runs, and the end of each language: stops the receiver,
# then the test server and the SMTP server, keeping the exit status (stop_test_server
# reports the one it finds in $?).
stop_server() {
    local status=$?
    if [[ -n ${RECEIVER_PID:-} ]]; then
        kill "$RECEIVER_PID" 2>/dev/null || true
        wait "$RECEIVER_PID" 2>/dev/null || true
        RECEIVER_PID=''
    fi
    if (( status == 0 )); then
        stop_test_server
    else
        (exit "$status") || stop_test_server
    fi
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
    # A burst of 175, so that the scenario fits (the sending steps' polls included) and its
    # last step reaches a 429 soon after.
    start_servers BILLABLE_RATE_LIMIT=175/60s

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

    BASE_URL="$BASE_URL" API_KEY="$API_KEY" CLIENT_DIR="$out" SMTP_MAILS="$SMTP_MAILS" \
        WEBHOOK_RECEIVER="$WEBHOOK_RECEIVER" WEBHOOK_DELIVERIES="$WEBHOOK_DELIVERIES" \
        python3 "$dir/scenario.py"
    stop_server
}

# TypeScript: openapi-typescript writes the `paths` types, `tsc` (strict) checks
# tests/clients/typescript/scenario.ts against them, and node runs the compiled scenario
# (typed openapi-fetch calls). A document that no longer matches what the API takes or
# gives fails at `tsc`; an API that no longer does what the document says fails the run.
typescript_client() {
    node_tools
    echo "== typescript: openapi-typescript, tsc --strict, openapi-fetch"
    start_servers
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
