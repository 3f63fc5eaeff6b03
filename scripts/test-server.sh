# What the scripts that test billable from outside share (schemathesis, generated
# clients, the linters, the reference in Chromium); sourced, not run: a throwaway server,
# and the pinned node tools.
#
#   start_test_server [VAR=value ...]
#
# builds the debug binary unless BILLABLE_BIN names one, starts `billable serve` on a free
# port with a fresh SQLite database in a scratch directory, waits for /healthz, and sets
#   BASE_URL  http://127.0.0.1:PORT
#   API_KEY   the key printed at first start
#   SERVER_DIR the scratch directory (server.log is there)
# The VAR=value arguments are added to the server's environment (a rate limit, an agent).
# The server is stopped and the directory removed when the sourcing script exits.
#
#   start_smtp_server
#
# starts a real SMTP server (see below) for a test server configured to send e-mail.

start_test_server() {
    local bin=${BILLABLE_BIN:-}
    if [[ -z $bin ]]; then
        cargo build --quiet --locked -p app --bin billable
        bin="${CARGO_TARGET_DIR:-target}/debug/billable"
    fi
    SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/billable-test-server.XXXXXX")
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    BASE_URL="http://127.0.0.1:$port"
    env DATABASE_URL="sqlite://$SERVER_DIR/billable.db" \
        BILLABLE_LISTEN="127.0.0.1:$port" \
        BILLABLE_RATE_LIMIT=1000000/1s BILLABLE_IP_RATE_LIMIT=1000000/1s BILLABLE_LOG=warn \
        "$@" "$bin" serve 2>"$SERVER_DIR/server.log" &
    TEST_SERVER_PID=$!
    trap stop_test_server EXIT
    local _
    for _ in $(seq 150); do
        curl -fsS "$BASE_URL/healthz" >/dev/null 2>&1 && break
        kill -0 "$TEST_SERVER_PID" 2>/dev/null || break
        sleep 0.2
    done
    API_KEY=$(grep -o 'bk_[A-Za-z0-9]*' "$SERVER_DIR/server.log" | head -n1 || true)
    if [[ -z $API_KEY ]]; then
        echo "test server: no API key in its log:" >&2
        cat "$SERVER_DIR/server.log" >&2
        return 1
    fi
    export BASE_URL API_KEY SERVER_DIR
}

# Starts the SMTP server of the e-mail tests (tests/mail/smtp_server.py, aiosmtpd) on a free
# port and sets SMTP_PORT, and SMTP_MAILS: the file where each mail it takes is written as a
# JSON line. Stopped, and its file removed, with the test server.
start_smtp_server() {
    SMTP_DIR=$(mktemp -d "${TMPDIR:-/tmp}/billable-smtp.XXXXXX")
    SMTP_MAILS="$SMTP_DIR/mails.jsonl"
    python3 tests/mail/smtp_server.py --out "$SMTP_MAILS" >"$SMTP_DIR/stdout" &
    SMTP_PID=$!
    trap stop_test_server EXIT
    SMTP_PORT=''
    local _
    for _ in $(seq 100); do
        SMTP_PORT=$(grep -oP '^port=\K[0-9]+' "$SMTP_DIR/stdout" || true)
        [[ -n $SMTP_PORT ]] && break
        sleep 0.1
    done
    if [[ -z $SMTP_PORT ]]; then
        echo "the SMTP server did not start (pip install -r tests/mail/requirements.txt)" >&2
        return 1
    fi
    export SMTP_PORT SMTP_MAILS
}

stop_test_server() {
    local status=$?
    if [[ -n ${SMTP_PID:-} ]]; then
        kill "$SMTP_PID" 2>/dev/null || true
        wait "$SMTP_PID" 2>/dev/null || true
        rm -rf "$SMTP_DIR"
        SMTP_PID=''
    fi
    if [[ -n ${TEST_SERVER_PID:-} ]]; then
        kill "$TEST_SERVER_PID" 2>/dev/null || true
        wait "$TEST_SERVER_PID" 2>/dev/null || true
    fi
    if (( status != 0 )) && [[ -s ${SERVER_DIR:-}/server.log ]]; then
        echo "test server: last lines of its log:" >&2
        tail -n 30 "$SERVER_DIR/server.log" >&2
    fi
    rm -rf "${SERVER_DIR:-}"
    return "$status"
}

# The pinned node tools (openapi-typescript, tsc, Spectral, puppeteer-core) from the
# committed lock file in tests/clients/typescript, installed again when the lock file
# changed. No package needs an install script (the only one, @scarf/scarf, reports
# analytics). Spectral needs node 20.17 or later.
NODE_TOOLS=tests/clients/typescript

node_tools() {
    if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 17) ? 0 : 1)'; then
        echo "node 20.17 or later is needed; this is $(node --version 2>/dev/null || echo 'no node')" >&2
        return 1
    fi
    if [[ ! $NODE_TOOLS/node_modules/.package-lock.json -nt $NODE_TOOLS/package-lock.json ]]; then
        (cd "$NODE_TOOLS" && npm ci --ignore-scripts --no-audit --no-fund)
    fi
}
